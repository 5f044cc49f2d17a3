"""Request bodies of the OpenAI-compatible API, strictly typed, and their conversion to the one settings type.

Unknown fields are accepted and ignored, as OpenAI and vLLM do; a field of the wrong type
(`n: "2"`, `logprobs: true` on completions) is a 400, never silently converted; a known
field this server cannot honour (beam search, tools, logit_bias, ...) is a 400 naming it.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from explorer.api import hidden
from explorer.engine import with_seed
from explorer.errors import ExplorerError
from explorer.rules.sampler import SamplerSettings, default, wire_fields

# fields of OpenAI's or vLLM's requests that change the answer and are not implemented here: refused, not ignored
UNSUPPORTED = {
    "use_beam_search": "beam search",
    "best_of": "best_of",
    "logit_bias": "logit_bias",
    "suffix": "suffix",
    "response_format": "structured output",
    "structured_outputs": "structured output",
    "guided_json": "guided decoding",
    "guided_regex": "guided decoding",
    "guided_choice": "guided decoding",
    "guided_grammar": "guided decoding",
    "tools": "tools",
    "functions": "function calling",
    "function_call": "function calling",
    "allowed_token_ids": "allowed_token_ids",
    "bad_words": "bad_words",
    "prompt_embeds": "prompt embeddings",
    "chat_template": "a custom chat template",
    "documents": "documents",
    "truncate_prompt_tokens": "prompt truncation",
    "logits_processors": "logits processors",
    "length_penalty": "length_penalty",
    "audio": "audio",
    "modalities": "other modalities",
    "prediction": "predicted outputs",
    "tool_choice": "tools",
}
HARMLESS = {
    "tool_choice": ("none", "auto"),
    "tools": ([],),
    "functions": ([],),
    "response_format": ({"type": "text"},),
    "best_of": (1,),
    "length_penalty": (1, 1.0),
    "use_beam_search": (False,),
    "modalities": (["text"],),
    "logit_bias": ({},),
    "bad_words": ([],),
    "suffix": ("",),
}


STRICT = ConfigDict(extra="allow", strict=True)
_TYPES = get_type_hints(SamplerSettings)
if TYPE_CHECKING:

    class _Wire(BaseModel):
        def __getattr__(self, name: str) -> Any: ...
else:  # SamplerSettings' wire fields (explorer/rules/sampler.py `rule`), by their names, types and defaults
    _Wire = create_model("_Wire", __config__=STRICT, **{name: (_TYPES[name], default(name)) for name in wire_fields()})


class _Base(_Wire):
    """The fields both routes read. The sampler's own (temperature, top_p, top_k, min_p, the penalties, seed, n,
    ...) are `_Wire`'s, made from SamplerSettings; the ones below are read their own way (a stop string or a list)
    or are the API's alone."""

    model_config = STRICT

    model: str | None = None
    stop: str | list[str] | None = None
    stop_token_ids: list[int] | None = None
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    prompt_logprobs: int | None = None  # extension (vLLM): 0..20, or -1 for the full vocabulary
    logprob_token_ids: list[int] | None = None  # extension (vLLM): these ids' logprobs at each generated position
    return_token_ids: bool | None = None
    return_tokens_as_token_ids: bool | None = None
    # extension (SGLang's field): true or "last" (SGLang's answer), or {"layers", "positions", "dtype", ...}
    return_hidden_states: bool | str | dict[str, Any] | None = None

    def stops(self) -> tuple[str, ...]:
        if self.stop is None:
            return ()
        return (self.stop,) if isinstance(self.stop, str) else tuple(self.stop)

    def include_usage(self) -> bool:
        return bool((self.stream_options or {}).get("include_usage"))

    def continuous_usage(self) -> bool:
        return bool((self.stream_options or {}).get("continuous_usage_stats"))

    def check_common(self) -> None:
        """Rules both routes share, before any work."""
        for name, what in UNSUPPORTED.items():
            value = (self.model_extra or {}).get(name, getattr(self, name, None))
            if value is not None and value not in HARMLESS.get(name, ()):
                raise ExplorerError(
                    f"`{name}` ({what}) is not supported by this server: remove it.",
                    param=name,
                    code="unsupported_parameter",
                )
        # `prompt_logprobs` is SamplerSettings' own field too: checked there, once (`to_settings`), as sent or widened
        if self.stream and self.prompt_logprobs is not None:
            raise ExplorerError(
                "`prompt_logprobs` cannot be combined with `stream: true`.",
                param="prompt_logprobs",
                code="invalid_value",
            )
        if self.stream_options is not None and not self.stream:
            raise ExplorerError(
                "`stream_options` can only be given with `stream: true`.", param="stream_options", code="invalid_value"
            )
        if self.logprob_token_ids is not None and not self.logprob_token_ids:
            raise ExplorerError(
                "`logprob_token_ids` must not be an empty list.", param="logprob_token_ids", code="invalid_value"
            )
        if self.hidden_ask is not None:
            hidden.check_alone(self.stream, self.n)

    @cached_property
    def hidden_ask(self) -> hidden.Ask | None:
        """What `return_hidden_states` asks (None: nothing), read once (`hidden.read`) where it is first needed: the
        route choosing the engine, or `check`; the plan carries it to the handler and the exporter."""
        return hidden.read(self.return_hidden_states)

    def settings(self, max_tokens: int, logprobs: int | None, prompt_logprobs: int | None) -> SamplerSettings:
        """The one settings type (validates every sampler field), with a concrete seed."""
        return with_seed(
            SamplerSettings(
                **{name: getattr(self, name) for name in wire_fields()},
                max_tokens=max_tokens,
                stop=self.stops(),
                stop_token_ids=tuple(self.stop_token_ids or ()),
                logprob_ids=tuple(self.logprob_token_ids or ()),
                logprobs=logprobs,
                prompt_logprobs=prompt_logprobs,
            )
        )


