"""WhatIf: one position's next-token distribution, raw and after a sampler setting, side by side.

Numpy only; the engine fills it (explorer.engine.analyses.whatif) with the same sampler code that
generation uses. Units: natural log, entropy in nats. Processed entries the sampler cut are -inf.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from explorer.floats import list_to_json, to_json
from explorer.results.scores import TokenScores

STEPS = ("top-k", "top-p", "min-p")  # the sampler's filters, in the order they are switched on to name a cut


def context_of(r: TokenScores, pos: int) -> tuple[list[int], list[int]]:
    """(prompt ids, output ids) the sampler sees when it picks token `pos` of `r` (penalties count them)."""
    ids = r.token_ids.tolist()
    if r.output_k is not None and pos >= r.n_prompt:  # a generated token: the prompt, and the output so far
        return ids[: r.n_prompt], ids[r.n_prompt : pos]
    return ids[:pos], []


@dataclass(frozen=True)
class Side:
    """The actual token's numbers in one distribution."""

    logprob: float  # -inf when the sampler cut it
    rank: int  # 1-based, entries >= it
    entropy: float  # nats, of the whole distribution

    @property
    def prob(self) -> float:
        return math.exp(self.logprob) if self.logprob > -math.inf else 0.0


@dataclass(eq=False)
class WhatIf:
    pos: int  # the position of `result` whose distribution this is
    actual_id: int  # the token that is really there
    settings: dict  # SamplerSettings.to_dict() of the what-if
    raw: Side
    processed: Side
    raw_ids: np.ndarray  # (N,) int64, the N most likely entries of the raw distribution
    raw_logprobs: np.ndarray  # (N,) float32
    processed_of_raw: np.ndarray  # (N,) float32, those entries after the sampler (-inf: cut)
    cut_by: list[str]  # (N,) for each raw entry: "" (kept) or the filter that cut it ("top-k", "top-p", "min-p")
    processed_ids: np.ndarray  # (N,) int64, the N most likely entries after the sampler
    processed_logprobs: np.ndarray  # (N,) float32
    kept: int  # entries the sampler can still draw
    cut_counts: dict = field(default_factory=dict)  # filter -> entries of the whole vocabulary it cut
    greedy: bool = False  # temperature 0: the sampler takes the top processed entry
    pieces: dict = field(default_factory=dict)  # raw bytes of the ids above (and the actual one), when known
    draws: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # (D,) tokens drawn at these settings

    @property
    def vocab_cut(self) -> int:
        return sum(self.cut_counts.values())

    def to_dict(self) -> dict:
        def side(s: Side):
            return {"logprob": to_json(s.logprob), "rank": s.rank, "entropy": float(s.entropy)}

        return {
            "pos": self.pos,
            "actual_id": self.actual_id,
            "settings": self.settings,
            "raw": side(self.raw),
            "processed": side(self.processed),
            "raw_ids": self.raw_ids.tolist(),
            "raw_logprobs": list_to_json(self.raw_logprobs),
            "processed_of_raw": list_to_json(self.processed_of_raw),
            "cut_by": list(self.cut_by),
            "processed_ids": self.processed_ids.tolist(),
            "processed_logprobs": list_to_json(self.processed_logprobs),
            "kept": self.kept,
            "cut_counts": dict(self.cut_counts),
            "greedy": self.greedy,
            "draws": self.draws.tolist(),
        }
