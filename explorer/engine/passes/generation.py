"""KV-cached decode loop that records each sampled token's logprob, rank, entropy and top-k.

`stream` yields a Step per token as soon as it is certain to be kept (tokens that
could begin a stop string are held back), then one Done. Closing the iterator
early stops the work at once. `generate` collects it into TokenScores.

A generation ends (vLLM's rules) on: EOS (unless `ignore_eos`) or a `stop_token_ids`
id, which is kept as the last token (in token_ids and logprobs; its text is empty when
it is a special token and `skip_special_tokens`); a stop string, cut from the text
(kept with `include_stop_str_in_output`) while every token generated up to the one that
completed it stays in token_ids and logprobs, as vLLM keeps them; or `max_tokens`. Before `min_tokens` tokens,
EOS and the stop ids are masked out of the distribution the sampler draws from.

Two layers, as vLLM and nanochat keep detokenizing out of the sampler:
1. the decode loop, ids only (`prefill`, then `sampled`): the vocabulary checks, the prompt through the KV cache
   (and its numbers when asked), then per step the output layer, the distribution, the draw, the token's numbers
   beside the next forward pass, EOS and the stop ids, the budget;
2. the text layer (`decode_text`, `TextLayer`): UTF-8 across tokens, special tokens' silence, stop strings cut and
   the tokens that could begin one held back. It tells the loop, before its next forward pass, whether to go on.
A served model (explorer/engine/remote/engine.py) streams its own Steps (`engine.stream`).
"""

from __future__ import annotations

import codecs
import copy
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, cast

import numpy as np
import torch

from explorer.engine.interface import Forward, ModelEngine, forward_pass
from explorer.engine.kernels.listed import listed_rows
from explorer.engine.kernels.sampling import pick, process
from explorer.engine.passes import blocks, bounds
from explorer.engine.passes.events import Done, Step
from explorer.engine.passes.scoring import chunked_rows
from explorer.errors import ExplorerError
from explorer.results.scores import Rows, TokenScores, assemble
from explorer.rules.sampler import SamplerSettings

__all__ = [
    "WAIT_S",
    "Done",
    "DrawnToken",
    "Prefilled",
    "Rules",
    "Step",
    "TextLayer",
    "TokenText",
    "collect",
    "decode_text",
    "draw",
    "generate",
    "holding",
    "prefill",
    "rules",
    "samples",
    "seeded_generator",
    "solo_tokens",
    "step_numbers",
    "step_scores",
    "stream",
    "with_seed",
]


@dataclass
class DrawnToken:
    """One generated token as the decode loop gives it: ids and numbers, no text."""

    id: int
    rows: Rows  # its numbers: one row
    ends: bool  # EOS (unless ignore_eos) or a stop id: the generation's last token


@dataclass
class Prefilled:
    """The prompt read: what the decode loop starts from."""

    x: torch.Tensor  # (1, T) the prompt's ids
    past: object  # the KV cache of all of them
    last: torch.Tensor  # (1, H) the hidden state of the last position
    prompt_rows: Rows | None  # prompt positions 1.. when asked


def _stop_at(text: str, stops: tuple[str, ...], since: int) -> tuple[int, str]:
    """(start, string) of the earliest stop string in text[since:], or (-1, "")."""
    hits = [(j, s) for s in stops if (j := text.find(s, since)) >= 0]
    return min(hits) if hits else (-1, "")


def _held(text: str, stops: tuple[str, ...]) -> int:
    """Length of the longest tail of `text` that could still grow into a stop string."""
    best = 0
    for s in stops:
        for n in range(min(len(s) - 1, len(text)), best, -1):
            if s.startswith(text[-n:]):
                best = n
                break
    return best


def _clipped(step: Step, end: int) -> Step:
    """`step` with its text cut at character `end` of the generated text (a stop string starts there)."""
    return replace(step, text=step.text[: max(0, end - step.start)], start=min(step.start, end))


def step_numbers(engine: Forward, logits: torch.Tensor, tok: torch.Tensor, k: int, ids: torch.Tensor | None) -> Rows:
    """The one row of a decode step, on the host; with `ids` (q,), those entries replace the top-k."""
    with torch.inference_mode():
        if ids is not None:
            return listed_rows(engine, logits, tok, ids[None])
        return engine.stats(logits, tok, k, full=k == -1).to_rows()  # k = -1 (uncapped servers): the whole row


