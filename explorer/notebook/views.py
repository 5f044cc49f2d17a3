"""The tool tabs' views (Words, Compare, Answers, Why, Logit lens, Branch, Batch) as self-contained HTML files: pure
functions of their result types, for the tabs' *Download view (HTML)*.

What a file holds, all inline (no CDN, no script, no request when opened; it works from file:// and in an iframe):
1. the view's own chips or grid, drawn by its renderer in explorer/render (words_html, compare_html, why_html,
   lens_html, tree_html) with that renderer's CSS, and its legend; a title on each chip carries its numbers;
2. the summary the tab shows (its Markdown as plain HTML: only bold, italics and code are kept; every other `<` is
   escaped), a chart drawn as inline SVG from the numbers where the tab has one (no plotly), and a table of the
   numbers as text;
3. the view's own JSON (its export: export/words.py's body, or the result's `to_dict`) in
   `<script type="application/json" id="logprob-data">`;
4. light and dark colours (prefers-color-scheme) and a Content-Security-Policy that allows only inline style.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from explorer.export.words import to_dict as words_dict
from explorer.notebook.frames import attribution_frame, comparison_frame, lookup_frame
from explorer.notebook.page import dark_rules, json_script, scope_css
from explorer.render import branch, compare, lens, why
from explorer.render import words as words_render
from explorer.render.answers import answers_markdown, variants_table
from explorer.render.batch import batch_markdown, batch_table
from explorer.render.text import visible
from explorer.results.answers import Answers
from explorer.results.attribution import Attribution
from explorer.results.batch import Batch
from explorer.results.branch import BranchTree
from explorer.results.compare import Comparison
from explorer.results.hidden import HiddenStates
from explorer.results.lens import LensGrid
from explorer.results.lookup import Lookups
from explorer.results.scores import TokenScores
from explorer.results.word_table import WordTable
from explorer.results.words import Words

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"  # no script runs: the JSON is data
BASE_CSS = """
:root { color-scheme: light dark; --fg: #111827; --sub: #4b5563; --bg: #fff; --bg2: #f3f4f6; --line: #d1d5db;
  --bar: #2563eb; --bar2: #e08214; --body-text-color: var(--fg); --background-fill-primary: var(--bg);
  --border-color-primary: var(--line); }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e5e7eb; --sub: #9ca3af; --bg: #0b0f19; --bg2: #1f2937; --line: #374151; --bar: #60a5fa;
    --bar2: #fdb863; }
}
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 14px/1.5 ui-sans-serif, system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main.lx-file { max-width: 1100px; margin: 0 auto; padding: 12px 16px 32px; }
h1 { font-size: 18px; margin: 4px 0 8px; } h2 { font-size: 15px; margin: 18px 0 6px; }
.lx-meta { color: var(--sub); font-size: 12px; }
code { font-family: ui-monospace, monospace; background: var(--bg2); padding: 0 3px; border-radius: 3px; }
.lx-table { overflow-x: auto; margin-top: 12px; }
table.lx-nums caption { text-align: left; font-weight: 600; padding: 2px 0 4px; }
table.lx-nums { border-collapse: collapse; font-size: 12px; font-variant-numeric: tabular-nums; }
table.lx-nums th, table.lx-nums td { border: 1px solid var(--line); padding: 2px 6px; text-align: left;
  white-space: pre-wrap; vertical-align: top; }
table.lx-nums th { background: var(--bg2); position: sticky; top: 0; }
svg.lx-chart { width: 100%; max-width: 900px; height: auto; color: var(--fg); }
svg.lx-chart text { fill: currentColor; font-size: 11px; }
svg.lx-chart .axis { stroke: var(--line); }
svg.lx-chart .bar { fill: var(--bar); } svg.lx-chart .bar.neg { fill: var(--bar2); }
svg.lx-chart .line { fill: none; stroke: var(--bar); stroke-width: 1.5; }
svg.lx-chart .dot { fill: var(--bar); }
"""
_KEEP = {"<code>": "\x00c", "</code>": "\x00C", "<br>": "\x00b"}  # the only tags the summaries' Markdown writes


def md_html(text: str) -> str:
    """The tabs' Markdown as HTML: paragraphs, **bold**, *italics*, `code`; every `<` but <code>/<br> escaped."""
    for tag, mark in _KEEP.items():
        text = text.replace(tag, mark)
    text = text.replace("<", "&lt;").replace(">", "&gt;")
    text = re.sub(r"`([^`]+)`", lambda m: f"\x00c{m.group(1)}\x00C", text)
    text = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", text)
    text = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<em>\1</em>", text)
    for tag, mark in _KEEP.items():
        text = text.replace(mark, tag)
    return "".join(f"<p>{p.strip()}</p>" for p in text.split("\n\n") if p.strip())


