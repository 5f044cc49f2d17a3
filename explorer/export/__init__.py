"""Exporters: pure functions of TokenScores, one module per response shape."""

from __future__ import annotations

import json

from explorer.export import native, openai_chat, openai_completion, vllm, vllm_offline
from explorer.result import TokenScores

FORMATS = {
    "openai-completion": openai_completion.export,
    "openai-chat": openai_chat.export,
    "vllm": vllm.export,
    "vllm-offline": vllm_offline.export,
    "native": native.export,
}


def export(fmt: str, results: TokenScores | list[TokenScores]) -> dict:
    """The body of shape `fmt` for `results` (one result or n samples of one prompt)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
    return FORMATS[fmt](results)


def dumps(body: dict) -> str:
    """Strict JSON: raises on NaN or Infinity instead of writing them."""
    return json.dumps(body, ensure_ascii=False, allow_nan=False)
