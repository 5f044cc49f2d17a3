"""One server for both faces: the OpenAI-compatible API under /v1 and the Gradio app at /."""

from __future__ import annotations

import os
import sys

from fastapi import FastAPI

from explorer.errors import ExplorerError
from explorer.runtime import Models, is_loopback
from explorer.settings import Limits


def parse_auth(value: str | None) -> tuple[str, str] | None:
    """`user:password` (EXPLORER_AUTH / --auth) -> (user, password); None when unset."""
    value = value if value is not None else os.environ.get("EXPLORER_AUTH")
    if not value:
        return None
    user, sep, password = value.partition(":")
    if not sep or not user or not password:
        raise ExplorerError("EXPLORER_AUTH / --auth must look like user:password (both non-empty).", param="auth")
    return user, password


def remote_models(backend: tuple[str, str | None, str | None], names: list[str] | None) -> Models:
    """A registry whose models are the backend's (all of them, or those named), each a RemoteEngine."""
    from explorer.engine.remote import RemoteEngine

    url, key, tokenizer = backend
    first = RemoteEngine(url, names[0] if names else None, key, tokenizer)
    served = names or [m["id"] for m in first.get("/v1/models").get("data", [])] or [first.model_id]
    registry = Models(
        served,
        allow_hub=False,
        loader=lambda spec: RemoteEngine(url, spec.source, key, tokenizer if spec.name == first.name else None),
    )
    registry.add(first)
    return registry


def build_app(models: Models, auth: tuple[str, str] | None = None, limits: Limits | None = None) -> FastAPI:
    """FastAPI app with /v1 (API) and / (web app) mounted; `auth` locks both (the page by Gradio's login)."""
    import gradio as gr

    from explorer.api.framing import error_of
    from explorer.api.routes import build_api, root_guard
    from explorer.api.tokens import token_router
    from explorer.ui.layout import build
    from explorer.ui.look import launch_options

    limits = limits or Limits.from_env()
    app = FastAPI(title="logprob-explorer", docs_url=None, redoc_url=None)
    app.include_router(token_router(models, limits, root_guard(auth)))  # /tokenize, /detokenize, /health, /version
    app.add_exception_handler(ExplorerError, lambda request, exc: error_of(exc))
    api = build_api(models, limits, auth=auth)
    app.state.gate = api.state.gate
    app.mount("/v1", api)
    demo = build(models)
    demo.queue(default_concurrency_limit=4)
    return gr.mount_gradio_app(
        app, demo, path="/", **launch_options(), footer_links=["api"], auth=[auth] if auth else None
    )


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
    engine_kind: str | None = None,
) -> int:
    """Load the default model, then serve the app and API until interrupted (SIGTERM stops it within seconds)."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    credentials = parse_auth(auth)
    allow_hub = None if os.environ.get("EXPLORER_ALLOW_HUB_MODELS") or is_loopback(host) else False
    if backend:  # every model is served by the backend (see explorer/engine/remote.py)
        registry = remote_models(backend, models)
    else:
        registry = Models(
            models,
            device=device,
            dtype=dtype,
            trust_remote_code=trust_remote_code,
            allow_hub=allow_hub,
            engine=engine_kind,
        )
    print(f"Loading {registry.default} ...", file=sys.stderr)
    engine = registry.get()
    print(
        f"Loaded {engine.name} on {engine.device} ({getattr(engine, 'quant', engine.dtype)}) with "
        f"{engine.capabilities.engine}; serving {', '.join(registry.names)}.",
        file=sys.stderr,
    )
    if share:
        return _serve_shared(registry, host, port, credentials)
    import uvicorn

    app = build_app(registry, credentials)
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
    from explorer.ui.layout import build
    from explorer.ui.look import launch_options

    demo = build(models)
    demo.queue(default_concurrency_limit=4)
    app, local, public = demo.launch(
        server_name=host,
        server_port=port,
        share=True,
        prevent_thread_lock=True,
        **launch_options(),
        auth=[auth] if auth else None,
    )
    app.mount("/v1", build_api(models, auth=auth))
    app.router.routes.insert(0, app.router.routes.pop())  # before Gradio's catch-all routes
    print(f"Web app: {local}  public: {public}  API: {local.rstrip('/')}/v1", file=sys.stderr)
    demo.block_thread()
    return 0