def _cell(v: object) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
        return ""
    if isinstance(v, (float, np.floating)):  # 4 decimals; a small number keeps 3 significant digits (not 0.0000)
        x = float(v)
        return f"{x:.4f}" if x == 0 or abs(x) >= 5e-4 or not math.isfinite(x) else f"{x:.3g}"
    if isinstance(v, (list, tuple)):
        return " | ".join(str(x) for x in v)
    return str(v)


TEXT_COLUMNS = ("text", "token")  # token text: spaces and newlines made visible (`·`, `↵`)


def table_html(frame: pd.DataFrame, caption: str) -> str:
    """`frame` as an HTML table of text: floats to 4 decimals, empty where unknown, token text made visible, every
    cell escaped."""
    frame = frame.assign(**{c: frame[c].map(lambda t: visible(str(t))) for c in TEXT_COLUMNS if c in frame.columns})
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row) + "</tr>"
        for row in frame.itertuples(index=False)
    )
    return (
        f'<div class="lx-table"><table class="lx-nums"><caption>{html.escape(caption)}</caption>'
        f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>"
    )


def bars_svg(labels: Sequence[str], values: Sequence[float], title: str, unit: str = "") -> str:
    """Horizontal bars (negative values in the second colour) with their labels and values as text."""
    vals = [0.0 if v is None or not math.isfinite(v) else float(v) for v in values]
    top = max([abs(v) for v in vals] + [1e-12])
    neg = any(v < 0 for v in vals)
    w, label_w, row = 760, 260, 22
    zero = label_w + (w - label_w - 90) / 2 if neg else label_w
    scale = (w - label_w - 90) / (2 * top if neg else top)
    h = 24 + row * len(vals)
    parts = [f'<text x="0" y="14" font-weight="bold">{html.escape(title)}</text>']
    for i, (lab, v) in enumerate(zip(labels, vals)):
        y = 22 + i * row
        x0, bw = (zero + v * scale, -v * scale) if v < 0 else (zero, v * scale)
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end">{html.escape(lab[:40])}</text>'
            f'<rect class="bar{" neg" if v < 0 else ""}" x="{x0:.1f}" y="{y + 3}" width="{max(bw, 0.5):.1f}" height="{row - 6}"/>'
            f'<text x="{max(x0 + bw, zero) + 4:.1f}" y="{y + 14}">{v:.4g}{html.escape(unit)}</text>'
        )
    parts.append(f'<line class="axis" x1="{zero:.1f}" x2="{zero:.1f}" y1="20" y2="{h}"/>')
    return _svg(w, h, title, "".join(parts))


