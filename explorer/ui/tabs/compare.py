"""The Compare tab: two models on one text, or one model after two prompts, token by token."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from explorer.engine.analyses.compare import compare_prompt_texts, compare_text
from explorer.errors import ExplorerError
from explorer.notebook.views import compare_page
from explorer.render.compare import (
    CSS,
    TOPK_COLUMNS,
    compare_curves,
    compare_detail,
    compare_html,
    compare_summary,
    legend_html,
)
from explorer.render.stats import stats_markdown
from explorer.results.compare import Comparison
from explorer.results.stats import binoculars
from explorer.rules.sampler import page_k
from explorer.ui.actions import uses_model
from explorer.ui.chips import CLICK_JS, clicked
from explorer.ui.downloads import view_button, view_file
from explorer.ui.errors import error, picked, user_errors
from explorer.ui.links import Base, Rerun, TabLink, ViewState, choice, count, text
from explorer.ui.tabs import Shared

MODES = ["Two models, one text", "One model, two prompts"]
COLOURS = {"Δ logprob (B − A)": "delta", "Jensen-Shannon": "js"}
KINDS = ("models", "prompts")  # the link's `compare_mode`, in MODES order
COLOUR_LABELS = {key: label for label, key in COLOURS.items()}
K = 10  # top-k computed per side (at most the server's cap: page_k); the detail shows them all


class CompareTab:
    """Models A and B (or prompts A and B), a text, a diff heatmap, curves and a side-by-side detail."""

    def __init__(self, shared: Shared):
        self.models = shared.models
        names = self.models.names
        with gr.Tab("Compare", id="compare") as self.tab:
            gr.Markdown(
                "Compare two models on the same text (per token: both logprobs, their difference, both ranks, "
                "KL both ways and Jensen-Shannon, in nats), or the same continuation after two prompts. Models "
                "with different tokenizers are compared per span of characters. Click a chip for both top-k lists."
            )
            self.mode = gr.Radio(MODES, value=MODES[0], label="Compare")
            with gr.Row():
                self.model_a = gr.Dropdown(
                    names, value=names[0], label="Model A", allow_custom_value=self.models.allow_hub
                )
                self.model_b = gr.Dropdown(
                    names, value=names[-1], label="Model B", allow_custom_value=self.models.allow_hub
                )
            with gr.Row(visible=False) as self.prompts:
                self.prompt_a = gr.Textbox(label="Prompt A", lines=2, placeholder="e.g. a system prompt and a question")
                self.prompt_b = gr.Textbox(
                    label="Prompt B", lines=2, placeholder="e.g. the question alone (may be empty)"
                )
            self.text = gr.Textbox(
                label="Text to compare", lines=4, placeholder="the text (or, with two prompts, the continuation)"
            )
            with gr.Row():
                self.colour = gr.Dropdown(list(COLOURS), value=next(iter(COLOURS)), label="Colour compared tokens by")
                self.button = gr.Button("Compare", variant="primary")
            self.state = gr.State(None)
            self.made_from = gr.State(None)  # the shown comparison's inputs: (text, prompt A, prompt B), for its link
            self.legend = gr.HTML("", css_template=CSS)
            self.heatmap = gr.HTML("", css_template=CSS, js_on_load=CLICK_JS, elem_id="compare-heatmap")
            self.summary = gr.Markdown()
            self.binoculars = gr.Markdown(elem_id="compare-stats")  # two models of one tokenizer: Binoculars
            self.plot = gr.Plot(show_label=False)
            self.detail = gr.Markdown()
            with gr.Row():
                self.table_a = gr.Dataframe(pd.DataFrame(columns=TOPK_COLUMNS), label="Model A at this token",
                                            interactive=False)  # fmt: skip
                self.table_b = gr.Dataframe(pd.DataFrame(columns=TOPK_COLUMNS), label="Model B at this token",
                                            interactive=False)  # fmt: skip
            self.pos = gr.Number(value=0, precision=0, minimum=0, label="Compared token (or span)")
            self.dl_html = view_button("compare-dl-html")
        self._wire()

    def _wire(self) -> None:
        self.mode.change(
            lambda m: {self.prompts: gr.update(visible=m == MODES[1]), self.model_b: gr.update(visible=m == MODES[0])},
            [self.mode],
            [self.prompts, self.model_b],
            api_visibility="private",
        )
        self.button.click(self.compare, None, self.outputs, inputs_kwargs=self.options, api_name="compare")
        detail = [self.detail, self.table_a, self.table_b, self.pos]
        self.heatmap.click(self.on_click, [self.state], detail, api_visibility="private")
        self.pos.submit(self.select, [self.state, self.pos], detail, api_name="compare_detail")
        self.state.change(
            self.binoculars_of, [self.state], [self.binoculars], api_name="compare_stats", show_progress="hidden"
        )
        gr.on(
            [self.state.change, self.colour.input], self.view, [self.state, self.colour], [self.dl_html],
            api_visibility="private", show_progress="hidden",
        )  # fmt: skip
        self.colour.input(  # the person's change (a link's rerun draws its own heatmap: see words.py)
            self.restyle, [self.state, self.colour, self.pos], [self.heatmap, self.legend], api_visibility="private"
        )

    @property
    def options(self) -> dict:
        """The handler's inputs by name, in the `/compare` endpoint's order."""
        return {"mode": self.mode, "name_a": self.model_a, "name_b": self.model_b, "text": self.text,
                "prompt_a": self.prompt_a, "prompt_b": self.prompt_b, "colour": self.colour}  # fmt: skip

    @property
    def outputs(self) -> list:
        return [
            self.state,
            self.made_from,
            self.legend,
            self.heatmap,
            self.summary,
            self.plot,
            self.detail,
            self.table_a,
            self.table_b,
            self.pos,
        ]

    # ---- handlers ------------------------------------------------------------------------
    @staticmethod
    def view(c: Comparison | None, colour: str) -> gr.DownloadButton:
        """The comparison shown, coloured as shown, as one HTML file (disabled before any)."""
        if c is None:
            return view_file("", "", None)
        return view_file(c.a.model, "compare", compare_page(c, COLOURS.get(colour, "delta")))

    @staticmethod
    def binoculars_of(c: Comparison | None) -> str:
        """Binoculars of two models that share one tokenizer (A observes, B performs); nothing otherwise."""
        if c is None or c.kind != "models":
            return ""
        return stats_markdown([binoculars(c)], "Binoculars (model A observes, model B performs)")

    def on_click(self, c: Comparison | None, evt: gr.EventData) -> dict:
        return self.select(c, clicked(evt))

    @uses_model
    def compare(
        self, *, mode: str, name_a: str, name_b: str, text: str, prompt_a: str, prompt_b: str, colour: str
    ) -> dict:
        """`text` under models `name_a` and `name_b`, or after `prompt_a` and `prompt_b` (as `mode` says), coloured by
        `colour`: every view, the first compared token selected."""
        if not text or not text.strip():
            raise error("The text is empty: type the text to compare (with two prompts: the continuation).")
        with user_errors():
            if mode == MODES[1]:
                with self.models.use(name_a) as engine:
                    c = compare_prompt_texts(engine, prompt_a or "", prompt_b or "", text, page_k(K))
            else:
                with self.models.use(name_a) as ea, self.models.use(name_b) as eb:
                    c = compare_text(ea, eb, text, page_k(K))
        prompts = (prompt_a or "", prompt_b or "") if mode == MODES[1] else ("", "")
        return {**self.show(c, COLOURS.get(colour, "delta")), self.made_from: (text, *prompts)}

    def show(self, c: Comparison, metric: str) -> dict:
        first = 1 if c.kind == "models" and c.m > 1 else 0
        md, ta, tb = compare_detail(c, first, K) if (c.m or len(c.spans)) else ("", None, None)
        return {
            self.state: c,
            self.legend: legend_html(c, metric),
            self.heatmap: compare_html(c, metric, first),
            self.summary: compare_summary(c),
            self.plot: compare_curves(c),
            self.detail: md,
            self.table_a: ta,
            self.table_b: tb,
            self.pos: first,
        }

    def select(self, c: Comparison | None, j) -> dict:
        """Both sides of compared token (or span) `j`."""
        if c is None:
            raise error("Compare first, then click a token.")
        units = c.m if c.paired else len(c.spans)
        j = picked(
            j, units, "Pick a token by clicking it.", "Position {i} is outside this comparison ({first}..{last})."
        )
        md, ta, tb = compare_detail(c, j, K)
        return {self.detail: md, self.table_a: ta, self.table_b: tb, self.pos: j}

    def restyle(self, c: Comparison | None, colour: str, selected) -> dict:
        if c is None:
            return {}
        metric = COLOURS.get(colour, "delta")
        sel = int(selected) if selected is not None else None
        return {self.heatmap: compare_html(c, metric, sel), self.legend: legend_html(c, metric)}


@dataclass(frozen=True)
class CompareLink(TabLink):
    """A Compare link: the shown comparison's inputs (not the boxes now) and its token. It works on no result: the
    base's `model` is model A and its `selected` the compared token."""

    tab = "compare"
    on_result = False
    compare_mode: str = "models"
    model_b: str = ""
    prompt_a: str = ""
    prompt_b: str = ""
    colour: str = "delta"
    text: str = ""  # the compared text

    @classmethod
    def read(cls, d: dict) -> CompareLink:
        return cls(
            text=text(d, "text"),
            compare_mode=choice(d, "compare_mode", KINDS, "models"),
            model_b=text(d, "model_b", 200),
            prompt_a=text(d, "prompt_a"),
            prompt_b=text(d, "prompt_b"),
            colour=choice(d, "colour", tuple(COLOUR_LABELS), "delta"),
        )

    def models(self) -> tuple[str, ...]:
        return (self.model_b,) if self.compare_mode == "models" else ()

    @classmethod
    def inputs(cls, tab: CompareTab) -> list:
        return [tab.state, tab.made_from, tab.colour, tab.pos]

    @classmethod
    def to_link(cls, tab: CompareTab, values: Mapping[Any, Any], base: Base, model: str) -> tuple[Base, CompareLink]:
        c, made_from = values.get(tab.state), values.get(tab.made_from)
        if c is None or made_from is None:
            raise ExplorerError("Compare first: then its link can be shared.")
        compared, prompt_a, prompt_b = made_from  # what the shown comparison was computed from, not the boxes now
        prompts = c.kind == "prompts"
        own = cls(compare_mode=KINDS[prompts], model_b="" if prompts else c.b.model, prompt_a=str(prompt_a),
                  prompt_b=str(prompt_b), colour=COLOURS.get(str(values.get(tab.colour)), "delta"), text=str(compared))  # fmt: skip
        return Base(model=c.a.model, selected=count(values.get(tab.pos))), own

    def apply(self, tab: CompareTab, v: ViewState) -> dict:
        prompts = self.compare_mode == "prompts"
        out = {tab.mode: MODES[prompts], tab.model_a: v.base.model, tab.text: self.text, tab.prompt_a: self.prompt_a,
               tab.prompt_b: self.prompt_b, tab.colour: COLOUR_LABELS[self.colour]}  # fmt: skip
        return out if prompts else {**out, tab.model_b: self.model_b}

    def rerun(self, tab: CompareTab, v: ViewState, run: Rerun) -> Iterator[dict]:
        colour, name_b = COLOUR_LABELS[self.colour], (run.others or (run.name,))[0]
        mode = MODES[self.compare_mode == "prompts"]
        prompts = {"prompt_a": self.prompt_a, "prompt_b": self.prompt_b}
        out = tab.compare(mode=mode, name_a=run.name, name_b=name_b, text=self.text, **prompts, colour=colour)
        cmp = out[tab.state]
        j = min(v.base.selected, max((cmp.m if cmp.paired else len(cmp.spans)) - 1, 0))
        yield {**out, **tab.select(cmp, j), **tab.restyle(cmp, colour, j)}

    @classmethod
    def outputs(cls, tab: CompareTab) -> list:
        return [tab.mode, tab.model_a, tab.model_b, tab.text, tab.prompt_a, tab.prompt_b, tab.colour, *tab.outputs]
