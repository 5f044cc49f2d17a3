"""The Look up tab: any token's (or string's) probability and rank at every position of the current result."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import gradio as gr

from explorer.engine.analyses.lookup import lookup
from explorer.render.lookup import lookup_figure, lookup_markdown, lookup_table
from explorer.results.lookup import MAX_LOOKUPS
from explorer.ui.actions import uses_model
from explorer.ui.errors import error, user_errors
from explorer.ui.links import Base, Rerun, TabLink, ViewState, text
from explorer.ui.tabs import Shared


def queries_of(text: str) -> list[str]:
    """One query per line, spaces kept (a leading space is part of a BPE token); empty lines skipped."""
    return [q.rstrip("\r") for q in str(text or "").split("\n") if q.rstrip("\r")]


class LookupTab:
    """Queries box + Look up button; curves and one column per query, beyond the top-k."""

    def __init__(self, shared: Shared):
        self.models, self.inspector = shared.models, shared.inspector
        with gr.Tab("Look up", id="lookup") as self.tab:
            gr.Markdown(
                "How likely was a token of your choice at every position of the current result, even far "
                "outside the top-k? One per line: a text (a leading space counts: ` yes`) or a token id "
                f"(`42`; `text:42` looks up the text 42). Up to {MAX_LOOKUPS} at once, e.g. ` yes` and ` no`. "
                "The numbers are **raw** (the model's own distribution), whatever the result's mode."
            )
            self.queries = gr.Textbox(label="Tokens to look up", lines=3, placeholder=" yes\n no")
            self.button = gr.Button("Look up", variant="primary")
            self.notes = gr.Markdown()
            self.plot = gr.Plot(show_label=False)
            self.table = gr.Dataframe(label="Looked-up tokens at every position", interactive=False, max_height=400)
        self.button.click(
            self.run, [self.inspector.result, self.queries], [self.notes, self.plot, self.table], api_name="lookup"
        )

    @uses_model
    def run(self, state: list, text: str) -> dict:
        """Every query's curve and column over the current result."""
        if not state:
            raise error("Score a text or generate first; the lookups run over that result.")
        queries = queries_of(text)
        if not queries:
            raise error("Type a token to look up: a text such as ' yes', or a token id.")
        r = state[0]
        with user_errors(), self.models.use(r.model) as engine:
            found = lookup(engine, r.token_ids.tolist(), queries)
            pieces = {int(i): engine.vocab[int(i)] for x in found for i in x.token_ids}
        return {
            self.notes: lookup_markdown(found, pieces),
            self.plot: lookup_figure(r, found),
            self.table: lookup_table(r, found),
        }


@dataclass(frozen=True)
class LookupLink(TabLink):
    """A Look up link: its queries, one a line (over the base's result)."""

    tab = "lookup"
    MAX_CHARS = 2000
    query: str = ""

    @classmethod
    def read(cls, d: dict) -> LookupLink:
        return cls(text(d, "query", cls.MAX_CHARS))

    @classmethod
    def inputs(cls, tab: LookupTab) -> list:
        return [tab.queries]

    @classmethod
    def to_link(cls, tab: LookupTab, values: Mapping[Any, Any], base: Base, model: str) -> tuple[Base, LookupLink]:
        return base, cls(str(values.get(tab.queries) or ""))

    def apply(self, tab: LookupTab, v: ViewState) -> dict:
        return {tab.queries: self.query}

    def rerun(self, tab: LookupTab, v: ViewState, run: Rerun) -> Iterator[dict]:
        yield tab.run(run.result, self.query)

    @classmethod
    def outputs(cls, tab: LookupTab) -> list:
        return [tab.queries, tab.notes, tab.plot, tab.table]
