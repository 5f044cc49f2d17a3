"""Comparison -> diff heatmap HTML, curves of both models, summary and the two top-k lists of one pair.

Pure functions. Colours are CSS classes: `d0` (b far less likely) .. `d4` (equal) .. `d8` (b far more
likely) for Δ logprob, `j0` .. `j7` for Jensen-Shannon (0 .. log 2); `u` where unscored.
"""

from __future__ import annotations

import html
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.render.figures import line, styled
from explorer.render.text import escape, visible
from explorer.results.compare import Comparison
from explorer.results.scores import TokenScores

METRICS = {
    "delta": "log p_B − log p_A of the actual token (orange: B found it less likely, blue: more likely)",
    "js": "Jensen-Shannon divergence between the two next-token distributions (0 .. log 2 nats)",
}
DELTA_CLIP = 4.0  # nats: |Δ| beyond this takes the end colour
_D = [  # orange (B less likely) .. grey .. blue (B more likely): no red-versus-green pair (colour-blind safe)
    "214,96,77",
    "240,138,93",
    "246,177,127",
    "251,220,192",
    "160,160,160",
    "220,233,245",
    "181,211,236",
    "139,187,227",
    "95,159,214",
]
_J = [f"147,51,234,{a}" for a in (0.0, 0.1, 0.2, 0.3, 0.42, 0.55, 0.7, 0.85)]
CSS = (
    ".cx{line-height:2;font-family:ui-monospace,monospace;font-size:14px;overflow-wrap:anywhere}"
    ".cx .t{border-radius:3px;padding:1px 0;cursor:pointer;white-space:pre-wrap}"
    ".cx .t:focus,.cx .t.sel{outline:2px solid #2563eb;outline-offset:1px}.cx .u{outline:1px dashed #9ca3af}"
    + "".join(f".cx .d{i}{{background:rgba({c},.45)}}" for i, c in enumerate(_D))
    + "".join(f".cx .j{i}{{background:rgba({c})}}" for i, c in enumerate(_J))
)


def _classes(values: np.ndarray, metric: str) -> list[str]:
    """CSS class per value; 'u' where NaN."""
    ok = ~np.isnan(values)
    if metric == "js":
        x = np.sqrt(np.clip(np.nan_to_num(values) / math.log(2), 0, 1))  # sqrt: small divergences stay visible
        idx = np.minimum((x * len(_J)).astype(int), len(_J) - 1)
        return [f"j{i}" if s else "u" for i, s in zip(idx.tolist(), ok)]
    x = np.clip(np.nan_to_num(values), -DELTA_CLIP, DELTA_CLIP) / DELTA_CLIP  # -1 .. 1
    idx = np.rint(x * 4).astype(int) + 4
    return [f"d{i}" if s else "u" for i, s in zip(idx.tolist(), ok)]


def _f(x, fmt: str = "{:.3f}") -> str:
    return "–" if x is None or math.isnan(float(x)) else fmt.format(float(x))


def units(c: Comparison) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """(text, logprob_a, logprob_b, js) per unit shown: each pair, or each character span."""
    if c.paired:
        return c.token_text, c.logprob_a, c.logprob_b, c.js
    texts = [c.text[s:e] for s, e in c.spans.tolist()]
    return texts, c.span_logprob_a, c.span_logprob_b, np.full(len(texts), np.nan)


def compare_html(c: Comparison, metric: str = "delta", selected: int | None = None) -> str:
    """The compared text as chips (one per pair, or per span), coloured by Δ logprob or JS."""
    if metric not in METRICS or (metric == "js" and not c.paired):
        metric = "delta"
    texts, la, lb, js = units(c)
    classes = _classes(js if metric == "js" else lb - la, metric)
    out = ['<div class="cx">']
    for j, t in enumerate(texts):
        tip = f"A {_f(la[j])} · B {_f(lb[j])} · Δ {_f(lb[j] - la[j], '{:+.3f}')}" + (
            f" · JS {_f(js[j], '{:.4f}')}" if c.paired else ""
        )
        sel = " sel" if j == selected else ""
        out.append(
            f'<span class="t {classes[j]}{sel}" data-pos="{j}" tabindex="0" title="{escape(tip)}">'
            f"{escape(visible(t)).replace('↵', '↵<br>')}</span><wbr>"
        )
    return "".join(out) + "</div>"


