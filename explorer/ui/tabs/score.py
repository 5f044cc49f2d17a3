"""The Score tab: an existing text in, how likely each token was given the ones before it.

Long texts run a block of positions at a time (chunked prefill): the heatmap fills in block by
block with a progress bar, and Stop ends the work at the next block.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import gradio as gr

from explorer.engine import ModelEngine
from explorer.engine.analyses.guesses import next_token
from explorer.engine.passes.scoring import score_progress, text_ids
from explorer.render.next_token import CSS as NEXT_CSS
from explorer.render.next_token import temperature_html
from explorer.results.next_token import NextToken
from explorer.rules.sampler import page_k
from explorer.ui.actions import uses_model
from explorer.ui.errors import error, user_errors
from explorer.ui.inspector import View, new_rid, parse_thresholds, progress_html
from explorer.ui.links import Base, ResultLink, ViewState, flag, text
from explorer.ui.marks import marks_of
from explorer.ui.sliders import at_model_temperature
from explorer.ui.stop import running, stop_button, stops
from explorer.ui.tabs import Shared

UI_PREFILL = 256  # positions per block: progress and Stop every block (a couple of seconds on a small CPU)
EXAMPLES = [
    "The quick brown fox jumps over the lazy dog.",
    "The capital of France is Paris.",
    "def fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)\n",
    "Bonjour le monde! 東京は大きい。 Emoji: 👋🙂",
    "Four score and seven years ago our fathers brought forth on this continent a new nation.",
]

LESSON = (
    "**Teaching a class?** [Start a lesson](/lesson): everyone guesses the next word from their phone, and the "
    "class's guesses appear beside the model's."
)


def chip_label(example: str, most: int = 28) -> str:
    """An example's button: its first line, cut to `most` characters."""
    line = example.strip().splitlines()[0]
    return line if len(line) <= most else line[: most - 1].rstrip() + "…"


def start_menu(engine: ModelEngine | None) -> dict:
    """The document-start menu for `engine`: its special tokens, the end-of-text one first (the default)."""
    if engine is None:
        return {
            "choices": [("document start (end of text, eos)", "eos"), ("document start (bos: the same)", "bos")],
            "value": "eos",
            "interactive": True,
            "info": "The model loads on the first action; its own special tokens are offered then.",
        }
    if engine.adds_bos:
        bos = engine.tokenizer.bos_token
        return {
            "choices": [(f"{bos} (the tokenizer adds it already)", "none")],
            "value": "none",
            "interactive": False,
            "info": f"This model's tokenizer starts every text with {bos}: the first token is already scored.",
        }
    specials = engine.special_tokens()
    if not specials:
        return {
            "choices": [("(this model has no special tokens)", "none")],
            "value": "none",
            "interactive": False,
            "info": "",
        }
    doc = getattr(engine, "document_start", lambda: specials[0])()  # a served model: its list as given
    if doc != specials[0]:  # only chat turn tokens and the like: none is a document start
        return {
            "choices": [("none", "none"), *((t, t) for t in specials)],
            "value": "none",
            "interactive": True,
            "info": "This model has no document-start token: the first token has no context and no score.",
        }
    return {
        "choices": [(f"{t} (document start, recommended)" if i == 0 else t, t) for i, t in enumerate(specials)],
        "value": specials[0],
        "interactive": True,
        "info": "Put before the text so its first token is predicted from it.",
    }


