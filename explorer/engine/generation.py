"""KV-cached decode loop that records each sampled token's logprob, rank, entropy and top-k.

`stream` yields a Step per token as soon as it is certain to be kept (tokens that
could begin a stop string are held back), then one Done. Closing the iterator
early stops the work at once. `generate` collects it into TokenScores.
"""

from __future__ import annotations

import codecs
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np
import torch

from explorer.engine.model import Engine
from explorer.engine.sampling import pick, process
from explorer.engine.scoring import Check, chunked_rows
from explorer.result import Rows, TokenScores, assemble
from explorer.settings import SamplerSettings


@dataclass
class Step:
    token_id: int
    rows: Rows  # this token's numbers: one row
    text: str  # characters this token completes
    start: int  # character offset of `text` in the generated text

    @property
    def logprob(self) -> float:
        return float(self.rows.logprobs[0])


@dataclass
class Done:
    finish_reason: str  # "stop" | "length"
    text: str  # the generated text, cut before a stop string
    prompt_rows: Rows | None  # prompt positions 1.. when asked


def _stop_at(text: str, stops: tuple[str, ...], since: int) -> int:
    """Earliest start of a stop string in text[since:] (absolute index), or -1."""
    hits = [j for s in stops if (j := text.find(s, since)) >= 0]
    return min(hits) if hits else -1


def _held(text: str, stops: tuple[str, ...]) -> int:
    """Length of the longest tail of `text` that could still grow into a stop string."""
    best = 0
    for s in stops:
        for n in range(min(len(s) - 1, len(text)), best, -1):
            if s.startswith(text[-n:]):
                best = n
                break
    return best


def _numbers(engine: Engine, logits: torch.Tensor, tok: torch.Tensor, k: int) -> Rows:
    """The one row of a decode step, on the host."""
    with torch.inference_mode():
        return engine.stats(logits, tok, k).to_rows()


@torch.inference_mode()
def stream(engine: Engine, ids: list[int], s: SamplerSettings, sample: int = 0,
           want_prompt: bool = True, check: Check | None = None) -> Iterator[Step | Done]:
    """Generate from prompt `ids`; yields Steps, then Done. Sample i uses seed + i; `check()` runs before each step."""
    engine.check_ids(ids)
    gen = None
    if not s.greedy:
        gen = torch.Generator(device=engine.device)
        gen.manual_seed(((s.seed if s.seed is not None else secrets.randbelow(2**31)) + sample) % 2**63)
    k = s.logprobs or 0
    x = torch.tensor([ids], device=engine.device)  # (1, T)
    hidden, past = engine.body(x, cache=True)  # (T, H)
    prompt_rows = None
    if want_prompt and s.prompt_logprobs is not None:
        prompt_rows = chunked_rows(engine, hidden[:-1], x[0, 1:], s.prompt_logprobs, check=check)
    last = hidden[-1:]  # (1, H)
    budget = min(s.max_tokens, engine.context - len(ids))
    dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
    text, pending, finish, out_ids = "", [], "length", []
    for step in range(budget):
        if check is not None:
            check()
        raw = engine.head(last).float()  # (1, V)
        if s.greedy and not s.penalised:
            proc = raw
        elif s.penalised:
            proc = process(raw, s, x[0], torch.tensor(out_ids, dtype=torch.long, device=raw.device))
        else:
            proc = process(raw, s)
        tok = proc.argmax(-1) if s.greedy else pick(proc, gen)  # (1,)
        tid = int(tok)  # the one host sync per step: EOS, stop strings and streaming need the token
        out_ids.append(tid)
        if tid in engine.eos_ids:
            finish = "stop"
            break
        numbers = engine.background(_numbers, engine, raw if s.mode == "raw" else proc, tok, k)
        piece = dec.decode(engine.vocab[tid])
        since = max(0, len(text) - max((len(t) for t in s.stop), default=0))
        start, text = len(text), text + piece
        cut = _stop_at(text, s.stop, since) if s.stop else -1
        if cut < 0 and step + 1 < budget:  # the next forward pass runs while the numbers are computed
            last, past = engine.body(tok[None], past)
        pending.append(Step(tid, numbers.result(), piece, start))
        if cut >= 0:
            text = text[:cut]
            yield from (p for p in pending if p.start < cut)
            pending, finish = [], "stop"
            break
        safe = len(text) - _held(text, s.stop) if s.stop else len(text) + 1
        while pending and pending[0].start < safe:
            yield pending.pop(0)
    tail = dec.decode(b"", final=True)
    text += tail
    yield from pending
    yield Done(finish, text, prompt_rows)


