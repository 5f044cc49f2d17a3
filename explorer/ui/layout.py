"""The Gradio page, top to bottom: intro and model status, the tabs, the model picker, then the token inspector
they all fill.

A view of a result is one module plus its line in explorer/notebook/registry.py: `placed` puts its tab in its group
(or the top row) after the hand-made tabs. A hand-made tab (its own interactions) is a module in explorer/ui/tabs/ plus
one line in HAND_MADE.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import gradio as gr

from explorer.notebook.registry import VIEWS
from explorer.notebook.view import View
from explorer.serving.models import Models
from explorer.ui.errors import error
from explorer.ui.inspector import Inspector
from explorer.ui.model_picker import ModelPicker
from explorer.ui.share import Share
from explorer.ui.stop import running, stops
from explorer.ui.tab_bar import Group, TabBar
from explorer.ui.tabs import Shared
from explorer.ui.tabs.answers import AnswersTab
from explorer.ui.tabs.batch import BatchTab
from explorer.ui.tabs.branch import BranchTab
from explorer.ui.tabs.chat import ChatTab
from explorer.ui.tabs.compare import CompareTab
from explorer.ui.tabs.generate import GenerateTab
from explorer.ui.tabs.lens import LensTab
from explorer.ui.tabs.lookup import LookupTab
from explorer.ui.tabs.registered import RegisteredTab
from explorer.ui.tabs.score import ScoreTab
from explorer.ui.tabs.whatif import WhatIfTab
from explorer.ui.tabs.why import WhyTab
from explorer.ui.tabs.words import WordsTab

INTRO = """# logprob-explorer
See what a language model expected, word by word: type a text and press **Score**, then click a token to see
what else the model thought could come there."""

NUMBERS = """For every token the page shows its **probability** (how likely the model found it, given the text
before it), its **logprob** (the natural log of that probability: 0 is certain, more negative is more
surprising), its **rank** among the whole vocabulary (1 = the model's top guess), its **top alternatives** and the
**entropy** of the distribution (how unsure the model was, in nats: 0 is sure; about 0.7 is a coin toss between two
tokens). Hover a token for its numbers; click it (or Tab to the text, arrows, Enter) for everything the model
weighed there. In the text, **·** is a space and **↵** a new line."""

CACHE_S = 3600  # Gradio's cache: files older than this go, checked as often

HAND_MADE = (  # each: Shared -> its tab, laid out and wired; the expert views grouped under the first three
    ScoreTab,
    GenerateTab,
    ChatTab,
    Group("read", "Read a result", (WhatIfTab, WhyTab, WordsTab, BranchTab, LensTab)),
    Group("many", "Compare and many", (CompareTab, AnswersTab, BatchTab)),
    LookupTab,
)


def placed(layout: tuple[Any, ...], views: tuple[View, ...]) -> tuple[Any, ...]:
    """`layout` with each registered view's tab at the end of its group (`View.group`), or of the top row."""
    rows = {g.id: list(g.tabs) for g in layout if isinstance(g, Group)}
    top: list[Callable[[Any], Any]] = []
    for v in views:
        (rows[v.group] if v.group is not None else top).append(partial(RegisteredTab, view=v))
    grouped = tuple(replace(g, tabs=tuple(rows[g.id])) if isinstance(g, Group) else g for g in layout)
    return (*grouped, *top)


LAYOUT = placed(HAND_MADE, VIEWS)  # the page's tabs: the hand-made ones and every registered view


@dataclass(frozen=True)
class Page:
    """The built page and its parts (tests call the parts' handlers directly)."""

    demo: gr.Blocks
    picker: ModelPicker
    inspector: Inspector
    tabs: dict[str, Any]  # tab id -> the built tab
    share: Share


def page(models: Models) -> Page:
    """Build the page for `models`; each browser session gets its own model name and result."""
    # files the page writes (downloads, sessions) and visitors upload are deleted an hour after they were made
    with gr.Blocks(title="logprob-explorer", delete_cache=(CACHE_S, CACHE_S)) as demo:
        # nothing to Tab to before the tab list: skip link, tab list, text box (the lesson link and the walkthrough
        # sit under the Score tab's examples; the model picker and the numbers' meaning under the tabs)
        gr.Markdown(INTRO, elem_classes=["lx-intro", "lx-hide-present"])
        picker = ModelPicker(models)  # its status line here; its menu below the tabs
        inspector = Inspector(models)  # made unrendered: the tabs send outputs to it, it is placed below them
        note = gr.HTML("", elem_id="share-note", js_on_load=None)  # what a link or an opened file says
        shared = Shared(models, picker.name, inspector)
        bar = TabBar(shared, LAYOUT)
        tabs = bar.built
        picker.place()
        with gr.Accordion("What the numbers mean", open=False, elem_classes=["lx-hide-present", "lx-numbers"]):
            gr.Markdown(NUMBERS)
        # Copy link, the session and the QR code: under the tab's own result (Compare, Answers ...), right above
        # the heatmap's (filled by ui/share.py; shown with or without a result in the views below)
        slot = gr.Column(elem_id="share-slot", elem_classes=["lx-hide-present"])
        inspector.render()
        share = Share(demo, models, picker, inspector, bar, note=note, slot=slot)
        why: WhyTab = tabs["why"]
        asked = running(
            why.stop, inspector.why.click(
                lambda: {**bar.show("why"), bar.current: "why"}, None, [*bar.blocks, bar.current],
                api_visibility="private", queue=False,
            ).then,
            why.run, why.inputs, why.outputs, inputs_kwargs=why.options, api_visibility="private",
            show_progress_on=[why.summary],
        )  # fmt: skip
        why.stop_events([asked])
        asked.then(  # the result comes in the Why tab, above the token clicked: bring it into view
            None, js="() => { const s = document.querySelector('#why-summary'); "
            "if (s) s.scrollIntoView({block: 'start', behavior: 'instant'}); }", api_visibility="private", queue=False,
        )  # fmt: skip
        _open_in_score(tabs["batch"], tabs["score"], bar.block, share)
        whatif: WhatIfTab = tabs["whatif"]
        inspector.selected.change(  # another token picked while What-if is shown: it follows
            whatif.follow, [share.current, *whatif.inputs], whatif.outputs, inputs_kwargs=whatif.options,
            api_visibility="private", trigger_mode="always_last",
        )  # fmt: skip
        _continue_in_generate(shared, tabs["score"], tabs["generate"], bar.block, share)
    return Page(demo, picker, inspector, tabs, share)


def _open_in_score(batch: BatchTab, score: ScoreTab, tab_block: gr.Tabs, share: Share) -> None:
    """A click on a row of the Batch tab's table opens its text in the Score tab and scores it there."""
    picked = batch.table.select(
        batch.pick, [batch.state], [score.text, score.from_start, score.start, tab_block, share.current],
        api_visibility="private", queue=False,
    )  # fmt: skip
    opened = running(
        score.stop, picked.success, score.score, score.inputs, score.inspector.outputs, inputs_kwargs=score.options,
        api_visibility="private", show_progress_on=[score.inspector.summary],
    )  # fmt: skip
    stops(score.stop, [opened])


def _continue_in_generate(shared: Shared, score: ScoreTab, gen: GenerateTab, tab_block: gr.Tabs, share: Share) -> None:
    """*Continue* on the Score tab: its text becomes Generate's prompt, at the Score tab's temperature, and runs
    there (so the result, its link and its session are Generate's)."""

    def move(text: str, t: float):
        if not text or not text.strip():
            raise error("The text is empty: type a text for the model to continue.")
        return gr.Tabs(selected="generate"), "generate", text, t

    moved = score.cont.click(
        move, [score.text, score.temperature], [tab_block, share.current, gen.prompt, gen.controls["temperature"]],
        api_visibility="private", queue=False,
    )  # fmt: skip
    ran = running(  # it runs in the Generate tab: its Stop shows
        gen.stop, moved.success, gen.generate, gen.inputs, gen.outputs, inputs_kwargs=gen.options,
        api_visibility="private", show_progress_on=[gen.inspector.summary],
    )  # fmt: skip
    stops(gen.stop, [ran])


def build(models: Models) -> gr.Blocks:
    """The Gradio app for `models` (mounted at / by explorer.server)."""
    return page(models).demo
