"""The bound on one page action: the server's limits and a deadline, which the engine enforces while it runs.

The API checks a request's cost before any work and stops it through its work gate (explorer/api/work.py); the
page's actions are plain functions called by Gradio, so the page runs each one `within(limits)` instead
(explorer/ui/bounds.py wraps every event), and the engine asks `current()`:
- `Engine.check_ids` refuses a text over `max_input_tokens`;
- generation refuses `max_tokens` over the cap;
- scoring and generation call `checked(check)` before every block or step, which stops work past the deadline.
Outside an action (CLI, tests, the API) there is no bound and nothing changes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from explorer.errors import ExplorerError
from explorer.settings import Limits


@dataclass(frozen=True)
class Bound:
    limits: Limits
    deadline: float  # time.monotonic() after which work stops (inf: never)

    def check(self) -> None:
        if time.monotonic() > self.deadline:
            raise ExplorerError(
                f"This took longer than this server allows for one action ({self.limits.max_seconds:g} s, "
                "EXPLORER_MAX_SECONDS): ask for less (a shorter text, fewer tokens) and run it again.",
                code="timeout",
            )


_current: ContextVar[Bound | None] = ContextVar("explorer_bound", default=None)


def current() -> Bound | None:
    return _current.get()


def start(limits: Limits) -> Bound:
    """A bound whose deadline is `limits.max_seconds` from now."""
    return Bound(limits, time.monotonic() + limits.max_seconds if limits.max_seconds else math.inf)


@contextmanager
def within(bound: Bound) -> Iterator[Bound]:
    """Run the block under `bound` (this thread and context only)."""
    token = _current.set(bound)
    try:
        yield bound
    finally:
        _current.reset(token)


def checked(check: Callable[[], None] | None) -> Callable[[], None] | None:
    """`check` plus the current bound's deadline (just `check` when there is no bound)."""
    bound = current()
    if bound is None or bound.deadline == math.inf:
        return check
    if check is None:
        return bound.check

    def both() -> None:
        check()
        bound.check()

    return both


def check_input(n: int, param: str = "prompt") -> None:
    """Refuse `n` input tokens over the current bound's cap."""
    bound = current()
    if bound is not None:
        bound.limits.check_input(n, param)


def check_new_tokens(n: int, param: str = "max_tokens") -> None:
    bound = current()
    if bound is not None:
        bound.limits.check_new_tokens(n, param)
