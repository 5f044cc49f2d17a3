"""One server for both faces: the OpenAI-compatible API under /v1 and the Gradio app at /."""

from __future__ import annotations

import html
import os
import sys
import time
from typing import Any

from fastapi import FastAPI

from explorer import __version__, zerogpu
from explorer.errors import ExplorerError
from explorer.models import Models, is_loopback, is_public
from explorer.settings import Limits

PUBLIC_UPLOAD = "10mb"  # the largest file a visitor may upload to a public server


def parse_auth(value: str | None) -> tuple[str, str] | None:
    """`user:password` (EXPLORER_AUTH / --auth) -> (user, password); None when unset."""
    value = value if value is not None else os.environ.get("EXPLORER_AUTH")
    if not value:
        return None
    user, sep, password = value.partition(":")
    if not sep or not user or not password:
        raise ExplorerError("EXPLORER_AUTH / --auth must look like user:password (both non-empty).", param="auth")
    return user, password


def remote_models(backend: tuple[str, str | None, str | None], names: list[str] | None, public: bool = False) -> Models:
    """A registry whose models are the backend's (all of them, or those named), each a RemoteEngine."""
    from explorer.engine.remote.engine import SERVER, RemoteEngine

    url, key, tokenizer = backend
    first = RemoteEngine(url, names[0] if names else None, key, tokenizer)
    served = names or [m["id"] for m in first.backend.get("/v1/models").get("data", [])] or [first.model_id]
    registry = Models(
        served,
        allow_hub=False,
        public=public,
        engine="remote",
        loader=lambda spec: RemoteEngine(
            url, spec.source, key, tokenizer if spec.name == first.name or tokenizer == SERVER else None
        ),
    )
    registry.add(first)
    return registry


def build_app(
    models: Models,
    auth: tuple[str, str] | None = None,
    limits: Limits | None = None,
    host: str | None = None,
    zero: bool | None = None,
) -> FastAPI:
    """FastAPI app with /v1 (API), the rooms of lessons and / (web app) mounted; `auth` locks all (the page by
    Gradio's login); `host` is the address the server listens on (join links name the LAN address behind 0.0.0.0);
    `zero`: on ZeroGPU (None: as explorer/zerogpu.py finds), where /v1's model work runs in `spaces.GPU` calls and
    the lessons answer `ZERO_GPU_MESSAGE`."""
    import gradio as gr

    from explorer.api.framing import error_of
    from explorer.api.guard import root_guard
    from explorer.api.routes import build_api
    from explorer.api.tokenize import token_router
    from explorer.ui.theme import launch_options

    if limits is not None:
        models.limits = limits
    limits = models.limits
    app = FastAPI(title="logprob-explorer", version=__version__, docs_url=None, redoc_url=None, openapi_url=None)
    app.include_router(
        token_router(models, limits, root_guard(auth, limits))
    )  # /tokenize, /detokenize, /health, /version
    app.add_exception_handler(ExplorerError, lambda request, exc: error_of(exc))
    zero = zerogpu.active() if zero is None else zero
    api = build_api(models, limits, auth=auth, zero=zero)
    app.state.gate = api.state.gate
    models.host = host
    if zero:  # said on every route of theirs, never a failure mid-request
        app.include_router(not_on_zero_gpu())
    else:
        app.include_router(lesson_rooms(models, limits, auth, app.state))  # /lessons, /rooms, /lesson pages
    app.mount("/v1", api)
    demo = page_app(models, limits)
    if limits.public:
        app.add_middleware(BodyCap, limit=limits.max_body_bytes)
    app = gr.mount_gradio_app(
        app,
        demo,
        path="/",
        **launch_options(),
        footer_links=["api"],
        auth=[auth] if auth else None,
        max_file_size=PUBLIC_UPLOAD if limits.public else None,  # session files opened on the page
    )
    # Gradio checks that a file input names a file a visitor uploaded only once it counts its Blocks as launched,
    # which mounting never does: without this, an event called directly could name any file on this machine
    demo.has_launched = True
    app.state.demo = demo
    return app


