"""Sampler steps as pure tensor functions on logits (1, V); filtered entries become -inf.

Order, as vLLM applies them: repetition, frequency and presence penalties (on the
raw logits, also when greedy), then temperature, top-k, top-p and min-p. Greedy
decoding takes the argmax of the penalised logits (the raw ones when no penalty is set).
"""

from __future__ import annotations

import torch

from explorer.rules.sampler import SamplerSettings


def apply_repetition_penalty(logits: torch.Tensor, seen: torch.Tensor, penalty: float) -> torch.Tensor:
    """Entries of ids `seen` (prompt and output) divided by `penalty` when positive, multiplied when not (1 = off)."""
    if penalty == 1.0 or seen.numel() == 0:
        return logits
    ids = seen.unique()[None].expand(logits.shape[0], -1)  # (b, n)
    picked = logits.gather(-1, ids)
    return logits.scatter(-1, ids, torch.where(picked > 0, picked / penalty, picked * penalty))


def apply_frequency_presence(
    logits: torch.Tensor, output: torch.Tensor, frequency: float, presence: float
) -> torch.Tensor:
    """logits - frequency * count - presence * (count > 0), counts over the generated ids `output` (0, 0 = off)."""
    if (frequency == 0.0 and presence == 0.0) or output.numel() == 0:
        return logits
    counts = torch.bincount(output, minlength=logits.shape[-1]).to(logits.dtype)  # (V,)
    return logits - frequency * counts - presence * (counts > 0).to(logits.dtype)


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
    drop_sorted = before >= p
    drop_sorted[..., 0] = False  # the most likely entry is always kept (also when p underflows float32)
    drop = drop_sorted.scatter(-1, order, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))


def apply_min_p(logits: torch.Tensor, p: float) -> torch.Tensor:
    """Keep entries whose probability is at least p times the most likely one's (0 = off), as vLLM's min-p.

    A ratio to the top entry, so it keeps the same set before or after top-k (vLLM v1 applies it before top-k and
    top-p, transformers and vLLM v0 after top-p, as here: with top-p also set the two orders can differ)."""
    if p <= 0.0:
        return logits
    probs = logits.softmax(-1)
    return logits.masked_fill(probs < p * probs.max(-1, keepdim=True).values, float("-inf"))


def penalised(
    logits: torch.Tensor, s: SamplerSettings, prompt: torch.Tensor | None = None, output: torch.Tensor | None = None
) -> torch.Tensor:
    """The logits after the penalties alone; `prompt`/`output`: the ids so far (1-D)."""
    empty = logits.new_zeros(0, dtype=torch.long)
    prompt = empty if prompt is None else prompt
    output = empty if output is None else output
    x = apply_repetition_penalty(logits, torch.cat([prompt, output]), s.repetition_penalty)
    return apply_frequency_presence(x, output, s.frequency_penalty, s.presence_penalty)


def process(
    logits: torch.Tensor, s: SamplerSettings, prompt: torch.Tensor | None = None, output: torch.Tensor | None = None
) -> torch.Tensor:
    """The distribution the sampler draws from (greedy: the penalised logits, as vLLM does)."""
    x = penalised(logits, s, prompt, output)
    if s.greedy:
        return x
    return apply_min_p(apply_top_p(apply_top_k(apply_temperature(x, s.temperature), s.top_k), s.top_p), s.min_p)


def pick(processed: torch.Tensor, gen: torch.Generator | None) -> torch.Tensor:
    """(b,) next ids: a draw from softmax(processed). (Greedy decoding takes the argmax of the processed logits.)"""
    probs = processed.float().softmax(-1)
    return torch.multinomial(probs, 1, generator=gen)[:, 0]
