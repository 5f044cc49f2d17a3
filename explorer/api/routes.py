"""`/v1/models`, `/v1/completions`, `/v1/chat/completions`: the engine behind OpenAI's shapes, over HTTP.

This module is the HTTP part only: routes, error handlers, the work gate, JSON, .npy and SSE responses. What a
request means (validation, the engine calls, the bodies) is `handlers.py`; the stream's chunks `streaming.py`;
every body and every per-token entry comes from `explorer.export`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import AsyncExitStack, ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from fastapi import FastAPI, Request
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import Response, StreamingResponse

from explorer.api import streaming
from explorer.api.framing import DONE, error, error_event, error_of, json_response, read_json
from explorer.api.guard import Guard
from explorer.api.handlers import card, chat_body, completion_body, full_vocab_npy_body, model_list
from explorer.api.runner import Runner, runner
from explorer.api.schemas import ChatRequest, CompletionRequest, parse
from explorer.api.tokenize import token_router
from explorer.api.work import Gate
from explorer.errors import ExplorerError
from explorer.export.common import encode_chunks, has_deferred
from explorer.rules.sampler import VERSION, Limits
from explorer.serving.models import Models

log = logging.getLogger(__name__)


def build_api(
    models: Models, limits: Limits | None = None, auth: tuple[str, str] | None = None, zero: bool = False
) -> FastAPI:
    """The `/v1` sub-application; EXPLORER_API_KEY (or `auth`) guards it; `zero`: on ZeroGPU, where the model's work
    runs in `spaces.GPU` calls (explorer/api/runner.py)."""
    # 1. the app, its gate and middleware
    limits = limits or Limits.from_env()
    models.serve_batched(limits.workers)  # requests generating at once decode together (engine/batching/scheduler.py)
    gate = Gate(limits)
    api = FastAPI(title="logprob-explorer API", version=VERSION, docs_url="/docs", openapi_url="/openapi.json")
    api.state.gate = gate
    api.add_middleware(
        GZipMiddleware, minimum_size=1024, compresslevel=1
    )  # fast: full-vocabulary bodies are 100s of MB
    api.add_middleware(Guard, auth=auth, limits=limits)
    # 2. the routes: vLLM's utility routes, errors in OpenAI's shape, the models, the two model routes
    api.include_router(token_router(models, limits, guard=lambda request: None))  # the Guard covers /v1 already
    add_error_handlers(api)
    add_model_routes(api, models, limits)
    add_completion_routes(api, Served(models, limits, gate, runner(models, limits, zero)))
    return api


def add_error_handlers(api: FastAPI) -> None:
    """Every error in OpenAI's shape: ours (their status), a bug (500, logged), an unknown route or method."""

    @api.exception_handler(ExplorerError)
    async def bad(request: Request, exc: ExplorerError):
        return error_of(exc)

    @api.exception_handler(Exception)
    async def broken(request: Request, exc: Exception):  # a bug of ours: logged, answered in OpenAI's shape
        log.exception("unexpected error on %s", request.url.path)
        return error(
            500,
            "Internal error while serving this request; it has been logged.",
            None,
            "internal_error",
            kind="server_error",
        )

    @api.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):  # unknown route, wrong method: OpenAI's shape
        what = {
            404: "There is no such route under /v1: see GET /v1/models, POST /v1/completions, POST /v1/chat/completions.",
            405: f"{request.method} is not allowed on {request.url.path}.",
        }.get(exc.status_code, str(exc.detail))
        return error(exc.status_code, what, None, "not_found" if exc.status_code == 404 else "method_not_allowed")


def add_model_routes(api: FastAPI, models: Models, limits: Limits) -> None:
    """`GET /v1/models` and `GET /v1/models/{name}`: cheap, they never enter the gate."""

    @api.get("/models/{name:path}")
    async def one_model(name: str):
        if name not in models.listed():
            raise models.unavailable(name)
        return card(models, limits, name)

    @api.get("/models")
    async def list_models():
        return model_list(models, limits)