ZERO_GPU_MESSAGE = (
    "A lesson runs the model for every student's answer, and on ZeroGPU each run is a GPU call that reserves at least "
    f"{zerogpu.FLOOR_S} s of a daily GPU quota (a class of 30 answering one step: {30 * zerogpu.FLOOR_S // 60} "
    "minutes of it), so the lessons are not available on this Space. Run them on a computer (`make run`; "
    "`--host 0.0.0.0` for a classroom), or on a Space with CPU or GPU hardware."
)


def not_on_zero_gpu():
    """/rooms, /lessons and the /lesson pages on ZeroGPU: a 503 saying why (JSON; a page for /lesson)."""
    from fastapi import APIRouter
    from fastapi.responses import HTMLResponse

    from explorer.api.framing import error

    router = APIRouter()
    methods = ["GET", "POST", "PUT", "DELETE"]

    @router.api_route("/rooms", methods=methods, include_in_schema=False)
    @router.api_route("/rooms/{rest:path}", methods=methods, include_in_schema=False)
    @router.api_route("/lessons", methods=methods, include_in_schema=False)
    def refused(rest: str = ""):
        return error(503, ZERO_GPU_MESSAGE, None, "not_on_zerogpu", kind="unavailable")

    @router.get("/lesson", include_in_schema=False)
    @router.get("/lesson/{rest:path}", include_in_schema=False)
    def page(rest: str = ""):
        body = html.escape(ZERO_GPU_MESSAGE).replace("`", "")
        return HTMLResponse(
            '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Lessons: not on ZeroGPU</title>'
            '<meta name="viewport" content="width=device-width, initial-scale=1"></head>'
            f'<body style="font: 18px/1.5 system-ui; max-width: 40em; margin: 2em auto; padding: 0 1em">'
            f'<h1>Lessons are not available on this Space</h1><p>{body}</p><p><a href="/">Back to the page</a></p>'
            "</body></html>",
            status_code=503,
        )

    return router


def lesson_rooms(models: Models, limits: Limits, auth: tuple[str, str] | None, state):
    """The rooms router (explorer/api/rooms.py) with its caps (EXPLORER_ROOMS_*) and this server's gate."""
    from explorer.api.guard import room_guard
    from explorer.api.rooms import rooms_router
    from explorer.lessons.rooms import RoomLimits, Rooms

    rooms = Rooms(RoomLimits.from_env(limits.public))
    state.rooms = rooms
    return rooms_router(models, limits, rooms, state.gate, room_guard(auth))


