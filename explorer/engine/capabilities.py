"""What an engine can give: views, exporters, the CLI and the API ask this record, never which engine it is."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class Capabilities:
    kind: str  # "local" (transformers in this process) | "llama.cpp" (a GGUF file, here) | "remote" (a server)
    max_logprobs: int  # most top-k a request may ask (-1: no cap)
    full_vocab: bool  # whether whole next-token distributions can be had
    full_vocab_max_prompt_tokens: int  # their cap in prompt tokens per request (0: none allowed)
    ranks: bool  # ranks of generated tokens beyond the top-k (prompt ranks come from every engine)
    entropy: bool  # exact entropy at every position (a remote engine has it only within the full-vocabulary cap)
    chat_template: bool
    hidden_states: bool  # the logit lens, what-if rows, divergences between two models

    @classmethod
    def local(cls, max_logprobs: int, chat_template: bool) -> Capabilities:
        return cls("local", max_logprobs, True, 1 << 30, True, True, chat_template, True)

    @classmethod
    def llamacpp(cls, max_logprobs: int, chat_template: bool) -> Capabilities:
        """llama.cpp gives every position's logits (so every number) but not the hidden states."""
        return cls("llama.cpp", max_logprobs, True, 1 << 30, True, True, chat_template, False)

    @classmethod
    def remote(cls, max_logprobs: int, full_vocab_max_prompt_tokens: int) -> Capabilities:
        return cls(
            "remote",
            max_logprobs,
            full_vocab_max_prompt_tokens > 0,
            full_vocab_max_prompt_tokens,
            False,
            False,
            True,
            False,
        )

    def why_not(self, need: str) -> str | None:
        """One line saying why a view needing `need` (a field name) is off, or None when it is available."""
        if getattr(self, need):
            return None
        if self.kind == "llama.cpp" and need == "hidden_states":
            return "needs the model's hidden states, which llama.cpp does not expose: load it with --engine torch"
        return {
            "hidden_states": "needs the model's hidden states and logits, which a remote server does not send",
            "ranks": "generated tokens' ranks beyond the top-k are not sent by an OpenAI-compatible server",
            "entropy": "entropy needs the full distribution, which this server gives only within its cap",
            "full_vocab": "this server gives no full-vocabulary distributions",
        }.get(need, f"this engine has no {need}")

    @property
    def engine(self) -> str:
        """Which engine computes: "torch", "llama.cpp" or "remote"."""
        return "torch" if self.kind == "local" else self.kind

    def to_dict(self) -> dict:
        return asdict(self)


@runtime_checkable
class Served(Protocol):
    """An engine whose numbers come from a server (explorer/engine/remote.py): it scores and generates itself,
    so scoring.score_ids and generation.stream hand the work to it."""

    def score_ids(self, ids: list[int], k: int, listed: Any = None) -> Any: ...

    def stream(self, ids: list[int], s: Any, sample: int = 0, want_prompt: bool = True) -> Iterator[Any]: ...