def legend_html(c: Comparison, metric: str) -> str:
    if metric == "js" and c.paired:
        chips = "0 " + "".join(f'<span class="t j{i}">&nbsp;&nbsp;</span>' for i in range(len(_J))) + " log 2"
        return f'<div class="cx"><b>JS</b>: {escape(METRICS["js"])}<br>{chips}</div>'
    chips = (
        f"B less likely (−{DELTA_CLIP:g}) "
        + "".join(f'<span class="t d{i}">&nbsp;&nbsp;</span>' for i in range(len(_D)))
        + f" B more likely (+{DELTA_CLIP:g})"
    )
    note = "" if c.paired else "<br>The tokenizers differ: each chip is a span of characters both tokenizations cut at."
    return f'<div class="cx"><b>Δ logprob</b>: {escape(METRICS["delta"])}<br>{chips}{note}</div>'


def compare_summary(c: Comparison) -> str:
    """Both models' totals, and the mean divergences (paired kinds) or the note on spans."""
    a, b = escape(c.a.model), escape(c.b.model)
    _, la, lb, js = units(c)
    ok = ~np.isnan(la) & ~np.isnan(lb)
    what = {
        "models": "two models, one text",
        "prompts": "one model, the same continuation after two prompts",
        "spans": "two models with different tokenizers, aligned by characters",
    }[c.kind]
    head = (
        f"**{what}** · A `{a}` · B `{b}` · {int(ok.sum())} compared {'tokens' if c.paired else 'spans'} · "
        f"total logprob A **{np.nansum(la[ok]):.3f}**, B **{np.nansum(lb[ok]):.3f}** (Δ {np.nansum((lb - la)[ok]):+.3f} nats) · raw numbers"
    )
    if not c.paired:
        return (
            head
            + "\n\nKL and Jensen-Shannon need a shared vocabulary: they are shown only for models with the same tokenizer."
        )
    if not ok.any():
        return head
    worst = int(np.nanargmax(np.where(ok, js, np.nan)))
    return (
        head + f" · mean KL(A‖B) **{np.nanmean(c.kl_ab[ok]):.4f}**, KL(B‖A) **{np.nanmean(c.kl_ba[ok]):.4f}**, "
        f"JS **{np.nanmean(js[ok]):.4f}** nats · largest JS at <code>{escape(visible(c.token_text[worst]))}</code> ({worst})"
    )


def compare_curves(c: Comparison) -> go.Figure:
    """Both models' logprob per unit; below, KL both ways and JS (paired kinds)."""
    texts, la, lb, js = units(c)
    x = np.arange(len(texts))
    hover = [html.escape(visible(t)) or "▯" for t in texts]
    rows = 2 if c.paired else 1
    titles = ("logprob of the actual token (nats)", "divergence (nats)")[:rows]
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.08, subplot_titles=titles)
    for y, name in ((la, f"A {c.a.model}"), (lb, f"B {c.b.model}")):
        fig.add_trace(
            line(x, y, name, hover, "%{x}: %{text}<br>%{y:.3f}<extra>" + html.escape(name) + "</extra>"),
            row=1,
            col=1,
        )
    if c.paired:
        for y, name in ((c.kl_ab, "KL(A‖B)"), (c.kl_ba, "KL(B‖A)"), (js, "JS")):
            fig.add_trace(
                line(x, y, name, hover, "%{x}: %{text}<br>" + name + " %{y:.4f}<extra></extra>"),
                row=2,
                col=1,
            )
    fig.update_xaxes(tick0=0, dtick=max(1, math.ceil(len(texts) / 12)))  # whole positions, never 0.2 steps
    return styled(
        fig,
        height=220 + 200 * rows,
        margin={"l": 40, "r": 10, "t": 30, "b": 30},
        legend={"orientation": "h"},
    )


