"""One module per tab; each class builds its tab from `Shared` and wires its own button."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from explorer.engine.select import twin_note as twin_note  # the tabs' note on a twin's numbers
from explorer.serving.models import Models
from explorer.ui.inspector import Inspector


@dataclass(frozen=True)
class Shared:
    """What every tab gets: the models, the session's model name (a gr.State), the views it fills."""

    models: Models
    model: gr.State
    inspector: Inspector
