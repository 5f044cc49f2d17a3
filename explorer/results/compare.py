"""Comparison: two results of the same text side by side (two models, or one model after two prompts).

Numpy only; the engine fills it (explorer.engine.analyses.compare). Three kinds:
- "models": two models that share a tokenizer score the same ids; per position both
  logprobs, ranks and the divergences between the two full next-token distributions;
- "prompts": one model scores the same continuation after two prompts; the continuation's
  tokens are paired (`first_a + j` in `a` with `first_b + j` in `b`), with the same numbers;
- "spans": the tokenizers differ, so positions cannot be paired: the text is cut where both
  tokenizations have a boundary and each span gets the summed logprob of each model's tokens
  in it. Divergences need a shared vocabulary and are absent.
Units: natural log; KL and Jensen-Shannon in nats.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from explorer.floats import from_json, list_to_json
from explorer.results.scores import TokenScores
from explorer.results.shown import show

if TYPE_CHECKING:
    import pandas as pd

FORMAT = "logprob-explorer/comparison"
VERSION = 1
KINDS = ("models", "prompts", "spans")
SPANS_NOTE = (
    "The tokenizers differ, so the positions are aligned by characters into spans; KL and "
    "Jensen-Shannon need a shared vocabulary and are shown only for models with the same tokenizer."
)


def _none(width: int) -> np.ndarray:
    """An empty array: the field does not apply to this kind of comparison."""
    return np.zeros((0,) if width == 1 else (0, width), np.float32 if width == 1 else np.int64)


def aligned_spans(char_a: np.ndarray, char_b: np.ndarray, n_chars: int) -> np.ndarray:
    """(s, 2) int64 [start, end) character spans tiling [0, n_chars): cut only where both
    tokenizations have a token boundary and no token of either straddles the cut.

    `char_a` (n_a, 2), `char_b` (n_b, 2): each token's [start, end) in the text (special tokens (0, 0)).
    """
    if n_chars == 0:
        return np.zeros((0, 2), np.int64)
    depth = np.zeros(n_chars + 2, np.int64)  # tokens strictly covering each position
    bounds = []
    for c in (np.asarray(char_a, np.int64).reshape(-1, 2), np.asarray(char_b, np.int64).reshape(-1, 2)):
        real = c[c[:, 1] > c[:, 0]]
        np.add.at(depth, real[:, 0] + 1, 1)
        np.add.at(depth, real[:, 1], -1)
        b = np.zeros(n_chars + 1, bool)
        b[np.clip(real.ravel(), 0, n_chars)] = True
        b[[0, n_chars]] = True
        bounds.append(b)
    inside = np.cumsum(depth)[: n_chars + 1] > 0
    cuts = np.flatnonzero(bounds[0] & bounds[1] & ~inside)
    return np.stack([cuts[:-1], cuts[1:]], -1)


def span_sums(spans: np.ndarray, chars: np.ndarray, logprobs: np.ndarray) -> np.ndarray:
    """(s,) float64: the sum of the scored tokens' logprobs in each span (a token belongs to the span
    holding its start); NaN for a span with no scored token of this tokenization."""
    s = len(spans)
    if s == 0:
        return np.zeros(0)
    which = np.clip(np.searchsorted(spans[:, 0], np.asarray(chars)[:, 0], side="right") - 1, 0, s - 1)
    scored = ~np.isnan(logprobs)
    total = np.bincount(which[scored], weights=logprobs[scored].astype(np.float64), minlength=s)
    count = np.bincount(which[scored], minlength=s)
    return np.where(count > 0, total, np.nan)


@dataclass(eq=False)
class Comparison:
    a: TokenScores
    b: TokenScores
    kind: str  # "models" | "prompts" | "spans"
    first_a: int = 0  # pair j is position first_a + j of a ...
    first_b: int = 0  # ... and position first_b + j of b
    kl_ab: np.ndarray = field(default_factory=lambda: _none(1))  # (m,) float32, KL(p_a || p_b), nats; empty for spans
    kl_ba: np.ndarray = field(default_factory=lambda: _none(1))  # (m,) float32, KL(p_b || p_a)
    js: np.ndarray = field(
        default_factory=lambda: _none(1)
    )  # (m,) float32, Jensen-Shannon divergence in nats (<= log 2)
    text: str = ""  # "spans": the shared text
    char_a: np.ndarray = field(default_factory=lambda: _none(2))  # "spans": (n_a, 2) int64, each token's [start, end)
    char_b: np.ndarray = field(default_factory=lambda: _none(2))

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown comparison kind {self.kind!r}")

    # ---- paired positions ("models", "prompts") ----------------------------------------
    @property
    def paired(self) -> bool:
        return self.kind != "spans"

    @property
    def m(self) -> int:
        """Number of pairs (0 for spans)."""
        return len(self.kl_ab)

    @property
    def pos_a(self) -> np.ndarray:
        return self.first_a + np.arange(self.m)

    @property
    def pos_b(self) -> np.ndarray:
        return self.first_b + np.arange(self.m)

    @property
    def logprob_a(self) -> np.ndarray:
        return self.a.logprobs[self.pos_a]

    @property
    def logprob_b(self) -> np.ndarray:
        return self.b.logprobs[self.pos_b]

    @property
    def delta_logprob(self) -> np.ndarray:
        """(m,) logprob under b minus logprob under a (nats); NaN where unscored."""
        return self.logprob_b - self.logprob_a

    @property
    def rank_a(self) -> np.ndarray:
        return self.a.ranks[self.pos_a]

    @property
    def rank_b(self) -> np.ndarray:
        return self.b.ranks[self.pos_b]

    @property
    def scored(self) -> np.ndarray:
        """(m,) bool: pairs that carry numbers on both sides."""
        return ~np.isnan(self.logprob_a) & ~np.isnan(self.logprob_b)

    @property
    def token_ids(self) -> np.ndarray:
        """(m,) the paired tokens (the same ids on both sides)."""
        return self.a.token_ids[self.pos_a]

    @property
    def token_text(self) -> list[str]:
        return self.a.token_text[self.first_a : self.first_a + self.m]

    # ---- character spans ("spans") ------------------------------------------------------
    @cached_property
    def spans(self) -> np.ndarray:
        """(s, 2) [start, end) character spans (empty unless kind is "spans")."""
        if self.paired:
            return np.zeros((0, 2), np.int64)
        return aligned_spans(self.char_a, self.char_b, len(self.text))

    @property
    def span_logprob_a(self) -> np.ndarray:
        return span_sums(self.spans, self.char_a, self.a.logprobs)

    @property
    def span_logprob_b(self) -> np.ndarray:
        return span_sums(self.spans, self.char_b, self.b.logprobs)

    # ---- JSON round trip --------------------------------------------------------------
    def positions(self) -> list:
        """One entry per pair: null where either side is unscored, else its numbers."""
        cols = [
            list_to_json(self.logprob_a),
            list_to_json(self.logprob_b),
            list_to_json(self.delta_logprob),
            self.rank_a.tolist(),
            self.rank_b.tolist(),
            list_to_json(self.kl_ab),
            list_to_json(self.kl_ba),
            list_to_json(self.js),
        ]
        keys = ("logprob_a", "logprob_b", "delta_logprob", "rank_a", "rank_b", "kl_ab", "kl_ba", "js")
        return [dict(zip(keys, row)) if ok else None for ok, row in zip(self.scored.tolist(), zip(*cols))]

    def to_dict(self) -> dict:
        """The `compare` JSON: model names, both native results, and `positions` or `spans`."""
        d = {"format": FORMAT, "version": VERSION, "kind": self.kind, "model_a": self.a.model, "model_b": self.b.model}
        if self.paired:
            d |= {"token_ids": self.token_ids.tolist(), "first_a": self.first_a, "first_b": self.first_b}
        d |= {"a": self.a.to_dict(), "b": self.b.to_dict()}
        if self.paired:
            d["positions"] = self.positions()
            return d
        spans = [
            {"start": int(s), "end": int(e), "logprob_a": la, "logprob_b": lb}
            for (s, e), la, lb in zip(
                self.spans.tolist(), list_to_json(self.span_logprob_a), list_to_json(self.span_logprob_b)
            )
        ]
        return d | {
            "spans": spans,
            "text": self.text,
            "token_spans_a": self.char_a.tolist(),
            "token_spans_b": self.char_b.tolist(),
            "note": SPANS_NOTE,
        }

    def to_html(self) -> str:
        """The Compare view as one self-contained HTML file (the tab's *Download view*): no script, no request."""
        return show(self, "to_html")

    def _repr_html_(self) -> str:
        """Jupyter's view: the Compare view, drawn (explorer.notebook.views), its CSS scoped to it."""
        return show(self, "_repr_html_")

    def to_pandas(self) -> pd.DataFrame:
        """One row per paired token (or aligned span): both logprobs and ranks, their difference, KL and JS (nats) (explorer.notebook.frames.comparison_frame)."""
        return show(self, "to_pandas")

    @classmethod
    def from_dict(cls, d: dict) -> Comparison:
        if d.get("format") != FORMAT:
            raise ValueError(f"not a comparison (format {d.get('format')!r})")
        a, b = TokenScores.from_dict(d["a"]), TokenScores.from_dict(d["b"])
        if d["kind"] == "spans":
            return cls(
                a,
                b,
                "spans",
                text=d["text"],
                char_a=np.array(d["token_spans_a"], np.int64).reshape(-1, 2),
                char_b=np.array(d["token_spans_b"], np.int64).reshape(-1, 2),
            )
        pos = d["positions"]
        div = {key: from_json([p[key] if p else None for p in pos]) for key in ("kl_ab", "kl_ba", "js")}
        return cls(a, b, d["kind"], d["first_a"], d["first_b"], kl_ab=div["kl_ab"], kl_ba=div["kl_ba"], js=div["js"])
