"""LensGrid -> a layer x position heatmap (HTML), its legend, and one cell's detail (markdown + top-k table).

Pure functions, no torch, no gradio. Token text is always escaped. Each cell is a bare
`<td>` with a colour class and a short title; the page finds its layer from the row's
`data-l` and its position from the column.
"""

from __future__ import annotations

import math
from itertools import pairwise

import numpy as np
import pandas as pd

from explorer.render.branch import md_code
from explorer.render.tables import alternatives_table
from explorer.render.text import escape, visible
from explorer.results.lens import LensGrid

# best (blue) .. worst (orange): colour-blind safe, no red-versus-green pair; INK: a legend swatch's text colour
PALETTE = ["#08519c", "#3182bd", "#6baed6", "#c6dbef", "#fdd0a2", "#fdae6b", "#e6550d", "#a63603"]
INK = ["#fff", "#111", "#111", "#111", "#111", "#111", "#111", "#fff"]
METRICS = {  # name -> (edges of buckets 0..6, what the colours mean)
    "rank": (
        (1, 3, 10, 30, 100, 1000, 10000),
        "rank of the actual token at that layer: dark blue = 1 (its top guess), dark orange > 10,000",
    ),
    "logprob": (
        (-0.7, -1.6, -2.3, -3.5, -4.6, -6.9, -9.2),
        "logprob of the actual token: dark blue ≥ -0.7 (p ≥ 50%), dark orange < -9.2 (p < 0.01%)",
    ),
    "entropy": (
        (0.5, 1, 2, 3, 4, 5, 7),
        "entropy of that layer's distribution: dark blue ≤ 0.5 nats (sure), dark orange > 7 nats (lost)",
    ),
}
CSS = """
.lens-wrap { overflow: auto; max-height: 640px; }
.lens { border-collapse: collapse; font-size: 11px; }
.lens td { width: 14px; min-width: 14px; height: 14px; padding: 0; border: 1px solid rgba(128,128,128,0.15); cursor: pointer; }
.lens th { font-weight: normal; padding: 0 4px; white-space: nowrap; text-align: right; }
.lens thead th { writing-mode: vertical-rl; transform: rotate(180deg); text-align: left; max-height: 90px;
                 overflow: hidden; text-overflow: ellipsis; padding: 2px 0; font-family: monospace; }
.lens td.sel { outline: 2px solid currentColor; outline-offset: -2px; }
.lens td.u { background: repeating-linear-gradient(45deg, transparent 0 3px, rgba(128,128,128,0.25) 3px 5px); cursor: default; }
.lens-legend span { display: inline-block; padding: 0 6px; margin: 0 2px 2px 0; border-radius: 3px; font-size: 12px; }
""" + "".join(
    f".lens td.b{i}, .lens-legend .b{i} {{ background: {c}; color: {INK[i]}; }}\n" for i, c in enumerate(PALETTE)
)


def buckets(g: LensGrid, metric: str) -> np.ndarray:
    """(L+1, n) colour bucket 0 (best) .. 7 (worst) of every cell; -1 where unscored."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}: use one of {', '.join(METRICS)}")
    edges = np.asarray(METRICS[metric][0], np.float64)
    if metric == "rank":
        b = np.searchsorted(edges, g.ranks, side="left")
    elif metric == "logprob":
        b = np.searchsorted(-edges, -np.nan_to_num(g.logprobs, nan=0.0), side="left")
    else:
        b = np.searchsorted(edges, np.nan_to_num(g.entropy, nan=0.0), side="left")
    return np.where(np.isnan(g.logprobs), -1, b)


def layer_name(g: LensGrid, layer: int) -> str:
    if layer == 0:
        return "0: the embeddings"
    if layer == g.n_layers:
        return f"{layer}: the model's output"
    return f"{layer}: after {layer} block{'s' if layer > 1 else ''}"


def bucket_labels(metric: str) -> list[str]:
    """What each colour stands for, in words: the range of `metric` its bucket holds (best first)."""
    e = METRICS[metric][0]
    if metric == "rank":
        lows = [1] + [x + 1 for x in e[:-1]]
        return ["rank 1"] + [f"rank {lo:,}–{hi:,}" for lo, hi in zip(lows[1:], e[1:])] + [f"rank > {e[-1]:,}"]
    if metric == "logprob":
        return [f"≥ {e[0]:g}"] + [f"{a:g} to {b:g}" for a, b in pairwise(e)] + [f"< {e[-1]:g}"]
    return [f"≤ {e[0]:g} nats"] + [f"{a:g}–{b:g}" for a, b in pairwise(e)] + [f"> {e[-1]:g} nats"]


def legend_html(metric: str) -> str:
    meaning = METRICS[metric][1]
    return (
        f'<div class="lens-legend">{escape(meaning)}: '
        + "".join(f'<span class="b{i}">{escape(t)}</span>' for i, t in enumerate(bucket_labels(metric)))
        + "</div>"
    )


def _title(g: LensGrid, layer: int, pos: int) -> str:
    return (
        f"layer {layer} · pos {pos} · rank {int(g.ranks[layer, pos])} · logprob {g.logprobs[layer, pos]:.2f} · "
        f"entropy {g.entropy[layer, pos]:.2f}"
    )


def lens_html(g: LensGrid, metric: str = "rank", selected: tuple[int, int] | None = None) -> str:
    """The grid: one row per layer (the model's output on top), one column per position, tokens along the top."""
    b = buckets(g, metric)
    heads = "".join(
        f'<th title="{pos}: {escape(visible(t))}">{escape(visible(t)) or "▯"}</th>'
        for pos, t in enumerate(g.token_text)
    )
    rows = []
    for layer in range(g.n_layers, -1, -1):
        cells = []
        for pos in range(g.n):
            sel = " sel" if selected == (layer, pos) else ""
            cells.append(
                '<td class="u"></td>'
                if b[layer, pos] < 0
                else f'<td class="b{b[layer, pos]}{sel}" title="{_title(g, layer, pos)}"></td>'
            )
        rows.append(f'<tr data-l="{layer}"><th>{escape(layer_name(g, layer))}</th>{"".join(cells)}</tr>')
    note = f'<p class="lens-note">{escape(g.note)}</p>' if g.note else ""
    return (
        f'{note}<div class="lens-wrap"><table class="lens" data-metric="{escape(metric)}"><thead><tr><th>layer \\ token</th>'
        f"{heads}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def cell_markdown(g: LensGrid, layer: int, pos: int) -> str:
    """One paragraph on cell (layer, pos)."""
    head = f"**Layer {escape(layer_name(g, layer))}**, position {pos}, token {md_code(g.token_text[pos])}"
    if math.isnan(g.logprobs[layer, pos]):
        return head + ": position 0 has no context, so no layer predicts it."
    lp = float(g.logprobs[layer, pos])
    return (
        f"{head}: rank **{int(g.ranks[layer, pos])}**, probability {100 * math.exp(lp):.3g}%, logprob {lp:.4f}, "
        f"entropy {float(g.entropy[layer, pos]):.3f} nats."
    )


def cell_table(g: LensGrid, layer: int, pos: int) -> pd.DataFrame:
    """That layer's top-k at `pos`, the actual token marked, and an `(others)` row with the rest of the mass."""
    return alternatives_table(g.top(layer, pos), g.pieces, int(g.token_ids[pos]), "◀ actual")
