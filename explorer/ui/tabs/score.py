"""The Score tab: an existing text in, how likely each token was given the ones before it."""

from __future__ import annotations

import gradio as gr

from explorer.engine import score_text
from explorer.ui.errors import error, user_errors
from explorer.ui.inspector import parse_thresholds
from explorer.ui.sampler import UI_K
from explorer.ui.tabs import Shared

EXAMPLES = [
    "The quick brown fox jumps over the lazy dog.",
    "The capital of France is Paris.",
    "def fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)\n",
    "Bonjour le monde! 東京は大きい。 Emoji: 👋🙂",
    "Four score and seven years ago our fathers brought forth on this continent a new nation.",
]


class ScoreTab:
    """Text box + Score button."""

    def __init__(self, shared: Shared):
        self.models, self.inspector = shared.models, shared.inspector
        with gr.Tab("Score"):
            gr.Markdown("Score an existing text: how likely was each token given the ones before it? The first token has no context, so it is not scored.")
            self.text = gr.Textbox(label="Text", lines=5, placeholder="Paste any text ...")
            self.button = gr.Button("Score", variant="primary")
            gr.Examples(EXAMPLES, inputs=[self.text])
        inputs, outputs = [shared.model, self.text, *self.inspector.look], self.inspector.outputs
        self.button.click(self.score, inputs, outputs, api_name="score")
        self.text.submit(self.score, inputs, outputs, api_name=False)

    def score(self, name: str, text: str, metric: str, thresholds_text: str, k: int) -> dict:
        """Score `text` with the session's model; every view."""
        if not text or not text.strip():
            raise error("The text is empty: type or paste some text to score.")
        parse_thresholds(thresholds_text)
        with user_errors(), self.models.use(name) as engine:
            r = score_text(engine, text, k=UI_K)
        return self.inspector.show(r, metric, thresholds_text, k)
