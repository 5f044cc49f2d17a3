"""The Chat tab: a conversation through the model's chat template, kept across messages; every earlier turn
is scored too, the template's markers are tokens like any other (drawn as markers), and roles are labelled."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import gradio as gr

from explorer.engine.text.turns import chat_turns
from explorer.errors import ExplorerError
from explorer.ui.actions import uses_model
from explorer.ui.errors import error
from explorer.ui.links import Base, ResultLink, ViewState, damaged, flag, messages, text
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
            self.controls = sampler_controls(shared.models.limits.max_tokens)  # by name
            self.button, self.stop, self.reuse = run_buttons("Send")
            gr.Examples(EXAMPLES, inputs=[self.message])
        self.inputs = [shared.model, self.history, self.system, self.message]
        self.options = endpoint_inputs(self.controls, self.inspector.look)  # the handler's keyword inputs
        self.outputs = [*self.inspector.outputs, self.reuse, self.history, self.message, self.turns]
        event = running(
            self.stop,
            self.button.click,
            self.chat,
            self.inputs,
            self.outputs,
            inputs_kwargs=self.options,
            api_name="chat",
            show_progress_on=[self.inspector.summary],
        )
        stops(self.stop, [event])
        self.new.click(lambda: ([], EMPTY), None, [self.history, self.turns], api_visibility="private")
        wire_reuse(self.reuse, self.controls["seed"], self.inspector)

    @uses_model
    def chat(self, name: str, history: list, system: str, message: str, **options: Any) -> Iterator[dict]:
        """Gradio's event (the `/chat` endpoint: the model, the conversation, then the options by name)."""
        yield from self.reply(name, history, system, message, RunOptions.from_values(options))

    def reply(self, name: str, history: list, system: str, message: str, opts: RunOptions) -> Iterator[dict]:
        """Stream the assistant's reply to `message` after the conversation so far (and `system`, if any)."""
        if not message or not message.strip():
            raise error("The message is empty: type what the user says.")
        history = list(history or [])
        user = {"role": "user", "content": message}
        msgs = ([{"role": "system", "content": system}] if system and system.strip() else []) + history + [user]

        def encode(engine):
            ids, turns = chat_turns(engine, msgs)
            return ids, marks_of(engine, turns)

        def finish(r):
            kept = history + [user, {"role": "assistant", "content": r.completion_text}]
            return {self.reuse: reuse_button(r), self.history: kept, self.message: "", self.turns: status(kept)}

        yield from run(self.models, name, encode=encode, opts=opts, inspector=self.inspector, finish=finish)


@dataclass(frozen=True)
class ChatLink(ResultLink):
    """A chat's link: the system message and the conversation up to and including the last user message (the
    reply: the link regenerates it, with the sampler's seed)."""

    tab = "chat"
    system: str = ""
    messages: tuple[tuple[str, str], ...] = ()  # (role, content)
    sampler: Sampler = field(default_factory=Sampler)
    score_prompt: bool = True

    def to_dict(self) -> dict:
        return {"system": self.system, "messages": [list(m) for m in self.messages],
                "sampler": self.sampler.to_link(), "score_prompt": self.score_prompt}  # fmt: skip

    @classmethod
    def read(cls, d: dict) -> ChatLink:
        said = messages(d.get("messages", []))
        return cls(text(d, "system"), said, Sampler.read(d.get("sampler", {})), flag(d, "score_prompt", True))

    def check(self) -> None:
        if not self.messages or self.messages[-1][0] != "user":
            raise damaged("a chat link must end with the user's message")

    @classmethod
    def inputs(cls, tab: ChatTab) -> list:
        return [tab.system, tab.history]

    @classmethod
    def of_result(cls, tab: ChatTab, values: Mapping[Any, Any], r: Any) -> ChatLink:
        history = values.get(tab.history) or []
        said = [(m["role"], m["content"]) for m in history if m.get("role") in ("user", "assistant")]
        if said and said[-1][0] == "assistant":
            said = said[:-1]  # the reply: the link regenerates it
        if not said:  # the conversation was cleared, or its first turn stopped: no message to regenerate from
            raise ExplorerError("This conversation has no message now: send one, then copy its link.")
        system = str(values.get(tab.system) or "")
        return cls(system, tuple(said), Sampler.of(r.sampler or {}), r.prompt_k is not None)

    def empty(self) -> bool:
        return not self.messages

    def apply(self, tab: ChatTab, v: ViewState) -> dict:
        history = [{"role": r, "content": c} for r, c in self.messages[:-1]]
        controls = {**self.sampler.controls(), "score_prompt": self.score_prompt}
        return {tab.system: self.system, tab.history: history, tab.message: self.messages[-1][1],
                **{tab.controls[k]: x for k, x in controls.items()}}  # fmt: skip

    def run(self, tab: ChatTab, name: str, base: Base) -> Iterator[dict]:
        history = [{"role": r, "content": c} for r, c in self.messages[:-1]]
        opts = RunOptions(sampler=self.sampler, score_prompt=self.score_prompt, **base.look)
        yield from tab.reply(name, history, self.system, self.messages[-1][1], opts)

    @classmethod
    def outputs(cls, tab: ChatTab) -> list:
        return [tab.system, tab.history, tab.message, *tab.controls.values(), tab.reuse, tab.turns]
