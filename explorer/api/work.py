"""Model work off the event loop: a bounded number of requests compute at once, a bounded queue waits,
and each request can be stopped (client gone, time limit, shutdown) between chunks and decode steps: its work runs
`within` a bound whose stop is the request's token (explorer/engine/passes/bounds.py), so the engine's
`bounds.check()` asks it.
The bound carries no limits and no deadline: the routes check a request's cost before any work, the token its time.

Cheap routes (`GET /v1/models`) never enter the gate, so they never wait behind model work.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import cast

import anyio
import anyio.to_thread
from fastapi import Request

from explorer.engine.passes import bounds
from explorer.errors import ExplorerError
from explorer.rules.sampler import Limits

_END = object()  # end of an iterator


class Token:
    """Says when a request's work must stop; `check()` raises then (the engine asks it between steps)."""

    def __init__(self, max_seconds: float):
        self.deadline = time.monotonic() + max_seconds if max_seconds else None
        self.max_seconds = max_seconds
        self.reason: str | None = None
        self.steps = 0  # checks passed: positions blocks and decode steps computed

    def bound(self) -> bounds.Bound:
        """The bound the request's work runs within: this token's stop, and nothing else."""
        return bounds.Bound(stop=self.check)

    def cancel(self, reason: str) -> None:
        self.reason = self.reason or reason

    def check(self) -> None:
        if self.reason is None and self.deadline is not None and time.monotonic() > self.deadline:
            self.reason = "timeout"
        if self.reason == "timeout":
            raise ExplorerError(
                f"The request ran past this server's limit of {self.max_seconds:g} s (EXPLORER_MAX_SECONDS): "
                "ask for fewer tokens, fewer choices or a shorter prompt.",
                code="request_timeout",
            )
        if self.reason is not None:
            raise ExplorerError(f"The request was stopped ({self.reason}).", code="request_cancelled")
        self.steps += 1


class Gate:
    """At most `workers` model requests compute, `queue` more wait; beyond that a 429."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.limiter = anyio.CapacityLimiter(limits.workers)
        self.inflight = 0
        self.tokens: set[Token] = set()
        self._lock = threading.Lock()
        self.closing = False

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[Token]:
        with self._lock:
            if self.closing:
                raise ExplorerError("The server is shutting down: try again in a moment.", code="server_busy")
            if self.inflight >= self.limits.workers + self.limits.queue:
                raise ExplorerError(
                    f"The server is busy ({self.inflight} requests running or waiting): retry after a second.",
                    code="server_busy",
                )
            self.inflight += 1
            token = Token(self.limits.max_seconds)
            self.tokens.add(token)
        try:
            yield token
        finally:
            with self._lock:
                self.inflight -= 1
                self.tokens.discard(token)

    def shutdown(self) -> None:
        """Stop every running request at its next step; refuse new ones."""
        with self._lock:
            self.closing = True
            for t in self.tokens:
                t.cancel("the server is shutting down")

    async def run(self, fn: Callable[[], object], request: Request, token: Token):
        """fn() on a worker thread within the token's bound; a client that goes away stops it at its next step."""
        out: dict = {}

        def bounded():
            with bounds.within(token.bound()):  # set on the worker thread itself: nothing relies on copied contexts
                return fn()

        async def work():
            try:
                out["result"] = await anyio.to_thread.run_sync(bounded, limiter=self.limiter)
            except Exception as err:  # noqa: BLE001 - re-raised below, outside the task group
                out["error"] = err
            finally:
                tg.cancel_scope.cancel()

        async def watch():  # the body is read by now: the next message can only be the disconnect
            while (await request.receive())["type"] != "http.disconnect":
                pass
            token.cancel("the client went away")

        async with anyio.create_task_group() as tg:
            tg.start_soon(work)
            tg.start_soon(watch)
        if "error" in out:
            raise out["error"]
        return out["result"]

    async def iterate(self, events: Iterator[bytes], token: Token | None = None) -> AsyncIterator[bytes]:
        """The items of a blocking iterator, each computed on a worker thread (within the token's bound, if any)."""
        if token is not None:
            events = bounds.iterated(token.bound(), events)
        try:
            while True:
                item = await anyio.to_thread.run_sync(next, events, _END, limiter=self.limiter)
                if item is _END:
                    return
                yield cast(bytes, item)
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                await anyio.to_thread.run_sync(close)