def _ids_tensor(ids, device) -> torch.Tensor | None:
    return torch.tensor(sorted(ids), dtype=torch.long, device=device) if ids else None


def _distribution(
    raw: torch.Tensor, s: SamplerSettings, x: torch.Tensor, out_ids: list[int], masked: torch.Tensor | None
) -> torch.Tensor:
    """What the sampler draws from at this step (the raw logits themselves when nothing changes them)."""
    if s.penalised:
        proc = process(raw, s, x[0], torch.tensor(out_ids, dtype=torch.long, device=raw.device))
    elif s.greedy:
        proc = raw
    else:
        proc = process(raw, s)
    if masked is not None:  # before min_tokens: EOS and the stop ids cannot be drawn
        proc = proc.index_fill(-1, masked, float("-inf"))
    return proc


def seeded_generator(engine: Forward, s: SamplerSettings, sample: int) -> torch.Generator | None:
    """The draw's random generator, seeded with seed + sample (a random seed when none); None when greedy."""
    if s.greedy:
        return None
    gen = torch.Generator(device=engine.device)
    gen.manual_seed(((s.seed if s.seed is not None else secrets.randbelow(2**31)) + sample) % 2**63)
    return gen


# ---- 1. the decode loop: ids only ---------------------------------------------------------------
def prefill(engine: Forward, ids: list[int], s: SamplerSettings, want_prompt: bool, resume=None) -> Prefilled:
    """The prompt checked and read through the body (or `resume`: its KV cache and last hidden state (1, H))."""
    # 1. the prompt and the ids the settings name are within the model
    engine.check_ids(ids)
    bad = [i for i in (*s.stop_token_ids, *s.logprob_ids) if i >= engine.vocab_size]
    if bad:
        raise ExplorerError(
            f"Token id {bad[0]} is outside the vocabulary (0..{engine.vocab_size - 1}).",
            param="logprob_token_ids" if bad[0] in s.logprob_ids else "stop_token_ids",
            code="invalid_token_id",
        )
    # 2. the prompt through the KV cache (a branch resumes from its own), its numbers when asked
    x = torch.tensor([ids], device=engine.device)  # (1, T)
    if resume is None:
        # PREFILL positions a pass (as scoring reads a text): between passes the request's bound is asked and the model
        # is let go, so the other generations of a batch (explorer/engine/batching/scheduler.py) take their steps
        hidden, past = blocks.prefill(
            engine, x, last=not (want_prompt and s.prompt_logprobs is not None)
        )  # (T or 1, H)
    else:
        (past, hidden), want_prompt = resume, False
    prompt_rows = None
    if want_prompt and s.prompt_logprobs is not None:
        prompt_rows = chunked_rows(engine, hidden[:-1], x[0, 1:], s.prompt_logprobs)
    return Prefilled(x, past, hidden[-1:], prompt_rows)


@dataclass
class Rules:
    """What a request's settings make of each decode step: its numbers' k, the ids that end it, the ids masked
    before min_tokens, the listed ids (in the order asked: vLLM answers them so), and its token budget."""

    k: int
    enders: set[int]
    masked: torch.Tensor | None  # (e,) EOS and the stop ids
    wanted: torch.Tensor | None  # (q,) logprob_token_ids
    budget: int  # most tokens: max_tokens within the context


def rules(engine: Forward, start: Prefilled, s: SamplerSettings) -> Rules:
    """The Rules of a generation from `start` with settings `s`."""
    enders = set(s.stop_token_ids) | (set() if s.ignore_eos else engine.eos_ids)
    wanted = (
        torch.tensor(list(dict.fromkeys(s.logprob_ids)), dtype=torch.long, device=engine.device)
        if s.logprob_ids
        else None
    )
    budget = min(s.max_tokens, engine.context - start.x.shape[1])
    return Rules(s.top_entries, enders, _ids_tensor(enders, engine.device), wanted, budget)


