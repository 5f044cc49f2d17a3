"""WhatIf -> raw and processed top-N bars side by side, a summary line and a table. Pure functions."""

from __future__ import annotations

import html
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.render.figures import styled
from explorer.render.text import escape, visible
from explorer.results.whatif import WhatIf

KEPT, CUT, ACTUAL = "#3b82f6", "#9ca3af", "#f59e0b"


def _label(w: WhatIf, i: int) -> str:
    return visible(w.pieces.get(int(i), b"").decode("utf-8", "backslashreplace")) or "▯"


def _probs(lps: np.ndarray) -> np.ndarray:
    """(N,) float64 probabilities; 0 where -inf (cut)."""
    lps = np.asarray(lps, np.float64)
    return np.where(np.isfinite(lps), np.exp(np.where(np.isfinite(lps), lps, 0.0)), 0.0)


def whatif_figure(w: WhatIf) -> go.Figure:
    """Above: the raw top-N (grey: cut by the sampler, with the filter's name); below: the processed top-N. Stacked,
    not side by side: each chart keeps the page's width and its title stays clear of the other's on a phone."""
    fig = make_subplots(
        rows=2,
        cols=1,
        vertical_spacing=0.14,
        subplot_titles=("raw: the model's distribution", "processed: what the sampler draws from"),
    )
    keep = np.isfinite(w.processed_logprobs)
    for row, ids, lps, cut in (
        (1, w.raw_ids, w.raw_logprobs, w.cut_by),
        (2, w.processed_ids[keep], w.processed_logprobs[keep], [""] * int(keep.sum())),
    ):
        labels = [f"{j + 1}. {html.escape(_label(w, i))}" for j, i in enumerate(ids.tolist())]
        colours = [ACTUAL if i == w.actual_id else (CUT if c else KEPT) for i, c in zip(ids.tolist(), cut)]
        notes = [
            f"cut by {c}" if c else ("actual token" if i == w.actual_id else "") for i, c in zip(ids.tolist(), cut)
        ]
        fig.add_trace(
            go.Bar(
                x=_probs(lps),
                y=labels,
                orientation="h",
                marker_color=colours,
                text=notes,
                textposition="auto",
                hovertemplate="%{y}<br>p %{x:.4f}<br>%{text}<extra></extra>",
            ),
            row=row,
            col=1,
        )
        fig.update_yaxes(autorange="reversed", row=row, col=1)
    fig.update_xaxes(title_text="probability", range=[0, 1])
    return styled(
        fig,
        height=max(420, 2 * 22 * len(w.raw_ids) + 150),
        showlegend=False,
        margin={"l": 10, "r": 10, "t": 56, "b": 30},  # the first title under Plotly's toolbar, not beneath it
    )


def whatif_markdown(w: WhatIf) -> str:
    """The actual token raw -> processed, both entropies, what each filter cut."""
    actual = escape(_label(w, w.actual_id))
    p = w.processed
    fate = f"probability **{w.raw.prob:.3%}** → **{p.prob:.3%}** (logprob {w.raw.logprob:.4f} → " + (
        f"{p.logprob:.4f}, rank {w.raw.rank} → {p.rank})" if p.logprob > -math.inf else "−∞: **cut**)"
    )
    cuts = ", ".join(f"{name} {n:,}" for name, n in w.cut_counts.items() if n) or "nothing"
    greedy = " · temperature 0 is greedy: the sampler takes the top processed entry" if w.greedy else ""
    drawn = " ".join(f"<code>{escape(_label(w, int(i)))}</code>" for i in w.draws)
    draws = f"\n\n**Drawn {len(w.draws)} times at these settings:** {drawn}" if len(w.draws) else ""
    return (
        f"**Position {w.pos}**, actual token <code>{actual}</code>: {fate} · entropy **{w.raw.entropy:.3f}** → "
        f"**{p.entropy:.3f}** nats · entries left **{w.kept:,}** · cut: {cuts}{greedy}{draws}"
    )


WHATIF_COLUMNS = ["raw rank", "token", "raw %", "processed %", "cut by", "actual"]  # whatif_table's, in order


def whatif_table(w: WhatIf) -> pd.DataFrame:
    """The raw top-N with each entry's processed probability and the filter that cut it."""
    return pd.DataFrame(
        {
            "raw rank": np.arange(1, len(w.raw_ids) + 1),
            "token": [_label(w, i) for i in w.raw_ids.tolist()],
            "raw %": np.round(100 * _probs(w.raw_logprobs), 3),
            "processed %": np.round(100 * _probs(w.processed_of_raw), 3),
            "cut by": w.cut_by,
            "actual": ["◀" if i == w.actual_id else "" for i in w.raw_ids.tolist()],
        }
    )
