"""Helpers shared by the exporters: token text, JSON-safe numbers, the envelope and usage of a body."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import orjson

from explorer.floats import list_to_json
from explorer.results.scores import TokenScores
from explorer.rules.sampler import VERSION


def num(x: float) -> float | None:
    """A JSON-safe float as OpenAI and vLLM write it: -inf -> -9999.0; NaN is a bug upstream and raises."""
    return nums(np.array([x], dtype=np.float32))[0]


def nums(a: np.ndarray) -> list[float | None]:
    """`num` over a float32 array: `floats.list_to_json(a, shortest=True)`, each value's shortest round-trip digits
    as OpenAI and vLLM write them (+inf, never a logprob, as null), after a check that no value is NaN."""
    a = np.asarray(a, dtype=np.float32)
    if np.isnan(a).any():
        raise ValueError("NaN reached an exporter: a scored position has no number")
    return list_to_json(a, shortest=True)


def token_str(b: bytes) -> str:
    """A token's text; bytes that are not valid UTF-8 on their own become literal `\\xNN`."""
    return b.decode("utf-8", errors="backslashreplace")


def envelope(kind: str, model: str, created: int | None, id_: str | None, prefix: str) -> dict:
    """The id/object/created/model head of a response body."""
    return {
        "id": id_ or f"{prefix}-{uuid.uuid4().hex[:24]}",
        "object": kind,
        "created": int(time.time()) if created is None else created,
        "model": model,
    }


def fingerprint() -> str:
    """`system_fingerprint`: which server wrote the body (vLLM writes `vllm-<version>-<hash>`)."""
    return f"logprob-explorer-{VERSION}"


def response(head: dict, choices: list, usage: dict, **middle) -> dict:
    """A whole response body in vLLM 0.32's key order: head, choices, the fixed keys, usage, `middle` (chat's
    prompt_logprobs, prompt_token_ids, prompt_text), then the keys vLLM always sends as null."""
    return {
        **head,
        "choices": choices,
        "service_tier": None,
        "system_fingerprint": fingerprint(),
        "usage": usage,
        **middle,
        "kv_transfer_params": None,
        "ec_transfer_params": None,
        "metrics": None,
    }


def usage_of(prompt_tokens: int, completion_tokens: int, details: bool = True) -> dict:
    """`usage` in vLLM's key order; `details=False`: without the (null) token details, as vLLM's stream chunks."""
    out: dict[str, int | None] = {
        "prompt_tokens": prompt_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
        "completion_tokens": completion_tokens,
    }
    if details:
        out |= {"prompt_tokens_details": None, "completion_tokens_details": None}
    return out


def usage(results: list[TokenScores], n: int = 1) -> dict:
    """Usage of choices grouped n per prompt: each prompt's tokens once, completion tokens over all choices."""
    p = sum(r.n_prompt for r in results[:: max(n, 1)])
    return usage_of(p, sum(r.n - r.n_prompt for r in results))


def usage_chunk(head: dict, prompt_tokens: int, completion_tokens: int) -> dict:
    """The last chunk of a stream when `stream_options.include_usage` asks for it."""
    return {**head, "choices": [], "usage": usage_of(prompt_tokens, completion_tokens, details=False)}


def last_chunk(chunk: dict) -> dict:
    """The stream's final chunk carries `system_fingerprint` at its end, as vLLM's does."""
    return {**chunk, "system_fingerprint": fingerprint()}


def as_list(results: TokenScores | list[TokenScores]) -> list[TokenScores]:
    return results if isinstance(results, list) else [results]


@dataclass(frozen=True)
class Deferred:
    """A JSON value too large to hold as objects (a full-vocabulary list): `chunks()` yields its UTF-8 JSON text."""

    chunks: Callable[[], Iterator[bytes]]


def has_deferred(value) -> bool:
    if isinstance(value, Deferred):
        return True
    if isinstance(value, dict):
        return any(has_deferred(v) for v in value.values())
    if isinstance(value, list):
        return any(has_deferred(v) for v in value)
    return False


def encode_chunks(value) -> Iterator[bytes]:
    """Strict UTF-8 JSON of `value` piece by piece; a Deferred writes its own pieces (memory stays bounded)."""
    if isinstance(value, Deferred):
        yield from value.chunks()
    elif isinstance(value, dict) and has_deferred(value):
        yield b"{"
        for i, (key, v) in enumerate(value.items()):
            yield (b"," if i else b"") + orjson.dumps(key) + b":"
            yield from encode_chunks(v)
        yield b"}"
    elif isinstance(value, list) and has_deferred(value):
        yield b"["
        for i, v in enumerate(value):
            if i:
                yield b","
            yield from encode_chunks(v)
        yield b"]"
    else:
        yield orjson.dumps(value)
