"""The Chat tab: a message through the model's chat template; the template's role markers are tokens too."""

from __future__ import annotations

from collections.abc import Iterator

import gradio as gr

from explorer.ui.errors import error
from explorer.ui.sampler import run, sampler_controls, settings
from explorer.ui.tabs import Shared

EXAMPLES = ["What is the capital of France?", "Write a haiku about autumn.", "Explain entropy in one sentence."]


class ChatTab:
    """System message + user message + sampler controls + Send button."""

    def __init__(self, shared: Shared):
        self.models, self.inspector = shared.models, shared.inspector
        with gr.Tab("Chat"):
            gr.Markdown("Send a message through the model's chat template; the template's role markers are tokens too.")
            self.system = gr.Textbox(label="System message (optional)", lines=1)
            self.message = gr.Textbox(label="Message", lines=3)
            self.controls = sampler_controls()
            self.button = gr.Button("Send", variant="primary")
            gr.Examples(EXAMPLES, inputs=[self.message])
        self.button.click(self.chat, [shared.model, self.system, self.message, *self.controls, *self.inspector.look],
                          self.inspector.outputs, api_name="chat")

    def chat(self, name, system, message, max_tokens, temperature, top_p, top_k, seed, stop, mode, score_prompt,
             metric, thresholds_text, k) -> Iterator[dict]:
        """Stream the assistant's reply to `message` (after `system`, if any) from the session's model."""
        if not message or not message.strip():
            raise error("The message is empty: type what the user says.")
        msgs = ([{"role": "system", "content": system}] if system and system.strip() else []) + [{"role": "user", "content": message}]
        s = settings(max_tokens, temperature, top_p, top_k, seed, stop, mode, score_prompt)
        yield from run(self.models, name, lambda engine: engine.encode_chat(msgs), s, self.inspector, metric, thresholds_text, k)
