"""Plotly figures over positions: rank (log axis), entropy, surprisal; GLTR rank-bucket histogram."""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.render.figures import line, styled
from explorer.render.heatmap import (
    DEFAULT_THRESHOLDS,
    LIGHT,
    RANK_BINS,
    legend_labels,
    rank_buckets,
)
from explorer.render.text import visible
from explorer.results.scores import TokenScores


def curves(r: TokenScores) -> go.Figure:
    """Three stacked curves; hovering a point shows its token."""
    pos = np.flatnonzero(r.scored)
    tokens = [html.escape(visible(r.token_text[i])) or "▯" for i in pos]  # plotly reads tags in hover text
    fig = make_subplots(
        rows=3,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.06,
        subplot_titles=("rank of the actual token (log)", "entropy (nats)", "surprisal (bits)"),
    )
    for row, (y, name) in enumerate(
        [(r.ranks[pos], "rank"), (r.entropy[pos], "entropy"), (r.surprisal_bits[pos], "surprisal")], start=1
    ):
        fig.add_trace(
            line(pos, y, name, tokens, "pos %{x}: %{text}<br>" + name + " %{y:.3f}<extra></extra>"),
            row=row,
            col=1,
        )
    fig.update_yaxes(type="log", row=1, col=1)
    fig.update_xaxes(title_text="position", row=3, col=1)
    return styled(
        fig,
        height=520,
        showlegend=False,
        margin={"l": 40, "r": 10, "t": 30, "b": 30},
    )


def rank_histogram(r: TokenScores, thresholds=DEFAULT_THRESHOLDS) -> go.Figure:
    """Count of tokens per rank bucket, as GLTR."""
    names = [label for _, label in legend_labels("rank", thresholds)]
    b = rank_buckets(r.ranks[r.scored], thresholds)
    counts = np.bincount(b, minlength=len(names))
    colours = [LIGHT[i] for i in RANK_BINS[len(names)]]
    fig = go.Figure(go.Bar(x=names, y=counts, marker_color=colours, marker_line_color="#555", marker_line_width=1))
    return styled(
        fig,
        height=260,
        title="tokens per rank bucket",
        margin={"l": 40, "r": 10, "t": 40, "b": 30},
    )