def add_completion_routes(api: FastAPI, served: Served) -> None:
    """`POST /v1/completions` and `POST /v1/chat/completions`, through the gate."""

    @api.post("/completions")
    async def completions(request: Request):
        return await serve(served, request, CompletionRequest, completion_body, streaming.completion_events)

    @api.post("/chat/completions")
    async def chat(request: Request):
        return await serve(served, request, ChatRequest, chat_body, streaming.chat_events)


@dataclass(frozen=True)
class Served:
    """What the model routes serve with: the models, the server's limits, the work gate, where the work runs."""

    models: Models
    limits: Limits
    gate: Gate
    run: Runner


async def serve(served: Served, request: Request, schema, body_fn, events_fn):
    """One model request: parsed, its model resolved, then a JSON (or .npy) body in a gate slot, or a stream."""
    models, limits, gate = served.models, served.limits, served.gate
    req = parse(schema, await read_json(request, limits.max_body_bytes))
    models.resolve(req.model)  # an unknown model is a 404 before any queueing
    if req.stream:
        return await _stream(served, request, req, events_fn)
    if "application/x-npy" in request.headers.get("accept", ""):
        body_fn = full_vocab_npy_body
    stack = AsyncExitStack()
    token = await stack.enter_async_context(gate.slot())
    try:

        def work():
            with engine_for(models, req, limits) as engine:
                return body_fn(engine, req, limits, served.run)

        body = await gate.run(work, request, token)
        if isinstance(body, bytes):
            return Response(body, media_type="application/x-npy")
        if not has_deferred(body):
            return json_response(body)
    except BaseException:
        await stack.aclose()
        raise

    async def chunks():  # a full-vocabulary body: written position by position on worker threads
        try:
            async for chunk in gate.iterate(encode_chunks(body)):
                yield chunk
        finally:
            await stack.aclose()

    return StreamingResponse(chunks(), media_type="application/json")


@contextmanager
def engine_for(models, req, limits: Limits) -> Iterator[Any]:
    """The engine that answers `req`, pinned while the block runs: its model's; where it asks for hidden states
    (`return_hidden_states`) of a model llama.cpp serves whose weights torch reads (the default GGUF), the torch
    twin on the same weights (Models.use_for: loaded on first use, as the page's lens), which computes the whole
    answer, its logprobs included, on a server whose operator turned hidden states on (where they are off, no twin
    loads: the request's check refuses it). A twin that cannot load leaves the request to the model's engine, whose
    refusal says why."""
    with ExitStack() as stack:
        engine = None
        if limits.hidden_states and req.hidden_ask is not None and models.twin(req.model) is not None:
            try:
                engine = stack.enter_context(models.use_for(req.model, "hidden_states"))
            except ExplorerError:
                engine = None
        if engine is None:
            engine = stack.enter_context(models.use(req.model))
        yield engine


async def _stream(served: Served, request: Request, req, events_fn):
    """`stream: true`: validated before the first byte, then the events, `[DONE]`, or an error event."""
    models, limits, gate = served.models, served.limits, served.gate
    stack = AsyncExitStack()
    token = await stack.enter_async_context(gate.slot())
    try:
        engine = await _threaded(gate, lambda: stack.enter_context(engine_for(models, req, limits)))
        events = await _threaded(gate, lambda: events_fn(engine, req, limits, served.run))  # validated now
    except BaseException:
        await stack.aclose()
        raise

    async def body():
        try:
            async for chunk in gate.iterate(events, token):
                yield chunk
            yield DONE
        except ExplorerError as err:
            yield error_event(err)
        except Exception:
            log.exception("unexpected error in a stream")
            yield error_event(
                ExplorerError("Internal error while streaming; it has been logged.", code="internal_error")
            )
        finally:
            token.cancel("the stream ended")
            await stack.aclose()

    return StreamingResponse(body(), media_type="text/event-stream")


async def _threaded(gate: Gate, fn):
    return await anyio.to_thread.run_sync(fn, limiter=gate.limiter)