def _piece(r: TokenScores, i: int) -> str:
    return visible(r.pieces.get(i, b"").decode("utf-8", "backslashreplace"))


TOPK_COLUMNS = ["rank", "token", "probability %", "logprob", "actual"]  # topk_table's, in order


def topk_table(r: TokenScores, pos: int, k: int) -> pd.DataFrame:
    """The top-k at `pos` of one side: rank, token, probability %, logprob; the actual token marked (added when outside)."""
    cols = TOPK_COLUMNS
    if not r.scored[pos]:
        return pd.DataFrame([], columns=cols)
    actual = int(r.token_ids[pos])
    rows = [
        {
            "rank": j + 1,
            "token": _piece(r, i),
            "probability %": round(100 * math.exp(lp), 3),
            "logprob": round(lp, 4),
            "actual": "◀" if i == actual else "",
        }
        for j, (i, lp) in enumerate(r.top(pos, k))
    ]
    if all(row["actual"] == "" for row in rows):
        rows.append(
            {
                "rank": int(r.ranks[pos]),
                "token": _piece(r, actual),
                "probability %": round(100 * float(r.probs[pos]), 3),
                "logprob": round(float(r.logprobs[pos]), 4),
                "actual": "◀ (outside the top-k)",
            }
        )
    return pd.DataFrame(rows, columns=cols)


def tokens_table(r: TokenScores, positions) -> pd.DataFrame:
    """One side's tokens at `positions`: position, token, logprob, rank."""
    return pd.DataFrame(
        [
            {
                "pos": p,
                "token": visible(r.token_text[p]),
                "logprob": None if not r.scored[p] else round(float(r.logprobs[p]), 4),
                "rank": int(r.ranks[p]) if r.scored[p] else None,
            }
            for p in positions
        ],
        columns=["pos", "token", "logprob", "rank"],
    )


def compare_detail(c: Comparison, j: int, k: int = 10) -> tuple[str, pd.DataFrame, pd.DataFrame]:
    """(markdown, table A, table B) for unit j: both top-k lists (pairs) or both models' tokens (spans)."""
    texts, la, lb, js = units(c)
    shown = escape(visible(texts[j]))
    if not c.paired:
        s, e = c.spans[j].tolist()
        inside = lambda chars: [p for p, (ts, _) in enumerate(chars.tolist()) if s <= ts < e]  # noqa: E731
        md = (
            f"**Span {j}** (characters {s}..{e}): <code>{shown}</code> · A {_f(la[j])} · B {_f(lb[j])} nats. "
            "Each model's tokens in it:"
        )
        return md, tokens_table(c.a, inside(c.char_a)), tokens_table(c.b, inside(c.char_b))
    pa, pb = int(c.pos_a[j]), int(c.pos_b[j])
    if not c.scored[j]:
        return (
            f"**Position {j}**: <code>{shown}</code> is not scored (no context before it).",
            topk_table(c.a, pa, k),
            topk_table(c.b, pb, k),
        )
    md = (
        f"**Position {j}**: <code>{shown}</code> · A logprob **{la[j]:.4f}** (rank {int(c.rank_a[j])}) · "
        f"B logprob **{lb[j]:.4f}** (rank {int(c.rank_b[j])}) · Δ **{lb[j] - la[j]:+.4f}** · "
        f"KL(A‖B) {c.kl_ab[j]:.4f} · KL(B‖A) {c.kl_ba[j]:.4f} · JS {js[j]:.4f} nats"
    )
    return md, topk_table(c.a, pa, k), topk_table(c.b, pb, k)
