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


def status_text(engine: ModelEngine) -> str:
    """One line on the loaded model: name, where it runs (device, dtype, engine), vocabulary, context."""
    return (
        f"Loaded **{html.escape(engine.name)}** on {html.escape(engine.placement())}, "
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


def status_lines(models: Models, engine: ModelEngine | None, default: str) -> str:
    first = status_text(engine) if engine else f"Model **{html.escape(default)}** loads on the first action."
    return "  \n".join(x for x in (first, memory_text(models), public_text(models, engine)) if x)


def model_label(allow_hub: bool) -> str:
    """The menu's label: it mentions typing a hub id only where visitors may."""
    return (
        "Model (pick one, or type a Hugging Face hub id)" if allow_hub else "Model (pick one of this server's models)"
    )


class ModelPicker:
    """Menu + Load button + status line, and the session's current model name.

    The status line goes where the picker is made (at the top: it says which model answers); the menu and its button
    go where `place()` is called (below the tabs: the keyboard and the eye meet the text box first).
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
        loading = self.button.click(self.load, [self.choice], [self.name, self.status], api_name="load_model")
        loading.failure(
            lambda name: name, [self.name], [self.choice], api_visibility="private"
        )  # a failed load: the menu shows the model still in use

    def place(self) -> None:
        """Lay out the menu and the Load button here (hidden where the server has one model only)."""
        with gr.Row(elem_classes=["lx-hide-present", "lx-model"], visible=not self.only_one):
            self.choice.render()
            self.button.render()

    def load(self, choice: str, progress=gr.Progress()) -> dict:
        """Load `choice` for this session: its name into the session's state, a status line."""
        with user_errors():
            spec = self.models.resolve(choice)
            progress(0.1, desc=f"Loading {spec.name} ...")
            with self.models.use(spec.name) as engine:
                text = status_lines(self.models, engine, spec.name)
        progress(1.0)
        return {self.name: engine.name, self.status: text}
