"""Exporters: pure functions of TokenScores, one module per response shape, behind one registry."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from explorer.export import native, openai_chat, openai_completion, vllm, vllm_offline
from explorer.export.common import encode_chunks, has_deferred
from explorer.results.scores import TokenScores


@dataclass(frozen=True)
class Format:
    export: Callable[..., dict]
    needs_generation: bool  # True: the shape describes generated tokens (a scored text cannot fill it)
    about: str


FORMATS: dict[str, Format] = {
    "vllm": Format(vllm.export, False, "vLLM completions body with prompt_logprobs"),
    "openai-completion": Format(openai_completion.export, False, "OpenAI / vLLM completions (logprobs: int)"),
    "openai-chat": Format(openai_chat.export, True, "OpenAI chat completions (logprobs: true)"),
    "vllm-offline": Format(vllm_offline.export, False, "vLLM offline RequestOutput (LLM.generate)"),
    "native": Format(native.export, False, "this project's own JSON (opens again in the app)"),
}


def names(*, generated: bool = True) -> list[str]:
    """Format names; `generated=False` leaves out the shapes that need generated tokens."""
    return [n for n, f in FORMATS.items() if generated or not f.needs_generation]


def export(fmt: str, results: TokenScores | list[TokenScores]) -> dict:
    """The body of shape `fmt` for `results` (one result or n samples of one prompt)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
    return FORMATS[fmt].export(results)


def dumps(body: dict) -> str:
    """Strict JSON: raises on NaN or Infinity instead of writing them (a Deferred value is written out)."""
    if has_deferred(body):
        return b"".join(encode_chunks(body)).decode("utf-8")
    return json.dumps(body, ensure_ascii=False, allow_nan=False)
