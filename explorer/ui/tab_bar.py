"""The page's tabs: Score, Generate and Chat first, the expert views grouped under them (*Read a result*, *Compare
and many*), and which tab is shown.

A group is a tab holding a tab row of its own. The browser remembers the view last opened in each group (a
`gr.BrowserState`), so a person who has used the Logit lens finds it open when they come back to *Read a result*.
`show(id)` gives the updates that bring any tab into view, grouped or not; `current` holds the tab shown (*Copy
link* describes that one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import gradio as gr

from explorer.ui.links import QUERY_KEY

MEMORY_KEY = "logprob-explorer-groups"  # localStorage: group id -> the tab last opened in it
MEMORY_SECRET = "tab-ids-only"  # Gradio encrypts a BrowserState; what it holds is checked against the tab ids anyway


@dataclass(frozen=True)
class Group:
    """Tabs shown together under one tab of the top row."""

    id: str
    label: str
    tabs: tuple[Callable[[Any], Any], ...]


class TabBar:
    """The top tab row and each group's row; built tabs by their id (`built`), each tab's group (`home`)."""

    def __init__(self, shared, layout: Sequence[Callable[[Any], Any] | Group]):
        self.built: dict[str, Any] = {}  # tab id -> the built tab
        self.home: dict[str, str] = {}  # tab id -> the id of the top-row tab holding it (itself when not grouped)
        self.rows: dict[str, gr.Tabs] = {}  # group id -> its tab row
        self.groups: dict[str, gr.Tab] = {}  # group id -> its tab in the top row
        self.first: dict[str, str] = {}  # group id -> its first tab's id
        self.current = gr.State("score")  # the tab shown
        self.memory = gr.BrowserState({}, storage_key=MEMORY_KEY, secret=MEMORY_SECRET)
        # the top row wraps (on a phone too) rather than folding tabs into a "More tabs" menu: every tab in sight,
        # and no second tab stop between the tab list and the Score tab's text box
        with gr.Tabs(elem_classes=["lx-hide-present"], elem_id="tabs", overflow_behavior="wrap") as self.block:
            for item in layout:
                if isinstance(item, Group):
                    self._group(shared, item)
                else:
                    tab = self._add(shared, item)
                    self.home[tab.tab.id] = tab.tab.id

    def _add(self, shared, make: Callable[[Any], Any]):
        tab = make(shared)
        self.built[tab.tab.id] = tab
        return tab

    def _group(self, shared, g: Group) -> None:
        with gr.Tab(g.label, id=g.id) as self.groups[g.id], gr.Tabs(elem_id=f"tabs-{g.id}") as self.rows[g.id]:
            for make in g.tabs:
                tab = self._add(shared, make)
                self.home[tab.tab.id] = g.id
                self.first.setdefault(g.id, tab.tab.id)

    @property
    def blocks(self) -> list[gr.Tabs]:
        """Every tab row: the top one, then each group's."""
        return [self.block, *self.rows.values()]

    def show(self, tab_id: str) -> dict[Any, Any]:
        """The updates that bring tab `tab_id` into view: its group in the top row, then it in the group's row."""
        top = self.home.get(tab_id, tab_id)
        out: dict[Any, Any] = {self.block: gr.Tabs(selected=top)}
        if top in self.rows:
            out[self.rows[top]] = gr.Tabs(selected=tab_id)
        return out

    def remembered(self, memory: Any) -> dict[str, str]:
        """The browser's memory kept to what it may hold: group id -> a tab id of that group."""
        if not isinstance(memory, dict):
            return {}
        return {g: t for g, t in memory.items() if g in self.rows and isinstance(t, str) and self.home.get(t) == g}

    def wire(self, demo: gr.Blocks) -> None:
        """The tab shown kept in `current` and each group's last tab in the browser's memory; on load, each group's
        row opened at the tab remembered (not when the page opens a link: its restore shows the link's tab)."""
        for tab in self.built.values():
            tid = tab.tab.id
            group = self.home[tid]
            if group == tid:
                tab.tab.select(lambda t=tid: t, None, [self.current], api_visibility="private", queue=False)
                continue

            def opened(memory, t=tid, g=group):
                return t, {**self.remembered(memory), g: t}

            tab.tab.select(opened, [self.memory], [self.current, self.memory], api_visibility="private", queue=False)
        for gid, gtab in self.groups.items():

            def entered(memory, g=gid):  # the group's row shows the tab remembered (or its first): that one is shown
                return self.remembered(memory).get(g, self.first[g])

            gtab.select(entered, [self.memory], [self.current], api_visibility="private", queue=False)

        def reopen(memory, request: gr.Request) -> dict[Any, Any]:
            link = request is not None and request.query_params.get(QUERY_KEY)  # a link opens its own tab instead
            mem = {} if link else self.remembered(memory)
            return {row: gr.Tabs(selected=mem[g]) if g in mem else gr.skip() for g, row in self.rows.items()}

        demo.load(reopen, [self.memory], list(self.rows.values()), api_visibility="private", queue=False)