def line_svg(values: Sequence[float], title: str, unit: str, labels: Sequence[str] | None = None) -> str:
    """A curve of `values` by position (gaps where unknown), its y range written at the axis; with `labels` (one a
    position: its token), each dot's tooltip names its position, label and value."""
    vals = np.array([np.nan if v is None else float(v) for v in values], dtype=np.float64)
    ok = np.isfinite(vals)
    w, h, left, pad = 760, 200, 56, 24
    if not ok.any():
        return _svg(w, 40, title, f'<text x="0" y="14">{html.escape(title)}: no numbers.</text>')
    lo, hi = float(vals[ok].min()), float(vals[ok].max())
    lo, hi = (lo - 1, hi + 1) if hi == lo else (lo, hi)
    n = max(len(vals) - 1, 1)
    xs = left + (w - left - 8) * np.arange(len(vals)) / n
    ys = pad + (h - 2 * pad) * (hi - vals) / (hi - lo)
    runs, run = [], []
    for x, y, good in zip(xs, ys, ok):
        if good:
            run.append(f"{x:.1f},{y:.1f}")
        elif run:
            runs.append(run)
            run = []
    runs += [run] if run else []
    lines = "".join(f'<polyline class="line" points="{" ".join(r)}"/>' for r in runs)
    tips = [
        f"<title>{i} {html.escape(visible(labels[i]))}: {vals[i]:.3g}</title>" if labels is not None else ""
        for i in range(len(vals))
    ]
    dots = "".join(
        f'<circle class="dot" cx="{x:.1f}" cy="{y:.1f}" r="2">{tip}</circle>'
        for x, y, g, tip in zip(xs, ys, ok, tips)
        if g
    )
    axis = (
        f'<text x="0" y="14" font-weight="bold">{html.escape(title)}</text>'
        f'<line class="axis" x1="{left}" x2="{left}" y1="{pad}" y2="{h - pad}"/>'
        f'<line class="axis" x1="{left}" x2="{w - 8}" y1="{h - pad}" y2="{h - pad}"/>'
        f'<text x="{left - 4}" y="{pad + 4}" text-anchor="end">{hi:.3g}</text>'
        f'<text x="{left - 4}" y="{h - pad}" text-anchor="end">{lo:.3g}</text>'
        f'<text x="{left}" y="{h - 6}">0</text><text x="{w - 8}" y="{h - 6}" text-anchor="end">{len(vals) - 1}</text>'
        f'<text x="{(w + left) / 2:.0f}" y="{h - 6}" text-anchor="middle">{html.escape(unit)}</text>'
    )
    return _svg(w, h, title, axis + lines + dots)


def _svg(w: int, h: int, title: str, body: str) -> str:
    t = html.escape(title)
    return (
        f'<svg class="lx-chart" viewBox="0 0 {w} {h}" role="img" aria-label="{t}" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{t}</title>{body}</svg>'
    )


def document(title: str, model: str, body: str, css: str, data: dict) -> str:
    """One HTML file: `body` under a heading, `css` after the base's, `data` as the logprob-data JSON."""
    t = html.escape(title)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{t} · {html.escape(model)} (logprob-explorer)</title><style>{BASE_CSS}{css}</style></head>"
        f'<body><main class="lx-file"><h1>{t}</h1><p class="lx-meta">{html.escape(model)} · made with '
        "logprob-explorer; the numbers are in the table below and, in full, in this file's JSON "
        f"(<code>script#logprob-data</code>).</p>{body}</main>{json_script(data, 'logprob-data')}</body></html>\n"
    )


def fragment(title: str, model: str, body: str, css: str, data: dict) -> str:
    """One view as a notebook output (`_repr_html_`): what `document` holds, in a `<div class="lx-view">` whose CSS
    applies under it only (page.scope_css: no `:root`, no global class), light and dark."""
    t = html.escape(title)
    dark = dark_rules(css)
    style = scope_css(BASE_CSS + css) + (f"@media (prefers-color-scheme: dark) {{{dark}}}" if dark else "")
    return (
        f'<div class="lx-view lx-tool" data-lx-view="{html.escape(title.split(":")[0].lower())}"><style>{style}</style>'
        f'<p class="lx-meta"><strong>{t}</strong> · {html.escape(model)}</p>{body}'
        f"{json_script(data, 'logprob-data')}</div>"
    )


def _out(inline: bool):
    """The wrapper of a view: a notebook fragment, or a whole file."""
    return fragment if inline else document


# ---- the views -------------------------------------------------------------------------------------------------
def words_page(
    r: TokenScores, w: Words, lead: int | None = None, metric: str = "probability", inline: bool = False
) -> str:
    """The Words view: chips coloured by `metric`, the summary, surprisal per word, the words table."""
    metric = metric if metric in words_render.METRICS else "probability"
    table = words_render.words_table(r, w, lead)
    body = (
        md_html(words_render.words_summary(w, r))
        + words_render.words_legend(metric)
        + words_render.words_html(w, metric)
        + "<h2>Surprisal per word</h2>"
        + line_svg(w.surprisal_bits.tolist(), "Surprisal per word (bits, summed over its tokens)", "word")
        + md_html(words_render.file_note(w, r))
        + table_html(table, "Words: summed and corrected surprisal" + _after_start(r, lead))
    )
    return _out(inline)("Words", r.model, body, words_render.CSS, words_dict(r, w, lead))