def draw(
    raw: torch.Tensor, s: SamplerSettings, r: Rules, x: torch.Tensor, out_ids: list[int], gen: torch.Generator | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """(the logits its numbers describe (1, V): raw or processed as `s.mode` says, the next id (1,)) at the step
    after `out_ids`, from this step's raw logits (1, V) in float32."""
    proc = _distribution(raw, s, x, out_ids, r.masked if len(out_ids) < s.min_tokens else None)
    tok = proc.argmax(-1) if s.greedy else pick(proc, gen)  # (1,)
    return (raw if s.mode == "raw" else proc), tok


@torch.inference_mode()
def sampled(
    engine: Forward,
    start: Prefilled,
    s: SamplerSettings,
    sample: int,
    more: Callable[[int, bool], bool],
) -> Iterator[DrawnToken]:
    """Tokens drawn after `start`, each with its numbers, until an ending token, the budget, or `more(id, ends)`
    False (asked before the next forward pass, which then runs while this token's numbers are computed)."""
    gen = seeded_generator(engine, s, sample)
    r = rules(engine, start, s)
    last, past = start.last, start.past
    out_ids: list[int] = []
    for step in range(r.budget):
        bounds.check()
        raw = engine.head(last).float()  # (1, V)
        described, tok = draw(raw, s, r, start.x, out_ids, gen)
        tid = int(tok)  # the one host sync per step: EOS, stop strings and streaming need the token
        out_ids.append(tid)
        numbers = engine.background(step_numbers, engine, described, tok, r.k, r.wanted)
        ends = tid in r.enders
        go = more(tid, ends) and not ends
        if go and step + 1 < r.budget:  # the next forward pass runs while the numbers are computed
            last, past = engine.body(tok[None], past)
        yield DrawnToken(tid, numbers.result(), ends)
        if not go:
            return


# ---- 2. the text layer: pieces, special tokens, stop strings -------------------------------------
class TextLayer:
    """The generated text, a token at a time: `more` (the decode loop's question) adds a token's piece and finds
    the earliest stop string; `piece`, `start`, `cut` and `hit` describe the last token added."""

    def __init__(self, engine: Forward, s: SamplerSettings):
        self.engine, self.s = engine, s
        self.dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.longest = max((len(t) for t in s.stop), default=0)
        self.text, self.piece, self.start, self.cut, self.hit = "", "", 0, -1, ""

    def more(self, tid: int, ends: bool) -> bool:
        """Add token `tid` (`ends`: it ends the generation); whether no stop string is complete yet."""
        s = self.s
        # the token that ends it adds no text (vLLM), unless include_stop_str_in_output; nor a skipped special one
        silent = (ends and not s.include_stop_str_in_output) or (
            s.skip_special_tokens and tid in self.engine.special_ids
        )
        self.piece = "" if silent else self.dec.decode(self.engine.vocab[tid])
        self.start, self.text = len(self.text), self.text + self.piece
        since = max(0, self.start - self.longest)
        self.cut, self.hit = _stop_at(self.text, s.stop, since) if s.stop and not ends else (-1, "")
        return self.cut < 0

    def safe(self) -> int:
        """Characters of the text no stop string can still claim."""
        return len(self.text) - _held(self.text, self.s.stop) if self.s.stop else len(self.text) + 1

    def view(self) -> TokenText:
        """What `more` found for the last token added, kept apart from the tokens added after it."""
        return TokenText(self.piece, self.start, self.cut, self.hit, self.safe())


@dataclass(frozen=True)
class TokenText:
    """The text layer's findings for one token (see `TextLayer`): a decode loop run on another thread (the scheduler's)
    may add the next tokens before the request reads this one's."""

    piece: str
    start: int
    cut: int
    hit: str
    safe: int


def solo_tokens(
    engine: Forward, start: Prefilled, s: SamplerSettings, sample: int, t: TextLayer
) -> Iterator[tuple[DrawnToken, TokenText]]:
    """The request's own decode loop, on this thread."""
    for tok in sampled(engine, start, s, sample, t.more):
        yield tok, t.view()


@torch.inference_mode()
def decode_text(
    engine: Forward,
    ids: list[int],
    s: SamplerSettings,
    sample: int = 0,
    want_prompt: bool = True,
    resume=None,
) -> Iterator[Step | Done]:
    """Steps, then Done, from a forward pass here: the decode loop's tokens with their text (see the module)."""
    batched = engine.scheduler if resume is None else None  # a branch's cache stays its own
    alone = engine.one_at_a_time
    if batched is None and alone is not None:  # an engine whose generations must not interleave (llama.cpp)
        with holding(alone):
            yield from _decode_text(engine, ids, s, sample, want_prompt, resume, None)
        return
    yield from _decode_text(engine, ids, s, sample, want_prompt, resume, batched)


WAIT_S = 0.1  # how often a request that waits (its turn, its batch's next token) asks its own bound


@contextmanager
def holding(lock: Any) -> Iterator[None]:
    """Hold `lock` for the block (None: none to hold), waiting for it as long as the request's bound allows."""
    if lock is None:
        yield
        return
    while not lock.acquire(timeout=WAIT_S):
        bounds.check()
    try:
        yield
    finally:
        lock.release()


@torch.inference_mode()
def _decode_text(
    engine: Forward, ids: list[int], s: SamplerSettings, sample: int, want_prompt: bool, resume, batched
) -> Iterator[Step | Done]:
    with engine.for_batch() if batched is not None else nullcontext():
        start = prefill(engine, ids, s, want_prompt, resume)
    t = TextLayer(engine, s)
    tokens = batched.tokens(start, s, sample, t) if batched is not None else solo_tokens(engine, start, s, sample, t)
    yield from _texted(t, s, tokens, start.prompt_rows)


@torch.inference_mode()
def _texted(
    t: TextLayer, s: SamplerSettings, tokens: Iterator[tuple[DrawnToken, TokenText]], prompt_rows
) -> Iterator[Step | Done]:
    """The Steps, then Done, of one sample's tokens and the text layer's findings for them."""
    pending: list[Step] = []
    done = Done("length", "", prompt_rows)
    for tok, v in tokens:
        pending.append(Step(tok.id, tok.rows, v.piece, v.start))
        if tok.ends:
            stop_id = tok.id if tok.id in s.stop_token_ids else None
            done = replace(done, finish_reason="stop", stop_token=v.piece == "", stop_reason=stop_id)
            break
        if v.cut >= 0:  # every generated token stays, the one that completed the stop string too (vLLM)
            end = v.cut + len(v.hit) if s.include_stop_str_in_output else v.cut
            t.text = t.text[:end]
            kept = [_clipped(p, end) for p in pending]
            yield from kept
            pending, done = [], replace(done, finish_reason="stop", stop_reason=v.hit, stop_token=kept[-1].text == "")
            break
        while pending and pending[0].start < v.safe:
            yield pending.pop(0)
    if not isinstance(done.stop_reason, str):  # a stop string cut the text: no tail after it
        t.text += t.dec.decode(b"", final=True)
    yield from pending
    yield replace(done, text=t.text)


class Samples:
    """The n samples of one prompt (`samples`), each a stream of Steps then Done; leaving the `with` block ends
    every sample not read to its end (its place in the batch too)."""

    def __init__(self, streams: list[Iterator[Step | Done]], closers: list[Callable[[], None]] | None = None):
        self.streams, self._closers = streams, closers or []

    def __enter__(self) -> list[Iterator[Step | Done]]:
        return self.streams

    def __exit__(self, *exc) -> None:
        for it in self.streams:
            close = getattr(it, "close", None)
            if close is not None:
                close()
        for close in self._closers:
            close()


def samples(engine: ModelEngine, ids: list[int], s: SamplerSettings, want_prompt: bool = True) -> Samples:
    """The `s.n` samples of prompt `ids`: sample i is `stream(engine, ids, s, i, ...)`, the prompt's numbers with
    the first only. Where a scheduler batches the engine's generations (explorer/engine/batching/scheduler.py) the prompt
    is read once here and every sample joins the batch now, so they decode together whatever order the caller
    reads them in; elsewhere each sample runs when it is first read."""
    batched = forward_pass(engine).scheduler if engine.capabilities.forward else None
    if s.n == 1 or batched is None:
        return Samples([stream(engine, ids, s, sample=i, want_prompt=want_prompt and i == 0) for i in range(s.n)])
    bounds.check_new_tokens(s.max_tokens)
    with torch.inference_mode(), cast(Forward, engine).for_batch():
        start = prefill(cast(Forward, engine), ids, s, want_prompt)
    texts = [TextLayer(cast(Forward, engine), s) for _ in range(s.n)]
    tickets = [batched.submit(start, s, i, t, shared=True) for i, t in enumerate(texts)]
    streams = [
        _texted(t, s, batched.receive(k), start.prompt_rows if i == 0 else None)
        for i, (t, k) in enumerate(zip(texts, tickets))
    ]
    return Samples(streams, [partial(batched.close, k) for k in tickets])


def stream(
    engine: ModelEngine,
    ids: list[int],
    s: SamplerSettings,
    sample: int = 0,
    want_prompt: bool = True,
    resume=None,
) -> Iterator[Step | Done]:
    """Generate from prompt `ids`; yields Steps, then Done. Sample i uses seed + i; `bounds.check()` runs before each step.

    The engine generates (`engine.stream`). `resume`: (KV cache of all of `ids`, hidden state of its last
    position (1, H)): decode from there (branches, on a forward pass here).
    """
    bounds.check_new_tokens(s.max_tokens)
    if resume is not None:
        yield from decode_text(forward_pass(engine), ids, s, sample, want_prompt, resume)
        return
    yield from engine.stream(ids, s, sample, want_prompt)


def with_seed(s: SamplerSettings) -> SamplerSettings:
    """The settings with a concrete seed, drawn at random when none was given (so any run can be replayed).

    The copy is not checked again (`replace` would run every check of `__post_init__` a second time): the settings
    were, and a seed below 2**31 is in range."""
    if s.seed is not None or s.greedy:
        return s
    seeded = copy.copy(s)
    object.__setattr__(seeded, "seed", secrets.randbelow(2**31))
    return seeded


def _padded(rows: Rows, width: int, full: bool, vocab_size: int) -> Rows:
    """`rows` with top-k lists padded to `width` (-1, -inf), and NaN full rows when `full` and it has none."""
    m, kk = len(rows), rows.top_ids.shape[1]
    ids = np.full((m, width), -1, np.int64)
    lps = np.full((m, width), -np.inf, np.float32)
    ids[:, :kk], lps[:, :kk] = rows.top_ids, rows.top_logprobs
    f = rows.full if rows.full is not None or not full else np.full((m, vocab_size), np.nan, np.float32)
    ranks = None
    if rows.top_ranks is not None:
        ranks = np.zeros((m, width), np.int64)
        ranks[:, :kk] = rows.top_ranks
    return Rows(rows.logprobs, rows.ranks, rows.entropy, ids, lps, f, ranks, rows.varentropy)


def collect(
    engine: ModelEngine, ids: list[int], s: SamplerSettings, steps: list[Step], done: Done | None = None
) -> TokenScores:
    """TokenScores of prompt `ids` + generated `steps`; `done=None`: a partial result while streaming (no prompt numbers)."""
    k = s.output_k
    prompt = done.prompt_rows if done is not None else None
    pk = s.prompt_logprobs if prompt is not None else None
    width = max(k, pk if pk and pk > 0 else 0)
    full = (prompt is not None and prompt.full is not None) or any(st.rows.full is not None for st in steps)
    parts = [_padded(st.rows, width, full, engine.vocab_size) for st in steps]
    if prompt is not None:
        parts.insert(0, _padded(prompt, width, full, engine.vocab_size))
    rows = Rows.concat(parts) if parts else Rows.empty(width)
    first = 1 if prompt is not None else len(ids)
    text = done.text if done is not None else "".join(st.text for st in steps)
    out = b"".join(engine.vocab[st.token_id] for st in steps).decode("utf-8", errors="replace")
    return assemble(
        engine.name,
        engine.vocab,
        list(ids) + [st.token_id for st in steps],
        len(ids),
        rows,
        first=first,
        mode=s.mode,
        sampler=s.to_dict(),
        prompt_k=pk,
        output_k=k,
        finish_reason=done.finish_reason if done is not None else None,
        output_text=text if text != out else None,
        stop_reason=done.stop_reason if done is not None else None,
        stop_token=done.stop_token if done is not None else False,
    )


def step_scores(engine: ModelEngine, step: Step, s: SamplerSettings) -> TokenScores:
    """One streamed token as a TokenScores of its own (no prompt), for the exporters' per-token entries."""
    return assemble(
        engine.name,
        engine.vocab,
        [step.token_id],
        0,
        step.rows,
        first=0,
        mode=s.mode,
        sampler=s.to_dict(),
        output_k=s.output_k,
        output_text=step.text,
    )


def generate(engine: ModelEngine, ids: list[int], s: SamplerSettings) -> list[TokenScores]:
    """n samples of prompt `ids`, each a TokenScores (prompt + generated tokens); the prompt is scored once."""
    s = with_seed(s)
    out, prompt_rows = [], None
    with samples(engine, ids, s) as streams:
        for i, events in enumerate(streams):
            steps: list[Step] = []
            done: Done | None = None
            for ev in events:
                if isinstance(ev, Done):
                    done = ev
                else:
                    steps.append(ev)
            assert done is not None  # a stream always ends with one Done
            prompt_rows = done.prompt_rows if i == 0 else prompt_rows
            out.append(collect(engine, ids, s, steps, replace(done, prompt_rows=prompt_rows)))
    return out
