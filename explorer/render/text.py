"""Token text made visible: spaces as `·`, newlines as `↵`, tabs as `→`; HTML-escaped."""

from __future__ import annotations

import html

from explorer.results.text import visible

__all__ = ["chip_html", "escape", "visible"]


def escape(text: str) -> str:
    """HTML-escape, and neutralise `$`, `{` and backticks for templates that evaluate them."""
    return html.escape(text, quote=True).replace("$", "&#36;").replace("`", "&#96;").replace("{", "&#123;")


def chip_html(text: str) -> str:
    """A token's display text for the heatmap: visible whitespace, a real line break after `↵`."""
    return escape(visible(text)).replace("↵", "↵<br>")
