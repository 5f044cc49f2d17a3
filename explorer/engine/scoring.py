"""ids -> TokenScores in one forward pass, statistics per chunk of positions."""

from __future__ import annotations

from collections.abc import Callable

import torch

from explorer.engine.model import HEAD_MIN_ROWS, Engine
from explorer.result import Rows, TokenScores, assemble
from explorer.settings import check_k

Check = Callable[[], None]  # raises to stop the work (client gone, time limit); called between chunks and steps


def _head_block(engine: Engine, hidden: torch.Tensor) -> torch.Tensor:
    """logits (c, V) of hidden (c, H), padded to HEAD_MIN_ROWS rows for the matmul."""
    c = hidden.shape[0]
    if c >= HEAD_MIN_ROWS:
        return engine.head(hidden)
    pad = hidden.new_zeros((HEAD_MIN_ROWS - c, hidden.shape[1]))
    return engine.head(torch.cat([hidden, pad]))[:c]


def chunked_rows(engine: Engine, hidden: torch.Tensor, targets: torch.Tensor, k: int, chunk: int | None = None,
                 check: Check | None = None) -> Rows:
    """Rows of positions `hidden` (T, H) for `targets` (T,): k top entries (k = -1: full rows).

    The output layer and the statistics run on `chunk` positions at a time.
    """
    t = hidden.shape[0]
    if t == 0:  # a one-token prompt: nothing to score
        return Rows.empty(k, engine.vocab_size)
    chunk = chunk or engine.chunk_size(t)
    parts = []
    for a in range(0, t, chunk):
        if check is not None:
            check()
        logits = _head_block(engine, hidden[a : a + chunk])  # (c, V)
        parts.append(engine.stats(logits, targets[a : a + chunk], k, k == -1).to_rows())
    return Rows.concat(parts)


@torch.inference_mode()
def score_ids(engine: Engine, ids: list[int], k: int = 5, chunk: int | None = None, check: Check | None = None) -> TokenScores:
    """Score `ids` exactly as given: position i gets log p(ids[i] | ids[:i]); position 0 is unscored."""
    k = check_k(k, "logprobs", allow_full=True)
    engine.check_ids(ids)
    x = torch.tensor([ids], device=engine.device)  # (1, T)
    hidden, _ = engine.body(x)  # (T, H)
    rows = chunked_rows(engine, hidden[:-1], x[0, 1:], k, chunk, check)
    return assemble(engine.name, engine.vocab, ids, len(ids), rows, first=1, prompt_k=k)


def score_text(engine: Engine, text: str, k: int = 5, chunk: int | None = None, check: Check | None = None) -> TokenScores:
    """Score `text`, tokenized with the tokenizer's special tokens."""
    return score_ids(engine, engine.encode(text), k, chunk, check)
