"""A streamed response read as one body: the SSE text a client received (`data: {...}` events through
`data: [DONE]`, as `curl -N` saves it) or a JSON list of its chunks, merged into the body that the same request
gives without `stream` (text and logprobs lists joined in order, ids and finish_reason kept). Used by
explorer/export/read/documents.py, which then reads the merged body like any other.
"""

from __future__ import annotations

import json

from explorer.export.read.bodies import MAX_POSITIONS, bad

MAX_CHUNKS = MAX_POSITIONS + 64  # a chunk per token, and a few more (the role, the usage)
_FIELDS = ("event:", "id:", "retry:")


def is_sse(text: str) -> bool:
    """Whether `text` reads as server-sent events (its first line that is not blank or a comment is `data:`)."""
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(":"):
            return line.startswith(("data:", *_FIELDS))
    return False


def sse_chunks(text: str) -> list[object]:
    """The JSON of each event's data, in order, up to `data: [DONE]` (an event's `data:` lines joined by newlines)."""
    chunks: list[object] = []
    data: list[str] = []
    lines = text.splitlines() + [""]
    for n, raw in enumerate(lines, 1):
        line = raw.rstrip("\r")
        if line.strip() == "":  # an event ends at a blank line
            if data:
                payload = "\n".join(data).strip()
                if payload == "[DONE]":
                    return chunks
                try:
                    chunks.append(json.loads(payload))
                except (ValueError, RecursionError):
                    raise bad(f"the stream's event before line {n} is not JSON") from None
                if len(chunks) > MAX_CHUNKS:
                    raise bad(f"the stream holds more than {MAX_CHUNKS:,} chunks")
                data = []
            continue
        if line.startswith(":") or line.startswith(_FIELDS):
            continue
        if not line.startswith("data:"):
            raise bad(f"line {n} of the stream is not `data: ...` (save the server-sent events as received)")
        data.append(line[5:].removeprefix(" "))
    return chunks


def merged(items: list[object]) -> dict:
    """One body from a stream's chunks: completions or chat, by the chunks' `object`."""
    if not items:
        raise bad("the stream holds no chunks")
    if len(items) > MAX_CHUNKS:
        raise bad(f"the stream holds more than {MAX_CHUNKS:,} chunks")
    chunks: list[dict] = []
    for c in items:
        if not isinstance(c, dict):
            raise bad("each chunk of the stream must be a JSON object")
        if "error" in c:
            raise bad(f"the stream carries an error from the server: {_message(c['error'])}")
        chunks.append(c)
    chat = any(c.get("object") == "chat.completion.chunk" for c in chunks)
    body: dict = {"object": "chat.completion" if chat else "text_completion", "model": _first(chunks, "model")}
    usage = [c["usage"] for c in chunks if isinstance(c.get("usage"), dict)]
    if usage:
        body["usage"] = usage[-1]
    if chat:
        for key in ("prompt_token_ids", "prompt_logprobs"):
            body[key] = _first(chunks, key)
    choices: dict[int, dict] = {}
    for c in chunks:
        parts = c.get("choices") or []
        if not isinstance(parts, list):
            raise bad("a chunk's `choices` must be a list")
        for part in parts:
            if not isinstance(part, dict):
                raise bad("each choice of a chunk must be an object")
            index = part.get("index", 0)
            acc = choices.setdefault(index if isinstance(index, int) else 0, _fresh(chat))
            (_add_chat if chat else _add_completion)(acc, part)
    if not choices:
        raise bad("the stream's chunks hold no choices")
    body["choices"] = [choices[i] for i in sorted(choices)]
    return body


def _first(chunks: list, key: str) -> object:
    return next((c[key] for c in chunks if c.get(key) is not None), None)


def _message(err: object) -> str:
    msg = err.get("message") if isinstance(err, dict) else err
    return str(msg)[:300]


def _fresh(chat: bool) -> dict:
    if chat:
        return {"message": {"role": "assistant", "content": ""}, "logprobs": None, "finish_reason": None,
                "token_ids": None}  # fmt: skip
    return {"text": "", "logprobs": None, "finish_reason": None, "token_ids": None, "prompt_token_ids": None,
            "prompt_logprobs": None}  # fmt: skip


def _extend(acc: dict, key: str, part: dict) -> None:
    v = part.get(key)
    if v is not None:
        if not isinstance(v, list):
            raise bad(f"a chunk's `{key}` must be a list")
        acc[key] = (acc[key] or []) + v


def _add_completion(acc: dict, part: dict) -> None:
    text = part.get("text")
    if isinstance(text, str):
        acc["text"] += text
    lp = part.get("logprobs")
    if lp is not None:
        if not isinstance(lp, dict):
            raise bad("a chunk's `logprobs` must be an object")
        acc["logprobs"] = acc["logprobs"] or {"text_offset": [], "token_logprobs": [], "tokens": [], "top_logprobs": []}
        for key in acc["logprobs"]:
            _extend(acc["logprobs"], key, lp)
    _extend(acc, "token_ids", part)
    for key in ("prompt_token_ids", "prompt_logprobs"):
        if acc[key] is None:
            acc[key] = part.get(key)
    acc["finish_reason"] = part.get("finish_reason") or acc["finish_reason"]


def _add_chat(acc: dict, part: dict) -> None:
    delta = part.get("delta")
    delta = {} if delta is None else delta
    if not isinstance(delta, dict):
        raise bad("a chunk's `delta` must be an object")
    if isinstance(delta.get("content"), str):
        acc["message"]["content"] += delta["content"]
    if isinstance(delta.get("role"), str):
        acc["message"]["role"] = delta["role"]
    lp = part.get("logprobs")
    if lp is not None:
        if not isinstance(lp, dict):
            raise bad("a chunk's `logprobs` must be an object")
        acc["logprobs"] = acc["logprobs"] or {"content": []}
        _extend(acc["logprobs"], "content", lp)
    _extend(acc, "token_ids", part)
    acc["finish_reason"] = part.get("finish_reason") or acc["finish_reason"]
