"""Attribution: why the model expected one token, as each earlier token's (or word's, or span's) share.

Numpy only; the engine fills it (explorer.engine.analyses.attribution). The explained quantity is
    f(x) = log p(target | x)                              (no contrast)
    f(x) = log p(target | x) - log p(contrast | x)        ("why the target rather than the contrast")
where x = token_ids[:pos], in nats. A unit's value is its share of f: positive = it made the target
more likely (or more likely than the contrast), negative = less. A contrast of several tokens c is a continuation:
log p(contrast | x) = sum_i log p(c_i | x + c[:i]), teacher-forced (as Answers scores a variant).
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from explorer.floats import to_json as _num
from explorer.floats import value_from_json
from explorer.results.shown import show

if TYPE_CHECKING:
    import pandas as pd

FORMAT = "logprob-explorer/attribution"
FORMAT_VERSION = 1
METHODS = ("occlusion", "ig", "gxi", "attention")
UNITS = ("token", "word")
OCCLUSION_MODES = ("remove", "replace")
BASELINES = ("neutral", "zero")  # IG's starting point: the neutral token at every position, or zero embeddings
NAMES = {"occlusion": "Occlusion", "ig": "Integrated gradients", "gxi": "Gradient × input", "attention": "Attention"}
# what each method measures, and its one-line caveat (shown beside the colours)
MEANING = {
    "occlusion": "the change in f when the unit is left out: f(text) - f(text without it)",
    "ig": "integrated gradients over the input embeddings, from a baseline to the text, summed per token",
    "gxi": "gradient x input over the input embeddings, summed per token",
    "attention": "the last layer's attention from the position before the target to each earlier token (mean over heads)",
}
CAVEAT = {
    "occlusion": "Exact for each unit alone, but units can act together: values need not add up to f, and a removed "
    "unit also changes the positions after it.",
    "ig": "A path-integral approximation: the completeness gap (sum of values vs f(text) - f(baseline)) says how good; "
    "the baseline is a choice, not a neutral text.",
    "gxi": "A first-order (linear) estimate at the text itself: it can miss saturated effects and changes sign easily.",
    "attention": "What the model looked at, not why: attention weights are not contributions to f (they are all "
    "positive and sum to 1).",
}


@dataclass(eq=False)
class Attribution:
    model: str
    method: str  # one of METHODS
    settings: dict  # the method's settings (units, mode, steps, baseline, layers)
    token_ids: np.ndarray  # (pos + 1,) int64: the context and, last, the target token as it stands in the text
    token_text: list[str]  # pos + 1 strings, the characters each token completes
    pos: int  # the target's position in the text it came from (== len(token_ids) - 1)
    target_id: int
    contrast_id: int | None  # the contrast's token (its first, for a contrast of several tokens); None: no contrast
    spans: np.ndarray  # (U, 2) int64, each source unit's token range [a, b) in token_ids[:pos]
    values: np.ndarray  # (U,) float64, each unit's share of f (nats; attention: a weight in [0, 1])
    f: float  # f on the text, nats
    f_baseline: float | None = None  # ig: f at the baseline (completeness: sum(values) ~ f - f_baseline)
    special: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))  # (U,) template / special-token units
    target_text: str = ""  # the target token's text
    contrast_text: str = ""  # the contrast's text ('' without one)
    note: str = ""  # said with the summary: which engine computed it, where another one serves the model
    contrast_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # (C,) int64; [contrast_id] at one
    contrast_token_text: list[str] = field(default_factory=list)  # C strings: the characters each token completes
    contrast_tokenized: str = ""  # a text contrast of several tokens: "joint" | "alone", as Answers' Variant; else ''

    def __post_init__(self) -> None:
        if self.contrast_id is not None and len(self.contrast_ids) == 0:
            self.contrast_ids = np.array([self.contrast_id], np.int64)

    @property
    def contrast_length(self) -> int:
        """The contrast's tokens: 0 without one, 1 for a next-token contrast, more for a continuation."""
        return 0 if self.contrast_id is None else len(self.contrast_ids)

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def unit_text(self) -> list[str]:
        return ["".join(self.token_text[a:b]) for a, b in self.spans.tolist()]

    @property
    def signed(self) -> bool:
        """True when values are contributions with a sign (every method but attention)."""
        return self.method != "attention"

    @property
    def completeness_gap(self) -> float | None:
        """ig: sum(values) - (f - f_baseline), nats; None for the other methods."""
        if self.f_baseline is None:
            return None
        return float(np.sum(self.values)) - (self.f - self.f_baseline)

    @property
    def completeness_share(self) -> float | None:
        """ig: |completeness_gap| as a share of |f - f_baseline| (0.012: the values miss the difference by 1.2% of
        it; inf where the difference is 0); None for the other methods."""
        gap = self.completeness_gap
        if gap is None or self.f_baseline is None:
            return None
        total = abs(self.f - self.f_baseline)
        return abs(gap) / total if total else math.inf

    def ranked(self, n: int = 10, with_special: bool = False) -> list[int]:
        """Indices of the n units with the largest |value| (attention: value), strongest first; NaN last, never."""
        key = np.abs(self.values) if self.signed else np.asarray(self.values, np.float64)
        ok = ~np.isnan(key)
        if not with_special and len(self.special) == self.n:
            ok &= ~self.special
        idx = np.flatnonzero(ok)
        order = idx[np.argsort(-key[idx], kind="stable")]
        return [int(i) for i in order[:n]]

    # ---- JSON and CSV ----------------------------------------------------------------------
    def to_dict(self) -> dict:
        text = self.unit_text
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "model": self.model,
            "method": self.method,
            "meaning": MEANING[self.method],
            "settings": dict(self.settings),
            "target": {"position": self.pos, "token_id": self.target_id, "text": self.target_text},
            "contrast": self._contrast_dict(),
            "f": _num(self.f),
            "f_baseline": None if self.f_baseline is None else _num(self.f_baseline),
            "completeness_gap": None if self.completeness_gap is None else _num(self.completeness_gap),
            # the gap's unit: a share of f(text) - f(baseline), not of f (0.05 = 5% of that difference)
            "completeness_gap_share": None if self.completeness_share is None else _num(self.completeness_share),
            "token_ids": self.token_ids.tolist(),
            "token_text": list(self.token_text),
            "sources": [
                {
                    "span": [int(a), int(b)],
                    "text": text[u],
                    "value": _num(float(self.values[u])),
                    "special": bool(self.special[u]) if len(self.special) == self.n else False,
                }
                for u, (a, b) in enumerate(self.spans.tolist())
            ],
        } | ({"note": self.note} if self.note else {})  # which engine computed it, where another serves the model

    def _contrast_dict(self) -> dict | None:
        """None; {token_id, text} for one token; a continuation's {token_ids, tokens, text, tokenized}, as Answers
        writes a variant."""
        if self.contrast_id is None:
            return None
        if self.contrast_length == 1:
            return {"token_id": self.contrast_id, "text": self.contrast_text}
        out = {"token_ids": self.contrast_ids.tolist(), "tokens": list(self.contrast_token_text)}
        return (
            out
            | {"text": self.contrast_text}
            | ({"tokenized": self.contrast_tokenized} if self.contrast_tokenized else {})
        )

    @classmethod
    def from_dict(cls, d: dict) -> Attribution:
        src = d["sources"]
        c = d.get("contrast")
        return cls(
            model=d["model"],
            method=d["method"],
            settings=dict(d["settings"]),
            token_ids=np.array(d["token_ids"], np.int64),
            token_text=list(d["token_text"]),
            pos=int(d["target"]["position"]),
            target_id=int(d["target"]["token_id"]),
            contrast_id=None if c is None else int(c["token_id"] if "token_id" in c else c["token_ids"][0]),
            spans=np.array([s["span"] for s in src], np.int64).reshape(len(src), 2),
            values=np.array([value_from_json(s["value"]) for s in src], np.float64),
            f=value_from_json(d["f"]),
            f_baseline=None if d.get("f_baseline") is None else value_from_json(d["f_baseline"]),
            special=np.array([bool(s.get("special")) for s in src], bool),
            target_text=d["target"].get("text", ""),
            contrast_text="" if c is None else c.get("text", ""),
            note=d.get("note", ""),
            contrast_ids=np.array([] if c is None else c.get("token_ids", [c.get("token_id")]), np.int64),
            contrast_token_text=[] if c is None else list(c.get("tokens", [])),
            contrast_tokenized="" if c is None else c.get("tokenized", ""),
        )

    def to_html(self) -> str:
        """The Why view as one self-contained HTML file (the tab's *Download view*): no script, no request."""
        return show(self, "to_html")

    def _repr_html_(self) -> str:
        """Jupyter's view: the Why view, drawn (explorer.notebook.views), its CSS scoped to it."""
        return show(self, "_repr_html_")

    def to_pandas(self) -> pd.DataFrame:
        """One row per source unit: token range, text, value, rank by strength, special (explorer.notebook.frames.attribution_frame)."""
        return show(self, "to_pandas")

    def to_csv(self) -> str:
        """One row per source unit: rank (by strength), span, text, value, special."""
        rank = {u: i + 1 for i, u in enumerate(self.ranked(self.n, with_special=True))}
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["unit", "start", "end", "text", "value", "rank", "special"])
        for u, ((a, b), t) in enumerate(zip(self.spans.tolist(), self.unit_text)):
            v = float(self.values[u])
            sp = bool(self.special[u]) if len(self.special) == self.n else False
            w.writerow([u, a, b, t, "" if math.isnan(v) else repr(v), rank.get(u, ""), int(sp)])
        return out.getvalue()
