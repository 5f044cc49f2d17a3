"""Heatmap: each token a coloured chip carrying only its position; one palette for every metric.

Colours are CSS classes (a few bytes a token): `c7` (best: the model expected it) .. `c0`
(worst), `u` for an unscored token. The palette (CSS below) diverges from blue (expected)
to orange-red (surprising), colour-blind safe, with dark text on the light theme and light
text on the dark one (contrast >= 4.5 everywhere). Per-token numbers for the hover card
travel once per page as data (explorer/render/page_data.py), never as markup per token.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from explorer.render.text import chip_html, escape
from explorer.results.colour_by import DEFAULT_METRIC, DEFAULT_THRESHOLDS, METRIC_NAMES
from explorer.results.scores import TokenScores


@dataclass(frozen=True)
class Metric:
    about: str  # what the colour shows, in words
    labels: tuple[str, ...]  # bin labels, best first (c7 .. c0); rank builds its own
    ends: tuple[str, str]  # the words at the good and the bad end


LOGPROB_EDGES = (0.5, 0.2, 0.05, 0.01, 1e-3, 1e-4, 1e-5)  # probability edges of the default scale, best first
METRICS = {
    "logprob": Metric(
        "how expected each token was: its probability on a log scale",
        ("≥ 50%", "20–50%", "5–20%", "1–5%", "0.1–1%", "0.01–0.1%", "0.001–0.01%", "< 0.001%"),
        ("expected", "surprising"),
    ),
    "rank": Metric(
        "the rank of the actual token among all the vocabulary (1 = the model's top guess)",
        (),
        ("top guess", "far down the list"),
    ),
    "probability": Metric(
        "the probability of the actual token, on a linear scale",
        ("88–100%", "75–88%", "62–75%", "50–62%", "38–50%", "25–38%", "12–25%", "0–12%"),
        ("likely", "unlikely"),
    ),
    "entropy": Metric(
        "how unsure the model was before the token (entropy of its distribution)",
        ("sure", "", "", "", "", "", "", "unsure"),
        ("sure", "unsure"),
    ),
    "surprisal": Metric(
        "surprisal −log₂ p in bits (each bit halves the probability)",
        ("0–2 bits", "2–4", "4–6", "6–8", "8–10", "10–12", "12–14", "≥ 14 bits"),
        ("0 bits", "14+ bits"),
    ),
}
assert tuple(METRICS) == METRIC_NAMES, "a metric has a palette here and a name in explorer/results/colour_by.py"
N_BINS = 8
RANK_BINS = {
    2: (7, 0),
    3: (7, 3, 0),
    4: (7, 5, 2, 0),
    5: (7, 6, 3, 1, 0),
}  # rank bucket -> palette bin, by bucket count
LIGHT = ("#d6604d", "#f08a5d", "#f6b17f", "#fbdcc0", "#dce9f5", "#b5d3ec", "#8bbbe3", "#5f9fd6")  # c0 .. c7
DARK = ("#9c2f1c", "#7f3a1a", "#5e3a1c", "#3f3122", "#24344a", "#1f4266", "#1d5080", "#1a5c99")
CSS = (
    ":root{" + "".join(f"--lx-c{i}:{c};" for i, c in enumerate(LIGHT)) + "--lx-fg:#111827;--lx-edge:rgba(0,0,0,.22)}"
    ".dark{"
    + "".join(f"--lx-c{i}:{c};" for i, c in enumerate(DARK))
    + "--lx-fg:#f3f4f6;--lx-edge:rgba(255,255,255,.22)}"
    + "".join(f".c{i}{{background:var(--lx-c{i});color:var(--lx-fg)}}" for i in range(N_BINS))
    + ".lx{line-height:2.1;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:15px;overflow-wrap:anywhere}"
    ".lx .t{border-radius:3px;padding:2px 1px;margin-right:1px;cursor:pointer;white-space:pre-wrap;"
    "box-shadow:inset -1px 0 0 var(--lx-edge)}"
    ".lx .t:focus-visible,.lx .t.sel{outline:3px solid #4f46e5;outline-offset:1px}.dark .lx .t:focus-visible,.dark .lx .t.sel{outline-color:#a5b4fc}"
    ".lx .t.span{box-shadow:inset 0 -3px 0 #4f46e5}.dark .lx .t.span{box-shadow:inset 0 -3px 0 #a5b4fc}"
    ".u{outline:1px dashed #6b7280;color:inherit}.lx .x{padding:0 3px}"
    ".lx .s{font-size:.8em;font-style:italic;border:1px dashed currentColor}"
    ".lx .role{display:inline-block;font:600 12px/1.6 ui-sans-serif,system-ui,sans-serif;text-transform:uppercase;"
    "letter-spacing:.04em;padding:0 6px;margin:6px 6px 0 0;border-radius:9px;background:#334155;color:#fff}"
    ".lx .role.reply{background:#4338ca}.lx .gen .t{text-decoration:underline 2px #4338ca;text-underline-offset:4px}"
    ".dark .lx .gen .t{text-decoration-color:#a5b4fc}"
)


def rank_buckets(ranks: np.ndarray, thresholds=DEFAULT_THRESHOLDS) -> np.ndarray:
    """(n,) bucket 0..len(thresholds): rank <= thresholds[0], <= thresholds[1], ..., beyond."""
    return np.searchsorted(np.asarray(thresholds), ranks, side="left")


def bins(r: TokenScores, metric: str, thresholds=DEFAULT_THRESHOLDS) -> np.ndarray:
    """(n,) palette bin per token for `metric`: 7 = best (expected) .. 0 = worst; -1 where unscored."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}: use one of {', '.join(METRICS)}")
    if metric == "rank":
        b = np.asarray(RANK_BINS[len(thresholds) + 1])[rank_buckets(r.ranks, thresholds)]
    elif metric == "logprob":
        lp = np.nan_to_num(r.logprobs, nan=0.0, neginf=-np.inf)
        b = N_BINS - 1 - (lp[:, None] < np.log(LOGPROB_EDGES)[None, :]).sum(1)
    elif metric == "probability":
        b = np.minimum((np.nan_to_num(r.probs) * N_BINS).astype(int), N_BINS - 1)
    elif metric == "entropy":
        half = math.log(max(r.vocab_size, 2)) / 2
        b = N_BINS - 1 - np.minimum((np.nan_to_num(r.entropy) / half * N_BINS).astype(int), N_BINS - 1)
    else:  # surprisal, 2 bits a bin
        b = N_BINS - 1 - np.minimum((np.nan_to_num(r.surprisal_bits, posinf=99) / 2).astype(int), N_BINS - 1)
    return np.where(r.scored, b, -1).astype(int)


