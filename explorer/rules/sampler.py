"""Every rule on what a request may ask, in one place: sampler settings, top-k counts and the server's limits.

The CLI, the web app and the HTTP API all build these types, so they accept and
reject exactly the same things with the same messages.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, overload

from explorer import config
from explorer.config import MAX_K as MAX_K  # the caps live in explorer/config.py (read from the environment there)
from explorer.config import PUBLIC_LIMITS as PUBLIC_LIMITS
from explorer.config import Limits as Limits
from explorer.errors import ExplorerError

VERSION = "0.3.0"  # the package's version, written here only (explorer.__version__; pyproject.toml reads it)
MAX_STOP = 4
MAX_STOP_CHARS = 256  # longer stop strings would cost a scan of their length every step
GREEDY_BELOW = 1e-5  # vLLM's _SAMPLING_EPS: a smaller temperature means greedy
MAX_LOGPROB_IDS = 128  # `logprob_token_ids` per request, as vLLM allows


def max_logprobs() -> int:
    """The server's cap on top-k (`--max-logprobs` / EXPLORER_MAX_LOGPROBS, default 20); -1: no cap (the full vocabulary).

    The configuration in force (explorer/config.py `current`): the entry point's, else the environment's now."""
    return config.current().limits.max_logprobs


def page_k(want: int = MAX_K) -> int:
    """Top-k the web page computes per position: `want` (20), or the server's cap where that is lower (0: none).

    Read when called (a page is built, a request runs), never at import: `--max-logprobs` sets the cap after the
    page modules are imported."""
    cap = max_logprobs()
    return want if cap < 0 else min(want, cap)


@overload
def check_k(value: int, param: str, *, allow_full: bool) -> int: ...
@overload
def check_k(value: object, param: str, *, allow_full: bool) -> int | None: ...
def check_k(value, param: str, *, allow_full: bool) -> int | None:
    """Validate a top-k count: None, 0..the cap, or -1 (full vocabulary) when allowed or when the cap is -1."""
    if value is None:
        return None
    cap = max_logprobs()
    if isinstance(value, bool) or not isinstance(value, int):
        raise ExplorerError(
            f"`{param}` must be an integer from 0 to {cap if cap >= 0 else 'the vocabulary size'}, got {value!r}.",
            param=param,
            code="invalid_type",
        )
    if value == -1 and (allow_full or cap == -1):
        return -1
    if value < 0:
        tail = (
            " (or -1 for the full vocabulary)"
            if allow_full
            else " (the full vocabulary is offered only for the prompt: `prompt_logprobs: -1`, unless the server runs with "
            "--max-logprobs -1)"
            if value == -1
            else ""
        )
        raise ExplorerError(
            f"`{param}` (={value}) must be from 0 to {cap}{tail}.", param=param, code="integer_below_min_value"
        )
    if cap >= 0 and value > cap:
        raise ExplorerError(
            f"`{param}` (={value}) must be at most {cap} (this server's --max-logprobs).",
            param=param,
            code="integer_above_max_value",
        )
    return value


# (name, low, high, low open, integer): the numbers SamplerSettings checks, in this order
NUMBERS = (
    ("max_tokens", 0, 1_000_000, False, True),
    ("temperature", 0.0, 100.0, False, False),
    ("top_p", 0.0, 1.0, True, False),
    ("top_k", -1, 1_000_000, False, True),
    ("min_p", 0.0, 1.0, False, False),
    ("repetition_penalty", 0.0, 10.0, True, False),
    ("frequency_penalty", -2.0, 2.0, False, False),
    ("presence_penalty", -2.0, 2.0, False, False),
    ("n", 1, 16, False, True),
    ("min_tokens", 0, 1_000_000, False, True),
)
SEED_RANGE = ("seed", 0, 2**63 - 1, False, True)  # checked only when a seed is given


def _in_range(name: str, v, lo, hi, *, lo_open: bool = False, integer: bool = False) -> None:
    """Refuse `v` unless it is a number (an integer where `integer`) in [lo, hi] ((lo, hi] where `lo_open`)."""
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


@dataclass(frozen=True)
class SamplerSettings:
    """How to generate. temperature 0 means greedy; top_k 0 and top_p 1 mean off."""

    max_tokens: int = 32
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0  # -1 is read as 0 (off), as vLLM does
    min_p: float = 0.0  # keep entries with p >= min_p * p(top); 0 = off
    repetition_penalty: float = 1.0  # > 1 discourages any token already in the prompt or output; 1 = off
    frequency_penalty: float = 0.0  # minus this per earlier occurrence in the output
    presence_penalty: float = 0.0  # minus this once a token occurred in the output
    seed: int | None = None
    stop: tuple[str, ...] = ()
    stop_token_ids: tuple[int, ...] = ()  # these ids end the generation too (kept in token_ids, not in the text)
    include_stop_str_in_output: bool = False  # keep a stop string that ended the text
    min_tokens: int = 0  # EOS and stop ids are masked until this many tokens were generated
    ignore_eos: bool = False  # EOS does not end the generation
    skip_special_tokens: bool = True  # special tokens add nothing to the text
    logprob_ids: tuple[int, ...] = ()  # report these ids (not the top-k) at each generated position
    logprobs: int | None = 5  # top-k per generated token (0..20); None: do not record top-k
    prompt_logprobs: int | None = None  # top-k per prompt token; -1: full vocabulary
    mode: str = "raw"  # "raw" | "processed"
    n: int = 1

    def __post_init__(self):
        self._check_numbers()
        check_k(self.logprobs, "logprobs", allow_full=False)
        check_k(self.prompt_logprobs, "prompt_logprobs", allow_full=True)
        if self.mode not in ("raw", "processed"):
            raise ExplorerError(
                f"`logprobs_mode` must be 'raw' or 'processed', got {self.mode!r}.",
                param="logprobs_mode",
                code="invalid_value",
            )
        self._check_stops()
        self._check_ids()
        for name in ("include_stop_str_in_output", "ignore_eos", "skip_special_tokens"):
            if not isinstance(getattr(self, name), bool):
                raise ExplorerError(f"`{name}` must be true or false.", param=name, code="invalid_type")

    def _check_numbers(self) -> None:
        """Every number in its range (top_k -1 read as 0)."""
        for name, lo, hi, lo_open, integer in NUMBERS:
            _in_range(name, getattr(self, name), lo, hi, lo_open=lo_open, integer=integer)
        if self.top_k == -1:
            object.__setattr__(self, "top_k", 0)
        if self.seed is not None:
            name, lo, hi, lo_open, integer = SEED_RANGE
            _in_range(name, self.seed, lo, hi, lo_open=lo_open, integer=integer)
        if self.min_tokens > self.max_tokens:
            raise ExplorerError(
                f"`min_tokens` (={self.min_tokens}) must not exceed `max_tokens` (={self.max_tokens}).",
                param="min_tokens",
                code="invalid_value",
            )

    def _check_stops(self) -> None:
        if isinstance(self.stop, str) or not all(isinstance(s, str) and s for s in self.stop):
            raise ExplorerError("`stop` must be a list of non-empty strings.", param="stop", code="invalid_type")
        if len(self.stop) > MAX_STOP:
            raise ExplorerError(
                f"`stop` takes at most {MAX_STOP} strings, got {len(self.stop)}.",
                param="stop",
                code="array_above_max_length",
            )
        if any(len(x) > MAX_STOP_CHARS for x in self.stop):
            raise ExplorerError(
                f"Each `stop` string may be at most {MAX_STOP_CHARS} characters.",
                param="stop",
                code="string_above_max_length",
            )

    def _check_ids(self) -> None:
        for name in ("stop_token_ids", "logprob_ids"):
            ids = getattr(self, name)
            if isinstance(ids, (str, bytes)) or not all(
                isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in ids
            ):
                raise ExplorerError(
                    f"`{_api_name(name)}` must be a list of token ids (whole numbers >= 0).",
                    param=_api_name(name),
                    code="invalid_type",
                )
        if len(self.logprob_ids) > MAX_LOGPROB_IDS:
            raise ExplorerError(
                f"`logprob_token_ids` takes at most {MAX_LOGPROB_IDS} ids, got {len(self.logprob_ids)}.",
                param="logprob_token_ids",
                code="array_above_max_length",
            )

    @property
    def greedy(self) -> bool:
        """Temperatures below 1e-5 decode greedily, as vLLM does (dividing by them would overflow float32)."""
        return self.temperature < GREEDY_BELOW

    @property
    def output_k(self) -> int:
        """Entries reported per generated token: the listed ids (`logprob_token_ids`) when given, else the top-k."""
        return len(self.logprob_ids) if self.logprob_ids else (self.logprobs or 0)

    @property
    def penalised(self) -> bool:
        """Whether a penalty changes the logits (then greedy takes the argmax of the penalised ones)."""
        return self.repetition_penalty != 1.0 or self.frequency_penalty != 0.0 or self.presence_penalty != 0.0

    def to_dict(self) -> dict:
        d = asdict(self)
        for name in ("stop", "stop_token_ids", "logprob_ids"):
            d[name] = list(d[name])
        return d

    @classmethod
    def from_dict(cls, d: dict) -> SamplerSettings:
        """The settings `to_dict()` wrote (a result's `sampler`): lists back to tuples, unknown keys ignored."""
        names = {f.name for f in fields(cls)}
        kw: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in d.items() if k in names}
        return cls(**kw)


def _api_name(field_name: str) -> str:
    return {"logprob_ids": "logprob_token_ids"}.get(field_name, field_name)
