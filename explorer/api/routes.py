"""`/v1/models`, `/v1/completions`, `/v1/chat/completions`: the engine behind OpenAI's shapes.

This module only validates requests, calls the engine and frames the answers;
every body and every per-token entry comes from `explorer.export`.
"""

from __future__ import annotations

import base64
import hmac
import logging
import os
import time
from contextlib import AsyncExitStack
from dataclasses import replace

import anyio.to_thread

from fastapi import FastAPI, Request
from pydantic import ValidationError
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import Response, StreamingResponse

from explorer.api import streaming
from explorer.api.framing import DONE, error, error_event, error_of, json_response, read_json
from explorer.api.schemas import ChatRequest, CompletionRequest
from explorer.api.work import Gate
from explorer.engine import generate, score_ids
from explorer.errors import ExplorerError
from explorer.export import openai_chat, openai_completion
from explorer.export.common import encode_chunks, has_deferred
from explorer.export.native import full_vocab_npy
from explorer.runtime import Models
from explorer.settings import MAX_K, Limits


log = logging.getLogger(__name__)


def check_size(req, prompts: list[list[int]], limits: Limits, engine) -> None:
    """The request's cost against the server's limits, before any work."""
    choices = len(prompts) * req.n
    if choices > limits.max_choices:
        raise ExplorerError(f"This request asks for {choices} choices (prompts x n); this server allows {limits.max_choices} "
                            "(EXPLORER_MAX_CHOICES): send fewer prompts or a smaller n.", param="n", code="too_many_choices")
    for ids in prompts:
        engine.check_ids(ids)
    if req.prompt_logprobs == -1:
        total = sum(len(p) for p in prompts) * req.n
        cap = limits.full_vocab_max_prompt_tokens
        if total > cap:
            raise ExplorerError(f"`prompt_logprobs: -1` (full vocabulary) is limited to {cap} prompt tokens x n per request; this one has {total}. "
                                f"Shorten the prompt, lower n, or ask for a top-k (0..{MAX_K}).", param="prompt_logprobs", code="full_vocab_prompt_too_long")


def check_max_tokens(value: int, param: str, limits: Limits, engine) -> None:
    cap = limits.max_tokens or engine.context
    if value > cap:
        raise ExplorerError(f"`{param}` (={value}) is more than this server generates per choice ({cap}"
                            f"{', EXPLORER_MAX_TOKENS' if limits.max_tokens else ': the model context'}): ask for fewer.",
                            param=param, code="integer_above_max_value")


def prompts_of(engine, prompt) -> list[list[int]]:
    """Token ids of each prompt: text is tokenized, ids are taken exactly as sent."""
    if isinstance(prompt, str):
        return [engine.encode(prompt)]
    if prompt and all(isinstance(p, int) for p in prompt):
        return [list(prompt)]
    if prompt and all(isinstance(p, str) for p in prompt):
        return [engine.encode(p) for p in prompt]
    if prompt and all(isinstance(p, list) for p in prompt):
        return [list(p) for p in prompt]
    raise ExplorerError("`prompt` must be a string, a list of strings, or token ids.", param="prompt", code="invalid_value")


def completion_setup(engine, req: CompletionRequest, limits: Limits):
    """Validated prompts and settings of a completions request (everything checked before any work)."""
    req.check()
    s = req.to_settings()
    prompts = prompts_of(engine, req.prompt)
    check_size(req, prompts, limits, engine)
    check_max_tokens(s.max_tokens, "max_tokens", limits, engine)
    return prompts, s


def completion_body(engine, req: CompletionRequest, limits: Limits, check) -> dict:
    prompts, s = completion_setup(engine, req, limits)
    results = []
    for ids in prompts:
        if s.max_tokens == 0:  # echo scoring: the same scored prompt for every choice
            results += [score_ids(engine, ids, k=s.prompt_logprobs if s.prompt_logprobs is not None else 0, check=check)] * s.n
        else:
            results += generate(engine, ids, s, check=check)
    return openai_completion.export(results, echo=req.echo, logprobs=req.logprobs, prompt_logprobs=req.prompt_logprobs, n=s.n)


def full_vocab_npy_body(engine, req, limits: Limits, check) -> bytes:
    """`Accept: application/x-npy` with `prompt_logprobs: -1`: the prompt's full distributions as float16 .npy."""
    if req.prompt_logprobs != -1:
        raise ExplorerError("`Accept: application/x-npy` returns full-vocabulary rows: set `prompt_logprobs: -1`.",
                            param="prompt_logprobs", code="invalid_value")
    if isinstance(req, ChatRequest):
        ids, _ = chat_setup(engine, req, limits)
    else:
        prompts, _ = completion_setup(engine, req, limits)
        if len(prompts) != 1:
            raise ExplorerError("`Accept: application/x-npy` takes one prompt.", param="prompt", code="invalid_value")
        ids = prompts[0]
    return full_vocab_npy(score_ids(engine, ids, k=-1, check=check))


def chat_setup(engine, req: ChatRequest, limits: Limits):
    """Validated prompt ids and settings of a chat request."""
    req.check()
    s = req.to_settings()
    ids = engine.encode_chat(req.chat_messages())
    check_size(req, [ids], limits, engine)
    if req.limit_given():
        check_max_tokens(s.max_tokens, req.limit_param(), limits, engine)
    else:  # the default: at most the room the context leaves
        s = replace(s, max_tokens=min(s.max_tokens, limits.max_new_tokens(engine.context, len(ids))))
    return ids, s


