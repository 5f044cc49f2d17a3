"""Stop buttons that show only while their action runs (an idle page has none).

- `stop_button()`: a Stop that starts hidden.
- `running(stop, listener, fn, ...)`: `listener(fn, ...)` (an event listener: `button.click`, a dependency's `.then`
  or `.success`) in three steps: Stop shown, the action, Stop hidden (after it ends, and after an error);
  returns the action's event, the one Stop cancels.
- `stops(stop, events)`: Stop cancels `events` and hides itself (a cancelled action's own last step may not run).

Showing and hiding are quick, unqueued and private (no API endpoint); two actions at once under one Stop hide it
when the first ends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import gradio as gr

QUIET: dict[str, Any] = {"queue": False, "api_visibility": "private", "show_progress": "hidden"}


def stop_button(**kw: Any) -> gr.Button:
    """A Stop button, hidden until an action it stops starts."""
    return gr.Button("Stop", variant="stop", visible=False, **kw)


def _shown(visible: bool) -> Callable[[], gr.Button]:
    return lambda: gr.Button(visible=visible)


def running(stop: gr.Button, listener: Callable, fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """`listener(fn, *args, **kwargs)` with `stop` shown while it runs; the action's event (for `stops`)."""
    event = listener(_shown(True), None, [stop], **QUIET).then(fn, *args, **kwargs)
    event.then(_shown(False), None, [stop], **QUIET)  # after it ends
    event.failure(_shown(False), None, [stop], **QUIET)  # after an error (Gradio 6 runs no `.then` after one)
    return event


def stops(stop: gr.Button, events: list) -> None:
    """A click on `stop` cancels `events` and hides it."""
    stop.click(_shown(False), None, [stop], cancels=cast(Any, events), **QUIET)  # gradio types `cancels` as dicts
