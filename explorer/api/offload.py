"""CPU work a request asks for (parsing a lesson, drawing a QR code) run off the event loop, a few at once: a flood
of such requests waits its turn without a thread, and every other request (`GET /v1/models`, a student's poll) is
answered meanwhile."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import anyio
from anyio import to_thread

T = TypeVar("T")
AT_ONCE = 2  # such calls running at once, per server; the rest wait (in the event loop, holding no thread)


class OffLoop:
    """`await off(fn, *args)`: `fn(*args)` in a worker thread, at most `at_once` at a time (its limiter is made in
    the server's own event loop, on first use)."""

    def __init__(self, at_once: int = AT_ONCE):
        self.at_once = at_once
        self.limiter: anyio.CapacityLimiter | None = None

    async def __call__(self, fn: Callable[..., T], *args: Any) -> T:
        if self.limiter is None:
            self.limiter = anyio.CapacityLimiter(self.at_once)
        return await to_thread.run_sync(fn, *args, limiter=self.limiter)
