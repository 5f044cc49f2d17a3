"""The Generate tab: continue a prompt; every generated token shows what else the model considered."""

from __future__ import annotations

from collections.abc import Iterator

import gradio as gr

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

EXAMPLES = ["The capital of France is", "Once upon a time,", "def is_prime(n):", "The three primary colors are"]


class GenerateTab:
    """Prompt + sampler controls + Generate / Stop / Reuse seed."""

    def __init__(self, shared: Shared):
        self.models, self.inspector = shared.models, shared.inspector
        with gr.Tab("Generate", id="generate") as self.tab:
            gr.Markdown(
                "Continue a prompt; every generated token shows what else the model considered, "
                "and what the sampler kept of it."
            )
            self.prompt = gr.Textbox(label="Prompt", lines=3)
            self.controls = sampler_controls(shared.models.limits.max_tokens)
            self.button, self.stop, self.reuse = run_buttons("Generate")
            gr.Examples(EXAMPLES, inputs=[self.prompt])
        event = self.button.click(
            self.generate,
            [shared.model, self.prompt, *self.controls, *self.inspector.look],
            [*self.inspector.outputs, self.reuse],
            api_name="generate",
            show_progress_on=[self.inspector.summary],
        )
        self.stop.click(None, cancels=[event])
        wire_reuse(self.reuse, self.controls[4], self.inspector)

    @uses_model
    def generate(
        self, name, prompt, max_tokens, temperature, top_p, top_k, seed, stop, mode, score_prompt, metric,
        thresholds_text, k,
    ) -> Iterator[dict]:  # fmt: skip
        """Gradio's event (its inputs come in order; the `/generate` endpoint's parameters): the options record, then
        `continue_prompt`."""
        opts = RunOptions(max_tokens, temperature, top_p, top_k, seed, stop, mode, score_prompt, metric,
                          thresholds_text, k)  # fmt: skip
        yield from self.continue_prompt(name, prompt, opts)

    def continue_prompt(self, name: str, prompt: str, opts: RunOptions) -> Iterator[dict]:
        """Stream a continuation of `prompt` from the session's model."""
        if not prompt or not prompt.strip():
            raise error("The prompt is empty: type a prompt to continue.")
        s = opts.settings()
        yield from run(
            self.models,
            name,
            lambda engine: (engine.encode(prompt), marks_of(engine)),
            s,
            self.inspector,
            opts.metric,
            opts.thresholds_text,
            opts.k,
            finish=lambda r: {self.reuse: reuse_button(r)},
        )
