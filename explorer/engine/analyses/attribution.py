"""Attribution of one token's logprob to the tokens before it (explorer.results.attribution.Attribution).

f(x) = log p(target | x) [- log p(contrast | x)], x = ids[:pos].

A contrast of several tokens (or one given as a list of ids) is a continuation, scored as Answers scores a variant
(explorer.engine.analyses.answers): log p(contrast | x) = sum_i log p(c_i | x + c[:i]), teacher-forced, and the text
typed as the contrast is tokenised as if typed right after x (`contrast_tokens`: a leading space is part of it). The
target is one token of the text (a continuation of one). Where the target and the contrast are one token each, f is
the next-token difference computed as before, to the bit.

Methods:
1. occlusion (every engine that runs the model here): value(u) = f(x) - f(x without unit u), or with u's
   tokens replaced by a neutral token. Units are visited left to right; consecutive units of one length make
   one batch whose rows all continue the KV cache of the text before the batch's first unit, so a unit costs
   the tokens after it, not a whole pass. A served model (no KV cache here) scores each ablated text instead.
   A contrast continuation: each row is read on with both continuations (right-padded, one batch).
2. gxi / ig (torch): gradient x input and integrated gradients over the input embeddings, by Captum
   (InputXGradient, IntegratedGradients with `steps` points, `chunk` of them per backward pass), summed over
   the hidden size per token. A contrast continuation: its tokens' embeddings are fixed inputs after the text's
   (the gradient is the text's only; IG's path runs from the baseline to the text, the continuations as they are).
3. attention (torch): the last `layers` layers' attention weights from position pos-1 to every earlier
   token, mean over heads and layers (eager attention for that one pass): the next token's only, whatever the
   contrast.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from contextlib import contextmanager

import numpy as np
import torch

from explorer.engine.analyses import continuations
from explorer.engine.analyses.answers import MAX_VARIANT_TOKENS, token_texts, variant_ids
from explorer.engine.analyses.continuations import Conts
from explorer.engine.passes import blocks, bounds
from explorer.engine.passes.scoring import score_ids
from explorer.errors import ExplorerError
from explorer.results.attribution import BASELINES, METHODS, NAMES, OCCLUSION_MODES, UNITS, Attribution
from explorer.results.scores import TokenScores
from explorer.results.words import words

Progress = Callable[[int, int], None]  # (units done, units in all)
MAX_STEPS = 256
MAX_DETAIL = 4096
FAR_SPANS = 8  # spans the text before the `detail` nearest units is cut into
DETAIL = 128  # the faces' default: a 512-token context costs about 13,000 tokens of forward passes, not 131,000
MAX_BATCH = 16  # ablated rows per forward pass
BATCH_TOKENS = 1024  # ... and at most this many tokens of them
GRAD_TOKENS = 2048  # IG: at most this many tokens (steps x context) per backward pass


def _bad(msg: str, param: str) -> ExplorerError:
    return ExplorerError(msg, param=param, code="invalid_value")


def check_request(
    r: TokenScores, pos: int, method: str, units: str, mode: str, steps: int, detail: int = 0, baseline: str = "neutral"
) -> None:
    """Every check that needs no model (the faces call it before any work)."""
    if isinstance(detail, bool) or not isinstance(detail, int) or not 0 <= detail <= MAX_DETAIL:
        raise _bad(f"`detail` must be a whole number from 0 (every unit) to {MAX_DETAIL}, got {detail!r}.", "detail")
    if method not in METHODS:
        raise _bad(f"`method` must be one of {', '.join(METHODS)}, got {method!r}.", "method")
    if units not in UNITS:
        raise _bad(f"`units` must be one of {', '.join(UNITS)}, got {units!r}.", "units")
    if baseline not in BASELINES:
        raise _bad(f"`baseline` must be one of {', '.join(BASELINES)}, got {baseline!r}.", "baseline")
    if mode not in OCCLUSION_MODES:
        raise _bad(f"`mode` must be one of {', '.join(OCCLUSION_MODES)}, got {mode!r}.", "mode")
    if isinstance(steps, bool) or not isinstance(steps, int) or not 2 <= steps <= MAX_STEPS:
        raise _bad(f"`steps` must be a whole number from 2 to {MAX_STEPS}, got {steps!r}.", "steps")
    if isinstance(pos, bool) or not isinstance(pos, int) or not 1 <= pos < r.n:
        why = "is past the end of the text" if isinstance(pos, int) and pos >= r.n else "has no text before it"
        raise _bad(f"Pick a token after the first: position {pos!r} {why} (positions 1..{r.n - 1} have).", "position")


def unit_spans(r: TokenScores, pos: int, units: str, detail: int = 0) -> np.ndarray:
    """(U, 2) token ranges [a, b) of the units before `pos`: one per token, or per word (cut at `pos`).

    `detail` > 0: only the `detail` units nearest the target stand alone; the text before them is cut into at
    most FAR_SPANS spans of about equal length (on unit boundaries), which bounds occlusion's cost."""
    if units == "token":
        spans = np.stack([np.arange(pos), np.arange(1, pos + 1)], 1).astype(np.int64)
    else:
        w = words(r)
        keep = w.starts < pos
        spans = np.stack([w.starts[keep], np.minimum(w.ends[keep], pos)], 1).astype(np.int64)
    if detail <= 0 or len(spans) <= detail:
        return spans
    far, near = spans[: len(spans) - detail], spans[len(spans) - detail :]
    cuts = np.unique(np.linspace(0, len(far), min(FAR_SPANS, len(far)) + 1).round().astype(np.int64))
    merged = np.array([[far[a, 0], far[b - 1, 1]] for a, b in itertools.pairwise(cuts)], np.int64)
    return np.concatenate([merged, near])


