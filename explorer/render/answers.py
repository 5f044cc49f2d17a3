"""Answers and Quiz -> a bar chart of the normalised probabilities, the variants' table, a summary; for a quiz the
per-question table and a reliability diagram with its ECE. Pure functions (plotly, pandas)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.render.text import escape, visible
from explorer.results.answers import Answers, Quiz

BAR = "#2563eb"
BEST = "#e08214"
TOKEN_SEP = " ‖ "  # between a variant's tokens: not `|` (that separates variants) nor `·` (a visible space)
TOKENS = "tokens (‖ between tokens, · a space)"


def _pct(p: float) -> str:
    return f"{100 * p:.3g}%" if p >= 1e-4 else f"{p:.2e}"


def answers_figure(res: Answers) -> go.Figure:
    """Horizontal bars: each answer's normalised probability; the raw probability in its label and hover."""
    names = [visible(a.name) for a in res.answers]
    norm, raw = res.normalised, res.probabilities
    fig = go.Figure(
        go.Bar(
            x=norm.tolist(),
            y=names,
            orientation="h",
            marker_color=[BEST if i == res.best else BAR for i in range(len(names))],
            text=[f"{_pct(n)} (raw {_pct(r)})" for n, r in zip(norm, raw)],
            textposition="auto",
            customdata=raw.tolist(),
            hovertemplate="%{y}: %{x:.4f} of the set, raw %{customdata:.3e}<extra></extra>",
            name="normalised",
        )
    )
    fig.update_layout(
        title="Answers (share of the set; raw beside)",
        xaxis={"title": "share of the set", "range": [0, 1]},
        yaxis={"autorange": "reversed"},
        height=120 + 36 * len(names),
        margin={"l": 10, "r": 10, "t": 40, "b": 40},
    )
    return fig


def answers_markdown(res: Answers) -> str:
    """One line: the preferred answer and how much of the model's mass the set holds."""
    best = res.answers[res.best]
    mass = float(res.probabilities.sum())
    alone = sum(v.tokenized == "alone" for a in res.answers for v in a.variants)
    note = (
        f" {alone} variant(s) merged with the prompt's last token and were tokenised alone (see the table)."
        if alone
        else ""
    )
    if res.prompt[-1:].isspace() and any(v.text[:1].isspace() for a in res.answers for v in a.variants):
        note += (
            " **Warning**: the prompt ends in whitespace and some variants start with it, so the text scored holds "
            "both (`is  Paris`): drop the prompt's trailing space or the variants' leading one."
        )
    if len(res.answers) == 1:
        return (
            f"One answer, **{escape(visible(best.name))}**: only its raw probability means anything "
            f"(**{_pct(best.probability)}** of the model's mass after the prompt, {len(res.prompt_ids)} prompt "
            f"tokens); add other answers to compare.{note}"
        )
    return (
        f"The model prefers **{escape(visible(best.name))}**: {_pct(float(res.normalised[res.best]))} of the set "
        f"(raw {_pct(best.probability)}). The set holds {_pct(mass)} of the model's probability after the prompt "
        f"({len(res.prompt_ids)} prompt tokens).{note}"
    )


def variants_table(res: Answers) -> pd.DataFrame:
    """One row per variant: answer, variant, its tokens and their logprobs, its logprob and probability."""
    rows = []
    for a in res.answers:
        for v in a.variants:
            rows.append(
                {
                    "answer": visible(a.name),
                    "variant": visible(v.text),
                    TOKENS: TOKEN_SEP.join(visible(t) for t in v.token_text),
                    "token ids": " ".join(str(i) for i in v.token_ids.tolist()),
                    "token logprobs": " ".join(f"{x:.4f}" for x in v.token_logprobs.tolist()),
                    "logprob": round(v.logprob, 5),
                    "probability": float(f"{math.exp(v.logprob):.6g}"),
                    "tokenised": v.tokenized,
                }
            )
    return pd.DataFrame(rows)


def quiz_markdown(q: Quiz) -> str:
    cal = q.calibration
    return (
        f"**Accuracy {100 * q.accuracy:.1f}%** ({sum(x.correct for x in q.questions)} of {q.n} questions: the most "
        f"likely answer, normalised over the choices, is the right one). **ECE {cal.ece:.4f}** "
        f"({q.bins} equal-width bins of the predicted answer's normalised probability)."
    )


def quiz_table(q: Quiz) -> pd.DataFrame:
    """One row per question: question, each choice with its normalised probability, predicted, right, correct."""
    rows = []
    for r in q.rows():
        dist = ", ".join(f"{visible(c)}: {p:.3f}" for c, p in zip(r["choices"], r["normalised"]))
        rows.append(
            {
                "#": r["index"] + 1,
                "question": r["question"],
                "distribution": dist,
                "predicted": visible(r["choices"][r["predicted"]]),
                "right": visible(r["choices"][r["right"]]),
                "correct": "yes" if r["correct"] else "no",
                "confidence": round(r["confidence"], 4),
            }
        )
    return pd.DataFrame(rows)


def reliability_figure(q: Quiz) -> go.Figure:
    """Each bin's accuracy against its mean confidence (bars at the bins' centres), the diagonal, and the ECE."""
    cal = q.calibration
    centres = (cal.edges[:-1] + cal.edges[1:]) / 2
    width = float(cal.edges[1] - cal.edges[0])
    filled = cal.count > 0
    acc = np.where(filled, cal.accuracy, 0.0)
    fig = go.Figure()
    fig.add_bar(
        x=centres.tolist(), y=acc.tolist(), width=width * 0.95, name="accuracy", marker_color=BAR,
        text=[f"n={c}" if c else "" for c in cal.count.tolist()], textposition="outside", cliponaxis=False,
        customdata=np.stack([cal.count, np.nan_to_num(cal.confidence)], 1).tolist(),
        hovertemplate="bin %{x:.2f}: accuracy %{y:.3f}, %{customdata[0]} questions, mean confidence "
        "%{customdata[1]:.3f}<extra></extra>",
    )  # fmt: skip
    fig.add_scatter(
        x=centres[filled].tolist(), y=cal.confidence[filled].tolist(), mode="markers", name="mean confidence",
        marker={"color": BEST, "size": 9},
    )  # fmt: skip
    fig.add_scatter(
        x=[0, 1], y=[0, 1], mode="lines", name="perfect calibration", line={"dash": "dash", "color": "#888"}
    )
    fig.update_layout(
        title=f"Reliability (ECE {cal.ece:.4f})",
        xaxis={"title": "confidence (predicted answer)", "range": [0, 1]},
        yaxis={"title": "accuracy", "range": [0, 1]},
        legend={"orientation": "h", "x": 0, "y": -0.25, "xanchor": "left", "yanchor": "top"},
        height=420,
        margin={"l": 10, "r": 10, "t": 40, "b": 90},
    )
    return fig
