"""The bound on one piece of work: limits, a deadline and a stop, which the engine enforces while it runs.

The one way to stop work: the engine calls `check()` between blocks and decode steps, which raises when the
current bound says stop. Each face sets the bound where the work starts:
- the page's actions are plain functions called by Gradio, so each one runs `within(start(limits))`
  (explorer/ui/actions.py wraps every event), and the engine also asks the bound's limits:
  `TorchEngine.check_ids` refuses a text over `max_input_tokens`, generation refuses `max_tokens` over the cap;
  the why tab's Stop adds its own stop with `stopping(...)`;
- the API checks a request's cost itself before any work, and its work gate (explorer/api/work.py) runs the work
  `within(Bound(stop=token.check))`: no limits, no deadline here (the token has the request's own), only its stop
  (the client went away, the time limit, shutdown).
Outside these (CLI, tests) there is no bound and `check()` does nothing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import TypeVar

from explorer.errors import ExplorerError
from explorer.rules.sampler import Limits

T = TypeVar("T")
Stop = Callable[[], None]  # raises to stop the work (client gone, Stop pressed)


@dataclass(frozen=True)
class Bound:
    limits: Limits | None = None  # the caps the engine applies (None: the caller checked them, as the API does)
    deadline: float = math.inf  # time.monotonic() after which work stops (inf: never)
    stop: Stop | None = None  # asked first at every check

    def check(self) -> None:
        if self.stop is not None:
            self.stop()
        if time.monotonic() > self.deadline:
            seconds = self.limits.max_seconds if self.limits is not None else 0
            raise ExplorerError(
                f"This took longer than this server allows for one action ({seconds:g} s, "
                "EXPLORER_MAX_SECONDS): ask for less (a shorter text, fewer tokens) and run it again.",
                code="timeout",
            )


_current: ContextVar[Bound | None] = ContextVar("explorer_bound", default=None)


def current_bound() -> Bound | None:
    """The bound in force in this context (set by `within`), or None (no bound: `check()` does nothing)."""
    return _current.get()


def check() -> None:
    """Raise if the current bound says stop (its stop, then its deadline); nothing without a bound."""
    bound = _current.get()
    if bound is not None:
        bound.check()


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


def stopping(stop: Stop) -> AbstractContextManager[Bound]:
    """Run the block under the current bound (or none) with `stop` asked too, after the bound's own stop."""
    bound = current_bound() or Bound()
    first = bound.stop
    if first is None:
        return within(replace(bound, stop=stop))

    def both() -> None:
        first()
        stop()

    return within(replace(bound, stop=both))


def iterated(bound: Bound, items: Iterator[T]) -> Iterator[T]:
    """The items of `items`, each computed under `bound` (whichever thread asks for the next one)."""
    try:
        while True:
            with within(bound):
                try:
                    item = next(items)
                except StopIteration:
                    return
            yield item
    finally:
        close = getattr(items, "close", None)
        if close is not None:
            with within(bound):
                close()


def check_input(n: int, param: str = "prompt") -> None:
    """Refuse `n` input tokens over the current bound's cap."""
    bound = current_bound()
    if bound is not None and bound.limits is not None:
        bound.limits.check_input(n, param)


def check_new_tokens(n: int, param: str = "max_tokens") -> None:
    bound = current_bound()
    if bound is not None and bound.limits is not None:
        bound.limits.check_new_tokens(n, param)
