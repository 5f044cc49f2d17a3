"""The model control: a menu of the operator's models, a Load button, and this session's model name.

Loading changes only the session's `name` (a gr.State) and its status line: other visitors
and /v1 clients keep theirs. Every action reads `name` and computes inside `models.use(name)`.
"""

from __future__ import annotations

import html

import gradio as gr

from explorer.engine import ModelEngine
from explorer.serving.models import Models
from explorer.ui.errors import user_errors


def short_name(name: str) -> str:
    """A model's name as people say it: the last part of its hub id or path ("SmolLM2-135M-Instruct")."""
    return name.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1] or name


def status_text(engine: ModelEngine) -> str:
    """One line on the loaded model for the details: name, where it runs (device, dtype, engine), vocabulary,
    context."""
    return (
        f"**{html.escape(engine.name)}** runs on {html.escape(engine.placement())}, "
        f"vocabulary {engine.vocab_size:,}, context {engine.context:,} tokens."
    )


def memory_text(models: Models) -> str:
    """Which models are in memory now (most recent last), and the room they share."""
    held = models.in_memory()
    if not held:
        return "No model is in memory yet."
    names = ", ".join(f"{html.escape(name)} ({mb:,.0f} MB)" if mb else html.escape(name) for name, mb in held)
    room = f", with room for {models.max_mb:,} MB of models in all" if models.max_mb else ""
    return f"In memory now: {names}{room}."


def public_text(models: Models, engine: ModelEngine | None = None) -> str:
    """On a public server: what an action may cost, and which models it serves (empty elsewhere)."""
    if not models.public:
        return ""
    context = engine.context if engine is not None else 0
    return (
        f"This is a public server: {html.escape(models.limits.summary(context))}. "
        f"Models here: {', '.join(html.escape(n) for n in models.names)}."
    )


DETAILS = "Details: engine, vocabulary, memory"  # the accordion under the tabs that holds them


def status_lines(models: Models, engine: ModelEngine | None, default: str) -> str:
    """The status line at the top, in plain words ("**SmolLM2-135M-Instruct** is ready."), and a public server's
    terms; the technical details are `details_text`'s, one click away under the tabs."""
    if engine is not None:
        first = f"**{html.escape(short_name(engine.name))}** is ready."
    else:
        first = f"**{html.escape(short_name(default))}** loads when you first use it."
    return "\n\n".join(x for x in (first, public_text(models, engine)) if x)


def details_text(models: Models, engine: ModelEngine | None, default: str) -> str:
    """The model's details: engine, quantisation, vocabulary, context, and the models in memory."""
    about = (
        status_text(engine) if engine is not None else f"Model **{html.escape(default)}** loads on the first action."
    )
    return "  \n".join((about, memory_text(models)))


def model_label(allow_hub: bool) -> str:
    """The menu's label: it mentions typing a hub id only where visitors may."""
    return (
        "Model (pick one, or type a Hugging Face hub id)" if allow_hub else "Model (pick one of this server's models)"
    )


class ModelPicker:
    """Menu + Load button + status line + details, and the session's current model name.

    The status line goes where the picker is made (at the top: it says, in plain words, which model answers); the
    details (folded), the menu and its button go where `place()` is called (below the tabs: the keyboard and the eye
    meet the text box first, and the text box stays three Tab presses from the page's start).
    """

    def __init__(self, models: Models):
        self.models = models
        self.name = gr.State(models.default)
        self.only_one = models.public and len(models.names) == 1  # nothing to pick: the status line says which
        self.choice = gr.Dropdown(
            models.names,
            value=models.default,
            label=model_label(models.allow_hub),
            allow_custom_value=models.allow_hub,
            scale=4,
            min_width=280,
            render=False,
        )
        self.button = gr.Button("Load model", scale=1, min_width=140, render=False)
        self.status = gr.Markdown(  # a callable: worked out again for each visitor's page load
            lambda: status_lines(models, models.loaded(models.default), models.default),
            elem_classes=["lx-hide-present"],
            elem_id="model-status",
        )
        self.details = gr.Markdown(
            lambda: details_text(models, models.loaded(models.default), models.default),
            elem_id="model-details",
            render=False,
        )
        loading = self.button.click(
            self.load, [self.choice], [self.name, self.status, self.details], api_name="load_model"
        )
        loading.failure(
            lambda name: name, [self.name], [self.choice], api_visibility="private"
        )  # a failed load: the menu shows the model still in use

    def place(self) -> None:
        """Lay out the details (folded) and the menu and the Load button (hidden where the server has one model only)
        here."""
        with gr.Accordion(DETAILS, open=False, elem_classes=["lx-hide-present"], elem_id="model-details-box"):
            self.details.render()
        with gr.Row(elem_classes=["lx-hide-present", "lx-model"], visible=not self.only_one):
            self.choice.render()
            self.button.render()

    def load(self, choice: str, progress=gr.Progress()) -> dict:
        """Load `choice` for this session: its name into the session's state, a status line and its details."""
        with user_errors():
            spec = self.models.resolve(choice)
            progress(0.1, desc=f"Loading {spec.name} ...")
            with self.models.use(spec.name) as engine:
                text = status_lines(self.models, engine, spec.name)
                details = details_text(self.models, engine, spec.name)
        progress(1.0)
        return {self.name: engine.name, self.status: text, self.details: details}
