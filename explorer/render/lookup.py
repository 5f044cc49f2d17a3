"""Lookups -> curves over positions, one column per query, and a note on what each curve is. Pure functions."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.render.figures import line, styled
from explorer.render.text import escape, visible
from explorer.results.lookup import Lookup
from explorer.results.scores import TokenScores


def _piece(pieces: dict, i: int) -> str:
    return visible(pieces.get(int(i), b"").decode("utf-8", "backslashreplace"))


def _sig(a: np.ndarray, digits: int = 4) -> np.ndarray:
    """(n,) float64 rounded to `digits` significant digits (NaN kept): readable cells for tiny probabilities."""
    return np.array([float(f"{x:.{digits}g}") for x in np.asarray(a, np.float64).tolist()])


def lookup_figure(r: TokenScores, lookups: list[Lookup]) -> go.Figure:
    """Probability (log axis) and rank (log axis) of each query at every scored position."""
    pos = np.flatnonzero(r.scored)
    hover = [html.escape(visible(r.token_text[i])) or "▯" for i in pos]
    fig = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.08,
        subplot_titles=("probability of the looked-up token (log)", "its rank (log; 1 = the top guess)"),
    )
    for x in lookups:
        name = html.escape(visible(x.query)) + (" (first token)" if x.multi_token else "")
        for row, y, fmt in ((1, x.probs[pos], "%{y:.3g}"), (2, x.ranks[pos], "%{y}")):
            fig.add_trace(
                line(
                    pos,
                    y,
                    name,
                    hover,
                    "pos %{x} before %{text}<br>" + name + " " + fmt + "<extra></extra>",
                    legendgroup=name,
                    showlegend=row == 1,
                ),
                row=row,
                col=1,
            )
    fig.update_yaxes(type="log")
    fig.update_xaxes(title_text="position (the distribution that predicts this token)", row=2, col=1)
    return styled(
        fig,
        height=480,
        margin={"l": 40, "r": 10, "t": 30, "b": 30},
        legend={"orientation": "h"},
    )


def lookup_table(r: TokenScores, lookups: list[Lookup]) -> pd.DataFrame:
    """One row per position: the actual token, then per query its probability and rank (and joint logprob when multi-token)."""
    cols = {"pos": np.arange(r.n), "token": [visible(t) for t in r.token_text], "actual p": _sig(r.probs)}
    for x in lookups:
        q = visible(x.query)
        cols[f"p({q})"] = _sig(x.probs)
        cols[f"rank({q})"] = np.where(np.isnan(x.logprobs), np.nan, x.ranks.astype(np.float64))
        if x.multi_token:
            cols[f"joint logprob({q})"] = np.round(x.joint_logprobs, 4)
    return pd.DataFrame(cols)


def lookup_markdown(lookups: list[Lookup], pieces: dict) -> str:
    """What each curve shows: the query's tokens; for several, the first token's curve and where the joint applies."""
    lines = []
    for x in lookups:
        q = escape(visible(x.query))
        toks = " + ".join(f"<code>{escape(_piece(pieces, i))}</code> ({int(i)})" for i in x.token_ids.tolist())
        if not x.multi_token:
            lines.append(f"- <code>{q}</code> is token {toks}: its probability and rank at every position.")
            continue
        at = np.flatnonzero(~np.isnan(x.joint_logprobs)).tolist()
        where = (
            f"the text continues with it at position {', '.join(map(str, at[:10]))}{' …' if len(at) > 10 else ''}: "
            f"joint logprob {', '.join(f'{x.joint_logprobs[p]:.3f}' for p in at[:10])} nats"
            if at
            else "the text never continues with all of them"
        )
        lines.append(
            f"- <code>{q}</code> is {len(x.token_ids)} tokens, {toks}: the curves show the **first token**; "
            f"the **joint** probability of the whole string is known where the text continues with it ({where})."
        )
    return "\n".join(lines)