def _after_start(r: TokenScores, lead: int | None) -> str:
    """The words table's caption end: which document start the text was scored after (#54)."""
    start = "".join(r.token_text[: r.context_start if lead is None else lead])
    return f", scored after the document start {start}" if start else ", no document start (the first word is unscored)"


def compare_page(c: Comparison, metric: str = "delta", inline: bool = False) -> str:
    """The Compare view: chips coloured by Δ logprob or JS, the summary, the curves, every pair's numbers."""
    _, la, lb, js = compare.units(c)
    body = (
        md_html(compare.compare_summary(c))
        + compare.legend_html(c, metric)
        + compare.compare_html(c, metric)
        + "<h2>Per token</h2>"
        + line_svg((lb - la).tolist(), "Δ logprob (B − A, nats)", "position")
        + (line_svg(js.tolist(), "Jensen-Shannon divergence (nats)", "position") if c.paired else "")
        + table_html(comparison_frame(c), "Every compared token (nats)" if c.paired else "Every aligned span (nats)")
    )
    return _out(inline)(f"Compare: {c.a.model} and {c.b.model}", c.a.model, body, compare.CSS, c.to_dict())


def answers_page(res: Answers, inline: bool = False) -> str:
    """The Answers view: which answer the model prefers, the bars of the set, every variant's numbers."""
    names = [visible(a.name) for a in res.answers]
    body = (
        f"<p>Prompt: <code>{html.escape(visible(res.prompt))}</code></p>"
        + md_html(answers_markdown(res))
        + bars_svg(names, [100 * float(x) for x in res.normalised], "Share of the set (%)", "%")
        + bars_svg(names, [float(x) for x in res.logprobs], "Logprob of each answer (nats)")
        + table_html(variants_table(res), "Variants: tokens and logprobs")
    )
    return _out(inline)("Answers", res.model, body, "", res.to_dict())


def why_page(a: Attribution, inline: bool = False) -> str:
    """The Why view: the text's units coloured by their share of f, the summary, the strongest, every unit."""
    top = a.ranked(15)
    body = (
        md_html(why.why_summary(a))
        + why.legend_html(a)
        + why.why_html(a)
        + bars_svg(
            [f"{i + 1}. {visible(a.unit_text[u])}" for i, u in enumerate(top)],
            [float(a.values[u]) for u in top],
            "The strongest units",
        )
        + table_html(attribution_frame(a), "Every unit before the target")
    )
    colours = f"svg.lx-chart .bar{{fill:{why.RAISES[2]}}}svg.lx-chart .bar.neg{{fill:{why.LOWERS[2]}}}"
    return _out(inline)("Why this token?", a.model, body, why.CSS + colours, a.to_dict())


def lens_page(g: LensGrid, metric: str = "rank", inline: bool = False) -> str:
    """The Logit lens: the grid coloured by `metric` and the actual token's rank at every layer and position."""
    metric = metric if metric in lens.METRICS else "rank"
    ranks = pd.DataFrame(
        {
            "layer": [lens.layer_name(g, layer) for layer in range(g.n_layers, -1, -1)],
            **{
                f"{p}: {visible(t)}": [
                    None if p == 0 else int(g.ranks[layer, p]) for layer in range(g.n_layers, -1, -1)
                ]
                for p, t in enumerate(g.token_text)
            },
        }
    )
    body = (
        lens.legend_html(metric)
        + lens.lens_html(g, metric)
        + table_html(ranks, "The actual token's rank at each layer (1 = the layer's first choice)")
    )
    return _out(inline)("Logit lens", g.model, body, lens.CSS, g.to_dict())


def branch_page(tree: BranchTree, inline: bool = False) -> str:
    """The Branch view: the tree with each token's logprob and rank in its title, and every node's numbers."""
    frame = pd.DataFrame(
        [
            {"node": i, "parent": n.get("parent"), "token": visible(n.get("text", "")),
             "logprob": n.get("logprob"), "rank": n.get("rank")}
            for i, n in enumerate(tree.to_dict().get("nodes", []))
        ]
    )  # fmt: skip
    for col in ("parent", "rank"):  # whole numbers, blank where there is none (the root has no parent, no rank)
        frame[col] = frame[col].where(frame[col] >= 0).astype("Int64")
    body = branch.tree_html(tree) + table_html(frame, "Every node of the tree")
    return _out(inline)("Branches", tree.model, body, branch.CSS, tree.to_dict())


