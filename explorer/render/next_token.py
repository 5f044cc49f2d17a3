"""The simple start's *What comes next?*: the next token's distribution at a temperature as bars in words, and a
handful of draws from it, each shown as the word drawn (HTML; every token text escaped)."""

from __future__ import annotations

from collections import Counter

from explorer.render.numbers import plain_pct
from explorer.render.text import escape, visible
from explorer.results.next_token import NextToken
from explorer.rules.sampler import is_greedy

CSS = """
.nt table { border-collapse: collapse; width: 100%; max-width: 640px; }
.nt td { padding: 2px 6px; vertical-align: middle; }
.nt td.w { width: 9em; font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
.nt td.v { width: 6em; text-align: right; font-variant-numeric: tabular-nums; }
.nt .bar { display: block; height: 14px; border-radius: 3px; background: #1f6fb2; min-width: 1px; }
.dark .nt .bar { background: #7cb8ec; }
.nt .draws span { display: inline-block; margin: 2px 4px 2px 0; padding: 2px 8px; border-radius: 12px;
  border: 1px solid currentColor; font-family: ui-monospace, monospace; }
"""

SHOWN = 10  # tokens listed


def _word(nt: NextToken, i: int) -> str:
    return escape(visible(nt.text_of(i))) or "&nbsp;"


def _tail(text: str, most: int = 40) -> str:
    t = " ".join(text.split())
    return ("…" + t[-most:]) if len(t) > most else t


def temperature_html(nt: NextToken | None, t: float, draws: list[int] | None = None) -> str:
    """The next token's likeliest choices at temperature `t` (bars and plain percentages), and the draws."""
    if nt is None:
        return ""
    top = nt.top(t, SHOWN)
    most = max(p for _, p in top) or 1.0
    rows = "".join(
        f'<tr><td class="w"><code>{_word(nt, i)}</code></td>'
        f'<td><span class="bar" style="width:{100 * p / most:.1f}%"></span></td><td class="v">{plain_pct(p)}</td></tr>'
        for i, p in top
    )
    rest = max(0.0, 1.0 - sum(p for _, p in top))
    how = (
        "temperature 0: the likeliest token, always"
        if is_greedy(t)
        else f"temperature {t:g}: "
        + ("the likeliest tokens get likelier" if t < 1 else "the model's own odds" if t == 1 else "the odds even out")
    )
    out = (
        f'<div class="nt"><p>After “{escape(_tail(nt.text))}”, at {how}. The next token would be:</p>'
        f'<table aria-label="The next token at temperature {t:g}">{rows}'
        f'<tr><td class="w">(every other token)</td><td></td><td class="v">{plain_pct(rest)}</td></tr></table>'
    )
    if draws:
        counts = Counter(draws)
        chips = "".join(f"<span>{_word(nt, i)}</span>" for i in draws)
        summary = ", ".join(f"“{_word(nt, i)}” {c}×" for i, c in counts.most_common())
        out += f'<p class="draws"><b>{len(draws)} draws at temperature {t:g}:</b> {chips}</p><p>{summary}.</p>'
    return out + "</div>"
