"""Two distributions per position, compared where the logits are: KL both ways and Jensen-Shannon.

Steps, per block of paired positions (the engine's `chunk_size`, as scoring):
1. each model's body runs once over its ids; per block, each head gives logits (c, V);
2. each side's statistics as scoring computes them (`engine.stats`): its native result;
3. `divergences` over 16-row slices in float32 (`div_rows`, torch.compile'd when the engine's
   statistics are): lp = log_softmax(logits), p = exp(lp), KL(p || q) = sum p (lp - lq), and
   JS = (KL(p || m) + KL(q || m)) / 2 with m = (p + q) / 2; entries with p = 0 add nothing.
Only three numbers per position leave the device; no [positions, V] matrix is kept.
"""

from __future__ import annotations

import json
import logging
import weakref

import numpy as np
import torch

from explorer.engine.interface import STAT_ROWS, Forward, ModelEngine, forward_pass
from explorer.engine.passes import blocks, bounds
from explorer.engine.passes.scoring import chunked_rows, score_ids
from explorer.errors import ExplorerError
from explorer.results.compare import Comparison
from explorer.results.scores import Rows, assemble

log = logging.getLogger(__name__)
_FINGERPRINTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _fingerprint(engine: ModelEngine) -> tuple:
    """What makes two tokenizers the same: vocabulary (id -> bytes) and, where known, the merges and added tokens."""
    if engine not in _FINGERPRINTS:
        spec = {}
        backend = getattr(engine.tokenizer, "backend_tokenizer", None)
        if backend is not None:
            full = json.loads(backend.to_str())
            spec = {
                "model": full.get("model"),
                "added": [(t["id"], t["content"]) for t in full.get("added_tokens") or []],
            }
        _FINGERPRINTS[engine] = (engine.vocab_size, tuple(engine.vocab), json.dumps(spec, sort_keys=True))
    return _FINGERPRINTS[engine]


def same_tokenizer(ea: ModelEngine, eb: ModelEngine) -> bool:
    """True when both models read the same ids the same way (identical vocabulary and merges, same output size)."""
    return ea is eb or _fingerprint(ea) == _fingerprint(eb)


def div_rows(la: torch.Tensor, lb: torch.Tensor) -> torch.Tensor:
    """(3, r) float32: KL(p || q), KL(q || p) and JS, in nats, between the rows of logits la and lb (r, V).

    JS = (sum p log(2p / (p + q)) + sum q log(2q / (p + q))) / 2: a ratio, so equal rows give exactly 0.
    """
    lp, lq = la.float().log_softmax(-1), lb.float().log_softmax(-1)  # (r, V)
    p, q = lp.exp(), lq.exp()
    d = lp - lq
    kl_ab = torch.where(p > 0, p * d, 0.0).sum(-1)  # an entry with p = 0 adds nothing, even where q = 0
    kl_ba = torch.where(q > 0, -q * d, 0.0).sum(-1)
    s = (p + q).clamp_min(torch.finfo(torch.float32).tiny)
    js = 0.5 * (torch.special.xlogy(p, 2 * p / s) + torch.special.xlogy(q, 2 * q / s)).sum(-1)
    return torch.stack([kl_ab, kl_ba, js]).clamp_min(0.0)  # >= 0 up to rounding


_COMPILED: dict = {}  # "fn": div_rows compiled (made on first use), or None where it cannot be built or run


def _compiled(la: torch.Tensor, lb: torch.Tensor) -> torch.Tensor:
    """div_rows through torch.compile; on any compiler failure, eager from then on."""
    if "fn" not in _COMPILED:
        try:
            _COMPILED["fn"] = torch.compile(div_rows, dynamic=False)
        except Exception as err:  # noqa: BLE001 - any backend failure means: stay eager
            log.warning("torch.compile unavailable for divergences (%s); eager", err)
            _COMPILED["fn"] = None
    if _COMPILED["fn"] is not None:
        try:
            return _COMPILED["fn"](la, lb)
        except Exception as err:  # noqa: BLE001 - a compiler that cannot build: stay eager
            log.warning("torch.compile failed for divergences (%s); eager", str(err).splitlines()[0][:200])
            _COMPILED["fn"] = None
    return div_rows(la, lb)


def _kernel(engine: Forward):
    """The divergence kernel: compiled (fixed STAT_ROWS-row shapes) when the engine compiles its statistics, else eager."""
    return _compiled if engine.compiled else div_rows