def color_classes(r: TokenScores, metric: str, thresholds=DEFAULT_THRESHOLDS) -> list[str]:
    """CSS class per token for `metric`; 'u' where unscored."""
    return [f"c{b}" if b >= 0 else "u" for b in bins(r, metric, thresholds).tolist()]


@dataclass(frozen=True)
class Marks:
    """What some tokens are besides their numbers: markers (special tokens) and where chat turns start."""

    special: frozenset[int] = frozenset()  # token ids drawn as markers (template tokens, a document start)
    turns: tuple[tuple[int, str], ...] = ()  # (first position, role) of each chat turn


def heatmap_html(
    r: TokenScores,
    metric: str = DEFAULT_METRIC,
    thresholds=DEFAULT_THRESHOLDS,
    selected: int | None = None,
    marks: Marks | None = None,
) -> str:
    """The text as chips (one tab stop: the selected chip, else the first); chat turns labelled, the generated part marked."""
    marks = marks or Marks()
    classes, texts, ids = color_classes(r, metric, thresholds), r.token_text, r.token_ids.tolist()
    turns = dict(marks.turns)
    generated = r.output_k is not None and r.n_prompt < r.n
    stop = selected if selected is not None and 0 <= selected < r.n else 0
    label = f"{r.n} tokens coloured by {metric}. Arrow keys move between tokens, Enter opens one, Shift+arrows select a span."
    out = [f'<div class="lx" role="group" aria-label="{escape(label)}">']
    for pos in range(r.n):
        if pos in turns and not (generated and pos == r.n_prompt):
            out.append(f'<span class="role">{escape(turns[pos])}</span>')
        if generated and pos == r.n_prompt:
            out.append('<span class="role reply">generated</span><span class="gen">')
        special = ids[pos] in marks.special or pos < r.context_start
        cls = (
            classes[pos]
            + (" s" if special else "")
            + (" x" if texts[pos] == "" else "")
            + (" sel" if pos == selected else "")
        )
        tab = ' tabindex="0"' if pos == stop else ""
        # <wbr>: spaces are shown as `·`, so the line may break between tokens, never inside one
        out.append(f'<span class="t {cls}" data-pos="{pos}"{tab}>{chip_html(texts[pos])}</span><wbr>')
    out.append("</span></div>" if generated else "</div>")
    return "".join(out)


def legend_labels(metric: str, thresholds=DEFAULT_THRESHOLDS) -> list[tuple[int, str]]:
    """(palette bin, label) of each colour `metric` uses, best first."""
    if metric == "rank":
        t = list(thresholds)
        names = ["top 1" if t[0] == 1 else f"top {t[0]}"] + [f"{a + 1}–{b}" for a, b in pairwise(t)] + [f"> {t[-1]}"]
        return list(zip(RANK_BINS[len(names)], names))
    return [(N_BINS - 1 - i, label) for i, label in enumerate(METRICS[metric].labels)]


def legend_html(metric: str, thresholds=DEFAULT_THRESHOLDS) -> str:
    """What the colours mean, in words: the metric, its good and bad ends, each colour's range."""
    m = METRICS[metric]
    chips = "".join(
        f'<span class="c{b}">{escape(label) or "&nbsp;&nbsp;"}</span>' for b, label in legend_labels(metric, thresholds)
    )
    return (
        f'<div class="lg"><p><b>Colour</b>: {escape(m.about)}. A dashed outline: not scored.</p>'
        f'<p class="lg-scale"><span class="lg-end">{escape(m.ends[0])}</span>{chips}'
        f'<span class="lg-end">{escape(m.ends[1])}</span></p>'
        "<p>In the text, <b>·</b> is a space and <b>↵</b> a new line (each belongs to the token it is drawn in).</p></div>"
    )
