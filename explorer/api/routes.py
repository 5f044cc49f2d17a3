"""`/v1/models`, `/v1/completions`, `/v1/chat/completions`: the engine behind OpenAI's shapes.

This module only validates requests, calls the engine and frames the answers;
every body and every per-token entry comes from `explorer.export`.
"""

from __future__ import annotations

import hmac
import os
import time
from contextlib import AsyncExitStack

import anyio.to_thread

from fastapi import FastAPI, Request
from pydantic import ValidationError
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import StreamingResponse

from explorer.api import streaming
from explorer.api.framing import DONE, error, error_event, error_of, json_response, read_json
from explorer.api.schemas import ChatRequest, CompletionRequest
from explorer.api.work import Gate
from explorer.engine import generate, score_ids
from explorer.errors import ExplorerError
from explorer.export import openai_chat, openai_completion
from explorer.runtime import Models
from explorer.settings import MAX_K, Limits


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
    check_max_tokens(s.max_tokens, "max_tokens", limits, engine)
    check_size(req, prompts, limits, engine)
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


def chat_setup(engine, req: ChatRequest, limits: Limits):
    """Validated prompt ids and settings of a chat request."""
    req.check()
    s = req.to_settings()
    ids = engine.encode_chat(req.chat_messages())
    check_max_tokens(s.max_tokens, req.limit_param(), limits, engine)
    check_size(req, [ids], limits, engine)
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


def build_api(models: Models, limits: Limits | None = None) -> FastAPI:
    """The `/v1` sub-application."""
    limits = limits or Limits.from_env()
    gate = Gate(limits)
    api = FastAPI(title="logprob-explorer API", docs_url="/docs", openapi_url="/openapi.json")
    api.state.gate = gate
    api.add_middleware(GZipMiddleware, minimum_size=1024)

    @api.middleware("http")
    async def auth(request: Request, call_next):
        key = os.environ.get("EXPLORER_API_KEY")
        if key:
            scheme, _, got = request.headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(got.strip().encode(), key.encode()):
                return error(401, "Missing or wrong API key: send `Authorization: Bearer <EXPLORER_API_KEY>`.", None, "invalid_api_key")
        return await call_next(request)

    @api.exception_handler(ExplorerError)
    async def bad(request: Request, exc: ExplorerError):
        return error_of(exc)

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
        async with gate.slot() as token:
            def work(check):
                with models.use(req.model) as engine:
                    return body_fn(engine, req, limits, check)

            return json_response(await gate.run(work, request, token))

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