def chat_body(engine, req: ChatRequest, limits: Limits, check) -> dict:
    ids, s = chat_setup(engine, req, limits)
    results = generate(engine, ids, s, check=check)
    return openai_chat.export(results, logprobs=bool(req.logprobs), top_logprobs=req.top() or 0, prompt_logprobs=req.prompt_logprobs)


def _parse(model, data: dict):
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0] if exc.errors() else {}
        loc = [str(x) for x in first.get("loc", []) if not str(x).startswith(("function-", "list[", "str", "int"))]
        param = loc[0] if loc else None
        where = ".".join(loc) or "body"
        raise ExplorerError(f"Invalid `{where}`: {first.get('msg', 'invalid value')}.", param=param,
                            code="missing_required_parameter" if first.get("type") == "missing" else "invalid_type") from None


def allowed(request: Request, key: str | None, auth: tuple[str, str] | None) -> bool:
    """Whether the request may use /v1: the API key as a bearer token, or with EXPLORER_AUTH (and no key) its
    credentials as HTTP basic auth or as the bearer token `user:password`."""
    scheme, _, got = request.headers.get("authorization", "").partition(" ")
    scheme, got = scheme.lower(), got.strip()
    if key:
        return scheme == "bearer" and hmac.compare_digest(got.encode(), key.encode())
    if auth:
        secret = f"{auth[0]}:{auth[1]}"
        if scheme == "basic":
            try:
                got = base64.b64decode(got, validate=True).decode("utf-8")
            except (ValueError, UnicodeDecodeError):
                return False
        return scheme in ("basic", "bearer") and hmac.compare_digest(got.encode(), secret.encode())
    return True


class Guard:
    """ASGI middleware: refuses /v1 requests without the API key (or EXPLORER_AUTH's credentials)."""

    def __init__(self, app, auth: tuple[str, str] | None = None):
        self.app, self.auth = app, auth

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            key = os.environ.get("EXPLORER_API_KEY")
            if not allowed(Request(scope), key, self.auth):
                how = "Bearer <EXPLORER_API_KEY>" if key else "Basic (the EXPLORER_AUTH user and password)"
                response = error(401, f"Missing or wrong credentials: send `Authorization: {how}`.", None, "invalid_api_key",
                                 None if key else {"WWW-Authenticate": 'Basic realm="logprob-explorer"'})
                return await response(scope, receive, send)
        await self.app(scope, receive, send)


def build_api(models: Models, limits: Limits | None = None, auth: tuple[str, str] | None = None) -> FastAPI:
    """The `/v1` sub-application; EXPLORER_API_KEY (or `auth`) guards it."""
    limits = limits or Limits.from_env()
    gate = Gate(limits)
    api = FastAPI(title="logprob-explorer API", docs_url="/docs", openapi_url="/openapi.json")
    api.state.gate = gate
    api.add_middleware(GZipMiddleware, minimum_size=1024)
    api.add_middleware(Guard, auth=auth)

    @api.exception_handler(ExplorerError)
    async def bad(request: Request, exc: ExplorerError):
        return error_of(exc)

    @api.exception_handler(Exception)
    async def broken(request: Request, exc: Exception):  # a bug of ours: logged, answered in OpenAI's shape
        log.exception("unexpected error on %s", request.url.path)
        return error(500, "Internal error while serving this request; it has been logged.", None, "internal_error")

    @api.get("/models")
    async def list_models():
        data = []
        for name in models.listed():
            engine = models.loaded(name)
            data.append({"id": name, "object": "model", "created": int(time.time()), "owned_by": "logprob-explorer",
                         "max_model_len": engine.context if engine else None,
                         "capabilities": {"full_vocab_max_prompt_tokens": limits.full_vocab_max_prompt_tokens,
                                          "max_logprobs": MAX_K, "prompt_logprobs": True}})
        return {"object": "list", "data": data, "limits": limits.report()}

    async def serve(request: Request, schema, body_fn, events_fn):
        req = _parse(schema, await read_json(request, limits.max_body_bytes))
        models.resolve(req.model)  # an unknown model is a 404 before any queueing
        if req.stream:
            return await _stream(request, req, events_fn)
        if "application/x-npy" in request.headers.get("accept", ""):
            body_fn = full_vocab_npy_body
        stack = AsyncExitStack()
        token = await stack.enter_async_context(gate.slot())
        try:
            def work(check):
                with models.use(req.model) as engine:
                    return body_fn(engine, req, limits, check)

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

    async def _stream(request: Request, req, events_fn):
        stack = AsyncExitStack()
        token = await stack.enter_async_context(gate.slot())
        try:
            engine = await _threaded(lambda: stack.enter_context(models.use(req.model)))
            events = await _threaded(lambda: events_fn(engine, req, limits, token.check))  # validates before the first byte
        except BaseException:
            await stack.aclose()
            raise

        async def body():
            try:
                async for chunk in gate.iterate(events):
                    yield chunk
                yield DONE
            except ExplorerError as err:
                yield error_event(err)
            finally:
                token.cancel("the stream ended")
                await stack.aclose()

        return StreamingResponse(body(), media_type="text/event-stream")

    async def _threaded(fn):
        return await anyio.to_thread.run_sync(fn, limiter=gate.limiter)

    @api.post("/completions")
    async def completions(request: Request):
        return await serve(request, CompletionRequest, completion_body, streaming.completion_events)

    @api.post("/chat/completions")
    async def chat(request: Request):
        return await serve(request, ChatRequest, chat_body, streaming.chat_events)

    return api
