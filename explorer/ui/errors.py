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


def whole_number(value, unpicked: str) -> int:
    """`value` (a position or node clicked or typed) as an int; gr.Error(`unpicked`: how to pick one) when it is none."""
    try:
        return int(value)
    except (TypeError, ValueError):
        raise error(unpicked) from None


def picked(value, n: int, unpicked: str, outside: str, first: int = 0) -> int:
    """`value` as an index in first..n-1: gr.Error(`unpicked`) when it is no number, else gr.Error(`outside`, its
    `{i}`, `{first}` and `{last}` filled in) when it is out of that range."""
    i = whole_number(value, unpicked)
    if not first <= i < n:
        raise error(outside.format(i=i, first=first, last=n - 1))
    return i
