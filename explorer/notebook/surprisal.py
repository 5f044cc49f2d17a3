"""The Surprisal view: every token's surprisal in bits (-log2 of the probability of the actual token) as a curve and a
table, from a TokenScores already computed (no model runs), with a moving mean to read a long text's shape by.

Its record, `VIEW`, is all the app needs: explorer/notebook/registry.py lists it, and the page's tab and link,
`LM.surprisal`, the tab's download and the site's `--view surprisal` page come from there.
"""

from __future__ import annotations

import html
import math
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from explorer.floats import to_json
from explorer.notebook.view import Option, View
from explorer.results.scores import TokenScores

if TYPE_CHECKING:
    import pandas as pd

LN2 = math.log(2)
MODES = {"raw": "The numbers are raw: the model's own distribution.", "processed": "The numbers are processed: the "
         "distribution the sampler drew from."}  # fmt: skip


@dataclass(frozen=True)
class Surprisal:
    """Per token: its text and surprisal in bits (NaN where unscored), and the moving mean over the last `window`
    scored tokens (float64)."""

    model: str
    token_text: tuple[str, ...]
    logprobs: np.ndarray  # (n,) nats, as the result holds them (NaN: unscored)
    bits: np.ndarray  # (n,) -logprob / ln 2
    smoothed: np.ndarray  # (n,) mean bits of the last `window` scored tokens up to this one
    window: int
    mode: str  # "raw" or "processed": which distribution the logprobs are of

    @property
    def scored(self) -> np.ndarray:
        return ~np.isnan(self.bits)

    @property
    def total_bits(self) -> float:
        return float(np.nansum(self.bits))

    @property
    def mean_bits(self) -> float:
        n = int(self.scored.sum())
        return self.total_bits / n if n else float("nan")

    @property
    def peak(self) -> int | None:
        """The position of the most surprising token (None: none scored)."""
        return int(np.nanargmax(self.bits)) if self.scored.any() else None

    def to_dict(self) -> dict:
        return data(self)

    def to_pandas(self) -> pd.DataFrame:
        return table(self)

    def to_html(self) -> str:
        return VIEW.page(self)

    def save_html(self, path: str | os.PathLike[str]) -> str:
        """Write the view's file to `path`; the path written."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_html())
        return os.fspath(path)

    def _repr_html_(self) -> str:
        return VIEW.html(self)


def surprisal(r: TokenScores, window: int = 1) -> Surprisal:
    """The Surprisal view of `r`: bits = -logprob / ln 2 per token; the moving mean over scored tokens only."""
    lp = r.logprobs.astype(np.float64)  # (n,)
    bits = -lp / LN2
    ok = ~np.isnan(bits)
    s = bits[ok]  # (m,) the scored tokens' bits, in order
    smoothed = np.full_like(bits, np.nan)
    # each window on its own (not a running sum): a token of infinite surprisal (logprob -inf) stays in its windows
    smoothed[ok] = [s[max(j + 1 - window, 0) : j + 1].mean() for j in range(len(s))]
    return Surprisal(r.model, tuple(r.token_text), lp, bits, smoothed, window, r.mode)


def body(s: Surprisal) -> str:
    """The summary line and the curve (the moving mean's too when `window` > 1)."""
    from explorer.notebook.views import line_svg
    from explorer.render.text import visible

    if s.peak is None:
        return "<p>No token is scored: a text's first token has nothing before it to predict it from.</p>"
    n, p = int(s.scored.sum()), s.peak
    summary = (
        f"<p><strong>{n:,}</strong> scored tokens · mean <strong>{s.mean_bits:.3f} bits</strong> a token · total "
        f"{s.total_bits:.2f} bits · the most surprising: <code>{html.escape(visible(s.token_text[p]))}</code> at "
        f"position {p} ({s.bits[p]:.2f} bits). {MODES.get(s.mode, s.mode)}</p>"
    )
    curve = line_svg(s.bits.tolist(), "Surprisal per token (bits)", "position", s.token_text)
    if s.window > 1:
        curve += line_svg(s.smoothed.tolist(), f"Moving mean over {s.window} tokens (bits)", "position", s.token_text)
    return summary + curve


def data(s: Surprisal) -> dict:
    """The view's JSON: per token its text, logprob (nats), bits and moving mean (null where unscored)."""

    def num(x: float) -> float | None:  # JSON's rule (explorer/floats.py): NaN and +inf null, -inf -9999.0
        return to_json(float(x))

    return {
        "object": "surprisal",
        "model": s.model,
        "mode": s.mode,
        "window": s.window,
        "mean_bits": num(s.mean_bits),
        "total_bits": num(s.total_bits),
        "tokens": [
            {"position": i, "token": t, "logprob": num(lp), "bits": num(b), "smoothed_bits": num(m)}
            for i, (t, lp, b, m) in enumerate(zip(s.token_text, s.logprobs, s.bits, s.smoothed))
        ],
    }


def table(s: Surprisal) -> pd.DataFrame:
    """One row per token: position, token, logprob (nats), bits, moving mean (bits)."""
    import pandas as pd

    return pd.DataFrame(
        {"position": np.arange(len(s.bits)), "token": list(s.token_text), "logprob": s.logprobs, "bits": s.bits,
         f"mean of {s.window} (bits)": s.smoothed}
    )  # fmt: skip


VIEW = View(
    id="surprisal",
    title="Surprisal",
    group="read",
    about="Every token's **surprisal**: −log₂ of the probability the model gave it, in bits (0 is certain, 1 bit a "
    "coin toss, 10 bits a 1-in-1,024 guess), from a result already scored or generated: no model runs again. "
    "*Moving mean* smooths the curve over the last few tokens.",
    compute=surprisal,
    body=body,
    data=data,
    table=table,
    options=(Option("window", "Moving mean over (tokens)", 1, low=1, high=64),),
    caption="Surprisal per token",
)
