"""One server for both faces: the OpenAI-compatible API under /v1 and the Gradio app at /."""

from __future__ import annotations

import sys
from typing import Any, cast

from fastapi import FastAPI

from explorer.config import Config, RoomLimits, current, quiet_gradio, use
from explorer.errors import ExplorerError
from explorer.rules.sampler import VERSION, Limits
from explorer.serving import zerogpu
from explorer.serving.models import Models
from explorer.serving.reach import is_loopback, is_public
from explorer.ui.page_queue import OPENING_LINE, PageQueue, replaying

PUBLIC_UPLOAD = "10mb"  # the largest file a visitor may upload to a public server


def parse_auth(value: str | None) -> tuple[str, str] | None:
    """`user:password` (EXPLORER_AUTH / --auth) -> (user, password); None when unset."""
    value = value if value is not None else current().auth
    if not value:
        return None
    user, sep, password = value.partition(":")
    if not sep or not user or not password:
        raise ExplorerError("EXPLORER_AUTH / --auth must look like user:password (both non-empty).", param="auth")
    return user, password


def remote_models(backend: tuple[str, str | None, str | None], names: list[str] | None, public: bool = False) -> Models:
    """A registry whose models are the backend's (all of them, or those named), each a RemoteEngine."""
    from explorer.engine.remote.engine import SERVER, RemoteEngine
    from explorer.engine.select import REMOTE, EngineSpec, load

    url, key, tokenizer = backend
    # a REMOTE spec loads a RemoteEngine, whose backend lists the served models
    first = cast(RemoteEngine, load(EngineSpec(names[0] if names else None, REMOTE, url, key, tokenizer)))
    served = names or [m["id"] for m in first.backend.get("/v1/models").get("data", [])] or [first.model_id]
    registry = Models(
        served,
        allow_hub=False,
        public=public,
        engine=REMOTE,
        loader=lambda spec: load(
            EngineSpec(
                spec.source, REMOTE, url, key, tokenizer if spec.name == first.name or tokenizer == SERVER else None
            )
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
    rooms: RoomLimits | None = None,
    proxies: tuple[str, ...] | None = None,
) -> FastAPI:
    """FastAPI app with /v1 (API), the rooms of lessons and / (web app) mounted; `auth` locks all (the page by
    Gradio's login); `host` is the address the server listens on (join links name the LAN address behind 0.0.0.0);
    `zero`: on ZeroGPU (None: as explorer/serving/zerogpu.py finds), where the model work of /v1 and of the lessons'
    rooms runs in `spaces.GPU` calls (a room's: one call per step, explorer/api/rooms.py); `rooms`: the rooms' caps
    (None: the configuration in force's); `proxies`: the peers whose X-Forwarded-* headers are believed (None: the
    configuration in force's, explorer/api/proxy.py)."""
    import gradio as gr

    from explorer.api.framing import error_of
    from explorer.api.guard import root_guard
    from explorer.api.proxy import ForwardedHeaders, Proxies
    from explorer.api.routes import build_api
    from explorer.api.tokenize import token_router
    from explorer.ui.theme import launch_options

    if limits is not None:
        models.limits = limits
    limits = models.limits
    app = FastAPI(title="logprob-explorer", version=VERSION, docs_url=None, redoc_url=None, openapi_url=None)
    app.include_router(
        token_router(models, limits, root_guard(auth, limits))
    )  # /tokenize, /detokenize, /health, /version
    app.add_exception_handler(ExplorerError, lambda request, exc: error_of(exc))
    zero = zerogpu.active() if zero is None else zero
    api = build_api(models, limits, auth=auth, zero=zero)
    app.state.gate = api.state.gate
    models.host = host
    app.include_router(lesson_rooms(models, limits, auth, app.state, zero, rooms))  # /lessons, /rooms, /lesson pages
    app.mount("/v1", api)
    if zero:  # a visitor's token on /v1 and the rooms reaches the `spaces` package as a page action's does
        app.add_middleware(VisitorToken)
    demo, queue = page_app(models, limits)
    if limits.public:
        app.add_middleware(BodyCap, limit=limits.max_body_bytes)
    app.add_middleware(ForwardedHeaders, proxies=Proxies(current().proxies if proxies is None else proxies))
    app = gr.mount_gradio_app(
        app,
        demo,
        path="/",
        **launch_options(),
        footer_links=["api"],
        auth=[auth] if auth else None,
        max_file_size=PUBLIC_UPLOAD if limits.public else None,  # session files opened on the page
        app_kwargs=queue.app_kwargs(),
    )
    # Gradio checks that a file input names a file a visitor uploaded only once it counts its Blocks as launched,
    # which mounting never does: without this, an event called directly could name any file on this machine
    demo.has_launched = True
    app.state.demo, app.state.page_queue = demo, queue
    return app


def lesson_rooms(
    models: Models,
    limits: Limits,
    auth: tuple[str, str] | None,
    state,
    zero: bool = False,
    caps: RoomLimits | None = None,
):
    """The rooms router (explorer/api/rooms.py) with its caps (EXPLORER_ROOMS_*: the configuration in force, for
    a public server or not, where none are given) and this server's gate; `zero`: on ZeroGPU, where the rooms' model
    work runs in `spaces.GPU` calls, one per step and never one per student."""
    from explorer.api.guard import room_guard
    from explorer.api.rooms import rooms_router
    from explorer.api.runner import runner
    from explorer.lessons.rooms import Rooms

    rooms = Rooms(caps or current().with_public(limits.public).rooms)
    state.rooms = rooms
    return rooms_router(
        models, limits, rooms, state.gate, room_guard(auth), run=runner(models, limits, zero), per_step=zero
    )


class VisitorToken:
    """ASGI middleware on ZeroGPU: the GPU calls of a request to `/v1` or the rooms that carries the visitor's
    X-IP-Token count on that visitor's quota, as a page action's do. The `spaces` package reads the token from
    Gradio's request of the event it runs in (`gradio.context.LocalContext.request`); these routes are not Gradio's,
    so their request is set there for the time they run (anyio's worker threads, where the calls are made, copy the
    context). Without a token nothing is set: the package falls back to its IP-based quota."""

    PATHS = ("/v1/", "/rooms")
    HEADER = "x-ip-token"

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        from starlette.requests import Request

        if scope["type"] != "http" or not scope["path"].startswith(self.PATHS):
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        if self.HEADER not in request.headers:
            await self.app(scope, receive, send)
            return
        import gradio as gr
        from gradio.context import LocalContext

        reset = LocalContext.request.set(gr.Request(request))
        try:
            await self.app(scope, receive, send)
        finally:
            LocalContext.request.reset(reset)


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
        return await self.app(scope, replaying(body, receive), send)

    async def _refuse(self, scope, receive, send):
        from explorer.api.framing import error

        message = f"This request is larger than this server takes ({self.limit:,} bytes, EXPLORER_MAX_BODY_BYTES)."
        return await error(413, message, None, "request_too_large")(scope, receive, send)


def page_app(models: Models, limits: Limits) -> tuple[Any, PageQueue]:
    """The page, its actions bounded by `limits` (on ZeroGPU: the model's work under spaces.GPU), and its queue's
    pace and lines (explorer/ui/page_queue.py: give its `app_kwargs()` to the Gradio app that serves the page)."""
    from explorer.ui.actions import bound_events
    from explorer.ui.layout import build

    demo = build(models)
    workers = limits.workers
    models.serve_batched(workers)  # the page's generations decode together, with the API's
    done = bound_events(demo, limits, workers, models)
    if done["gpu"]:
        print(f"On a Space: {len(done['gpu'])} actions run under spaces.GPU (ZeroGPU).", file=sys.stderr)
    # the model's work: `workers` actions at once, `queue` more waiting (they see their place), then "busy"; the
    # page's own events (a page opening, a recolour) are not in that line (see PageQueue.refusal)
    demo.queue(default_concurrency_limit=workers, max_size=None)
    lines = {**dict.fromkeys(done["model"], ("model", limits.queue)),
             **dict.fromkeys(done["opening"], ("opening", max(limits.queue, OPENING_LINE)))}  # fmt: skip
    names = {fn.api_name: fn._id for fn in demo.fns.values() if fn._id in lines and fn.api_name}
    return demo, PageQueue(demo._queue, lines, names)


def deployment(
    models: list[str] | None = None,
    device: str | None = None,
    dtype: str | None = None,
    host: str = "127.0.0.1",
    trust_remote_code: bool = False,
    backend: tuple[str, str | None, str | None] | None = None,
    public: bool = False,
    engine_kind: str | None = None,
    config: Config | None = None,
) -> Models:
    """The registry a server serves: the operator's models (or the backend's), public or not (see `serve`); what the
    arguments leave unset comes from `config` (default: the configuration in force)."""
    config = config or current()
    public = is_public(public, config)
    allow_hub = None if config.allow_hub_models is not None or is_loopback(host) else False
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
            config=config,
        )
    if public:
        print(f"Public mode: {registry.limits.summary()}; models: {', '.join(registry.names)}.", file=sys.stderr)
    return registry


