"""Sampler settings, checked once at the boundary with errors that say how to fix the call."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from explorer.errors import ExplorerError

MAX_K = 20  # most top-k alternatives per position (vLLM's default --max-logprobs)
MAX_STOP = 4


def check_k(value, param: str, *, allow_full: bool) -> int | None:
    """Validate a top-k count: None, 0..MAX_K, or -1 (full vocabulary) when allowed."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ExplorerError(f"`{param}` must be an integer from 0 to {MAX_K}, got {value!r}.", param=param, code="invalid_type")
    if value == -1 and allow_full:
        return -1
    if value < 0:
        tail = " (or -1 for the full vocabulary)" if allow_full else ""
        raise ExplorerError(f"`{param}` (={value}) must be from 0 to {MAX_K}{tail}.", param=param, code="integer_below_min_value")
    if value > MAX_K:
        raise ExplorerError(f"`{param}` (={value}) must be at most {MAX_K}.", param=param, code="integer_above_max_value")
    return value


@dataclass(frozen=True)
class SamplerSettings:
    """How to generate. temperature 0 means greedy; top_k 0 and top_p 1 mean off."""

    max_tokens: int = 32
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    seed: int | None = None
    stop: tuple[str, ...] = ()
    logprobs: int | None = 5  # top-k per generated token (0..20); None: do not record top-k
    prompt_logprobs: int | None = None  # top-k per prompt token; -1: full vocabulary
    mode: str = "raw"  # "raw" | "processed"
    n: int = 1

    def __post_init__(self):
        def num(name, lo, hi, *, lo_open=False, integer=False):
            v = getattr(self, name)
            ok_type = isinstance(v, int) if integer else isinstance(v, (int, float))
            if isinstance(v, bool) or not ok_type or v != v:
                kind = "an integer" if integer else "a number"
                raise ExplorerError(f"`{name}` must be {kind}, got {v!r}.", param=name, code="invalid_type")
            below = v <= lo if lo_open else v < lo
            if below or v > hi:
                left = "(" if lo_open else "["
                raise ExplorerError(
                    f"`{name}` (={v}) must be in {left}{lo}, {hi}].",
                    param=name,
                    code="integer_below_min_value" if below else "integer_above_max_value",
                )

        num("max_tokens", 0, 1_000_000, integer=True)
        num("temperature", 0.0, 100.0)
        num("top_p", 0.0, 1.0, lo_open=True)
        num("top_k", 0, 1_000_000, integer=True)
        num("n", 1, 16, integer=True)
        if self.seed is not None:
            num("seed", 0, 2**63 - 1, integer=True)
        check_k(self.logprobs, "logprobs", allow_full=False)
        check_k(self.prompt_logprobs, "prompt_logprobs", allow_full=True)
        if self.mode not in ("raw", "processed"):
            raise ExplorerError(f"`logprobs_mode` must be 'raw' or 'processed', got {self.mode!r}.", param="logprobs_mode", code="invalid_value")
        if isinstance(self.stop, str) or not all(isinstance(s, str) and s for s in self.stop):
            raise ExplorerError("`stop` must be a list of non-empty strings.", param="stop", code="invalid_type")
        if len(self.stop) > MAX_STOP:
            raise ExplorerError(f"`stop` takes at most {MAX_STOP} strings, got {len(self.stop)}.", param="stop", code="array_above_max_length")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["stop"] = list(self.stop)
        return d