class CompletionRequest(_Base):
    prompt: str | list[str] | list[int] | list[list[int]] = Field(union_mode="left_to_right")
    max_tokens: int | None = 16
    echo: bool = False
    logprobs: int | None = None
    prompt_logprob_token_ids: list[int] | list[list[int]] | None = Field(None, union_mode="left_to_right")
    text_stats: bool = False  # extension (this project): each choice's text statistics, when scoring a prompt

    def check(self) -> None:
        self.check_common()  # `logprobs` is SamplerSettings' own field: checked there, once (`to_settings`)
        if self.max_tokens == 0 and not self.echo:
            raise ExplorerError(
                "`max_tokens: 0` generates nothing: set `echo: true` to score the prompt.",
                param="max_tokens",
                code="invalid_value",
            )
        if self.logprob_token_ids is not None:
            if self.logprobs is None:
                raise ExplorerError(
                    "With `logprob_token_ids`, `logprobs` must be set.", param="logprob_token_ids", code="invalid_value"
                )
            if self.echo and self.max_tokens == 0:
                raise ExplorerError(
                    "`logprob_token_ids` needs generated tokens: it does not apply with `echo` and `max_tokens: 0` "
                    "(use `prompt_logprob_token_ids` for the prompt).",
                    param="logprob_token_ids",
                    code="invalid_value",
                )
        if self.text_stats and not (self.echo and self.max_tokens == 0):
            raise ExplorerError(
                "`text_stats` describes a scored text: set `echo: true` and `max_tokens: 0`.",
                param="text_stats",
                code="invalid_value",
            )
        if self.text_stats and self.stream:
            raise ExplorerError(
                "`text_stats` comes with a whole answer: set `stream: false` (a stream sends no statistics).",
                param="text_stats",
                code="invalid_value",
            )
        if self.prompt_logprob_token_ids is not None and not (self.echo and self.max_tokens == 0):
            raise ExplorerError(
                "`prompt_logprob_token_ids` applies when scoring a prompt: set `echo: true` and `max_tokens: 0`.",
                param="prompt_logprob_token_ids",
                code="invalid_value",
            )

    def score_k(self) -> int | None:
        """The k to score the prompt with: the widest of `prompt_logprobs` and, with echo, `logprobs`; a negative
        `prompt_logprobs` as sent (-1, the full vocabulary, or a value SamplerSettings refuses naming it)."""
        if self.prompt_logprobs is not None and self.prompt_logprobs < 0:
            return self.prompt_logprobs
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
    echo: bool = False
    add_generation_prompt: bool = True
    continue_final_message: bool = False
    chat_template_kwargs: dict[str, Any] | None = None

    def check(self) -> None:
        self.check_common()  # `top_logprobs` is checked once, as SamplerSettings' `logprobs` (`to_settings`)
        if self.top_logprobs and not self.logprobs:
            raise ExplorerError("`top_logprobs` needs `logprobs: true`.", param="top_logprobs", code="invalid_value")
        if self.logprob_token_ids is not None and not self.logprobs:
            raise ExplorerError(
                "With `logprob_token_ids`, set `logprobs: true`.", param="logprob_token_ids", code="invalid_value"
            )

    def limit_param(self) -> str:
        return "max_completion_tokens" if self.max_completion_tokens is not None else "max_tokens"

    def limit_given(self) -> bool:
        return self.max_completion_tokens is not None or self.max_tokens is not None

    def limit(self, room: int) -> int:
        """max_completion_tokens, else max_tokens, else (vLLM) the room the context leaves."""
        for v in (self.max_completion_tokens, self.max_tokens):
            if v is not None:
                return v
        return room

    def top(self) -> int:
        """k of each content entry's `top_logprobs`: SamplerSettings' `logprobs` (the one rename on the way, named
        back in its errors by `to_settings`); 0 where `logprobs` is not asked (its absence in the body is
        `Options.logprobs`, and `top_logprobs` null)."""
        return self.top_logprobs if self.logprobs and self.top_logprobs is not None else 0

    def prompt_k(self) -> int | None:
        """The prompt's k: `prompt_logprobs`; else, with `echo`, `top_logprobs` (0 when unset), as vLLM fills
        `prompt_logprobs` for an echoed conversation even with no logprobs asked; a stream sends none."""
        if self.prompt_logprobs is not None or self.stream or not self.echo:
            return self.prompt_logprobs
        return self.top_logprobs or 0  # 0, not None: vLLM writes the echoed prompt's entries, with no alternatives

    def to_settings(self, room: int) -> SamplerSettings:
        try:
            return self.settings(self.limit(room), self.top(), self.prompt_k())
        except ExplorerError as err:  # name the field the client sent (the wire's name for SamplerSettings' own)
            sent = {"max_tokens": self.limit_param(), "logprobs": "top_logprobs"}.get(err.param or "", err.param)
            if sent != err.param:
                raise ExplorerError(
                    err.message.replace(f"`{err.param}`", f"`{sent}`"), param=sent, code=err.code
                ) from None
            raise

    def echo_text(self, messages: list[dict]) -> str:
        """With `echo`, the last message's text when it is the assistant's (the reply continues it)."""
        return messages[-1]["content"] if self.echo and messages and messages[-1].get("role") == "assistant" else ""

    def chat_messages(self) -> list[dict]:
        """Messages as the chat template reads them: text parts joined, 'developer' read as 'system'."""
        out = []
        for i, m in enumerate(self.messages):
            content = m.get("content")
            if content is None:  # missing or null: only an assistant's tool calls go without, and tools are refused
                raise ExplorerError(
                    "Each message needs a `role` (system, user or assistant) and a string `content`.",
                    param="messages",
                    code="invalid_value",
                )
            if isinstance(content, list):  # [{"type": "text", "text": ...}, ...]
                parts = []
                for p in content:
                    if not isinstance(p, dict) or p.get("type") != "text" or not isinstance(p.get("text"), str):
                        raise ExplorerError(
                            f"`messages[{i}].content` parts must be {{'type': 'text', 'text': <string>}}; "
                            "this model reads text only.",
                            param=f"messages[{i}].content",
                            code="invalid_value",
                        )
                    parts.append(p["text"])
                content = "".join(parts)
            role = "system" if m.get("role") == "developer" else m.get("role")  # OpenAI's newer name for system
            out.append({"role": role, "content": content})
        return out


def _union_tag(part: str) -> bool:
    """Whether a pydantic error location part names a type of a union (`str`, `list[int]`, ...) rather than a field."""
    return part in ("str", "int", "float", "bool", "dict", "list") or part.startswith(
        ("list[", "dict[", "function-", "union[")
    )


def parse(model, data: dict):
    """`data` as a `model` request; its first validation error as an ExplorerError naming the field."""
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
