"""What every Plotly figure of the page shares: one look (a transparent paper, a faint grey plot area and grey
text, so a figure reads on the light and the dark theme alike) and a series over positions drawn as lines with
small markers."""

from __future__ import annotations

import plotly.graph_objects as go

LOOK = {"paper_bgcolor": "rgba(0,0,0,0)", "plot_bgcolor": "rgba(128,128,128,0.12)", "font": {"color": "#888"}}


def styled(fig: go.Figure, **layout) -> go.Figure:
    """`fig` with the shared look and `layout` (height, margin, legend, titles: what differs per figure)."""
    fig.update_layout(**layout, **LOOK)
    return fig


def line(x, y, name: str, text, hovertemplate: str, **extra) -> go.Scatter:
    """One series of `y` over `x` as lines and 4-pixel markers; `text` per point for `hovertemplate`."""
    return go.Scatter(
        x=x, y=y, mode="lines+markers", name=name, text=text, marker={"size": 4}, hovertemplate=hovertemplate, **extra
    )
