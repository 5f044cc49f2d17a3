"""HTTP framing of the API: reading a request body safely, errors in OpenAI's shape, JSON and SSE bytes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator

import orjson
from fastapi import Request
from fastapi.responses import Response
from starlette.requests import ClientDisconnect

from explorer.errors import ExplorerError

STATUS = {
    "model_not_found": 404,
    "server_busy": 429,
    "request_too_large": 413,
    "unsupported_content_encoding": 415,
    "invalid_api_key": 401,
    "api_off": 403,
    "room_not_found": 404,
    "not_teacher": 403,
    "room_locked": 403,
    "not_joined": 403,
    "removed": 403,
    "rate_limit_exceeded": 429,
    "zerogpu_unavailable": 503,
}


def error(
    status: int,
    message: str,
    param: str | None = None,
    code: str | None = None,
    headers: dict | None = None,
    kind: str = "invalid_request_error",
) -> Response:
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return Response(orjson.dumps(body), status_code=status, media_type="application/json", headers=headers)


def error_of(err: ExplorerError) -> Response:
    status = STATUS.get(err.code or "", 400)
    headers = {"Retry-After": "1"} if status == 429 else None
    return error(status, err.message, err.param, err.code, headers)


def error_event(err: ExplorerError) -> bytes:
    """An error after the first streamed byte: one OpenAI-shaped event, then the stream ends."""
    body = {"error": {"message": err.message, "type": "invalid_request_error", "param": err.param, "code": err.code}}
    return b"data: " + orjson.dumps(body) + b"\n\n"


def json_response(body: dict) -> Response:
    """Strict JSON (NaN never reaches here: the exporters raise on it)."""
    return Response(orjson.dumps(body), media_type="application/json")


async def read_json(request: Request, max_bytes: int) -> dict:
    """The request's JSON object; a compressed body, one too large, not UTF-8, not JSON or not an object is a clear
    ExplorerError."""
    encoding = request.headers.get("content-encoding", "").strip().lower()
    if encoding not in ("", "identity"):  # never decompressed here: its bytes would read as bad UTF-8
        raise ExplorerError(
            f"Content-Encoding {encoding} is not supported: send the JSON uncompressed.",
            code="unsupported_content_encoding",
        )
    declared = request.headers.get("content-length", "")
    too_big = ExplorerError(
        f"The request body is larger than this server's limit of {max_bytes:,} bytes "
        "(EXPLORER_MAX_BODY_BYTES): send a shorter prompt or fewer prompts.",
        code="request_too_large",
    )
    if declared.isascii() and declared.isdigit() and int(declared) > max_bytes:
        raise too_big
    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > max_bytes:
                raise too_big
            chunks.append(chunk)
    except ClientDisconnect:
        raise ExplorerError("The client went away while sending the request.", code="client_disconnected") from None
    raw = b"".join(chunks)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ExplorerError(
            f"The request body is not UTF-8 (bad byte at offset {err.start}): send JSON encoded as UTF-8.",
            code="invalid_encoding",
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ExplorerError(
            f"The request body is not valid JSON: {err.msg} at line {err.lineno}, column {err.colno}.",
            code="invalid_json",
        ) from None
    except (ValueError, RecursionError):  # nesting too deep, an integer of thousands of digits
        raise ExplorerError(
            "The request body is JSON this server does not read (nested too deep, or a number too long): "
            "send a plain request object.",
            code="invalid_json",
        ) from None
    if not isinstance(data, dict):
        raise ExplorerError(
            'The request body must be a JSON object like {"model": ..., "prompt": ...}.', code="invalid_json"
        )
    where = _surrogate(data) if _SURROGATE_ESCAPE.search(text) else None  # only JSON escapes make lone surrogates
    if where is not None:
        raise ExplorerError(
            f"`{where}` holds a lone UTF-16 surrogate (like \\ud800): send valid Unicode text.",
            param=where,
            code="invalid_value",
        )
    return data


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _surrogate(value, path: str = "") -> str | None:
    """The path (`messages[0].content`) of the first string holding a lone surrogate, or None."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path or "body"
        return None
    if isinstance(value, dict):
        children = [(f"{path}.{_safe(k)}" if path else _safe(k), k, v) for k, v in value.items()]
    elif isinstance(value, list):
        children = [(f"{path}[{i}]", None, v) for i, v in enumerate(value)]
    else:
        return None
    for where, key, v in children:
        found = _surrogate(key, where) if isinstance(key, str) else None
        found = found or _surrogate(v, where)
        if found is not None:
            return found
    return None


def _safe(key) -> str:
    """A key as text that is always valid UTF-8 (a lone surrogate written as \\udNNN)."""
    return str(key).encode("utf-8", errors="backslashreplace").decode("utf-8")


def sse(events: Iterable[dict]) -> Iterator[bytes]:
    """`data: {...}` lines of `events` (no trailing [DONE]: the caller adds it when the stream ends well)."""
    for ev in events:
        yield b"data: " + orjson.dumps(ev) + b"\n\n"


DONE = b"data: [DONE]\n\n"