def _f(logits: torch.Tensor, target: int, contrast: int | None) -> torch.Tensor:
    """(B, V) logits -> (B,) f: the target's logprob, less the contrast's."""
    lp = logits.float().log_softmax(-1)
    out = lp[:, target]
    return out - lp[:, contrast] if contrast is not None else out


# ---- 1. occlusion -------------------------------------------------------------------------------
def _ablated(ids: list[int], a: int, b: int, mode: str, neutral: int) -> list[int]:
    return ids[:a] + ([neutral] * (b - a) if mode == "replace" else []) + ids[b:]


def _blocks(spans: np.ndarray, pos: int, conts: Conts | None = None) -> list[list[int]]:
    """Consecutive units of equal length (their ablated rows have one length), at most MAX_BATCH a block and at
    most BATCH_TOKENS tokens of rows (each row read on with every continuation of `conts`, where given), so Stop and
    the time cap are checked every second or so."""
    width, extra = (len(conts), max(len(w) for w in conts) - 1) if conts else (1, 0)
    out: list[list[int]] = []
    for u, (a, b) in enumerate(spans.tolist()):
        if out:
            first = out[-1][0]
            rows = len(out[-1]) + 1
            fits = rows <= MAX_BATCH and width * rows * (pos - int(spans[first, 0]) + 1 + extra) <= BATCH_TOKENS
            if fits and spans[first, 1] - spans[first, 0] == b - a:
                out[-1].append(u)
                continue
        out.append([u])
    return out


def _f_block(engine, rows: list[list[int]], past, target: int, contrast: int | None, conts: Conts | None):
    """(B,) f after each row, every row continuing the cache `past`: one forward pass. `conts` None: the next
    token's f at each row's last position; else each continuation read on after each row, teacher-forced."""
    if conts is None:
        batch = torch.tensor(rows, device=engine.device)  # (B, L)
        last = engine.last_rows(batch, past)  # (B, H) or (B, V)
        return _f(blocks.logits(engine, last), target, contrast)  # padded to the head's row count, as scoring
    return continuations.f_after_rows(engine, rows, past, conts)


