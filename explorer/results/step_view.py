"""StepView: one generated token's step seen twice, as the model's raw distribution and as what the sampler drew from.

Numpy only; the engine fills it on demand (explorer/engine/analyses/step_view.py), the token detail renders it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explorer.results.scores import Rows


@dataclass(eq=False)
class StepView:
    pos: int  # the generated token's position in its TokenScores
    token_id: int  # the token that was drawn there
    raw: Rows  # one row: the model's own distribution (logprob, rank, entropy, top-k)
    processed: Rows  # one row: after penalties, temperature, top-k, top-p, min-p (cut entries -inf)
    raw_top_processed: np.ndarray  # (k,) float32: processed logprob of each raw top-k entry; -inf: the sampler cut it
    kept: int  # vocabulary entries the sampler kept (finite processed logits)
    kept_raw_mass: float  # raw probability of the kept entries together (1.0 when nothing was cut)
    greedy: bool  # temperature 0: the most likely processed entry is taken, no draw
    vocab_size: int
    pieces: dict[int, bytes]  # raw bytes of every id listed in `raw` and `processed`

    @property
    def cut(self) -> np.ndarray:
        """(k,) bool: raw top-k entries the sampler removed."""
        return ~np.isfinite(self.raw_top_processed)

    @property
    def changed(self) -> bool:
        """Whether the sampler changed the distribution (cut entries or moved a logprob)."""
        moved = not np.allclose(self.raw.logprobs, self.processed.logprobs, atol=1e-5)
        return self.kept < self.vocab_size or moved
