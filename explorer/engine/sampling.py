"""Sampler steps as pure tensor functions on logits (1, V); filtered entries become -inf.

Order, as transformers applies them: temperature, then top-k, then top-p.
"""

from __future__ import annotations

import torch

from explorer.settings import SamplerSettings


def apply_temperature(logits: torch.Tensor, t: float) -> torch.Tensor:
    return logits / t if t != 1.0 else logits


def apply_top_k(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Keep the k largest entries of each row (0 = off)."""
    if k <= 0 or k >= logits.shape[-1]:
        return logits
    kth = logits.topk(k, dim=-1).values[..., -1:]  # (b, 1)
    return logits.masked_fill(logits < kth, float("-inf"))


def apply_top_p(logits: torch.Tensor, p: float) -> torch.Tensor:
    """Keep the smallest set of most likely entries whose mass reaches p (1 = off)."""
    if p >= 1.0:
        return logits
    sorted_lg, order = logits.sort(dim=-1, descending=True)  # (b, V)
    probs = sorted_lg.softmax(-1)
    before = probs.cumsum(-1) - probs  # mass strictly before each entry
    drop_sorted = before >= p  # the first entry is always kept
    drop = drop_sorted.scatter(-1, order, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))


def process(logits: torch.Tensor, s: SamplerSettings) -> torch.Tensor:
    """The distribution the sampler draws from (greedy: the raw logits, as transformers does)."""
    if s.greedy:
        return logits
    return apply_top_p(apply_top_k(apply_temperature(logits, s.temperature), s.top_k), s.top_p)


def pick(processed: torch.Tensor, gen: torch.Generator | None) -> torch.Tensor:
    """(b,) next ids: a draw from softmax(processed). (Greedy decoding takes the argmax of the raw logits.)"""
    probs = processed.float().softmax(-1)
    return torch.multinomial(probs, 1, generator=gen)[:, 0]
