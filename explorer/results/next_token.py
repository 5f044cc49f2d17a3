"""NextToken: the model's whole distribution of the token after a text, and what a sampler draws from it at a
temperature (the simple start's *What comes next?*). Numpy only."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explorer.rules.sampler import is_greedy


@dataclass(eq=False)
class NextToken:
    model: str
    text: str  # the text the token would follow
    logprobs: np.ndarray  # (V,) float32, natural log: the raw distribution (temperature 1)
    vocab: Sequence[bytes]  # each id's bytes

    def probs(self, t: float) -> np.ndarray:
        """(V,) float64 probabilities at temperature `t`: softmax(logprobs / t); t = 0 puts all on the likeliest."""
        lp = np.where(np.isfinite(self.logprobs), self.logprobs, -np.inf).astype(np.float64)
        if is_greedy(t):
            p = np.zeros_like(lp)
            p[int(np.argmax(lp))] = 1.0
            return p
        x = lp / t
        x -= x.max()
        p = np.exp(x)
        return p / p.sum()

    def entropy(self, t: float) -> float:
        """Entropy (nats) of the distribution at temperature t."""
        p = self.probs(t)
        p = p[p > 0]
        return float(-(p * np.log(p)).sum())

    def top(self, t: float, n: int = 10) -> list[tuple[int, float]]:
        """The n likeliest tokens at temperature t: (id, probability), descending."""
        p = self.probs(t)
        ids = np.argsort(-p, kind="stable")[:n]
        return [(int(i), float(p[i])) for i in ids]

    def draw(self, t: float, n: int, seed: int) -> list[int]:
        """n tokens drawn independently at temperature t with numpy's generator seeded by `seed`."""
        p = self.probs(t)
        return [int(i) for i in np.random.default_rng(seed).choice(len(p), size=n, p=p)]

    def text_of(self, i: int) -> str:
        return self.vocab[i].decode("utf-8", "replace")
