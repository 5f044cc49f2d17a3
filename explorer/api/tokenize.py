"""vLLM's utility routes: `POST /tokenize`, `POST /detokenize`, `GET /tokenizer_info`, `GET /health`, `GET /version`
(served at the root, as vLLM does, and under /v1). The API key / EXPLORER_AUTH guard them like /v1."""

from __future__ import annotations

import json
from typing import Any

import anyio.to_thread
from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from explorer.api.framing import json_response, read_json
from explorer.api.schemas import ChatRequest, parse
from explorer.errors import ExplorerError
from explorer.rules.sampler import VERSION, Limits
from explorer.serving.models import Models


class TokenizeRequest(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    model: str | None = None
    prompt: str | None = None
    messages: list[dict[str, Any]] | None = None
    add_special_tokens: bool | None = None
    add_generation_prompt: bool = True
    continue_final_message: bool = False
    chat_template_kwargs: dict[str, Any] | None = None
    return_token_strs: bool = False


class DetokenizeRequest(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    model: str | None = None
    tokens: list[int] = Field(...)


def tokenize(engine, req: TokenizeRequest) -> dict:
    """{"count", "max_model_len", "tokens", "token_strs"} for a prompt or a conversation."""
    if (req.prompt is None) == (req.messages is None):
        raise ExplorerError(
            "Give either `prompt` (text) or `messages` (a conversation).", param="prompt", code="invalid_value"
        )
    if req.prompt is not None:
        add = True if req.add_special_tokens is None else req.add_special_tokens
        ids = engine.tokenize(req.prompt, add_special_tokens=add)
    else:
        messages = ChatRequest(messages=req.messages or []).chat_messages()
        ids = engine.encode_chat(
            messages,
            add_generation_prompt=req.add_generation_prompt,
            continue_final_message=req.continue_final_message,
            template_kwargs=req.chat_template_kwargs,
        )
    strs = engine.token_strs(ids) if req.return_token_strs else None  # vocabulary strings, as vLLM's
    return {"count": len(ids), "max_model_len": engine.context, "tokens": ids, "token_strs": strs}


def detokenize(engine, req: DetokenizeRequest) -> dict:
    bad = [i for i in req.tokens if not 0 <= i < engine.vocab_size]
    if bad:
        raise ExplorerError(
            f"Token id {bad[0]} is outside the vocabulary (0..{engine.vocab_size - 1}).",
            param="tokens",
            code="invalid_token_id",
        )
    return {"prompt": engine.detokenize(req.tokens)}


NOT_INFO = ("vocab_file", "merges_file", "tokenizer_class")  # paths on this machine; the class comes first


def _plain(obj):
    """`obj` with every AddedToken (anything with `.content`) as its text, as vLLM writes them."""
    if hasattr(obj, "content"):
        return obj.content
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    return obj


def tokenizer_info(engine) -> dict:
    """vLLM's `/tokenizer_info` body: the tokenizer's class name, then its `init_kwargs` (what tokenizer_config.json
    gave it) without file paths, special tokens as their text, and the chat template the server applies."""
    tok = engine.tokenizer
    if tok is None:
        raise ExplorerError(
            f"{engine.name}'s tokenizer is not loaded here: serve it with --tokenizer (a folder or a cached hub id).",
            param="model",
            code="not_available_remote",
        )
    config = {k: v for k, v in (getattr(tok, "init_kwargs", None) or {}).items() if k not in NOT_INFO}
    info = {"tokenizer_class": type(tok).__name__, **_plain(config)}
    if getattr(tok, "chat_template", None):
        info["chat_template"] = tok.chat_template
    return info


def token_router(models: Models, limits: Limits, guard) -> APIRouter:
    """The five routes; `guard(request)` raises a 401 ExplorerError when the request may not use the API."""
    router = APIRouter()

    async def run(request: Request, schema, fn):
        guard(request)
        req = parse(schema, await read_json(request, limits.max_body_bytes))
        models.resolve(req.model)

        def work():
            with models.use(req.model) as engine:
                return fn(engine, req)

        return json_response(await anyio.to_thread.run_sync(work))

    @router.post("/tokenize")
    async def tokenize_route(request: Request):
        return await run(request, TokenizeRequest, tokenize)

    @router.post("/detokenize")
    async def detokenize_route(request: Request):
        return await run(request, DetokenizeRequest, detokenize)

    @router.get("/tokenizer_info")
    async def tokenizer_info_route(request: Request, model: str | None = None):
        guard(request)
        models.resolve(model)

        def work():
            with models.use(model) as engine:
                return tokenizer_info(engine)

        # stdlib json: model_max_length is often 1e30 as an int, past orjson's 64 bits; anything odd left as text
        body = json.dumps(await anyio.to_thread.run_sync(work), default=str)
        return Response(body, media_type="application/json")

    @router.get("/health")
    async def health():  # open, as vLLM's: a load balancer's probe
        return Response(status_code=200)

    @router.get("/version")
    async def version():
        return {"version": VERSION}

    return router