class BodyCap:
    """ASGI middleware of a public server: a request body over `limit` bytes gets a 413 before the app reads it
    (uploads excepted: Gradio's `max_file_size` caps those)."""

    def __init__(self, app, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("path", "").endswith("/upload") or scope["method"] in ("GET", "HEAD"):
            return await self.app(scope, receive, send)
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None:
            if not length.isdigit() or int(length) > self.limit:
                return await self._refuse(scope, receive, send)
            return await self.app(scope, receive, send)
        body, more = b"", True  # no length given (chunked): read at most the limit, then hand it on
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.limit:
                return await self._refuse(scope, receive, send)
        sent = False

        async def replay():
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await self.app(scope, replay, send)

    async def _refuse(self, scope, receive, send):
        from explorer.api.framing import error

        message = f"This request is larger than this server takes ({self.limit:,} bytes, EXPLORER_MAX_BODY_BYTES)."
        return await error(413, message, None, "request_too_large")(scope, receive, send)


def page_app(models: Models, limits: Limits):
    """The page, its actions bounded by `limits` (on ZeroGPU: the model's work under spaces.GPU), its queue bounded."""
    from explorer.ui.actions import bound_events
    from explorer.ui.layout import build

    demo = build(models)
    workers = limits.workers
    models.serve_batched(workers)  # the page's generations decode together, with the API's
    done = bound_events(demo, limits, workers, models)
    if done["gpu"]:
        print(f"On a Space: {len(done['gpu'])} actions run under spaces.GPU (ZeroGPU).", file=sys.stderr)
    # the model's work: `workers` actions at once, `queue` more waiting (they see their place), then "busy"; the
    # page's own events (a page opening, a recolour) are not in that line (see ExplorerQueue.push)
    demo.queue(default_concurrency_limit=workers, max_size=None)
    own_queue(demo, {**dict.fromkeys(done["model"], ("model", limits.queue)),
                     **dict.fromkeys(done["opening"], ("opening", max(limits.queue, OPENING_LINE)))})  # fmt: skip
    return demo


# Gradio's queue looks for new work every 1 ms and for progress every 10 ms, idle or not: about 4 CPU seconds a
# minute on an idle 2-core server, 1.0 at 20 and 50 ms (measured: its event loop's wake-ups, nothing else). While
# there is work, or was in the last BUSY_S, it looks every 20 ms (and for progress every 50 ms while an action runs);
# idle, every IDLE_POLL_S, so the first action after a quiet spell starts within that (API requests never wait: they
# do not go through this queue).
BUSY_POLL_S, PROGRESS_POLL_S, IDLE_POLL_S, BUSY_S = 0.02, 0.05, 0.25, 5.0
# pages opening at once whose event (a shared link's rerun) may wait, beyond the visitors' line: a link opened while
# the line is full still restores, a flood of openings is still refused
OPENING_LINE = 32


def _own(cls: Any) -> type:  # cls: gradio.queueing.Queue, not imported here
    """Gradio's Queue class with its two polling intervals read from what it is doing (gradio 6 reads them as
    attributes of the queue, `sleep_when_free` and `progress_update_sleep_when_free`, at every turn of its loops),
    and its one bound on all waiting events replaced by lines of their own (`lines`: function id -> (line, size))."""

    def running(q) -> bool:
        return any(job is not None for job in q.active_jobs)

    def busy(q) -> bool:
        now = time.monotonic()
        if len(q) or running(q):
            q._explorer_busy_at = now
        return now - getattr(q, "_explorer_busy_at", -BUSY_S) < BUSY_S

    async def push(q, body, request, username):
        """Gradio's `max_size` counts every waiting event, the page's own too: a visitor opening the page while
        the line was full was told "busy" and a shared link was lost. Here an event is refused only when its own
        line is full; events in no line (cheap ones that run no model) are never refused."""
        lines = getattr(q, "explorer_lines", {})
        line = lines.get(body.fn_index)  # gradio keys its functions by their ids: fn_index is one
        if line is not None:
            waiting = sum(
                lines.get(event.fn._id, (None,))[0] == line[0]
                for events in q.event_queue_per_concurrency_id.values()
                for event in events.queue
            )
            if waiting >= line[1]:  # gradio's own words: its client shows "busy, try again"
                return False, f"Queue is full. Max size is {line[1]} and size is {waiting}.", "queue_full"
        return await cls.push(q, body, request, username)

    ignore = lambda q, v: None  # noqa: E731 - gradio's __init__ sets the attributes: the properties decide
    return type(
        "ExplorerQueue",
        (cls,),
        {
            "sleep_when_free": property(lambda q: BUSY_POLL_S if busy(q) else IDLE_POLL_S, ignore),
            "progress_update_sleep_when_free": property(
                lambda q: PROGRESS_POLL_S if running(q) else IDLE_POLL_S, ignore
            ),
            "push": push,
        },
    )


def own_queue(demo, lines: dict[int, tuple[str, int]]) -> None:
    """`demo`'s queue polls at BUSY_POLL_S while there is work, at IDLE_POLL_S when there has been none for BUSY_S,
    and bounds each line of `lines` (function id -> (line, size)) on its own."""
    queue = demo._queue
    if type(queue).__name__ != "ExplorerQueue":
        queue.__class__ = _own(type(queue))
    queue.explorer_lines = lines


def deployment(
    models: list[str] | None = None,
    device: str | None = None,
    dtype: str | None = None,
    host: str = "127.0.0.1",
    trust_remote_code: bool = False,
    backend: tuple[str, str | None, str | None] | None = None,
    public: bool = False,
    engine_kind: str | None = None,
) -> Models:
    """The registry a server serves: the operator's models (or the backend's), public or not (see `serve`)."""
    public = is_public(public)
    allow_hub = None if os.environ.get("EXPLORER_ALLOW_HUB_MODELS") or is_loopback(host) else False
    if backend:  # every model is served by the backend (see explorer/engine/remote/engine.py)
        registry = remote_models(backend, models, public)
    else:
        registry = Models(
            models,
            device=device,
            dtype=dtype,
            trust_remote_code=trust_remote_code,
            allow_hub=allow_hub,
            public=public,
            engine=engine_kind,
        )
    if public:
        print(f"Public mode: {registry.limits.summary()}; models: {', '.join(registry.names)}.", file=sys.stderr)
    return registry


def serve(
    models: list[str] | None = None,
    device: str | None = None,
    dtype: str | None = None,
    host: str = "127.0.0.1",
    port: int = 7860,
    share: bool = False,
    trust_remote_code: bool = False,
    auth: str | None = None,
    backend: tuple[str, str | None, str | None] | None = None,
    public: bool = False,
    engine_kind: str | None = None,
) -> int:
    """Load the default model, then serve the app and API until interrupted (SIGTERM stops it within seconds).

    `public` (or EXPLORER_PUBLIC=1, or on a Hugging Face Space): the operator's models only, the public limits
    (explorer/settings.py PUBLIC_LIMITS, each an EXPLORER_* setting), the HTTP API off unless EXPLORER_API_KEY is set.
    """
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    credentials = parse_auth(auth)
    zero = zerogpu.activate() and not backend  # before any load: the `spaces` package must see the weights move
    registry = deployment(models, device, dtype, host, trust_remote_code, backend, public, engine_kind)
    print(f"Loading {registry.default} ...", file=sys.stderr)
    engine = registry.preload_for_zero_gpu()[0] if zero else registry.get()
    print(
        f"Loaded {engine.name} on {engine.placement()}; serving {', '.join(registry.names)}.",
        file=sys.stderr,
    )
    if share:
        return _serve_shared(registry, host, port, credentials)
    import uvicorn

    app = build_app(registry, credentials, host=host)
    if zero:  # the weights packed once, now that every model is loaded and every GPU action wrapped
        zerogpu.start_up()
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=3)

    class Server(uvicorn.Server):
        def handle_exit(self, sig, frame):  # running requests stop at their next step, then uvicorn exits
            app.state.gate.shutdown()
            super().handle_exit(sig, frame)

    server = Server(config)
    print(f"Web app: http://{host}:{port}/   API: http://{host}:{port}/v1", file=sys.stderr)
    server.run()
    return 0


def _serve_shared(models: Models, host: str, port: int, auth: tuple[str, str] | None) -> int:
    """`--share`: Gradio's own launcher (for the public link), with the API routes added to its app."""
    from explorer.api.routes import build_api
    from explorer.ui.theme import launch_options

    demo = page_app(models, models.limits)
    app, local, public = demo.launch(
        server_name=host,
        server_port=port,
        share=True,
        prevent_thread_lock=True,
        **launch_options(),
        auth=[auth] if auth else None,
    )
    api = build_api(models, models.limits, auth=auth)
    app.mount("/v1", api)
    app.router.routes.insert(0, app.router.routes.pop())  # before Gradio's catch-all routes
    app.state.gate, models.host, models.public_url = api.state.gate, host, public
    rooms = lesson_rooms(models, models.limits, auth, app.state)
    for route in reversed(rooms.routes):  # before Gradio's catch-all routes too
        app.router.routes.insert(0, route)
    print(f"Web app: {local}  public: {public}  API: {local.rstrip('/')}/v1", file=sys.stderr)
    demo.block_thread()
    return 0