BATCH_BARS = 60  # texts drawn as bars at most (the table holds every one)


def batch_page(b: Batch, inline: bool = False) -> str:
    """The Batch view: the summary, each text's mean surprisal as a bar (the first BATCH_BARS texts), the table of
    every text."""
    scored = [r for r in b.rows if not r.error and r.mean_logprob is not None][:BATCH_BARS]
    labels = [f"{r.index + 1}. {r.id or visible(r.text)}" for r in scored]
    bits = [-float(r.mean_logprob) / math.log(2) for r in scored]  # type: ignore[arg-type]
    more = len([r for r in b.rows if not r.error and r.mean_logprob is not None]) - len(scored)
    body = (
        md_html(batch_markdown(b, on_page=False))
        + (bars_svg(labels, bits, "Mean surprisal of each text (bits a token)") if scored else "")
        + (f'<p class="lx-meta">The chart shows the first {BATCH_BARS} texts; the table, all.</p>' if more > 0 else "")
        + table_html(batch_table(b), "Texts")
    )
    return _out(inline)("Batch", b.model, body, "", b.to_dict())


def lookup_page(res: Lookups, inline: bool = False) -> str:
    """The Lookup view: each query's logprob at every position of the text, what each curve is, every number."""
    curves = "".join(
        line_svg(x.logprobs.tolist(), f"logprob of {visible(x.query)!r}" + (" (first token)" if x.multi_token else ""),
                 "position")
        for x in res.lookups
    )  # fmt: skip
    frame = lookup_frame(res)
    frame["token"] = frame["token"].map(visible)
    body = (
        f"<p>Text: <code>{html.escape(visible(res.scores.text))}</code></p>"
        + curves
        + table_html(frame, "Each query at every position (nats; rank 1 = the model's first choice)")
    )
    return _out(inline)("Lookup", res.model, body, "", res.to_dict())


INLINE_ROWS = 500  # rows a word table shows in a notebook (`to_pandas()` holds them all)


def word_table_page(t: WordTable, inline: bool = False) -> str:
    """A stimulus list's word table, and its regions' where it has any: every row in the file, the first
    INLINE_ROWS of each in a notebook (with a line saying so)."""
    body = ""
    for frame, what in ((t.to_pandas(), "Words"), (t.regions_pandas(), "Regions")):
        if what == "Regions" and not t.regions:
            continue
        n = len(frame)
        if inline and n > INLINE_ROWS:
            body += (
                f'<p class="lx-meta">The first {INLINE_ROWS:,} of {n:,} rows: <code>to_pandas()</code> holds all.</p>'
            )
            frame = frame.head(INLINE_ROWS)
        body += table_html(frame, f"{what} ({n:,} rows)")
    data = {"format": t.to_dict()["format"], "model": t.model, "words": len(t.words)} if inline else t.to_dict()
    return _out(inline)("Word table", t.model, body, "", data)


def hidden_page(h: HiddenStates, inline: bool = False) -> str:
    """Hidden states: their shape and each layer's mean vector norm over the positions (the vectors themselves are
    `values`, a numpy array, and `to_pandas()`'s `vector` column)."""
    p, n, d = h.shape
    norms = np.linalg.norm(h.values.astype(np.float64), axis=-1).mean(axis=0) if p else np.full(n, np.nan)
    frame = pd.DataFrame({"layer": [str(x) for x in h.layers], "hook_name": h.hook_names, "mean norm": norms})
    body = (
        f"<p><strong>{p:,}</strong> positions x <strong>{n}</strong> layers x <strong>{d:,}</strong> hidden "
        f"(float32, {h.values.nbytes / 2**20:.2f} MiB in <code>values</code>): positions "
        f"{html.escape(', '.join(str(x) for x in h.positions[:12].tolist()))}{' ...' if p > 12 else ''}.</p>"
        + table_html(frame, "Each layer's mean vector norm over the positions")
    )
    data = {"layers": list(h.layers), "token_ids": h.token_ids.tolist(), "positions": h.positions.tolist(),
            "shape": [p, n, d]}  # fmt: skip
    return _out(inline)("Hidden states", "", body, "", data)
