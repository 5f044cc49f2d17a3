"""Logits -> logprob, rank, entropy and top-k of the actual token, in float32.

One read of each logit row gives everything: max, exp, sum (log-sum-exp),
the actual token's logprob, the count of entries >= it (rank), the entropy, and
the top-k. Only k + 3 numbers per position leave this function.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class Stats:
    logprob: torch.Tensor  # (c,) float32
    rank: torch.Tensor  # (c,) int64, 1-based, ties count against the token
    entropy: torch.Tensor  # (c,) float32, nats
    top_ids: torch.Tensor  # (c, k) int64
    top_logprobs: torch.Tensor  # (c, k) float32
    full: torch.Tensor | None = None  # (c, V) float32 logprobs, only when asked (k = -1)


def row_stats(logits: torch.Tensor, targets: torch.Tensor, k: int, *, full: bool = False) -> Stats:
    """Statistics of rows `logits` (c, V) for the actual ids `targets` (c,); k top entries.

    Filtered entries may be -inf (processed mode); they get probability 0.
    """
    x = logits.float()  # (c, V)
    lp = x - x.amax(-1, keepdim=True)  # (c, V), <= 0
    e = lp.exp()  # (c, V), unnormalised probabilities
    s = e.sum(-1, keepdim=True)  # (c, 1)
    lp.sub_(s.log())  # (c, V) logprobs, in place
    lp_tgt = lp.gather(-1, targets[:, None])  # (c, 1)
    rank = (lp >= lp_tgt).sum(-1)  # (c,)
    plogp = e.mul_(lp).nan_to_num_(0.0, 0.0, 0.0)  # e * logp, in place; 0 * -inf -> 0
    entropy = -plogp.sum(-1) / s[:, 0]  # (c,)
    if k > 0:
        top_lp, top_ids = lp.topk(k, dim=-1)  # (c, k)
    else:
        top_lp = lp.new_zeros((x.shape[0], 0))
        top_ids = targets.new_zeros((x.shape[0], 0))
    return Stats(lp_tgt[:, 0], rank, entropy, top_ids, top_lp, lp if full else None)
