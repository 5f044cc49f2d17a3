"""Logprobs and ranks of listed vocabulary ids at each position (vLLM's `logprob_token_ids`), beside the usual numbers.

Steps, per block of positions (c, V):
1. the ordinary statistics of the actual token (`engine.stats` with k = 0);
2. log_softmax of the block in float32;
3. the listed ids' logprobs by gather (c, q), and each one's rank as a count of entries
   >= it, one listed id at a time (never a (c, q, V) tensor);
4. the listed entries in the order asked (as vLLM answers them), their true ranks kept beside them.
"""

from __future__ import annotations

import torch

from explorer.results.scores import Rows


def listed_width(listed: list[int] | list[list[int]]) -> int:
    """How many ids are listed per position: one list for every position, or one list per position."""
    return len(listed[0]) if listed and isinstance(listed[0], list) else len(listed)


def listed_rows(engine, logits: torch.Tensor, targets: torch.Tensor, listed: torch.Tensor) -> Rows:
    """Rows of `logits` (c, V) for `targets` (c,) whose entries are the ids `listed` (c, q), with their true ranks."""
    base = engine.stats(logits, targets, 0).to_rows()
    lp = torch.log_softmax(logits.float(), -1)  # (c, V)
    vals = lp.gather(-1, listed)  # (c, q)
    ranks = torch.stack([(lp >= vals[:, j : j + 1]).sum(-1) for j in range(listed.shape[1])], -1)  # (c, q)
    return Rows(
        base.logprobs,
        base.ranks,
        base.entropy,
        listed.cpu().numpy(),
        vals.cpu().numpy(),
        None,
        ranks.cpu().numpy(),
        base.varentropy,
    )
