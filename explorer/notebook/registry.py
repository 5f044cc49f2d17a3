"""The registered views, in the order the page shows them (within their group, after its hand-made tabs).

A new view of a result is one module (its `VIEW`: an explorer.notebook.view.View record, with the analysis, body, JSON
and table it needs) plus its line here. From this tuple the page gets its tab and link (explorer/ui/layout.py,
explorer/ui/tabs/registered.py), `LM` its method (explorer/notebook/lm.py), the tab its *Download view (HTML)* and
`logprob-explorer site` a page of it beside each input's (explorer/notebook/site.py).
"""

from __future__ import annotations

from explorer.notebook import surprisal
from explorer.notebook.view import View

VIEWS: tuple[View, ...] = (surprisal.VIEW,)


def by_id() -> dict[str, View]:
    """view id -> its record (ids are unique: checked when this module is imported)."""
    return {v.id: v for v in VIEWS}


if len(by_id()) != len(VIEWS) or len({v.method for v in VIEWS}) != len(VIEWS):
    raise RuntimeError("two registered views share an id or a method name")
