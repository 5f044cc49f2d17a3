"""Every rule on what a request may ask, in one place: sampler settings, top-k counts and the server's limits.

The CLI, the web app and the HTTP API all build these types, so they accept and
reject exactly the same things with the same messages.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
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


SEED_RANGE = ("seed", 0, 2**63 - 1, False, True)  # checked only when a seed is given
LESSON_TEMPERATURE = (0.05, 5.0)  # what a lesson's sample step may draw at (a class sees no greedy step)


def is_greedy(temperature: float | None) -> bool:
    """Whether `temperature` decodes greedily: below 1e-5, as vLLM's sampler (dividing by it would overflow float32).

    The one test of greedy: the engine, the page, the renderers and the lessons all ask this. None (a result
    that does not say) is not greedy."""
    return temperature is not None and temperature < GREEDY_BELOW


@dataclass(frozen=True)
class Knob:
    """A number field's slider where a person sets it: lo..hi in steps of `step`, starting at `default`, `label`.

    Wider ranges than the engine's are refused at the field (`rule`); a knob is the narrower part a page offers."""

    lo: float
    hi: float
    step: float
    default: float
    label: str

    def at(self, default: float) -> Knob:
        """The same slider starting at `default` (the Score and What-if tabs start at the model's own temperature)."""
        return replace(self, default=default)


def rule(
    default: Any,
    lo: float | None = None,
    hi: float | None = None,
    *,
    lo_open: bool = False,
    integer: bool = False,
    knob: Knob | None = None,
    page: bool = False,
    wire: bool = True,
) -> Any:
    """A SamplerSettings field and every rule about it, in one place.

    `lo`..`hi` (`lo_open`: lo excluded; `integer`: whole numbers): the range the engine accepts, checked once in
    `__post_init__`. `knob`: its slider on the page (What-if shows every knob). `page`: Generate, Chat and Branch
    show it too (their controls, their links, their endpoints' parameters). `wire`: a request body (the HTTP API's,
    the remote engine's) carries it by this same name and type (False: the API reads it its own way)."""
    meta: dict[str, Any] = {"page": page, "wire": wire}
    if lo is not None:
        meta["range"] = (lo, hi, lo_open, integer)
    if knob is not None:
        meta["knob"] = knob
    return field(default=default, metadata=meta)


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
            code=("integer_below_min_value" if below else "integer_above_max_value")
            if integer
            else ("number_below_min_value" if below else "number_above_max_value"),
        )


def check_number(name: str, value: Any) -> None:
    """One SamplerSettings number (`n`, ...) in its range before the rest of a request is read: the same
    ExplorerError as SamplerSettings' own check (chat counts its choices before it builds the settings)."""
    for field_name, lo, hi, lo_open, integer in numbers():
        if field_name == name:
            _in_range(name, value, lo, hi, lo_open=lo_open, integer=integer)


@dataclass(frozen=True)
class SamplerSettings:
    """How to generate. temperature 0 means greedy; top_k 0 and top_p 1 mean off."""

    max_tokens: int = rule(
        32, 0, 1_000_000, integer=True, knob=Knob(1, 512, 1, 48, "Max tokens"), page=True, wire=False
    )
    temperature: float = rule(1.0, 0.0, 100.0, knob=Knob(0.0, 2.0, 0.05, 0.7, "Temperature (0 = greedy)"), page=True)
    top_p: float = rule(1.0, 0.0, 1.0, lo_open=True, knob=Knob(0.01, 1.0, 0.01, 1.0, "Top-p (1 = off)"), page=True)
    top_k: int = rule(0, -1, 1_000_000, integer=True, knob=Knob(0, 200, 1, 0, "Top-k (0 = off)"), page=True)  # -1: 0
    min_p: float = rule(
        0.0, 0.0, 1.0, knob=Knob(0.0, 1.0, 0.01, 0.0, "Min-p (0 = off)"), page=True
    )  # p >= min_p * p(top)
    # > 1 discourages any token already in the prompt or output; 1 = off
    repetition_penalty: float = rule(
        1.0, 0.0, 10.0, lo_open=True, knob=Knob(0.5, 3.0, 0.05, 1.0, "Repetition penalty (1 = off)")
    )
    frequency_penalty: float = rule(0.0, -2.0, 2.0)  # minus this per earlier occurrence in the output
    presence_penalty: float = rule(  # minus this once a token occurred in the output
        0.0, -2.0, 2.0, knob=Knob(-2.0, 2.0, 0.1, 0.0, "Presence penalty (0 = off, > 0 = fewer repeats)"), page=True
    )
    seed: int | None = rule(None, page=True)  # its range: SEED_RANGE, when given
    stop: tuple[str, ...] = rule((), page=True, wire=False)
    # these ids end the generation too (kept in token_ids, not in the text)
    stop_token_ids: tuple[int, ...] = rule((), wire=False)
    include_stop_str_in_output: bool = rule(False)  # keep a stop string that ended the text
    min_tokens: int = rule(0, 0, 1_000_000, integer=True)  # EOS and stop ids are masked until this many were generated
    ignore_eos: bool = rule(False)  # EOS does not end the generation
    skip_special_tokens: bool = rule(True)  # special tokens add nothing to the text
    logprob_ids: tuple[int, ...] = rule((), wire=False)  # report these ids (not the top-k) at each generated position
    logprobs: int | None = rule(5, wire=False)  # top-k per generated token (0..20); None: do not record top-k
    prompt_logprobs: int | None = rule(None, wire=False)  # top-k per prompt token; -1: full vocabulary
    mode: str = rule("raw", page=True, wire=False)  # "raw" | "processed"
    n: int = rule(1, 1, 16, integer=True)

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
        for name, lo, hi, lo_open, integer in numbers():
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
        return is_greedy(self.temperature)

    @property
    def top_entries(self) -> int:
        """The top-k per generated token as a count: `logprobs`, 0 where not asked (the one place None becomes 0 for
        the code that counts or compares it; `logprobs` itself keeps None as "not asked" for the exporters)."""
        return self.logprobs if self.logprobs is not None else 0

    @property
    def output_k(self) -> int:
        """Entries reported per generated token: the listed ids (`logprob_token_ids`) when given, else the top-k."""
        return len(self.logprob_ids) if self.logprob_ids else self.top_entries

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


def numbers() -> tuple[tuple[str, float, float, bool, bool], ...]:
    """(name, low, high, low open, integer) of each number SamplerSettings checks, in field order."""
    return tuple((f.name, *f.metadata["range"]) for f in fields(SamplerSettings) if "range" in f.metadata)


def knobs(page: bool = False) -> dict[str, Knob]:
    """Each number field's slider by name (`page`: only the fields Generate, Chat and Branch show)."""
    return {
        f.name: f.metadata["knob"]
        for f in fields(SamplerSettings)
        if "knob" in f.metadata and (f.metadata["page"] or not page)
    }


def page_fields() -> tuple[str, ...]:
    """The fields Generate, Chat and Branch show, in order (their sliders: `knobs(page=True)`; seed, stop, mode)."""
    return tuple(f.name for f in fields(SamplerSettings) if f.metadata["page"])


def wire_fields() -> tuple[str, ...]:
    """The fields a request body carries as they are, by the same name (the API's `_Wire`, the remote's body)."""
    return tuple(f.name for f in fields(SamplerSettings) if f.metadata["wire"])


def default(name: str) -> Any:
    """A field's default (`SamplerSettings().name` without building one)."""
    return SamplerSettings.__dataclass_fields__[name].default


NUMBERS = numbers()  # the ranges as a table (docs/gen_api.py)
