"""Heatmap: each token a coloured, focusable chip with its position and a tooltip.

Colours are CSS classes (a few bytes a token): `c0` (bad) .. `c7` (good) for
continuous metrics, `g0` .. `g4` for GLTR's rank buckets; `u` is unscored.
Translucent backgrounds keep the text readable in light and dark themes.
"""

from __future__ import annotations

import math

import numpy as np

from explorer.render.text import chip_html, escape
from explorer.result import TokenScores

METRICS = {
    "probability": "probability of the actual token (red 0% → green 100%)",
    "logprob": "logprob, log scale, clipped at this text's 5th percentile (red low → green high)",
    "rank": "rank bucket of the actual token, as GLTR",
    "entropy": "entropy of the distribution in nats (green sure → red unsure)",
    "surprisal": "surprisal −log₂p in bits (green 0 → red 16+)",
}
DEFAULT_THRESHOLDS = (1, 10, 100, 1000)
N_BINS = 8
_C = ["220,38,38", "234,88,12", "245,158,11", "234,179,8", "163,230,53", "74,222,128", "34,197,94", "22,163,74"]
_G = ["34,197,94", "132,204,22", "234,179,8", "239,68,68", "168,85,247"]  # top1, top10, top100, top1000, beyond
CSS = (
    ".lx{line-height:2;font-family:ui-monospace,monospace;font-size:14px;overflow-wrap:anywhere}"
    ".lx .t{border-radius:3px;padding:1px 0;cursor:pointer;white-space:pre-wrap}"
    ".lx .t:focus,.lx .t.sel{outline:2px solid #2563eb;outline-offset:1px}"
    ".lx .u{outline:1px dashed #9ca3af}.lx .x{padding:0 2px}"
    + "".join(f".lx .c{i}{{background:rgba({c},.45)}}" for i, c in enumerate(_C))
    + "".join(f".lx .g{i}{{background:rgba({c},.45)}}" for i, c in enumerate(_G))
    + ".lg span{display:inline-block;padding:0 6px;margin:0 2px;border-radius:3px}"
)


def rank_buckets(ranks: np.ndarray, thresholds=DEFAULT_THRESHOLDS) -> np.ndarray:
    """(n,) bucket 0..len(thresholds): rank <= thresholds[0], <= thresholds[1], ..., beyond."""
    return np.searchsorted(np.asarray(thresholds), ranks, side="left")


def color_classes(r: TokenScores, metric: str, thresholds=DEFAULT_THRESHOLDS) -> list[str]:
    """CSS class per token for `metric`; 'u' where unscored."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}: use one of {', '.join(METRICS)}")
    ok = r.scored
    if metric == "rank":
        idx = rank_buckets(r.ranks, thresholds)
        return [f"g{i}" if s else "u" for i, s in zip(idx.tolist(), ok)]
    if metric == "probability":
        x = np.nan_to_num(r.probs)  # 0..1, good is high
    elif metric == "logprob":
        lp = r.logprobs[ok]
        lo = float(np.percentile(lp[np.isfinite(lp)], 5)) if lp.size and np.isfinite(lp).any() else -1.0
        lo = min(lo, -1e-3)
        x = 1 - np.clip(np.nan_to_num(r.logprobs, nan=0.0, neginf=lo) / lo, 0, 1)
    elif metric == "entropy":
        top = math.log(max(r.vocab_size, 2))
        x = 1 - np.clip(np.nan_to_num(r.entropy) / (top / 2), 0, 1)
    else:  # surprisal
        x = 1 - np.clip(np.nan_to_num(r.surprisal_bits, posinf=16) / 16, 0, 1)
    idx = np.minimum((x * N_BINS).astype(int), N_BINS - 1)
    return [f"c{i}" if s else "u" for i, s in zip(idx.tolist(), ok)]


def _tip(r: TokenScores, pos: int) -> str:
    if not r.scored[pos]:
        return "unscored (no context before it)" if pos == 0 else "not scored"
    return f"p {r.probs[pos]:.2%} · logprob {r.logprobs[pos]:.3f} · rank {r.ranks[pos]}"


def heatmap_html(r: TokenScores, metric: str = "probability", thresholds=DEFAULT_THRESHOLDS, selected: int | None = None) -> str:
    """The text as chips; prompt and generated parts separated by a thin marker."""
    classes = color_classes(r, metric, thresholds)
    texts = r.token_text
    out = ['<div class="lx">']
    for pos in range(r.n):
        if pos == r.n_prompt and r.n_prompt and r.output_k is not None:
            out.append('<span title="generated from here">▸</span>')
        cls = classes[pos] + (" x" if texts[pos] == "" else "") + (" sel" if pos == selected else "")
        # <wbr>: spaces are shown as `·`, so the line may break between tokens, never inside one
        out.append(f'<span class="t {cls}" data-pos="{pos}" tabindex="0" title="{_tip(r, pos)}">{chip_html(texts[pos])}</span><wbr>')
    out.append("</div>")
    return "".join(out)


def legend_html(metric: str, thresholds=DEFAULT_THRESHOLDS) -> str:
    """What the colours mean, in one line."""
    if metric == "rank":
        t = list(thresholds)
        names = [f"rank ≤ {t[0]}"] + [f"≤ {b}" for b in t[1:]] + [f"> {t[-1]}"]
        chips = "".join(f'<span class="g{i}">{escape(n)}</span>' for i, n in enumerate(names))
    else:
        lo, hi = {"probability": ("0%", "100%"), "logprob": ("low", "0"), "entropy": ("unsure", "sure"),
                  "surprisal": ("16+ bits", "0 bits")}[metric]
        chips = f"{escape(lo)} " + "".join(f'<span class="c{i}">&nbsp;</span>' for i in range(N_BINS)) + f" {escape(hi)}"
    return f'<div class="lx lg"><b>{escape(metric)}</b>: {escape(METRICS[metric])}<br>{chips} <span class="u">unscored</span></div>'
