"""One server for both faces: the OpenAI-compatible API under /v1 and the Gradio app at /."""

from __future__ import annotations

import os
import sys

from fastapi import FastAPI

from explorer.runtime import Models


def build_app(models: Models) -> FastAPI:
    """FastAPI app with /v1 (API) and / (web app) mounted."""
    import gradio as gr

    from explorer.api.routes import build_api
    from explorer.render.heatmap import CSS
    from explorer.ui.layout import build

    app = FastAPI(title="logprob-explorer", docs_url=None, redoc_url=None)
    app.mount("/v1", build_api(models))
    demo = build(models)
    demo.queue(default_concurrency_limit=4)
    return gr.mount_gradio_app(app, demo, path="/", css=CSS, footer_links=["api"])


def serve(models: list[str] | None = None, device: str | None = None, dtype: str | None = None, host: str = "127.0.0.1",
          port: int = 7860, share: bool = False, trust_remote_code: bool = False) -> int:
    """Load the default model, then serve the app and API until interrupted."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    registry = Models(models, device=device, dtype=dtype, trust_remote_code=trust_remote_code)
    print(f"Loading {registry.default} ...", file=sys.stderr)
    engine = registry.get()
    print(f"Loaded {engine.name} on {engine.device} ({engine.dtype}); serving {', '.join(registry.names)}.", file=sys.stderr)
    if share:
        return _serve_shared(registry, host, port)
    import uvicorn

    print(f"Web app: http://{host}:{port}/   API: http://{host}:{port}/v1", file=sys.stderr)
    uvicorn.run(build_app(registry), host=host, port=port, log_level="warning")
    return 0


def _serve_shared(models: Models, host: str, port: int) -> int:
    """`--share`: Gradio's own launcher (for the public link), with the API routes added to its app."""
    from explorer.api.routes import build_api
    from explorer.render.heatmap import CSS
    from explorer.ui.layout import build

    demo = build(models)
    demo.queue(default_concurrency_limit=4)
    app, local, public = demo.launch(server_name=host, server_port=port, share=True, prevent_thread_lock=True, css=CSS)
    app.mount("/v1", build_api(models))
    app.router.routes.insert(0, app.router.routes.pop())  # before Gradio's catch-all routes
    print(f"Web app: {local}  public: {public}  API: {local.rstrip('/')}/v1", file=sys.stderr)
    demo.block_thread()
    return 0
