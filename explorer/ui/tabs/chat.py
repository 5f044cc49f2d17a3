"""The Chat tab: a conversation through the model's chat template, kept across messages; every earlier turn
is scored too, the template's markers are tokens like any other (drawn as markers), and roles are labelled."""

from __future__ import annotations

from collections.abc import Iterator

import gradio as gr

from explorer.engine.turns import chat_turns
from explorer.ui.actions import uses_model
from explorer.ui.errors import error
from explorer.ui.marks import marks_of
from explorer.ui.sampler import (
    RunOptions,
    reuse_button,
    run,
    run_buttons,
    sampler_controls,
    wire_reuse,
)
from explorer.ui.tabs import Shared

EXAMPLES = ["What is the capital of France?", "Write a haiku about autumn.", "Explain entropy in one sentence."]
EMPTY = "No conversation yet: your first message starts one."


def status(history: list[dict]) -> str:
    n = len(history) // 2
    return f"Conversation so far: {n} exchange{'s' if n != 1 else ''}. The next message continues it." if n else EMPTY


class ChatTab:
    """System message + the conversation so far + a message + sampler controls + Send / Stop / New conversation."""

    def __init__(self, shared: Shared):
        self.models, self.inspector = shared.models, shared.inspector
        with gr.Tab("Chat", id="chat") as self.tab:
            gr.Markdown(
                "Talk to the model through its chat template. The conversation is kept: each reply is scored "
                "with every earlier turn, roles are labelled, template markers are drawn as markers and the "
                "generated reply is underlined."
            )
            self.history = gr.State([])
            self.system = gr.Textbox(label="System message (optional)", lines=1)
            with gr.Row():
                self.turns = gr.Markdown(EMPTY)
                self.new = gr.Button("New conversation", size="sm", scale=0, min_width=180)
            self.message = gr.Textbox(label="Message", lines=3)
            self.controls = sampler_controls(shared.models.limits.max_tokens)
            self.button, self.stop, self.reuse = run_buttons("Send")
            gr.Examples(EXAMPLES, inputs=[self.message])
        outputs = [*self.inspector.outputs, self.reuse, self.history, self.message, self.turns]
        event = self.button.click(
            self.chat,
            [shared.model, self.history, self.system, self.message, *self.controls, *self.inspector.look],
            outputs,
            api_name="chat",
            show_progress_on=[self.inspector.summary],
        )
        self.stop.click(None, cancels=[event])
        self.new.click(lambda: ([], EMPTY), None, [self.history, self.turns], api_visibility="private")
        wire_reuse(self.reuse, self.controls[4], self.inspector)

    @uses_model
    def chat(
        self, name, history, system, message, max_tokens, temperature, top_p, top_k, seed, stop, mode, score_prompt,
        metric, thresholds_text, k,
    ) -> Iterator[dict]:  # fmt: skip
        """Gradio's event (its inputs come in order; the `/chat` endpoint's parameters): the options record, then `reply`."""
        opts = RunOptions(max_tokens, temperature, top_p, top_k, seed, stop, mode, score_prompt, metric,
                          thresholds_text, k)  # fmt: skip
        yield from self.reply(name, history, system, message, opts)

    def reply(self, name: str, history: list, system: str, message: str, opts: RunOptions) -> Iterator[dict]:
        """Stream the assistant's reply to `message` after the conversation so far (and `system`, if any)."""
        if not message or not message.strip():
            raise error("The message is empty: type what the user says.")
        history = list(history or [])
        user = {"role": "user", "content": message}
        msgs = ([{"role": "system", "content": system}] if system and system.strip() else []) + history + [user]
        s = opts.settings()

        def encode(engine):
            ids, turns = chat_turns(engine, msgs)
            return ids, marks_of(engine, turns)

        def finish(r):
            kept = history + [user, {"role": "assistant", "content": r.completion_text}]
            return {self.reuse: reuse_button(r), self.history: kept, self.message: "", self.turns: status(kept)}

        yield from run(self.models, name, encode, s, self.inspector, opts.metric, opts.thresholds_text, opts.k,
                       finish=finish)  # fmt: skip
