"""Request bodies of the OpenAI-compatible API (extra fields are accepted and ignored, as OpenAI does)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, StrictBool


class _Base(BaseModel):
    model_config = ConfigDict(extra="allow")

    model: str | None = None
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0  # extension (vLLM): 0 or -1 = off
    seed: int | None = None
    stop: str | list[str] | None = None
    n: int = 1
    stream: StrictBool = False
    stream_options: dict[str, Any] | None = None
    prompt_logprobs: int | None = None  # extension (vLLM): 0..20, or -1 for the full vocabulary

    def stops(self) -> tuple[str, ...]:
        if self.stop is None:
            return ()
        return (self.stop,) if isinstance(self.stop, str) else tuple(self.stop)

    def include_usage(self) -> bool:
        return bool((self.stream_options or {}).get("include_usage"))


class CompletionRequest(_Base):
    prompt: str | list[str] | list[int] | list[list[int]]
    max_tokens: int | None = 16
    echo: StrictBool = False
    logprobs: int | None = None


class ChatRequest(_Base):
    messages: list[dict[str, Any]]
    max_tokens: int | None = None
    max_completion_tokens: int | None = None
    logprobs: StrictBool | None = None
    top_logprobs: int | None = None

    def limit(self) -> int:
        for v in (self.max_completion_tokens, self.max_tokens):
            if v is not None:
                return v
        return 256
