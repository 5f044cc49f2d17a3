"""`/v1/models`, `/v1/completions`, `/v1/chat/completions`: the engine behind OpenAI's shapes.

Every body comes from the exporters; this module only validates requests,
calls the engine and frames the answers (errors, usage, streaming).
"""

from __future__ import annotations

import hmac
import os
import time
from dataclasses import replace

import numpy as np
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.middleware.gzip import GZipMiddleware

from explorer.api.common import prompts_of, settings_of
from explorer.api.schemas import ChatRequest, CompletionRequest
from explorer.api.streaming import chat_events, completion_events, sse
from explorer.engine import generate, score_ids
from explorer.errors import ExplorerError
from explorer.export import openai_chat, openai_completion, vllm
from explorer.export.common import envelope
from explorer.result import TokenScores
from explorer.runtime import ModelHolder
from explorer.settings import MAX_K, SamplerSettings, check_k


def full_vocab_cap() -> int:
    return int(os.environ.get("EXPLORER_FULL_VOCAB_MAX_PROMPT_TOKENS", "256"))


def error(status: int, message: str, param: str | None = None, code: str | None = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}, status_code=status)


def _check_model(engine, name: str | None) -> None:
    if name and name not in (engine.name, os.path.basename(engine.name.rstrip("/"))):
        raise ExplorerError(f"The model {name!r} does not exist here; this server serves {engine.name!r} (see GET /v1/models).", param="model", code="model_not_found")


def _check_full_vocab(req, prompts: list[list[int]]) -> None:
    if req.prompt_logprobs == -1:
        total = sum(len(p) for p in prompts) * req.n
        cap = full_vocab_cap()
        if total > cap:
            raise ExplorerError(f"`prompt_logprobs: -1` (full vocabulary) is limited to {cap} prompt tokens x n per request; this one has {total}. "
                                "Shorten the prompt, lower n, or ask for a top-k (0..20).", param="prompt_logprobs", code="full_vocab_prompt_too_long")


def _view(r: TokenScores, k: int | None) -> TokenScores:
    """The same result reporting k prompt alternatives; a top-k is read off full-vocabulary rows when needed."""
    width = r.top_ids.shape[1]
    if not (k and k > 0 and width < k and r.full_logprobs is not None):
        return replace(r, prompt_k=k)
    n = r.n_prompt
    rows = np.nan_to_num(r.full_logprobs[:n], nan=-np.inf)  # (n, V); unscored rows stay padding below
    order = np.argsort(-rows, axis=1, kind="stable")[:, :k]  # (n, k)
    top_ids = np.full((r.n, k), -1, np.int64)
    top_lp = np.full((r.n, k), -np.inf, np.float32)
    top_ids[:, :width], top_lp[:, :width] = r.top_ids, r.top_logprobs
    scored = r.scored[:n]
    top_ids[:n][scored] = order[scored]
    top_lp[:n][scored] = np.take_along_axis(rows, order, axis=1)[scored]
    return replace(r, prompt_k=k, top_ids=top_ids, top_logprobs=top_lp)


def _complete(engine, req: CompletionRequest, ids: list[int]) -> list[TokenScores]:
    """Results for one prompt: n generations, or the scored prompt when max_tokens is 0."""
    k, pk = req.logprobs, req.prompt_logprobs
    echo_k = k if req.echo else None
    wanted = [x for x in (pk, echo_k) if x is not None]
    score_k = -1 if -1 in wanted else (max(wanted) if wanted else None)
    s = settings_of(req, req.max_tokens, k, score_k)  # validates every setting, n included
    if req.max_tokens == 0:
        if not req.echo:
            raise ExplorerError("`max_tokens: 0` generates nothing: set `echo: true` to score the prompt.", param="max_tokens", code="invalid_value")
        engine.check_ids(ids)
        return [score_ids(engine, ids, k=score_k if score_k is not None else 0)] * s.n
    return generate(engine, ids, s)


def completion_body(engine, req: CompletionRequest) -> dict:
    if req.logprobs == -1:
        raise ExplorerError("`logprobs: -1` is not allowed on completions: completion logprobs stay top-k (0..20); "
                            "use `prompt_logprobs: -1` for the full vocabulary of the prompt.", param="logprobs", code="invalid_value")
    check_k(req.logprobs, "logprobs", allow_full=False)
    check_k(req.prompt_logprobs, "prompt_logprobs", allow_full=True)
    if req.max_tokens is None:
        req.max_tokens = 16
    prompts = prompts_of(engine, req.prompt)
    _check_full_vocab(req, prompts)
    body = envelope("text_completion", engine.name, None, None, "cmpl")
    choices, usage = [], {"prompt_tokens": 0, "completion_tokens": 0}
    for ids in prompts:
        results = _complete(engine, req, ids)
        usage["prompt_tokens"] += len(ids)
        for r in results:
            usage["completion_tokens"] += r.n - r.n_prompt
            echo_view = _view(r, req.logprobs) if req.echo else r
            c = openai_completion.choice(echo_view, len(choices), req.echo, with_logprobs=req.logprobs is not None)
            if req.prompt_logprobs is not None:
                c["prompt_logprobs"] = vllm.prompt_logprobs(_view(r, req.prompt_logprobs))
                c["prompt_token_ids"] = ids
            choices.append(c)
    body["choices"] = choices
    body["usage"] = {**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]}
    return body


