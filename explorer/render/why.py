"""Attribution -> the text before the target coloured by each unit's share, the ranked contributors, a summary.

Pure functions. Colours: a diverging orange (raises f) / purple (lowers f) scale (ColorBrewer PuOr, safe for the
common colour-vision deficiencies), three steps each side; every coloured chip has dark text on a light enough
background (contrast >= 4.5:1), and the sign is also said in words (tooltip, screen-reader label, the list).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.render.figures import styled
from explorer.render.text import escape, visible
from explorer.results.attribution import CAVEAT, MEANING, NAMES, Attribution

RAISES = ("#fee0b6", "#fdb863", "#e08214")  # weak, medium, strong: made the target more likely
LOWERS = ("#d8daeb", "#b2abd2", "#8a7fb8")  # ... less likely
TEXT = "#111111"
CSS = (
    ".why{line-height:2.1;font-family:ui-monospace,monospace;font-size:14px;overflow-wrap:anywhere}"
    ".why .t{border-radius:3px;padding:1px 0;white-space:pre-wrap}"
    + "".join(f".why .r{i + 1}{{background:{c};color:{TEXT}}}" for i, c in enumerate(RAISES))
    + "".join(f".why .l{i + 1}{{background:{c};color:{TEXT}}}" for i, c in enumerate(LOWERS))
    + ".why .l1,.why .l2,.why .l3{text-decoration:underline dashed}"
    ".why .m{outline:1px dashed #9ca3af;opacity:.75}.why .tg{outline:2px solid #2563eb;outline-offset:1px;"
    "font-weight:600}.why .na{outline:1px dotted #9ca3af}"
    ".why-key{display:flex;gap:.8em;flex-wrap:wrap;font-size:13px;margin:.3em 0}"
    ".why-key span{border-radius:3px;padding:0 .4em}"
)


def _label(text: str) -> str:
    return visible(text) or "▯"


def _what(a: Attribution) -> str:
    """'" Paris"' or '" Paris" rather than " London"', escaped."""
    out = f"“{escape(_label(a.target_text))}”"
    if a.contrast_id is not None:
        out += f" rather than “{escape(_label(a.contrast_text))}”"
    return out


def _continuation(a: Attribution) -> str:
    """Markdown: how a contrast of several tokens is scored and read ('' for none or one token)."""
    if a.contrast_length <= 1:
        return ""
    pieces = "|".join(escape(_label(t)) for t in a.contrast_token_text[:12]) + ("|…" if a.contrast_length > 12 else "")
    read = (
        " It is read as typed right after the text before the target, so a leading space is part of it (“ dogs” is a "
        "word of its own, “dogs” joins the word before)."
        if a.contrast_tokenized
        else ""
    )
    return (
        f"The contrast is {a.contrast_length} tokens ({pieces}): log p(contrast) is the sum of their logprobs, each "
        f"after the text and the contrast's tokens before it, as Answers scores an answer.{read}"
    )


def _levels(a: Attribution) -> np.ndarray:
    """(U,) -3..3: the colour step of each unit, relative to the strongest (0: under a tenth of it, or NaN)."""
    v = np.nan_to_num(a.values, nan=0.0)
    top = float(np.max(np.abs(v))) if len(v) else 0.0
    if top == 0:
        return np.zeros(len(v), np.int64)
    x = v / top
    step = np.select([np.abs(x) >= 0.6, np.abs(x) >= 0.3, np.abs(x) >= 0.1], [3, 2, 1], 0)
    return (np.sign(x) * step).astype(np.int64)


def _says(a: Attribution, v: float) -> str:
    if math.isnan(v):
        return "no value (nothing would be left before the target)"
    if not a.signed:
        return f"attention weight {v:.3f}"
    word = "raises" if v > 0 else "lowers" if v < 0 else "does not change"
    return f"{word} f by {abs(v):.3f} nats"


def why_html(a: Attribution) -> str:
    """The context, each unit a chip coloured by its value, the target outlined at the end."""
    levels, text = _levels(a), a.unit_text
    chips = []
    for u in range(a.n):
        lv, v = int(levels[u]), float(a.values[u])
        cls = "t " + (
            "m" if a.special[u] else "na" if math.isnan(v) else "" if lv == 0 else f"{'r' if lv > 0 else 'l'}{abs(lv)}"
        )
        tip = escape(f"{_label(text[u])}: {_says(a, v)}" + (" (template / special token)" if a.special[u] else ""))
        chips.append(f'<span class="{cls}" title="{tip}" aria-label="{tip}">{escape(visible(text[u]))}</span>')
    target = escape(f"target: {_label(a.target_text)}")
    chips.append(f'<span class="t tg" title="{target}" aria-label="{target}">{escape(visible(a.target_text))}</span>')
    return f'<div class="why" role="figure" aria-label="Attribution of {escape(a.target_text)}">{"".join(chips)}</div>'


def legend_html(a: Attribution | None) -> str:
    """What the colours say, in words."""
    if a is None:
        return ""
    if not a.signed:
        steps = "".join(
            f'<span style="background:{c};color:{TEXT}">{w}</span>' for c, w in zip(RAISES, ("some", "more", "most"))
        )
        return f'<div class="why-key">Attention weight: {steps}</div>'
    what = _what(a)
    return (
        '<div class="why-key">'
        f'<span style="background:{RAISES[2]};color:{TEXT}">orange: made {what} more likely</span>'
        f'<span style="background:{LOWERS[2]};color:{TEXT};text-decoration:underline dashed">'
        f"purple, dashed: made it less likely</span>"
        '<span style="outline:1px dashed #9ca3af">dashed box: template / special token</span></div>'
    )


def why_summary(a: Attribution) -> str:
    """Markdown: what is explained, by which method, its meaning and caveat, the strongest contributors."""
    f_name = "log p(target)" if a.contrast_id is None else "log p(target) − log p(contrast)"
    as_continuation = f" ({a.contrast_length} tokens, scored as a continuation)" if a.contrast_length > 1 else ""
    lines = [
        f"**Why {_what(a)}**{as_continuation} at position {a.pos}: f = {f_name} = **{a.f:.4f}** nats.",
        f"**{NAMES[a.method]}**: {MEANING[a.method]}. *{CAVEAT[a.method]}*",
    ]
    if a.contrast_length > 1:
        lines.insert(1, _continuation(a))
    gap, rel = a.completeness_gap, a.completeness_share
    if gap is not None and rel is not None and a.f_baseline is not None:
        total = a.f - a.f_baseline
        verdict = (
            "good"
            if rel <= 0.05
            else "poor: the values do not add up to f here, so read them as rough; more steps may help, but the path "
            "from the baseline can be too uneven at any step count (occlusion is exact)"
        )
        lines.append(
            f"Completeness: the values sum to {float(np.nansum(a.values)):.4f} nats; f(text) − f(baseline) = "
            f"{total:.4f} nats; gap {gap:+.4f} nats, {rel:.1%} of that difference ({verdict})."
        )
    if a.method == "attention" and a.contrast_id is not None:
        lines.append(
            "Attention weights do not depend on *rather than*: the same with or without it (they explain the next "
            "token only, from the position before the target)."
        )
    top = a.ranked(3)
    if top:
        lines.append(
            "Strongest: "
            + ", ".join(f"“{escape(_label(a.unit_text[u]))}” ({_says(a, float(a.values[u]))})" for u in top)
            + "."
        )
    if a.note:
        lines.append(f"*{escape(a.note)}*")
    return "\n\n".join(lines)


def why_table(a: Attribution, n: int = 15, with_special: bool = False) -> pd.DataFrame:
    """The n strongest units: rank, text, tokens, value, and the sign in words."""
    rows = []
    for i, u in enumerate(a.ranked(n, with_special)):
        lo, hi = a.spans[u].tolist()
        v = float(a.values[u])
        rows.append(
            {
                "rank": i + 1,
                "text": _label(a.unit_text[u]),
                "positions": f"{lo}" if hi - lo == 1 else f"{lo}–{hi - 1}",
                "value": round(v, 5),
                "effect": _says(a, v).split(" f by ")[0] if a.signed else "attended",
            }
        )
    return pd.DataFrame(rows, columns=["rank", "text", "positions", "value", "effect"])


def why_figure(a: Attribution, n: int = 15, with_special: bool = False) -> go.Figure:
    """The n strongest units as horizontal bars (orange raises, purple lowers)."""
    top = a.ranked(n, with_special)
    v = [float(a.values[u]) for u in top]
    labels = [f"{i + 1}. {_label(a.unit_text[u])} ({int(a.spans[u, 0])})" for i, u in enumerate(top)]
    fig = go.Figure(
        go.Bar(
            x=v,
            y=labels,
            orientation="h",
            marker_color=[RAISES[2] if x >= 0 else LOWERS[2] for x in v],
            hovertemplate="%{y}<br>%{x:.4f}<extra></extra>",
        )
    )
    fig.update_yaxes(autorange="reversed")
    fig.update_xaxes(title_text="value (nats of f)" if a.signed else "attention weight", zeroline=True)
    return styled(
        fig,
        height=max(220, 24 * len(top) + 80),
        showlegend=False,
        margin={"l": 10, "r": 10, "t": 20, "b": 40},
    )