def divergences(la: torch.Tensor, lb: torch.Tensor, kernel=div_rows) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(kl_ab, kl_ba, js), each (c,) float32 nats, between the rows of logits la and lb (c, V), STAT_ROWS rows at a time."""
    outs = []
    for a in range(0, la.shape[0], STAT_ROWS):
        x, y = la[a : a + STAT_ROWS], lb[a : a + STAT_ROWS]
        c = x.shape[0]
        if c < STAT_ROWS and kernel is not div_rows:  # the compiled kernel sees one shape
            x, y = (
                torch.cat([x, x.new_zeros((STAT_ROWS - c, x.shape[1]))]),
                torch.cat([y, y.new_zeros((STAT_ROWS - c, y.shape[1]))]),
            )
        outs.append(kernel(x, y)[:, :c])
    out = torch.cat(outs, -1) if outs else la.new_zeros((3, 0), dtype=torch.float32)
    return out[0], out[1], out[2]


@torch.inference_mode()
def paired_rows(
    ea: Forward,
    eb: Forward,
    ha: torch.Tensor,
    hb: torch.Tensor,
    ta: torch.Tensor,
    tb: torch.Tensor,
    k: int,
) -> tuple[Rows, Rows, np.ndarray]:
    """Rows of a and b for paired positions (hidden ha, hb (m, H); actual ids ta, tb (m,)), and
    (3, m) float32: KL(a || b), KL(b || a), JS of each pair."""
    m = ha.shape[0]
    if m == 0:
        return Rows.empty(k), Rows.empty(k), np.zeros((3, 0), np.float32)
    chunk = ea.chunk_size(m)
    ra, rb, div = [], [], []
    for s in range(0, m, chunk):
        bounds.check()
        cut = slice(s, s + chunk)
        # the output layers, statistics and divergences on every core, as scoring's blocks (scoring.chunked_rows)
        a, b, d = ea.compute_numbers(_pair_block, ea, eb, ha[cut], hb[cut], ta[cut], tb[cut], k)
        ra.append(a)
        rb.append(b)
        div.append(d)
    return Rows.concat(ra), Rows.concat(rb), np.concatenate(div, -1)


def _pair_block(
    ea: Forward, eb: Forward, ha: torch.Tensor, hb: torch.Tensor, ta: torch.Tensor, tb: torch.Tensor, k: int
) -> tuple[Rows, Rows, np.ndarray]:
    """One block of `paired_rows`: its two [c, V] logits alive only in here."""
    la = blocks.logits(ea, ha)  # (c, V)
    lb = blocks.logits(eb, hb).to(la.device)  # (c, V)
    a, b = ea.stats(la, ta, k).to_rows(), eb.stats(lb, tb.to(la.device), k).to_rows()
    return a, b, torch.stack(divergences(la, lb, _kernel(ea))).cpu().numpy()


def top_k_only(k: int) -> None:
    """A comparison keeps a top-k per position, never two whole distributions (`k` itself the faces checked)."""
    if k == -1:  # allowed by a server without a top-k cap
        raise ExplorerError(
            "A comparison keeps a top-k per position, never two whole distributions: ask for `logprobs` 0 or more.",
            param="logprobs",
            code="invalid_value",
        )


def _check_pair(ea: ModelEngine, eb: ModelEngine) -> None:
    if not same_tokenizer(ea, eb):
        raise ExplorerError(
            f"{ea.name} and {eb.name} have different tokenizers: compare them on a text "
            "(aligned by characters), not on token ids.",
            param="model_b",
            code="different_tokenizers",
        )


def compare_ids(ea: ModelEngine, eb: ModelEngine, ids: list[int], k: int = 5) -> Comparison:
    """Models a and b (same tokenizer) on the same `ids`: both results and, per position, KL both ways and JS."""
    top_k_only(k)
    _check_pair(ea, eb)
    ea.check_ids(ids)
    eb.check_ids(ids)
    fa, fb = forward_pass(ea), forward_pass(eb)
    with torch.inference_mode():
        xa = torch.tensor([ids], device=fa.device)  # (1, T)
        xb = xa.to(fb.device)
        ha, hb = blocks.prefill(fa, xa, keep=False)[0], blocks.prefill(fb, xb, keep=False)[0]  # (T, H) each
        rows_a, rows_b, div = paired_rows(fa, fb, ha[:-1], hb[:-1], xa[0, 1:], xb[0, 1:], k)
    a = assemble(ea.name, ea.vocab, ids, len(ids), rows_a, first=1, prompt_k=k)
    b = assemble(eb.name, eb.vocab, ids, len(ids), rows_b, first=1, prompt_k=k)
    pad = np.full((3, 1), np.nan, np.float32)  # position 0: no context
    kl_ab, kl_ba, js = np.concatenate([pad, div], -1)
    return Comparison(a, b, "models", 0, 0, kl_ab, kl_ba, js)


def compare_prompts(
    engine: ModelEngine,
    prompt_a: list[int],
    prompt_b: list[int],
    continuation: list[int],
    k: int = 5,
) -> Comparison:
    """One model, the same `continuation` after two prompts: its tokens paired, with KL both ways and JS."""
    top_k_only(k)
    if not prompt_a or not prompt_b:
        raise ExplorerError(
            "Each prompt needs at least one token: type a prompt (or use a model that adds a BOS token).",
            param="prompt",
            code="empty_text",
        )
    if not continuation:
        raise ExplorerError(
            "The continuation is empty: type the text to score after both prompts.",
            param="continuation",
            code="empty_text",
        )
    ids_a, ids_b = list(prompt_a) + list(continuation), list(prompt_b) + list(continuation)
    engine.check_ids(ids_a)
    engine.check_ids(ids_b)
    here = forward_pass(engine)
    parts = {}
    with torch.inference_mode():
        for side, ids, n in (("a", ids_a, len(prompt_a)), ("b", ids_b, len(prompt_b))):
            x = torch.tensor([ids], device=here.device)
            h = blocks.prefill(here, x, keep=False)[0]  # (T, H)
            parts[side] = (h[n - 1 : -1], x[0, n:], chunked_rows(here, h[: n - 1], x[0, 1:n], k))
        (ha, ta, pre_a), (hb, tb, pre_b) = parts["a"], parts["b"]
        rows_a, rows_b, div = paired_rows(here, here, ha, hb, ta, tb, k)
    a = assemble(engine.name, engine.vocab, ids_a, len(ids_a), Rows.concat([pre_a, rows_a]), first=1, prompt_k=k)
    b = assemble(engine.name, engine.vocab, ids_b, len(ids_b), Rows.concat([pre_b, rows_b]), first=1, prompt_k=k)
    return Comparison(a, b, "prompts", len(prompt_a), len(prompt_b), *div)


def encode_with_offsets(engine: ModelEngine, text: str) -> tuple[list[int], np.ndarray]:
    """(ids as `engine.encode` gives them, (T, 2) int64 character [start, end) of each token in `text`)."""
    ids = engine.encode(text)
    if engine.tokenizer is None:  # a remote model tokenized on its server: no offsets to align with
        raise ExplorerError(
            f"{engine.name} has no tokenizer here to align its tokens with another model's: pass --backend-tokenizer.",
            param="model",
        )
    try:
        enc = engine.tokenizer(text, add_special_tokens=True, return_offsets_mapping=True)
    except NotImplementedError:
        raise ExplorerError(
            f"{engine.name}'s tokenizer gives no character offsets (a slow tokenizer): compare it with a "
            "model of the same tokenizer, or install its fast tokenizer.",
            param="model",
        ) from None
    if list(enc["input_ids"]) != ids:
        raise ExplorerError(f"{engine.name}'s tokenizer gives different ids with offsets: cannot align.", param="model")
    return ids, np.array(enc["offset_mapping"], np.int64).reshape(-1, 2)


def compare_text(ea: ModelEngine, eb: ModelEngine, text: str, k: int = 5) -> Comparison:
    """Models a and b on `text`: per position (same tokenizer), or per aligned character span (tokenizers differ)."""
    top_k_only(k)
    if same_tokenizer(ea, eb):
        return compare_ids(ea, eb, ea.encode(text), k)
    ids_a, char_a = encode_with_offsets(ea, text)
    ids_b, char_b = encode_with_offsets(eb, text)
    a, b = score_ids(ea, ids_a, k), score_ids(eb, ids_b, k)
    return Comparison(a, b, "spans", text=text, char_a=char_a, char_b=char_b)


def compare_prompt_texts(
    engine: ModelEngine, prompt_a: str, prompt_b: str, continuation: str, k: int = 5
) -> Comparison:
    """`compare_prompts` on texts: each prompt with the tokenizer's special tokens (an empty one is just its BOS),
    the continuation tokenized on its own, without them."""
    for name, value in (("prompt_a", prompt_a), ("prompt_b", prompt_b), ("continuation", continuation)):
        if not isinstance(value, str):
            raise ExplorerError(f"`{name}` must be a text.", param=name, code="invalid_type")
    pa, pb = (engine.tokenize(p, add_special_tokens=True) for p in (prompt_a, prompt_b))
    cont = engine.tokenize(continuation, add_special_tokens=False) if continuation else []
    return compare_prompts(engine, pa, pb, cont, k)
