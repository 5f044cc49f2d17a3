"""Text statistics (explorer/results/stats.py) -> the page's Markdown panel: value, meaning, reference, caveat."""

from __future__ import annotations

from explorer.results.stats import CAVEAT, TextStat


def _value(s: TextStat) -> str:
    """The value as the panel writes it (4 decimals; GLTR as percentages); '—' when not computable."""
    if s.value is None:
        return "—"
    if isinstance(s.value, dict):
        return " · ".join(f"{k} {100 * v:.1f}%" for k, v in s.value.items())
    return f"{s.value:.4f}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def stats_markdown(items: list[TextStat], title: str = "Text statistics") -> str:
    """A Markdown table of `items` (one row each: name, value, meaning, reference, note), the caveat above it."""
    if not items:
        return ""
    rows = [
        f"| {_cell(s.name)} | **{_value(s)}** | {_cell(s.meaning)}"
        + (f" <br><small>{_cell(s.note)}</small>" if s.note else "")
        + f" | <small>{_cell(s.reference)}</small> |"
        for s in items
    ]
    caveats = {s.caveat for s in items}
    head = f"**{title}.** ⚠ " + " ".join(sorted(caveats or {CAVEAT}))
    return "\n".join([head, "", "| statistic | value | what it means | reference |", "|---|---|---|---|", *rows])