class ScoreTab:
    """Text box, Score, Continue and Stop, the examples, the walkthrough's button and the lesson link, the
    temperature, the document start."""

    def __init__(self, shared: Shared):
        self.models, self.inspector = shared.models, shared.inspector
        with gr.Tab("Score", id="score") as self.tab:
            gr.Markdown(
                "Type or paste a text and press **Score**: each token is coloured by how much the model expected it. "
                "**Continue** lets the model write on from your text."
            )
            self.text = gr.Textbox(label="Text", lines=3, placeholder="Paste any text ...", elem_id="score-text")
            with gr.Row(elem_classes=["lx-actions"]):
                self.button = gr.Button("Score", variant="primary", scale=3, min_width=100)
                self.cont = gr.Button("Continue", scale=2, min_width=100, elem_id="score-continue")
                self.stop = stop_button(scale=1, min_width=80)
            with gr.Row(elem_classes=["lx-chips"], elem_id="score-examples"):
                self.chips = [
                    gr.Button(chip_label(e), size="sm", scale=0, min_width=60, elem_classes=["lx-chip"])
                    for e in EXAMPLES
                ]
            with gr.Row(elem_classes=["lx-teach", "lx-hide-present"], equal_height=True):  # for a teacher
                self.tour = gr.Button(
                    "Show me how, in 3 steps", size="sm", scale=0, min_width=200, elem_id="tour-start"
                )
                gr.Markdown(LESSON, elem_classes=["lx-lesson"])
            with gr.Accordion("What comes next? The temperature", open=True, elem_id="next-token"):
                with gr.Row(equal_height=True):
                    self.temperature = at_model_temperature().widget(  # the page's knob, at the model's own odds
                        "Temperature", scale=3, elem_id="next-temperature",
                        info="0: always the likeliest token · 1: the model's own odds · 2: evened out",
                    )  # fmt: skip
                    self.draw = gr.Button("Draw 10 samples", scale=1, min_width=160)
                self.next_html = gr.HTML("", css_template=NEXT_CSS, js_on_load=None, elem_id="next-view")
                self.next_state = gr.State(None)
            with gr.Row():
                self.from_start = gr.Checkbox(
                    False, label="Score from the start of a document (the first token gets a score too)"
                )
                self.start = gr.Dropdown(
                    label="Document-start token", **start_menu(self.models.loaded(self.models.default))
                )
        self.inputs = [shared.model, self.text]
        # the rest by name, in the `/score` endpoint's order: the look, then the document start
        self.options = {**self.inspector.look, "from_start": self.from_start, "start": self.start}
        by_name: dict[str, Any] = {"inputs_kwargs": self.options, "show_progress_on": [self.inspector.summary]}
        inputs, outputs = self.inputs, self.inspector.outputs
        self.events = [  # Stop shows while each runs
            running(self.stop, self.button.click, self.score, inputs, outputs, api_name="score", **by_name),
            running(self.stop, self.text.submit, self.score, inputs, outputs, api_visibility="private", **by_name),
        ]
        for chip, example in zip(self.chips, EXAMPLES):  # an example runs when clicked
            filled = chip.click(lambda e=example: e, None, [self.text], api_visibility="private", queue=False)
            self.events.append(
                running(self.stop, filled.then, self.score, inputs, outputs, api_visibility="private", **by_name)
            )
        self.tour.click(None, js="() => { window.lxTour && window.lxTour(); }", api_visibility="private", queue=False)
        stops(self.stop, self.events)
        shared.model.change(self.menu, [shared.model], [self.start], api_visibility="private")
        nexts = [shared.model, self.text, self.temperature, self.next_state]
        self.temperature.change(self.redraw, nexts, [self.next_html, self.next_state], api_visibility="private")
        self.draw.click(self.draw_samples, nexts, [self.next_html, self.next_state], api_name="draw_samples")

    def _next(self, name: str, text: str, cached: NextToken | None) -> NextToken:
        """The next token's distribution after `text` (computed once per text and model)."""
        if not text or not text.strip():
            raise error("The text is empty: type a text first, then see what the model would write next.")
        if cached is not None and cached.text == text and cached.model == (name or self.models.default):
            return cached
        with user_errors(), self.models.use(name) as engine:
            return next_token(engine, text)

    @uses_model
    def redraw(self, name: str, text: str, t: float, cached: NextToken | None) -> tuple[str, NextToken | None]:
        """*What comes next?* at temperature `t` (live: a typed or dragged temperature redraws at once)."""
        if not text or not text.strip():
            return "", cached
        nt = self._next(name, text, cached)
        return temperature_html(nt, float(t)), nt

    @uses_model
    def draw_samples(self, name: str, text: str, t: float, cached: NextToken | None) -> tuple[str, NextToken]:
        """Ten tokens drawn at temperature `t`, each shown as the token drawn, beside the odds they came from."""
        nt = self._next(name, text, cached)
        return temperature_html(nt, float(t), nt.draw(float(t), 10, secrets.randbits(63))), nt

    def menu(self, name: str) -> gr.Dropdown:
        try:
            engine = self.models.loaded(name)
        except Exception:  # noqa: BLE001 - a name that cannot be served: keep the generic menu
            engine = None
        return gr.Dropdown(**start_menu(engine))

    @uses_model
    def score(
        self,
        name: str,
        text: str,
        progress=gr.Progress(),  # positional: Gradio fills in only a positional parameter's progress bar
        *,
        metric: str,
        thresholds_text: str,
        k: int,
        from_start: bool = False,
        start: str | None = None,
    ) -> Iterator[dict]:
        """Score `text` with the session's model, block by block, the look and the document start by name (as
        `options`); the heatmap as it fills, then every view."""
        if not text or not text.strip():
            raise error("The text is empty: type or paste some text to score.")
        t, rid = parse_thresholds(thresholds_text), new_rid()
        top = page_k()  # compute the top-k once (at most the server's cap); the k slider only slices it
        with user_errors(), self.models.use(name) as engine:
            ids, lead = text_ids(engine, text, (start or "eos") if from_start else None)
            engine.check_ids(ids)
            view, total, first = View(marks_of(engine), rid), len(ids) - 1, True
            for done, r in score_progress(engine, ids, top, context_start=lead, prefill=UI_PREFILL):
                progress((done, max(total, 1)), desc="Scoring", unit="positions")
                if done < total and r is not None:
                    yield self.inspector.partial(r, metric, t, view, note=progress_html(done, total), first=first)
                    first = False
        assert r is not None  # score_progress ends with the whole result
        yield self.inspector.show(r, metric, thresholds_text, k, view)


@dataclass(frozen=True)
class ScoreLink(ResultLink):
    """A scored text's link: the text, and the document-start token put before it (when)."""

    tab = "score"
    text: str = ""
    from_start: bool = False  # put a document-start token first
    start: str = "eos"  # that token's menu value

    @classmethod
    def read(cls, d: dict) -> ScoreLink:
        return cls(text(d, "text"), flag(d, "from_start", False), text(d, "start", 64) or "eos")

    @classmethod
    def inputs(cls, tab: ScoreTab) -> list:
        return [tab.text, tab.from_start, tab.start]

    @classmethod
    def of_result(cls, tab: ScoreTab, values: Mapping[Any, Any], r: Any) -> ScoreLink:
        start = str(values.get(tab.start) or "eos")
        return cls(str(values.get(tab.text) or ""), bool(values.get(tab.from_start)), start)

    def empty(self) -> bool:
        return not self.text

    def apply(self, tab: ScoreTab, v: ViewState) -> dict:
        return {tab.text: self.text, tab.from_start: self.from_start}  # the start menu: once the model is in

    def run(self, tab: ScoreTab, name: str, base: Base) -> Iterator[dict]:
        yield from tab.score(name, self.text, **base.look, from_start=self.from_start, start=self.start)

    @classmethod
    def outputs(cls, tab: ScoreTab) -> list:
        return [tab.text, tab.from_start, tab.start]