def serve(config: Config, trust_remote_code: bool = False) -> int:
    """Load the default model, then serve the app and API until interrupted (SIGTERM stops it within seconds).

    `config.public` (EXPLORER_PUBLIC=1, --public, or on a Hugging Face Space): the operator's models only, the public
    limits (explorer/config.py PUBLIC_LIMITS, each an EXPLORER_* setting), the HTTP API off unless EXPLORER_API_KEY is
    set. While it serves, `config` is the configuration in force (explorer.config.current) in every thread.
    """
    quiet_gradio()
    with use(config):
        return _serve(config, trust_remote_code)


def _serve(config: Config, trust_remote_code: bool) -> int:
    """`serve`'s work, under `config`: load, build the app, listen until stopped."""
    auth, host, port, share = config.auth, config.host, config.port, config.share
    backend = (config.backend, config.backend_key, config.backend_tokenizer) if config.backend else None
    device, dtype, engine_kind = config.engine.device, config.engine.dtype, config.engine.kind
    models = config.served or None
    credentials = parse_auth(auth)
    zero = zerogpu.activate() and not backend  # before any load: the `spaces` package must see the weights move
    registry = deployment(
        models, device, dtype, host, trust_remote_code, backend, config.public, engine_kind, config=config
    )
    print(f"Loading {registry.default} ...", file=sys.stderr)
    engine = registry.preload_for_zero_gpu()[0] if zero else registry.get()
    print(
        f"Loaded {engine.name} on {engine.placement()}; serving {', '.join(registry.names)}.",
        file=sys.stderr,
    )
    if share:
        return _serve_shared(registry, host, port, credentials, config.rooms)
    import uvicorn

    app = build_app(registry, credentials, host=host, rooms=config.rooms)
    if zero:  # the weights packed once, now that every model is loaded and every GPU action wrapped
        zerogpu.start_up()
    settings = uvicorn.Config(  # forwarding headers: the app's own rule (explorer/api/proxy.py), not uvicorn's
        app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=3, proxy_headers=False
    )

    class Server(uvicorn.Server):
        def handle_exit(self, sig, frame):  # running requests stop at their next step, then uvicorn exits
            app.state.gate.shutdown()
            super().handle_exit(sig, frame)

    server = Server(settings)
    print(f"Web app: http://{host}:{port}/   API: http://{host}:{port}/v1", file=sys.stderr)
    server.run()
    return 0


def _serve_shared(
    models: Models, host: str, port: int, auth: tuple[str, str] | None, caps: RoomLimits | None = None
) -> int:
    """`--share`: Gradio's own launcher (for the public link), with the API routes added to its app."""
    from explorer.api.routes import build_api
    from explorer.ui.theme import launch_options

    demo, queue = page_app(models, models.limits)
    app, local, public = demo.launch(
        server_name=host,
        server_port=port,
        share=True,
        prevent_thread_lock=True,
        **launch_options(),
        auth=[auth] if auth else None,
        app_kwargs=queue.app_kwargs(),
    )
    api = build_api(models, models.limits, auth=auth)
    app.mount("/v1", api)
    app.router.routes.insert(0, app.router.routes.pop())  # before Gradio's catch-all routes
    app.state.gate, models.host, models.public_url = api.state.gate, host, public
    rooms = lesson_rooms(models, models.limits, auth, app.state, caps=caps)
    for route in reversed(rooms.routes):  # before Gradio's catch-all routes too
        app.router.routes.insert(0, route)
    print(f"Web app: {local}  public: {public}  API: {local.rstrip('/')}/v1", file=sys.stderr)
    demo.block_thread()
    return 0