def _messages(req: ChatRequest) -> list[dict]:
    out = []
    for m in req.messages:
        content = m.get("content")
        if isinstance(content, list):  # [{"type": "text", "text": ...}, ...]
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
        role = "system" if m.get("role") == "developer" else m.get("role")  # OpenAI's newer name for system
        out.append({"role": role, "content": content if content is not None else ""})
    return out


def chat_setup(engine, req: ChatRequest) -> tuple[list[int], SamplerSettings, int | None]:
    """Validated prompt ids, settings and top_logprobs of a chat request."""
    if req.top_logprobs is not None:
        check_k(req.top_logprobs, "top_logprobs", allow_full=False)
        if req.top_logprobs > 0 and not req.logprobs:
            raise ExplorerError("`top_logprobs` needs `logprobs: true`.", param="top_logprobs", code="invalid_value")
    check_k(req.prompt_logprobs, "prompt_logprobs", allow_full=True)
    ids = engine.encode_chat(_messages(req))
    _check_full_vocab(req, [ids])
    top = (req.top_logprobs or 0) if req.logprobs else None
    return ids, settings_of(req, req.limit(), top or 0, req.prompt_logprobs), top


def chat_body(engine, req: ChatRequest) -> dict:
    ids, s, top = chat_setup(engine, req)
    results = generate(engine, ids, s)
    body = openai_chat.export(results, logprobs=bool(req.logprobs), top_logprobs=top or 0)
    if req.prompt_logprobs is not None:
        for c, r in zip(body["choices"], results):
            c["prompt_logprobs"] = vllm.prompt_logprobs(r)
            c["prompt_token_ids"] = ids
    return body


def _error_from(err: ExplorerError) -> JSONResponse:
    return error(404 if err.code == "model_not_found" and err.param == "model" else 400, str(err), err.param, err.code)


def build_api(holder: ModelHolder) -> FastAPI:
    """The `/v1` sub-application."""
    api = FastAPI(title="logprob-explorer API", docs_url="/docs", openapi_url="/openapi.json")
    api.add_middleware(GZipMiddleware, minimum_size=1024)

    @api.middleware("http")
    async def auth(request: Request, call_next):
        key = os.environ.get("EXPLORER_API_KEY")
        if key:
            got = request.headers.get("authorization", "")
            if not hmac.compare_digest(got.encode(), f"Bearer {key}".encode()):
                return error(401, "Missing or wrong API key: send `Authorization: Bearer <EXPLORER_API_KEY>`.", None, "invalid_api_key")
        return await call_next(request)

    @api.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError):
        first = exc.errors()[0] if exc.errors() else {}
        loc = [str(x) for x in first.get("loc", []) if x != "body"]
        param = loc[0] if loc else None
        msg = first.get("msg", "invalid request")
        return error(400, f"Invalid `{'.'.join(loc) or 'body'}`: {msg}.", param, "invalid_value")

    @api.exception_handler(ExplorerError)
    async def bad(request: Request, exc: ExplorerError):
        return _error_from(exc)

    @api.get("/models")
    def models():
        engine = holder.get()
        return {"object": "list", "data": [{
            "id": engine.name, "object": "model", "created": int(time.time()), "owned_by": "logprob-explorer",
            "max_model_len": engine.context,
            "capabilities": {"full_vocab_max_prompt_tokens": full_vocab_cap(), "max_logprobs": MAX_K, "prompt_logprobs": True},
        }]}

    def engine_for(req):
        """The engine, once the request names it (or no model) and asks nothing streaming cannot give."""
        engine = holder.get()
        _check_model(engine, req.model)
        if req.stream and req.prompt_logprobs is not None:
            raise ExplorerError("`prompt_logprobs` cannot be combined with `stream: true`.", param="prompt_logprobs", code="invalid_value")
        return engine

    @api.post("/completions")
    def completions(req: CompletionRequest):
        engine = engine_for(req)
        if req.stream:
            events = completion_events(engine, req)  # validates before the first byte
            return StreamingResponse(sse(events), media_type="text/event-stream")
        return completion_body(engine, req)

    @api.post("/chat/completions")
    def chat(req: ChatRequest):
        engine = engine_for(req)
        if req.stream:
            ids, s, top = chat_setup(engine, req)
            return StreamingResponse(sse(chat_events(engine, req, ids, s, top)), media_type="text/event-stream")
        return chat_body(engine, req)

    return api
