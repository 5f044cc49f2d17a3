"""ids -> TokenScores in one forward pass, statistics per chunk of positions."""

from __future__ import annotations

import numpy as np
import torch

from explorer.engine.model import HEAD_MIN_ROWS, Engine
from explorer.result import TokenScores
from explorer.settings import check_k


def _head_block(engine: Engine, hidden: torch.Tensor) -> torch.Tensor:
    """logits (c, V) of hidden (c, H), padded to HEAD_MIN_ROWS rows for the matmul."""
    c = hidden.shape[0]
    if c >= HEAD_MIN_ROWS:
        return engine.head(hidden)
    pad = hidden.new_zeros((HEAD_MIN_ROWS - c, hidden.shape[1]))
    return engine.head(torch.cat([hidden, pad]))[:c]


def empty_stats(t: int, k: int, vocab_size: int) -> dict[str, np.ndarray | None]:
    """The stats dict of `t` unscored-shaped rows (zeros), k top entries; a (t, V) `full` when k = -1."""
    kk = max(k, 0)
    return {"logprob": np.zeros(t, np.float32), "rank": np.zeros(t, np.int64), "entropy": np.zeros(t, np.float32),
            "top_ids": np.zeros((t, kk), np.int64), "top_logprobs": np.zeros((t, kk), np.float32),
            "full": np.zeros((t, vocab_size), np.float32) if k == -1 else None}


def chunked_stats(engine: Engine, hidden: torch.Tensor, targets: torch.Tensor, k: int,
                  chunk: int | None = None) -> dict[str, np.ndarray]:
    """Stats of positions `hidden` (T, H) for `targets` (T,): numpy logprob/rank/entropy (T,), top (T, k), full (T, V) when k=-1.

    The output layer and the statistics run on `chunk` positions at a time.
    """
    chunk = chunk or engine.chunk_size(hidden.shape[0])
    full = k == -1
    parts = []
    for a in range(0, hidden.shape[0], chunk):
        logits = _head_block(engine, hidden[a : a + chunk])  # (c, V)
        parts.append(engine.stats(logits, targets[a : a + chunk], k, full))
    if not parts:
        return empty_stats(0, k, engine.vocab_size)
    cat = lambda name: torch.cat([getattr(p, name) for p in parts]).cpu().numpy()  # noqa: E731
    return {"logprob": cat("logprob"), "rank": cat("rank"), "entropy": cat("entropy"),
            "top_ids": cat("top_ids"), "top_logprobs": cat("top_logprobs"), "full": cat("full") if full else None}


def assemble(engine: Engine, ids: list[int], n_prompt: int, stats: dict, first: int, width: int, **kw) -> TokenScores:
    """TokenScores for `ids`, with `stats` rows filling positions first.. (the rest unscored)."""
    n = len(ids)
    logprobs = np.full(n, np.nan, np.float32)
    ranks = np.zeros(n, np.int64)
    entropy = np.full(n, np.nan, np.float32)
    top_ids = np.full((n, width), -1, np.int64)
    top_lp = np.full((n, width), -np.inf, np.float32)
    m = len(stats["logprob"])
    logprobs[first : first + m] = stats["logprob"]
    ranks[first : first + m] = stats["rank"]
    entropy[first : first + m] = stats["entropy"]
    kk = stats["top_ids"].shape[1]
    top_ids[first : first + m, :kk] = stats["top_ids"]
    top_lp[first : first + m, :kk] = stats["top_logprobs"]
    full = None
    if stats.get("full") is not None:
        full = np.full((n, engine.vocab_size), np.nan, np.float32)
        full[first : first + m] = stats["full"]
    used = set(ids) | set(top_ids[top_ids >= 0].tolist())
    pieces = {i: engine.vocab[i] for i in (range(engine.vocab_size) if full is not None else sorted(used))}
    return TokenScores(model=engine.name, token_ids=np.array(ids, np.int64), token_bytes=[engine.vocab[i] for i in ids],
                       n_prompt=n_prompt, logprobs=logprobs, ranks=ranks, entropy=entropy, top_ids=top_ids,
                       top_logprobs=top_lp, pieces=pieces, full_logprobs=full, vocab_size=engine.vocab_size, **kw)


@torch.inference_mode()
def score_ids(engine: Engine, ids: list[int], k: int = 5, chunk: int | None = None) -> TokenScores:
    """Score `ids` exactly as given: position i gets log p(ids[i] | ids[:i]); position 0 is unscored."""
    k = check_k(k, "logprobs", allow_full=True)
    engine.check_ids(ids)
    x = torch.tensor([ids], device=engine.device)  # (1, T)
    hidden, _ = engine.body(x)  # (T, H)
    stats = chunked_stats(engine, hidden[:-1], x[0, 1:], k, chunk)
    return assemble(engine, ids, len(ids), stats, first=1, width=max(k, 0), prompt_k=k)


def score_text(engine: Engine, text: str, k: int = 5, chunk: int | None = None) -> TokenScores:
    """Score `text`, tokenized with the tokenizer's special tokens."""
    return score_ids(engine, engine.encode(text), k, chunk)