def with_seed(s: SamplerSettings) -> SamplerSettings:
    """The settings with a concrete seed, drawn at random when none was given (so any run can be replayed)."""
    return s if s.seed is not None or s.greedy else replace(s, seed=secrets.randbelow(2**31))


def _padded(rows: Rows, width: int, full: bool, vocab_size: int) -> Rows:
    """`rows` with top-k lists padded to `width` (-1, -inf), and NaN full rows when `full` and it has none."""
    m, kk = len(rows), rows.top_ids.shape[1]
    ids = np.full((m, width), -1, np.int64)
    lps = np.full((m, width), -np.inf, np.float32)
    ids[:, :kk], lps[:, :kk] = rows.top_ids, rows.top_logprobs
    f = rows.full if rows.full is not None or not full else np.full((m, vocab_size), np.nan, np.float32)
    return Rows(rows.logprobs, rows.ranks, rows.entropy, ids, lps, f)


def collect(engine: Engine, ids: list[int], s: SamplerSettings, steps: list[Step], done: Done | None = None) -> TokenScores:
    """TokenScores of prompt `ids` + generated `steps`; `done=None`: a partial result while streaming (no prompt numbers)."""
    k = s.logprobs or 0
    prompt = done.prompt_rows if done is not None else None
    pk = s.prompt_logprobs if prompt is not None else None
    width = max(k, pk if pk and pk > 0 else 0)
    full = prompt is not None and prompt.full is not None
    parts = [_padded(st.rows, width, full, engine.vocab_size) for st in steps]
    if prompt is not None:
        parts.insert(0, _padded(prompt, width, full, engine.vocab_size))
    rows = Rows.concat(parts) if parts else Rows.empty(width)
    first = 1 if prompt is not None else len(ids)
    joined = "".join(st.text for st in steps)
    text = done.text if done is not None else joined
    return assemble(engine.name, engine.vocab, list(ids) + [st.token_id for st in steps], len(ids), rows, first=first,
                    mode=s.mode, sampler=s.to_dict(), prompt_k=pk, output_k=k,
                    finish_reason=done.finish_reason if done is not None else None,
                    output_text=text if text != joined else None)


def step_scores(engine: Engine, step: Step, s: SamplerSettings) -> TokenScores:
    """One streamed token as a TokenScores of its own (no prompt), for the exporters' per-token entries."""
    return assemble(engine.name, engine.vocab, [step.token_id], 0, step.rows, first=0, mode=s.mode,
                    sampler=s.to_dict(), output_k=s.logprobs or 0)


def generate(engine: Engine, ids: list[int], s: SamplerSettings, check: Check | None = None) -> list[TokenScores]:
    """n samples of prompt `ids`, each a TokenScores (prompt + generated tokens); the prompt is scored once."""
    s = with_seed(s)
    out, prompt_rows = [], None
    for i in range(s.n):
        steps, done = [], None
        for ev in stream(engine, ids, s, sample=i, want_prompt=i == 0, check=check):
            if isinstance(ev, Done):
                done = ev
            else:
                steps.append(ev)
        prompt_rows = done.prompt_rows if i == 0 else prompt_rows
        out.append(collect(engine, ids, s, steps, replace(done, prompt_rows=prompt_rows)))
    return out
