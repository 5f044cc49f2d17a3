"""The one way the web app shows a message in a pop-up: `gr.Error` with the text HTML-escaped.

Gradio renders an error's message as HTML, and messages quote what the visitor typed
(thresholds, model ids): every `gr.Error` in explorer/ui is made here.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from contextlib import contextmanager

import gradio as gr

from explorer.errors import ExplorerError


def error(message: str) -> gr.Error:
    """A gr.Error whose message shows as plain text (markup in it is escaped)."""
    return gr.Error(html.escape(str(message), quote=True))


def warning(message: str) -> None:
    """A non-blocking note (gr.Warning) whose message shows as plain text."""
    gr.Warning(html.escape(str(message), quote=True))


def info(message: str) -> None:
    """A passing note (gr.Info: nothing went wrong) whose message shows as plain text."""
    gr.Info(html.escape(str(message), quote=True))


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn the engine's or the registry's ExplorerError (bad input, unusable model) into a pop-up."""
    try:
        yield
    except ExplorerError as err:
        raise error(str(err)) from None
