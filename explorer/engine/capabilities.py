"""What an engine can give: views, exporters, the CLI and the API ask this record, never which engine it is."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True, kw_only=True)
class Capabilities:
    """Every field by name (`Capabilities.local`, `.llamacpp` and `.remote` are the three engines' records)."""

    kind: str  # "local" (transformers in this process) | "llama.cpp" (a GGUF file, here) | "remote" (a server)
    max_logprobs: int  # most top-k a request may ask (-1: no cap)
    full_vocab: bool  # whether whole next-token distributions can be had
    full_vocab_max_prompt_tokens: int  # their cap in prompt tokens per request (0: none allowed)
    ranks: bool  # ranks of generated tokens beyond the top-k (prompt ranks come from every engine)
    entropy: bool  # exact entropy at every position (a remote engine has it only within the full-vocabulary cap)
    chat_template: bool
    hidden_states: bool  # the logit lens, what-if rows, divergences between two models
    forward: bool  # its forward pass runs here (interface.Forward: logits rows, KV caches); else its server computes
    batching: bool  # its generations can decode together (interface.Batching: what the scheduler asks)

    @classmethod
    def local(cls, *, max_logprobs: int, chat_template: bool) -> Capabilities:
        """transformers in this process: every number, the hidden states too."""
        return cls(kind="local", hidden_states=True, **_here(max_logprobs, chat_template))

    @classmethod
    def llamacpp(cls, *, max_logprobs: int, chat_template: bool) -> Capabilities:
        """llama.cpp gives every position's logits (so every number) but not the hidden states."""
        return cls(kind="llama.cpp", hidden_states=False, **_here(max_logprobs, chat_template))

    @classmethod
    def remote(cls, *, max_logprobs: int, full_vocab_max_prompt_tokens: int) -> Capabilities:
        """A server's numbers: its top-k, whole distributions within its cap, no ranks beyond the top-k, no hidden
        states; its server computes and batches."""
        return cls(
            kind="remote",
            max_logprobs=max_logprobs,
            full_vocab=full_vocab_max_prompt_tokens > 0,
            full_vocab_max_prompt_tokens=full_vocab_max_prompt_tokens,
            ranks=False,
            entropy=False,
            chat_template=True,
            hidden_states=False,
            forward=False,
            batching=False,
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
        """Which engine computes: "torch", "llama.cpp" or "remote" (`kind` in the names our model card pins)."""
        return "torch" if self.kind == "local" else self.kind

    def to_dict(self) -> dict:
        return asdict(self)


def has_hidden_states(engine: str) -> bool:
    """Whether the engine kind `engine` (`Capabilities.engine`'s names) gives hidden states: only torch does."""
    return engine == "torch"


def no_hidden_states(engine: str) -> str:
    """Why a view needing hidden states cannot run on the engine kind `engine`, where no torch twin helps."""
    if engine == "llama.cpp":
        return (
            "This view needs the model's hidden states, which llama.cpp does not expose, and the torch engine "
            "cannot read this GGUF file: serve the model's folder with --engine torch to use it."
        )
    return "This view needs the model's hidden states and gradients, which a remote server does not send."


def _here(max_logprobs: int, chat_template: bool) -> dict:
    """The fields an engine whose forward pass runs in this process shares (torch and llama.cpp): all its numbers
    from the logits it has, no cap on whole distributions, generations decoding together."""
    return {
        "max_logprobs": max_logprobs,
        "full_vocab": True,
        "full_vocab_max_prompt_tokens": 1 << 30,
        "ranks": True,
        "entropy": True,
        "chat_template": chat_template,
        "forward": True,
        "batching": True,
    }