@torch.inference_mode()
def _occlusion_cached(engine, ids, spans, target, contrast, mode, neutral, progress, conts=None) -> np.ndarray:
    """f of every ablated text, each block of rows continuing the cache of the text before its first unit."""
    out = np.full(len(spans), np.nan)
    past, held = None, 0  # the KV cache of ids[:held]
    x = torch.tensor([ids], device=engine.device)  # (1, pos)
    done = 0
    if progress is not None:
        progress(0, len(spans))
    for block in _blocks(spans, len(ids), conts):
        bounds.check()
        a0 = max(int(spans[block[0], 0]) - 1, 0)  # rows start one token early: never empty after a cache
        if a0 > held:  # extend the cache of the text up to this block
            _, past = blocks.prefill(engine, x[:, held:a0], past)
            held = a0
        rows = [_ablated(ids, int(spans[u, 0]), int(spans[u, 1]), mode, neutral)[a0:] for u in block]
        ok = [j for j, row in enumerate(rows) if row]  # an empty text has no next-token distribution
        if ok:
            f = _f_block(engine, [rows[j] for j in ok], past, target, contrast, conts)
            out[[block[j] for j in ok]] = f.cpu().numpy()
        done += len(block)
        if progress is not None:
            progress(done, len(spans))
    return out


def _occlusion_scored(engine, ids, spans, target, contrast, mode, neutral, progress, conts=None) -> np.ndarray:
    """f of every ablated text by scoring it (ablated + [target] / [contrast]; with `conts`, ablated + each
    continuation): the naive path, any engine."""
    want = [target] if contrast is None else [target, contrast]
    out = np.full(len(spans), np.nan)
    if progress is not None:
        progress(0, len(spans))
    for u, (a, b) in enumerate(spans.tolist()):
        bounds.check()
        row = _ablated(ids, a, b, mode, neutral)
        if row and conts is not None:
            out[u] = continuations.f_after(engine, row, conts)
        elif row:
            r = score_ids(engine, row + [target], 0, listed=want)
            lp = dict(zip(r.top_ids[-1].tolist(), r.top_logprobs[-1].tolist()))
            out[u] = lp[target] - (lp[contrast] if contrast is not None else 0.0)
        if progress is not None:
            progress(u + 1, len(spans))
    return out


# ---- 2. gradients ---------------------------------------------------------------------------------
def _forward_of(engine, target: int, contrast: int | None, conts: Conts | None = None):
    """embeddings (B, T, H) -> (B,) f: the model run on `inputs_embeds`, its output layer on the last row (with
    `conts`: on the rows that read each continuation, its tokens' embeddings fixed after the text's)."""
    if conts is not None:
        return continuations.forward_of(engine, conts)

    def forward(emb: torch.Tensor) -> torch.Tensor:
        if engine.split_head:
            hidden = engine.model.base_model(inputs_embeds=emb).last_hidden_state[:, -1]  # (B, H)
            return _f(engine.head(hidden), target, contrast)
        return _f(engine.model(inputs_embeds=emb, **engine.last_only).logits[:, -1], target, contrast)

    return forward


def _baseline(engine, emb: torch.Tensor, baseline: str, neutral: int) -> torch.Tensor:
    """(1, T, H): zeros, or the neutral token's embedding at every position."""
    if baseline == "zero":
        return torch.zeros_like(emb)
    one = engine.model.get_input_embeddings()(torch.tensor([[neutral]], device=emb.device))  # (1, 1, H)
    return one.to(emb.dtype).expand_as(emb).clone()


