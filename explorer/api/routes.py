"""`/v1/models`, `/v1/completions`, `/v1/chat/completions`: the engine behind OpenAI's shapes.

This module only validates requests, calls the engine and frames the answers;
every body and every per-token entry comes from `explorer.export`.
"""

from __future__ import annotations

import logging
import time
import uuid
from contextlib import AsyncExitStack

import anyio.to_thread
from fastapi import FastAPI, Request
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import Response, StreamingResponse

from explorer import __version__
from explorer.api import streaming
from explorer.api.framing import DONE, error, error_event, error_of, json_response, read_json
from explorer.api.guard import Guard
from explorer.api.schemas import ChatRequest, CompletionRequest
from explorer.api.tokens import token_router
from explorer.api.work import Gate
from explorer.engine import generate, score_ids
from explorer.engine.listed import listed_width
from explorer.errors import ExplorerError
from explorer.export import openai_chat, openai_completion
from explorer.export.common import encode_chunks, has_deferred
from explorer.export.native import full_vocab_npy
from explorer.runtime import Models
from explorer.settings import Limits, max_logprobs

log = logging.getLogger(__name__)


def permission(created: int) -> dict:
    """The one `permission` object vLLM lists on each model card (fixed values: it grants what the API does)."""
    return {
        "id": f"modelperm-{uuid.uuid4().hex[:16]}",
        "object": "model_permission",
        "created": created,
        "allow_create_engine": False,
        "allow_sampling": True,
        "allow_logprobs": True,
        "allow_search_indices": False,
        "allow_view": True,
        "allow_fine_tuning": False,
        "organization": "*",
        "group": None,
        "is_blocking": False,
    }


def check_size(req, prompts: list[list[int]], limits: Limits, engine) -> None:
    """The request's cost against the server's limits, before any work."""
    choices = len(prompts) * req.n
    if choices > limits.max_choices:
        raise ExplorerError(
            f"This request asks for {choices} choices (prompts x n); this server allows {limits.max_choices} "
            "(EXPLORER_MAX_CHOICES): send fewer prompts or a smaller n.",
            param="n",
            code="too_many_choices",
        )
    for ids in prompts:
        limits.check_input(len(ids))
        engine.check_ids(ids)
    if req.prompt_logprobs == -1:
        total = sum(len(p) for p in prompts) * req.n
        cap = limits.full_vocab_max_prompt_tokens
        cap = min(cap, engine.capabilities.full_vocab_max_prompt_tokens or cap)  # 0: the engine says why it has none
        if total > cap:
            raise ExplorerError(
                f"`prompt_logprobs: -1` (full vocabulary) is limited to {cap} prompt tokens x n per request; this one has {total}. "
                "Shorten the prompt, lower n, or ask for a top-k.",
                param="prompt_logprobs",
                code="full_vocab_prompt_too_long",
            )


def within(cap: int, other: int) -> int:
    """The tighter of two top-k caps (-1: no cap)."""
    return other if cap == -1 else cap if other == -1 else min(cap, other)


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
    raise ExplorerError(
        "`prompt` must be a string, a list of strings, or token ids.", param="prompt", code="invalid_value"
    )


def completion_setup(engine, req: CompletionRequest, limits: Limits):
    """Validated prompts and settings of a completions request (everything checked before any work)."""
    req.check()
    s = req.to_settings()
    prompts = prompts_of(engine, req.prompt)
    check_size(req, prompts, limits, engine)
    limits.check_new_tokens(s.max_tokens, "max_tokens", engine.context)
    return prompts, s


def completion_options(req: CompletionRequest, s) -> openai_completion.Options:
    listed = req.prompt_logprob_token_ids
    width = listed_width(listed) if listed else None
    echo_k = req.logprobs if req.echo else None
    return openai_completion.Options(
        echo=req.echo,
        logprobs=s.output_k if req.logprobs is not None else None,
        # echo with logprobs fills prompt_logprobs too (vLLM), with the prompt_logprobs k where both are asked
        prompt_logprobs=width if listed else req.prompt_logprobs if req.prompt_logprobs is not None else echo_k,
        echo_k=req.prompt_logprobs if echo_k is not None else None,
        return_token_ids=bool(req.return_token_ids),
        tokens_as_ids=bool(req.return_tokens_as_token_ids),
        n=s.n,
    )


def completion_body(engine, req: CompletionRequest, limits: Limits) -> dict:
    prompts, s = completion_setup(engine, req, limits)
    results = []
    for ids in prompts:
        if s.max_tokens == 0:  # echo scoring: the same scored prompt for every choice
            k = s.prompt_logprobs if s.prompt_logprobs is not None else 0
            results += [score_ids(engine, ids, k=k, listed=req.prompt_logprob_token_ids)] * s.n
        else:
            results += generate(engine, ids, s)
    return openai_completion.export(results, options=completion_options(req, s))


def full_vocab_npy_body(engine, req, limits: Limits) -> bytes:
    """`Accept: application/x-npy` with `prompt_logprobs: -1`: the prompt's full distributions as float16 .npy."""
    if req.prompt_logprobs != -1:
        raise ExplorerError(
            "`Accept: application/x-npy` returns full-vocabulary rows: set `prompt_logprobs: -1`.",
            param="prompt_logprobs",
            code="invalid_value",
        )
    if isinstance(req, ChatRequest):
        ids, _, _ = chat_setup(engine, req, limits)
    else:
        prompts, _ = completion_setup(engine, req, limits)
        if len(prompts) != 1:
            raise ExplorerError("`Accept: application/x-npy` takes one prompt.", param="prompt", code="invalid_value")
        ids = prompts[0]
    return full_vocab_npy(score_ids(engine, ids, k=-1))


