"""The Generate tab: continue a prompt; every generated token shows what else the model considered."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import gradio as gr

from explorer.ui.actions import uses_model
from explorer.ui.errors import error
from explorer.ui.links import Base, ResultLink, ViewState, flag, text
from explorer.ui.marks import marks_of
from explorer.ui.sampler import (
    RunOptions,
    Sampler,
    endpoint_inputs,
    reuse_button,
    run,
    run_buttons,
    sampler_controls,
    wire_reuse,
)
from explorer.ui.stop import running, stops
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
            self.controls = sampler_controls(shared.models.limits.max_tokens)  # by name
            self.button, self.stop, self.reuse = run_buttons("Generate")
            gr.Examples(EXAMPLES, inputs=[self.prompt])
        self.inputs = [shared.model, self.prompt]
        self.options = endpoint_inputs(self.controls, self.inspector.look)  # the handler's keyword inputs
        self.outputs = [*self.inspector.outputs, self.reuse]
        event = running(
            self.stop,
            self.button.click,
            self.generate,
            self.inputs,
            self.outputs,
            inputs_kwargs=self.options,
            api_name="generate",
            show_progress_on=[self.inspector.summary],
        )
        stops(self.stop, [event])
        wire_reuse(self.reuse, self.controls["seed"], self.inspector)

    @uses_model
    def generate(self, name: str, prompt: str, **options: Any) -> Iterator[dict]:
        """Gradio's event (the `/generate` endpoint: the model, the prompt, then the options by name)."""
        yield from self.continue_prompt(name, prompt, RunOptions.from_values(options))

    def continue_prompt(self, name: str, prompt: str, opts: RunOptions) -> Iterator[dict]:
        """Stream a continuation of `prompt` from the session's model."""
        if not prompt or not prompt.strip():
            raise error("The prompt is empty: type a prompt to continue.")
        yield from run(
            self.models,
            name,
            encode=lambda engine: (engine.encode(prompt), marks_of(engine)),
            opts=opts,
            inspector=self.inspector,
            finish=lambda r: {self.reuse: reuse_button(r)},
        )


@dataclass(frozen=True)
class GenerateLink(ResultLink):
    """A generation's link: the prompt and the sampler it ran with (its seed: the link replays it)."""

    tab = "generate"
    text: str = ""  # the prompt
    sampler: Sampler = field(default_factory=Sampler)
    score_prompt: bool = True

    def to_dict(self) -> dict:
        return {"text": self.text, "sampler": self.sampler.to_link(), "score_prompt": self.score_prompt}

    @classmethod
    def read(cls, d: dict) -> GenerateLink:
        return cls(text(d, "text"), Sampler.read(d.get("sampler", {})), flag(d, "score_prompt", True))

    @classmethod
    def inputs(cls, tab: GenerateTab) -> list:
        return [tab.prompt]

    @classmethod
    def of_result(cls, tab: GenerateTab, values: Mapping[Any, Any], r: Any) -> GenerateLink:
        return cls(str(values.get(tab.prompt) or ""), Sampler.of(r.sampler or {}), r.prompt_k is not None)

    def empty(self) -> bool:
        return not self.text

    def apply(self, tab: GenerateTab, v: ViewState) -> dict:
        controls = {**self.sampler.controls(), "score_prompt": self.score_prompt}
        return {tab.prompt: self.text, **{tab.controls[k]: x for k, x in controls.items()}}

    def run(self, tab: GenerateTab, name: str, base: Base) -> Iterator[dict]:
        opts = RunOptions(sampler=self.sampler, score_prompt=self.score_prompt, **base.look)
        yield from tab.continue_prompt(name, self.text, opts)

    @classmethod
    def outputs(cls, tab: GenerateTab) -> list:
        return [tab.prompt, *tab.controls.values(), tab.reuse]
