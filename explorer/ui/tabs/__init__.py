"""One module per tab; each class builds its tab from `Shared` and wires its own button."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from explorer.serving.models import Models
from explorer.ui.inspector import Inspector


def twin_note(served_by: str | None) -> str:
    """What a view computed by a served model's torch twin (Models.use_for) says of its numbers."""
    return (
        f"Computed by the torch engine on the same weights: {served_by}, which serves this model, does not expose "
        "the hidden states and gradients this view needs. Its numbers can differ a little from the heatmap's."
    )


@dataclass(frozen=True)
class Shared:
    """What every tab gets: the models, the session's model name (a gr.State), the views it fills."""

    models: Models
    model: gr.State
    inspector: Inspector
