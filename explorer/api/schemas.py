"""Request bodies of the OpenAI-compatible API, strictly typed, and their conversion to the one settings type.

Extra fields are accepted and ignored, as OpenAI does; a field of the wrong type
(`n: "2"`, `logprobs: true` on completions) is a 400, never silently converted.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from explorer.engine import with_seed
from explorer.errors import ExplorerError
from explorer.settings import SamplerSettings, check_k


class _Base(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    model: str | None = None
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0  # extension (vLLM): 0 or -1 = off
    seed: int | None = None
    stop: str | list[str] | None = None
    n: int = 1
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    prompt_logprobs: int | None = None  # extension (vLLM): 0..20, or -1 for the full vocabulary

    def stops(self) -> tuple[str, ...]:
        if self.stop is None:
            return ()
        return (self.stop,) if isinstance(self.stop, str) else tuple(self.stop)

    def include_usage(self) -> bool:
        return bool((self.stream_options or {}).get("include_usage"))

    def check_common(self) -> None:
        """Rules both routes share, before any work."""
        check_k(self.prompt_logprobs, "prompt_logprobs", allow_full=True)
        if self.stream and self.prompt_logprobs is not None:
            raise ExplorerError("`prompt_logprobs` cannot be combined with `stream: true`.", param="prompt_logprobs", code="invalid_value")

    def settings(self, max_tokens: int, logprobs: int | None, prompt_logprobs: int | None) -> SamplerSettings:
        """The one settings type (validates every sampler field), with a concrete seed."""
        return with_seed(SamplerSettings(
            max_tokens=max_tokens, temperature=self.temperature, top_p=self.top_p, top_k=self.top_k, seed=self.seed,
            stop=self.stops(), logprobs=logprobs, prompt_logprobs=prompt_logprobs, n=self.n))


class CompletionRequest(_Base):
    prompt: str | list[str] | list[int] | list[list[int]] = Field(union_mode="left_to_right")
    max_tokens: int | None = 16
    echo: bool = False
    logprobs: int | None = None

    def check(self) -> None:
        self.check_common()
        check_k(self.logprobs, "logprobs", allow_full=False)
        if self.max_tokens == 0 and not self.echo:
            raise ExplorerError("`max_tokens: 0` generates nothing: set `echo: true` to score the prompt.", param="max_tokens", code="invalid_value")
        if self.stream and self.echo:
            raise ExplorerError("`echo` cannot be combined with `stream: true` here.", param="echo", code="invalid_value")

    def score_k(self) -> int | None:
        """The k to score the prompt with: the widest of `prompt_logprobs` and, with echo, `logprobs`."""
        wanted = [x for x in (self.prompt_logprobs, self.logprobs if self.echo else None) if x is not None]
        return -1 if -1 in wanted else (max(wanted) if wanted else None)

    def to_settings(self) -> SamplerSettings:
        return self.settings(16 if self.max_tokens is None else self.max_tokens, self.logprobs, self.score_k())


class ChatRequest(_Base):
    messages: list[dict[str, Any]]
    max_tokens: int | None = None
    max_completion_tokens: int | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = None

    def check(self) -> None:
        self.check_common()
        check_k(self.top_logprobs, "top_logprobs", allow_full=False)
        if self.top_logprobs and not self.logprobs:
            raise ExplorerError("`top_logprobs` needs `logprobs: true`.", param="top_logprobs", code="invalid_value")

    def limit_param(self) -> str:
        return "max_completion_tokens" if self.max_completion_tokens is not None else "max_tokens"

    def limit_given(self) -> bool:
        return self.max_completion_tokens is not None or self.max_tokens is not None

    def limit(self) -> int:
        for v in (self.max_completion_tokens, self.max_tokens):
            if v is not None:
                return v
        return 256

    def top(self) -> int | None:
        """k of each content entry's `top_logprobs` (None: no logprobs)."""
        return (self.top_logprobs or 0) if self.logprobs else None

    def to_settings(self) -> SamplerSettings:
        try:
            return self.settings(self.limit(), self.top() or 0, self.prompt_logprobs)
        except ExplorerError as err:  # name the field the client sent
            if err.param == "max_tokens" and self.limit_param() != "max_tokens":
                raise ExplorerError(err.message.replace("`max_tokens`", f"`{self.limit_param()}`"), param=self.limit_param(), code=err.code) from None
            raise

    def chat_messages(self) -> list[dict]:
        """Messages as the chat template reads them: text parts joined, 'developer' read as 'system'."""
        out = []
        for i, m in enumerate(self.messages):
            content = m.get("content")
            if isinstance(content, list):  # [{"type": "text", "text": ...}, ...]
                parts = []
                for p in content:
                    if not isinstance(p, dict) or p.get("type") != "text" or not isinstance(p.get("text"), str):
                        raise ExplorerError(f"`messages[{i}].content` parts must be {{'type': 'text', 'text': <string>}}; "
                                            "this model reads text only.", param=f"messages[{i}].content", code="invalid_value")
                    parts.append(p["text"])
                content = "".join(parts)
            role = "system" if m.get("role") == "developer" else m.get("role")  # OpenAI's newer name for system
            out.append({"role": role, "content": content if content is not None else ""})
        return out