def _gradients(
    engine, ids, target, contrast, method, steps, chunk, baseline, neutral, progress, conts=None
) -> tuple[np.ndarray, float, float | None]:
    """(per-token values (T,), f(x), f(baseline) or None) by Captum; `bounds.check()` and `progress` between its batches."""
    from captum._utils.gradient import compute_gradients
    from captum.attr import InputXGradient, IntegratedGradients

    f = _forward_of(engine, target, contrast, conts)
    width = len(ids) if conts is None else len(conts) * (len(ids) + max(len(w) for w in conts) - 1)
    rows = max(1, min(chunk, GRAD_TOKENS // max(width, 1)))  # IG steps per backward pass: bounded memory
    done = [0]

    def gradients(*args, **kwargs):
        """One of Captum's batches of steps (compute_gradients' arguments): its forward and backward pass on the
        engine's thread (team.py; the backward on the caller's ran on one core)."""
        bounds.check()
        with engine.lock:  # one pass at a time on the shared model; other requests run between the batches
            out = engine.compute(compute_gradients, *args, **kwargs)
        inputs = kwargs["inputs"] if "inputs" in kwargs else args[1]
        emb = inputs[0] if isinstance(inputs, tuple) else inputs
        if emb.shape[0] > 1 or method == "gxi":
            done[0] += emb.shape[0]
            if progress is not None:
                progress(min(done[0], steps), steps if method == "ig" else 1)
        return out

    def explainer(kind):
        e = kind(f)
        e.gradient_func = gradients
        return e

    if progress is not None:
        progress(0, steps if method == "ig" else 1)
    with torch.enable_grad():
        emb = engine.model.get_input_embeddings()(torch.tensor([ids], device=engine.device)).detach()  # (1, T, H)
        with torch.no_grad(), engine.lock:
            fx = float(engine.compute(f, emb)[0])
        if method == "gxi":
            attr = explainer(InputXGradient).attribute(emb.requires_grad_())
            return attr.float().sum(-1)[0].detach().cpu().numpy().astype(np.float64), fx, None
        base = _baseline(engine, emb, baseline, neutral)
        with torch.no_grad(), engine.lock:
            fb = float(engine.compute(f, base)[0])
        attr = explainer(IntegratedGradients).attribute(
            emb, baselines=base, n_steps=steps, internal_batch_size=rows, method="gausslegendre"
        )
    return attr.float().sum(-1)[0].detach().cpu().numpy().astype(np.float64), fx, fb


@contextmanager
def _eager(model):
    """The model with eager attention (which returns its weights) for the block; the old one after."""
    old = getattr(model.config, "_attn_implementation", None)
    switch = old not in (None, "eager") and hasattr(model, "set_attn_implementation")
    if switch:
        model.set_attn_implementation("eager")
    try:
        yield
    finally:
        if switch:
            model.set_attn_implementation(old)


@torch.inference_mode()
def _attention(engine, ids: list[int], layers: int) -> np.ndarray:
    """(T,) the last `layers` layers' attention from the last position to each token, mean over heads."""
    with engine.lock, _eager(engine.model):
        x = torch.tensor([ids], device=engine.device)
        out = engine.compute(engine.model.base_model, input_ids=x, output_attentions=True)
    att = [a for a in (out.attentions or ()) if a is not None]
    if not att:
        raise ExplorerError(f"Model {engine.name!r} gives no attention weights.", code="unsupported")
    last = torch.stack([a[0, :, -1, :].float() for a in att[-max(1, layers) :]])  # (layers, heads, T)
    return last.mean((0, 1)).cpu().numpy().astype(np.float64)


# ---- the whole ---------------------------------------------------------------------------------------
def attribute(
    engine,
    r: TokenScores,
    pos: int,
    *,
    contrast: int | Sequence[int] | str | None = None,
    method: str = "occlusion",
    units: str = "token",
    detail: int = 0,
    mode: str = "remove",
    neutral: int | None = None,
    steps: int = 32,
    chunk: int = 8,
    baseline: str = "neutral",
    layers: int = 1,
    cached: bool = True,
    progress: Progress | None = None,
) -> Attribution:
    """Why token `pos` of `r` (or rather than `contrast`: a token id, a list of ids, or a text read as typed after the
    text before the target, `contrast_tokens`): `method` over `units` before it."""
    check_request(r, pos, method, units, mode, steps, detail, baseline)
    ids = r.token_ids.tolist()
    target = int(ids[pos])
    cids, how = _contrast_of(engine, r, pos, contrast)
    one = cids[0] if cids is not None and len(cids) == 1 else None  # a one-token contrast: the next-token f
    conts = [[target], cids] if cids is not None and len(cids) > 1 else None  # else: both continuations
    caps = engine.capabilities
    if method != "occlusion" and not caps.hidden_states:
        raise _bad(f"{NAMES[method]} {caps.why_not('hidden_states')}; occlusion works on every engine.", "method")
    ctx = ids[:pos]
    engine.check_ids(ctx + (cids or [])[:-1])
    spans = unit_spans(r, pos, units, detail)
    settings: dict = {"units": units, "detail": detail}
    f_base = None
    if method == "occlusion":
        n = _neutral(engine, neutral) if mode == "replace" else 0
        settings.update(mode=mode, **({"neutral_id": n} if mode == "replace" else {}))
        fx = _f_text(engine, ctx, target, one, conts)
        run = _occlusion_cached if cached and caps.forward else _occlusion_scored
        values = fx - run(engine, ctx, spans, target, one, mode, n, progress, conts)
    elif method == "attention":
        settings["layers"] = int(layers)
        per_token, fx = _attention(engine, ctx, int(layers)), _f_text(engine, ctx, target, one, conts)
        values = np.array([per_token[a:b].sum() for a, b in spans.tolist()])
    else:
        n = _neutral(engine, neutral)
        settings.update({"steps": steps, "baseline": baseline, "neutral_id": n} if method == "ig" else {})
        per_token, fx, f_base = _gradients(engine, ctx, target, one, method, steps, chunk, baseline, n, progress, conts)
        values = np.array([per_token[a:b].sum() for a, b in spans.tolist()])
    marked = _marked(engine)
    special = np.array([all(i in marked for i in ids[a:b]) for a, b in spans.tolist()], bool)
    text = r.token_text
    pieces = token_texts(engine, conts[1]) if conts else []  # a continuation's tokens, as the result lists them
    return Attribution(
        model=r.model, method=method, settings=settings, token_ids=np.array(ids[: pos + 1], np.int64),
        token_text=text[: pos + 1], pos=pos, target_id=target, contrast_id=None if cids is None else cids[0],
        spans=spans, values=np.asarray(values, np.float64), f=fx, f_baseline=f_base, special=special,
        target_text=text[pos], contrast_text=_piece(engine, one) if conts is None else "".join(pieces),
        contrast_ids=np.array(cids or [], np.int64), contrast_token_text=pieces, contrast_tokenized=how if conts else "",
    )  # fmt: skip


def contrast_tokens(engine, r: TokenScores, pos: int, text: str) -> tuple[list[int], str]:
    """(the ids of `text` as the contrast of token `pos` of `r`, "joint" | "alone"): read as Answers reads a variant
    typed after its prompt (answers.variant_ids), the prompt being the text before the target less its leading
    special tokens (a BOS, a document start). So a leading space is part of the contrast: " dogs" is a word of its
    own, "dogs" the characters typed straight after the word before (tokenised with it where the tokenizer merges
    them, else alone)."""
    ids = r.token_ids.tolist()
    marked, lead = _marked(engine), 0
    while lead < pos and ids[lead] in marked:
        lead += 1
    body = b"".join(r.token_bytes[lead:pos]).decode("utf-8", "replace")
    prompt = engine.tokenize(body) if body else []
    if not prompt:
        return engine.tokenize(text, add_special_tokens=False), "alone"
    return variant_ids(engine, prompt, body, text)


def _contrast_of(engine, r: TokenScores, pos: int, contrast) -> tuple[list[int] | None, str]:
    """(the contrast's token ids, checked, or None; "joint" | "alone" where it came from a text, else "")."""
    if contrast is None:
        return None, ""
    v, target, how = engine.vocab_size, int(r.token_ids[pos]), ""
    if isinstance(contrast, (int, np.integer)) and not isinstance(contrast, bool):
        contrast = int(contrast)
        if not 0 <= contrast < v or contrast == target:
            why = "is the target itself" if contrast == target else f"is outside the vocabulary (0..{v - 1})"
            raise _bad(f"The contrast token {contrast!r} {why}: pick another token to compare with.", "contrast")
        return [contrast], ""
    if isinstance(contrast, str):
        if not contrast:
            raise _bad("The contrast is empty: give a token's or a few words' text, or leave it out.", "contrast")
        cids, how = contrast_tokens(engine, r, pos, contrast)
        shown = repr(contrast) if len(contrast) <= 40 else repr(contrast[:40]) + "…"
    else:
        cids = list(contrast) if isinstance(contrast, (list, tuple, np.ndarray)) else []
        if not cids or not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in cids):
            raise _bad(f"The contrast must be a token id, a list of them or a text, got {contrast!r}.", "contrast")
        cids = [int(i) for i in cids]
        shown = str(cids) if len(cids) <= 8 else str(cids[:8])[:-1] + ", …]"
        if bad := [i for i in cids if not 0 <= i < v]:
            raise _bad(f"The contrast {shown} has ids outside the vocabulary (0..{v - 1}): {bad[:4]}.", "contrast")
    if not cids:
        raise _bad(f"The contrast {shown} has no tokens: give some text.", "contrast")
    if len(cids) > MAX_VARIANT_TOKENS:
        raise _bad(f"The contrast {shown} is {len(cids)} tokens; at most {MAX_VARIANT_TOKENS}: shorten it.", "contrast")
    if cids == [target]:
        raise _bad(
            f"The contrast {shown} is the target itself: pick another token or text to compare with.", "contrast"
        )
    return cids, how


def _marked(engine) -> set[int]:
    """Ids drawn as markers (as the page marks them): special and added tokens (chat template markers), EOS."""
    out = set(engine.special_ids)
    tok = getattr(engine, "tokenizer", None)
    if tok is not None:
        for t in engine.special_tokens():
            i = tok.convert_tokens_to_ids(t)
            if isinstance(i, int) and 0 <= i < engine.vocab_size:
                out.add(i)
    return out


def _piece(engine, i: int | None) -> str:
    return "" if i is None else bytes(engine.vocab[i]).decode("utf-8", "replace")


def _neutral(engine, neutral: int | None) -> int:
    """The replacement token: the one given, else the tokenizer's pad, unk or end-of-text token."""
    if neutral is not None:
        if not (isinstance(neutral, int) and 0 <= neutral < engine.vocab_size):
            raise _bad(f"The replacement token {neutral!r} is outside the vocabulary.", "neutral")
        return neutral
    tok = getattr(engine, "tokenizer", None)
    for name in ("pad_token_id", "unk_token_id", "eos_token_id"):
        i = getattr(tok, name, None)
        if isinstance(i, int) and 0 <= i < engine.vocab_size:
            return i
    return min(engine.eos_ids) if engine.eos_ids else 0


def _f_text(engine, ctx: list[int], target: int, contrast: int | None, conts: Conts | None = None) -> float:
    """f on the text itself, by scoring it with the target (and contrast) listed at the end."""
    if conts is not None:
        return continuations.f_after(engine, ctx, conts)
    want = [target] if contrast is None else [target, contrast]
    r = score_ids(engine, ctx + [target], 0, listed=want)  # k 0: no top-k, under any --max-logprobs
    lp = dict(zip(r.top_ids[-1].tolist(), r.top_logprobs[-1].tolist()))
    return float(lp[target] - (lp[contrast] if contrast is not None else 0.0))
