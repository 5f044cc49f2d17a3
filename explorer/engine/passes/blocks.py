"""The two rules every pass of a model here is built of, written once:

1. `logits(engine, hidden)`: the output layer on a block of hidden states (c, H) -> (c, V), the block padded to
   HEAD_MIN_ROWS rows first (the same BLAS kernel for every block, so how positions are chunked cannot change a
   logit); where the body gave logits already (llama.cpp: `split_head` False) the head is the identity and nothing pads.
2. `prefill(engine, x, past)`: a prompt x (B, T) read through the KV cache PREFILL positions a forward pass (chunked
   prefill: the same numbers as one pass, to float rounding, with bounded memory), `bounds.check()` before every
   pass, so a request's deadline or stop ends a long prompt between passes. `prefill_blocks` yields each pass's
   block as it is read, for callers that score (and report progress) as they go.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

from explorer.engine.interface import HEAD_MIN_ROWS, Forward
from explorer.engine.passes import bounds

PREFILL = 512  # positions per forward pass through the KV cache: bounded memory, progress and a stop between blocks


def logits(engine: Forward, hidden: torch.Tensor) -> torch.Tensor:
    """logits (c, V) of hidden (c, H), padded to HEAD_MIN_ROWS rows for the matmul (none where the body gave
    logits already: the head is then the identity)."""
    c = hidden.shape[0]
    if c >= HEAD_MIN_ROWS or not engine.split_head:
        return engine.head(hidden)
    pad = hidden.new_zeros((HEAD_MIN_ROWS - c, hidden.shape[1]))
    return engine.head(torch.cat([hidden, pad]))[:c]


def prefill_blocks(
    engine: Forward,
    x: torch.Tensor,
    past: Any = None,
    *,
    keep: bool = True,
    last: bool = False,
    step: int | None = None,
) -> Iterator[tuple[int, int, torch.Tensor, Any]]:
    """(a, b, hidden (b - a, H) of positions a..b-1 (their last row only with `last`), the KV cache after them) for
    x (B, T) after the cache `past`, `step` (default PREFILL) positions a forward pass; `keep` False: the last pass
    keeps no cache (nothing reads on after the prompt)."""
    t, step = x.shape[1], max(1, step or PREFILL)
    for a in range(0, t, step):
        b = min(a + step, t)
        bounds.check()
        # `last` only where asked, as every pass read a prompt before this module: a body wrapped to count or slow
        # its passes (tests, bench) keeps the (ids, past, cache) call it was written for
        more = {"last": True} if last else {}
        hidden, past = engine.body(x[:, a:b], past, cache=keep or b < t, **more)
        yield a, b, hidden, past


def prefill(
    engine: Forward, x: torch.Tensor, past: Any = None, *, keep: bool = True, last: bool = False
) -> tuple[torch.Tensor, Any]:
    """(hidden (T, H) of prompt x (1, T) read after the cache `past` (with `last`, each pass's last row only), the KV
    cache after it (None where `keep` is False)): `prefill_blocks`' passes joined."""
    parts, after = [], past
    for _, _, hidden, after in prefill_blocks(engine, x, past, keep=keep, last=last):  # noqa: B007 (the last one)
        parts.append(hidden)
    if not parts:
        raise ValueError("prefill needs at least one position")  # callers check their ids first
    return (torch.cat(parts) if len(parts) > 1 else parts[0]), after
