"""The Score tab: an existing text in, how likely each token was given the ones before it.

Long texts run a block of positions at a time (chunked prefill): the heatmap fills in block by
block with a progress bar, and Stop ends the work at the next block.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

import gradio as gr

from explorer.engine import ModelEngine
from explorer.engine.scoring import score_progress, text_ids
from explorer.settings import page_k
from explorer.ui.actions import uses_model
from explorer.ui.errors import error, user_errors
from explorer.ui.inspector import new_rid, parse_thresholds, progress_html
from explorer.ui.marks import marks_of
from explorer.ui.tabs import Shared

UI_PREFILL = 256  # positions per block: progress and Stop every block (a couple of seconds on a small CPU)
EXAMPLES = [
    "The quick brown fox jumps over the lazy dog.",
    "The capital of France is Paris.",
    "def fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)\n",
    "Bonjour le monde! 東京は大きい。 Emoji: 👋🙂",
    "Four score and seven years ago our fathers brought forth on this continent a new nation.",
]


def start_menu(engine: ModelEngine | None) -> dict:
    """The document-start menu for `engine`: its special tokens, the end-of-text one first (the default)."""
    if engine is None:
        return {
            "choices": [("end of text (eos)", "eos"), ("beginning of text (bos)", "bos")],
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
    return {
        "choices": [(f"{t} (document start, recommended)" if i == 0 else t, t) for i, t in enumerate(specials)],
        "value": specials[0],
        "interactive": True,
        "info": "Put before the text so its first token is predicted from it.",
    }


class ScoreTab:
    """Text box, document start, Score and Stop."""

    def __init__(self, shared: Shared):
        self.models, self.inspector = shared.models, shared.inspector
        with gr.Tab("Score", id="score") as self.tab:
            gr.Markdown("Score an existing text: how likely was each token given the ones before it?")
            self.text = gr.Textbox(label="Text", lines=5, placeholder="Paste any text ...")
            with gr.Row():
                self.from_start = gr.Checkbox(
                    False, label="Score from the start of a document (the first token gets a score too)"
                )
                self.start = gr.Dropdown(
                    label="Document-start token", **start_menu(self.models.loaded(self.models.default))
                )
            with gr.Row():
                self.button = gr.Button("Score", variant="primary", scale=3)
                self.stop = gr.Button("Stop", variant="stop", scale=1)
            gr.Examples(EXAMPLES, inputs=[self.text])
        self.inputs = [shared.model, self.text, *self.inspector.look, self.from_start, self.start]
        inputs, outputs, where = self.inputs, self.inspector.outputs, [self.inspector.summary]
        self.events = [
            self.button.click(self.score, inputs, outputs, api_name="score", show_progress_on=where),
            self.text.submit(self.score, inputs, outputs, api_visibility="private", show_progress_on=where),
        ]
        self.stop.click(None, cancels=cast(Any, self.events))  # gradio types `cancels` as dicts; it takes events
        shared.model.change(self.menu, [shared.model], [self.start], api_visibility="private")

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
        metric: str,
        thresholds_text: str,
        k: int,
        from_start: bool = False,
        start: str | None = None,
        progress=gr.Progress(),
    ) -> Iterator[dict]:
        """Score `text` with the session's model, block by block; the heatmap as it fills, then every view."""
        if not text or not text.strip():
            raise error("The text is empty: type or paste some text to score.")
        t, rid = parse_thresholds(thresholds_text), new_rid()
        top = page_k()  # compute the top-k once (at most the server's cap); the k slider only slices it
        with user_errors(), self.models.use(name) as engine:
            ids, lead = text_ids(engine, text, (start or "eos") if from_start else None)
            engine.check_ids(ids)
            marks, total, first = marks_of(engine), len(ids) - 1, True
            for done, r in score_progress(engine, ids, top, context_start=lead, prefill=UI_PREFILL):
                progress((done, max(total, 1)), desc="Scoring", unit="positions")
                if done < total and r is not None:
                    yield self.inspector.partial(r, metric, t, marks, rid, note=progress_html(done, total), first=first)
                    first = False
        assert r is not None  # score_progress ends with the whole result
        yield self.inspector.show(r, metric, thresholds_text, k, marks, rid)