def chat_setup(engine, req: ChatRequest, limits: Limits):
    """Validated prompt ids, settings and messages of a chat request."""
    req.check()
    messages = req.chat_messages()
    ids = engine.encode_chat(
        messages,
        add_generation_prompt=req.add_generation_prompt,
        continue_final_message=req.continue_final_message,
        template_kwargs=req.chat_template_kwargs,
    )
    check_size(req, [ids], limits, engine)
    s = req.to_settings(limits.max_new_tokens(engine.context, len(ids)))
    if req.limit_given():
        limits.check_new_tokens(s.max_tokens, req.limit_param(), engine.context)
    return ids, s, messages


def chat_options(req: ChatRequest, s, messages: list[dict]) -> openai_chat.Options:
    return openai_chat.Options(
        logprobs=bool(req.logprobs),
        top_logprobs=s.output_k,
        prompt_logprobs=req.prompt_logprobs,
        return_token_ids=bool(req.return_token_ids),
        tokens_as_ids=bool(req.return_tokens_as_token_ids),
        echo_text=req.echo_text(messages),
    )


def chat_body(engine, req: ChatRequest, limits: Limits) -> dict:
    ids, s, messages = chat_setup(engine, req, limits)
    results = generate(engine, ids, s)
    return openai_chat.export(results, options=chat_options(req, s, messages))


def _union_tag(part: str) -> bool:
    """Whether a pydantic error location part names a type of a union (`str`, `list[int]`, ...) rather than a field."""
    return part in ("str", "int", "float", "bool", "dict", "list") or part.startswith(
        ("list[", "dict[", "function-", "union[")
    )


def _parse(model, data: dict):
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first: dict = dict(exc.errors()[0]) if exc.errors() else {}
        loc = [str(x) for x in first.get("loc", []) if not _union_tag(str(x))]
        param = loc[0] if loc else None
        where = ".".join(loc) or "body"
        raise ExplorerError(
            f"Invalid `{where}`: {first.get('msg', 'invalid value')}.",
            param=param,
            code="missing_required_parameter" if first.get("type") == "missing" else "invalid_type",
        ) from None


def build_api(models: Models, limits: Limits | None = None, auth: tuple[str, str] | None = None) -> FastAPI:
    """The `/v1` sub-application; EXPLORER_API_KEY (or `auth`) guards it."""
    limits = limits or Limits.from_env()
    gate = Gate(limits)
    api = FastAPI(title="logprob-explorer API", version=__version__, docs_url="/docs", openapi_url="/openapi.json")
    api.state.gate = gate
    api.add_middleware(
        GZipMiddleware, minimum_size=1024, compresslevel=1
    )  # fast: full-vocabulary bodies are 100s of MB
    api.add_middleware(Guard, auth=auth, limits=limits)

    api.include_router(token_router(models, limits, guard=lambda request: None))  # the Guard covers /v1 already

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

    def card(name: str) -> dict:
        engine = models.loaded(name)
        created = int(time.time())
        return {
            "id": name,
            "object": "model",
            "created": created,
            "owned_by": "logprob-explorer",
            "root": name,  # vLLM: the folder it loaded; here the served name (no server path is shown)
            "parent": None,
            "max_model_len": engine.context if engine else None,
            "permission": [permission(created)],
            "engine": models.engine_of(name),
            "vocab_size": engine.vocab_size if engine else None,
            "capabilities": {  # ours, within the engine's (a remote backend's caps)
                "full_vocab_max_prompt_tokens": min(
                    limits.full_vocab_max_prompt_tokens,
                    engine.capabilities.full_vocab_max_prompt_tokens if engine else limits.full_vocab_max_prompt_tokens,
                ),
                "max_logprobs": within(max_logprobs(), engine.capabilities.max_logprobs if engine else -1),
                "prompt_logprobs": True,
                **(
                    {
                        "engine": engine.capabilities.kind,
                        "ranks": engine.capabilities.ranks,
                        "hidden_states": engine.capabilities.hidden_states,
                    }
                    if engine
                    else {}
                ),
            },
        }

    @api.get("/models/{name:path}")
    async def one_model(name: str):
        if name not in models.listed():
            raise models.unavailable(name)
        return card(name)

    @api.get("/models")
    async def list_models():
        return {"object": "list", "data": [card(name) for name in models.listed()], "limits": limits.report()}

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

            def work():
                with models.use(req.model) as engine:
                    return body_fn(engine, req, limits)

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
            events = await _threaded(lambda: events_fn(engine, req, limits))  # validates before the first byte
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

    async def _threaded(fn):
        return await anyio.to_thread.run_sync(fn, limiter=gate.limiter)

    @api.post("/completions")
    async def completions(request: Request):
        return await serve(request, CompletionRequest, completion_body, streaming.completion_events)

    @api.post("/chat/completions")
    async def chat(request: Request):
        return await serve(request, ChatRequest, chat_body, streaming.chat_events)

    return api
