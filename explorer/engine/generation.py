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
from explorer.engine.scoring import assemble, chunked_stats, empty_stats
from explorer.result import TokenScores
from explorer.settings import SamplerSettings


@dataclass
class Step:
    token_id: int
    logprob: float
    rank: int
    entropy: float
    top_ids: np.ndarray  # (k,) int64
    top_logprobs: np.ndarray  # (k,) float32
    text: str  # characters this token completes
    start: int  # character offset of `text` in the generated text


@dataclass
class Done:
    finish_reason: str  # "stop" | "length"
    text: str  # the generated text, cut before a stop string
    prompt_stats: dict | None  # prompt positions' statistics when asked


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


def _numbers(engine: Engine, logits: torch.Tensor, tok: torch.Tensor, k: int) -> np.ndarray:
    """[logprob, rank, entropy, top-k ids, top-k logprobs] of one decode step, on the host."""
    with torch.inference_mode():
        st = engine.stats(logits, tok, k)
        return torch.cat([st.logprob, st.rank.float(), st.entropy, st.top_ids[0].float(), st.top_logprobs[0]]).cpu().numpy()


@torch.inference_mode()
def stream(engine: Engine, ids: list[int], s: SamplerSettings, sample: int = 0,
           want_prompt: bool = True) -> Iterator[Step | Done]:
    """Generate from prompt `ids`; yields Steps, then Done. Sample i uses seed + i."""
    engine.check_ids(ids)
    gen = None
    if not s.greedy:
        gen = torch.Generator(device=engine.device)
        gen.manual_seed(((s.seed if s.seed is not None else secrets.randbelow(2**31)) + sample) % 2**63)
    k = s.logprobs or 0
    x = torch.tensor([ids], device=engine.device)  # (1, T)
    hidden, past = engine.body(x, cache=True)  # (T, H)
    prompt_stats = None
    if want_prompt and s.prompt_logprobs is not None:
        prompt_stats = chunked_stats(engine, hidden[:-1], x[0, 1:], s.prompt_logprobs)
    last = hidden[-1:]  # (1, H)
    budget = min(s.max_tokens, engine.context - len(ids))
    dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
    text, pending, finish = "", [], "length"
    for step in range(budget):
        raw = engine.head(last).float()  # (1, V)
        proc = raw if s.greedy else process(raw, s)
        tok = raw.argmax(-1) if s.greedy else pick(proc, gen)  # (1,)
        tid = int(tok)  # the one host sync per step: EOS, stop strings and streaming need the token
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
        row = numbers.result()
        pending.append(Step(tid, float(row[0]), int(row[1]), float(row[2]), row[3 : 3 + k].astype(np.int64),
                            row[3 + k :].astype(np.float32), piece, start))
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
    yield Done(finish, text, prompt_stats)


def with_seed(s: SamplerSettings) -> SamplerSettings:
    """The settings with a concrete seed, drawn at random when none was given (so any run can be replayed)."""
    return s if s.seed is not None or s.greedy else replace(s, seed=secrets.randbelow(2**31))


def collect(engine: Engine, ids: list[int], s: SamplerSettings, steps: list[Step], done: Done,
            prompt_stats: dict | None) -> TokenScores:
    """TokenScores of prompt `ids` + generated `steps`."""
    k = s.logprobs or 0
    pk = s.prompt_logprobs
    width = max(k, pk if pk and pk > 0 else 0)
    if prompt_stats is None:
        prompt_stats = empty_stats(0, 0, engine.vocab_size)
    n_p = len(prompt_stats["logprob"])
    # place prompt rows at positions 1..n_p, generated rows right after the prompt
    rows = {
        "logprob": np.concatenate([np.full(len(ids) - 1 - n_p, np.nan, np.float32), prompt_stats["logprob"], [st.logprob for st in steps]]).astype(np.float32),
        "rank": np.concatenate([np.zeros(len(ids) - 1 - n_p, np.int64), prompt_stats["rank"], [st.rank for st in steps]]).astype(np.int64),
        "entropy": np.concatenate([np.full(len(ids) - 1 - n_p, np.nan, np.float32), prompt_stats["entropy"], [st.entropy for st in steps]]).astype(np.float32),
    }
    top_ids = np.full((len(ids) - 1 + len(steps), width), -1, np.int64)
    top_lp = np.full(top_ids.shape, -np.inf, np.float32)
    pk_w = prompt_stats["top_ids"].shape[1]
    top_ids[len(ids) - 1 - n_p : len(ids) - 1, :pk_w] = prompt_stats["top_ids"]
    top_lp[len(ids) - 1 - n_p : len(ids) - 1, :pk_w] = prompt_stats["top_logprobs"]
    for j, st in enumerate(steps):
        top_ids[len(ids) - 1 + j, :k] = st.top_ids
        top_lp[len(ids) - 1 + j, :k] = st.top_logprobs
    rows["top_ids"], rows["top_logprobs"] = top_ids, top_lp
    if prompt_stats.get("full") is not None:
        rows["full"] = np.concatenate([prompt_stats["full"], np.full((len(steps), engine.vocab_size), np.nan, np.float32)])
    all_ids = list(ids) + [st.token_id for st in steps]
    joined = "".join(st.text for st in steps)
    return assemble(engine, all_ids, len(ids), rows, first=1, width=width, mode=s.mode, sampler=s.to_dict(),
                    prompt_k=pk, output_k=k, finish_reason=done.finish_reason,
                    output_text=done.text if done.text != joined else None)


def generate(engine: Engine, ids: list[int], s: SamplerSettings) -> list[TokenScores]:
    """n samples of prompt `ids`, each a TokenScores (prompt + generated tokens)."""
    s = with_seed(s)
    out, prompt_stats = [], None
    for i in range(s.n):
        steps, done = [], None
        for ev in stream(engine, ids, s, sample=i, want_prompt=i == 0):
            if isinstance(ev, Done):
                done = ev
            else:
                steps.append(ev)
        prompt_stats = done.prompt_stats if i == 0 else prompt_stats
        out.append(collect(engine, ids, s, steps, done, prompt_stats))
    return out
