"""Our own code in front of the page's Gradio queue: how often it looks for work, and its lines.

Gradio offers no setting for either, so nothing of Gradio's is replaced or subclassed: `PageQueue` writes the two
polling intervals that Gradio's queue reads as plain attributes, and `QueueFront`, an ASGI middleware given to
Gradio's app through its documented `app_kwargs`, stands before the routes where an event joins the queue.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from typing import Any

from starlette.middleware import Middleware
from starlette.responses import JSONResponse

# Gradio's queue looks for new work every 1 ms and for progress every 10 ms, idle or not: about 4 CPU seconds a
# minute on an idle 2-core server, 1.0 at 20 and 50 ms (measured: its event loop's wake-ups, nothing else). While
# there is work, or was in the last BUSY_S, it looks every 20 ms (and for progress every 50 ms while an action runs);
# idle, every IDLE_POLL_S, so the first action after a quiet spell starts within that (API requests never wait: they
# do not go through this queue).
BUSY_POLL_S, PROGRESS_POLL_S, IDLE_POLL_S, BUSY_S = 0.02, 0.05, 0.25, 5.0
# pages opening at once whose event (a shared link's rerun) may wait, beyond the visitors' line: a link opened while
# the line is full still restores, a flood of openings is still refused
OPENING_LINE = 32


class PageQueue:
    """The page's Gradio queue (`queue`, a gradio.queueing.Queue, not imported here), its pace and its lines.

    - Its pace: gradio 6 sleeps `sleep_when_free` between its looks for new work and `progress_update_sleep_when_free`
      between its looks for progress, reading both attributes at every turn of its loops. `tick` writes them from
      what the queue is doing; an event joining (`wake`) starts `follow`, which ticks while there is work and ends
      BUSY_S after the last, leaving the queue idle with nothing of ours awake.
    - Its lines: Gradio's one `max_size` counts every waiting event, the page's own too: a visitor opening the page
      while the line was full was told "busy" and a shared link was lost. Here an event is refused (`refusal`) only
      when its own line is full; events in no line (cheap ones that run no model) are never refused.
    """

    def __init__(self, queue: Any, lines: dict[int, tuple[str, int]], names: dict[str, int]):
        """`lines`: function id -> (line, size); `names`: API name -> function id, for events called by name."""
        self.queue, self.lines, self.names = queue, lines, names
        self.busy_at = -math.inf  # when there was work last
        self.following: asyncio.Task | None = None
        self.tick()  # idle from the start

    def tick(self) -> bool:
        """Write the queue's two intervals from what it is doing now; whether it is busy."""
        q, now = self.queue, time.monotonic()
        running = any(job is not None for job in q.active_jobs)
        if len(q) or running:
            self.busy_at = now
        busy = now - self.busy_at < BUSY_S
        q.sleep_when_free = BUSY_POLL_S if busy else IDLE_POLL_S
        q.progress_update_sleep_when_free = PROGRESS_POLL_S if running else IDLE_POLL_S
        return busy

    def wake(self) -> None:
        """An event joins (in the server's event loop): look often from now, until BUSY_S after the last work."""
        self.busy_at = time.monotonic()
        self.tick()
        if self.following is None or self.following.done():
            self.following = asyncio.get_running_loop().create_task(self.follow())

    async def follow(self) -> None:
        while self.tick():
            await asyncio.sleep(BUSY_POLL_S)

    def refusal(self, fn: int | str | None) -> str | None:
        """Gradio's own words for a full queue where the line of function `fn` (its id, or its API name) is full,
        else None."""
        key = self.names.get(fn) if isinstance(fn, str) else fn
        line = self.lines.get(key) if key is not None else None
        if line is None:
            return None
        name, size = line
        waiting = sum(
            self.lines.get(event.fn._id, (None,))[0] == name  # gradio keys its functions by their ids
            for events in self.queue.event_queue_per_concurrency_id.values()
            for event in events.queue
        )
        return f"Queue is full. Max size is {size} and size is {waiting}." if waiting >= size else None

    def app_kwargs(self) -> dict:
        """What Gradio's app is made with (`app_kwargs` of gr.mount_gradio_app and Blocks.launch): QueueFront."""
        return {"middleware": [Middleware(QueueFront, page=self)]}


class QueueFront:
    """ASGI middleware of the page's Gradio app, before the routes where an event joins its queue (POST
    .../gradio_api/queue/join, the page's; .../gradio_api/call/NAME, a client's by name): an event whose line is full
    is refused as Gradio refuses one when its queue is full (503, {"detail": "Queue is full. ..."}: its clients show
    "busy, try again"); any other wakes the queue's pace and goes on to Gradio."""

    JOIN, CALL = "/gradio_api/queue/join", "/gradio_api/call/"

    def __init__(self, app, page: PageQueue):
        self.app, self.page = app, page

    async def __call__(self, scope, receive, send):
        path = scope.get("path", "")
        joins = path.endswith(self.JOIN) or self.CALL in path
        if scope["type"] != "http" or scope["method"] != "POST" or not joins:
            return await self.app(scope, receive, send)
        body = await read_body(receive)
        fn = path.rsplit(self.CALL, 1)[1].strip("/") if self.CALL in path else fn_index(body)
        message = self.page.refusal(fn)
        if message is not None:
            return await JSONResponse({"detail": message}, status_code=503)(scope, receive, send)
        self.page.wake()
        return await self.app(scope, replaying(body, receive), send)


def fn_index(body: bytes) -> int | None:
    """The function id a queue join's JSON body names, or None (a body Gradio will refuse in its own words)."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    index = data.get("fn_index") if isinstance(data, dict) else None
    return index if isinstance(index, int) else None


async def read_body(receive) -> bytes:
    """A request's whole body, from its ASGI messages."""
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    return body


def replaying(body: bytes, receive):
    """An ASGI `receive` that gives `body` (already read) once, then what `receive` gives (a disconnect)."""
    sent = False

    async def replay():
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay
