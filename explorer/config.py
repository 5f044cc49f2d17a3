"""Every setting of a server, the CLI and the engines, read from the environment in this one module.

An entry point builds one frozen `Config` (`Config.from_env()`, or `Config.from_args(a)` where command-line flags
win over the variables) and hands it down; `use(config)` makes it the one `current()` answers while the entry point
runs. Library code that was handed nothing (a notebook, a test, a page built on its own) calls `current()`: the
configuration the environment describes at that moment (parsed again only when a variable changed).

Each field names its variable, default and meaning in its metadata (`setting(...)`): docs/settings.md is written
from them (`python docs/gen_settings.py`), and tests/test_config.py holds README.md and docs/ to them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields, replace
from typing import Any, Generic, TypeVar

from explorer.errors import ExplorerError

MAX_K = 20  # the default cap on top-k alternatives per position (vLLM's default --max-logprobs)
YES = ("1", "true", "yes", "on")
NO = ("0", "false", "no", "off")

Parse = Callable[[str, str], Any]  # (variable, its non-blank value) -> the field's value, or ExplorerError


# ---- how a variable's text becomes a value (each keeps the message its variable always had) --------------------
def text(name: str, raw: str) -> str:
    return raw


def names(name: str, raw: str) -> tuple[str, ...]:
    """a,b,c -> ('a', 'b', 'c'), blanks dropped."""
    return tuple(x.strip() for x in raw.split(",") if x.strip())


def networks(name: str, raw: str) -> tuple[str, ...]:
    """a,b/24,* -> the addresses and networks (CIDR) named, each checked; `*`: any address."""
    import ipaddress

    out = names(name, raw)
    for x in out:
        try:
            if x != "*":
                ipaddress.ip_network(x, strict=False)
        except ValueError:
            raise ExplorerError(
                f"{name}: {x!r} is not an address or a network (such as 10.0.0.2 or 10.0.0.0/8); list the proxies "
                "in front of this server, comma-separated, or * for any.",
                param=name,
            ) from None
    return out


def whole(name: str, raw: str) -> int:
    try:
        return int(raw.strip())
    except ValueError:
        raise ExplorerError(f"{name}={raw!r} must be a whole number.", param=name) from None


def _amount(kind: type) -> Parse:
    """A number of `kind` that is not negative (the limits')."""

    def parse(name: str, raw: str):
        try:
            value = kind(raw.strip())
        except ValueError:
            raise ExplorerError(f"{name}={raw.strip()!r} must be a number.", param=name) from None
        if value < 0:
            raise ExplorerError(f"{name}={raw.strip()!r} must not be negative.", param=name)
        return value

    return parse


def _above_zero(kind: type) -> Parse:
    """A number of `kind` above 0 (the rooms' caps)."""

    def parse(name: str, raw: str):
        try:
            value = kind(raw)
        except ValueError:
            raise ExplorerError(f"{name} must be a number, got {raw!r}.", param=name) from None
        if value <= 0:
            raise ExplorerError(f"{name} must be more than 0, got {raw!r}.", param=name)
        return value

    return parse


count, seconds = _amount(int), _amount(float)
positive, positive_seconds = _above_zero(int), _above_zero(float)


def one_or_zero(name: str, raw: str) -> bool:
    """1/true/yes/on or 0/false/no/off; anything else is refused."""
    value = raw.strip().lower()
    if value in YES:
        return True
    if value in NO:
        return False
    raise ExplorerError(f"{name}={value!r} must be 1 or 0.", param=name)


def truthy(name: str, raw: str) -> bool:
    """1/true/yes/on: on; any other value: off."""
    return raw.strip().lower() in YES


def on_unless_zero(name: str, raw: str) -> bool:
    return raw != "0"


def on_unless_off(name: str, raw: str) -> bool:
    return raw.lower() not in NO


def on_unless_blank_or_zero(name: str, raw: str) -> bool:
    return raw not in ("", "0")


def only_one(name: str, raw: str) -> bool:
    return raw == "1"


def top_k_cap(name: str, raw: str) -> int:
    """-1 (no cap) or a whole number from 0."""
    raw = raw.strip()
    try:
        value = int(raw)
    except ValueError:
        raise ExplorerError(f"{name}={raw!r} must be a whole number (or -1 for no cap).") from None
    if value < -1:
        raise ExplorerError(f"{name}={raw!r} must be -1 (no cap) or at least 0.")
    return value


def setting(
    default: Any, env: str, help: str, parse: Parse = text, *, flag: str = "", shown: str = "", secret: bool = False
) -> Any:
    """A field set by the variable `env` (and the CLI's `flag`, where it has one); `shown`: the default in words
    where the value alone would mislead (docs/settings.md); a `secret` is left out of the Config's repr (logs)."""
    metadata = {"env": env, "help": help, "parse": parse, "flag": flag, "shown": shown}
    return field(default=default, metadata=metadata, repr=not secret)


def read(cls: type, environ: Mapping[str, str]) -> dict[str, Any]:
    """The fields of the dataclass `cls` that their variables set in `environ` (a blank variable is unset)."""
    found = {}
    for f in fields(cls):
        env, raw = f.metadata.get("env"), None
        if env:
            raw = environ.get(env)
        if raw is not None and raw.strip():
            found[f.name] = f.metadata["parse"](env, raw)
    return found


# ---- the caps ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Limits:
    """What one request may cost, on the page and the API alike; reported by GET /v1/models and the page, and named
    in the messages that enforce them. A public deployment (`public=True`) starts from tighter defaults."""

    max_body_bytes: int = setting(
        2_000_000, "EXPLORER_MAX_BODY_BYTES", "a request body larger than this is refused before it is parsed", count
    )
    max_choices: int = setting(64, "EXPLORER_MAX_CHOICES", "prompts x n of one request", count)
    max_tokens: int = setting(
        0, "EXPLORER_MAX_TOKENS", "most tokens one choice may generate; 0: the model's context", count
    )
    max_input_tokens: int = setting(
        0, "EXPLORER_MAX_INPUT_TOKENS", "most tokens one prompt or text may have; 0: the model's context", count
    )
    max_seconds: float = setting(
        300.0, "EXPLORER_MAX_SECONDS", "a request computing longer is stopped (0: no limit)", seconds
    )
    full_vocab_max_prompt_tokens: int = setting(
        256, "EXPLORER_FULL_VOCAB_MAX_PROMPT_TOKENS", "prompt tokens x n for `prompt_logprobs: -1`", count
    )
    hidden_states: bool = setting(
        True,
        "EXPLORER_HIDDEN_STATES",
        "`return_hidden_states` served (off on a public server unless the operator says)",
        one_or_zero,
    )
    hidden_states_max_tokens: int = setting(
        16,
        "EXPLORER_HIDDEN_STATES_MAX_TOKENS",
        "positions whose states a `return_hidden_states` request gets back (x n)",
        count,
    )
    hidden_states_max_bytes: int = setting(
        32 * 1024 * 1024,
        "EXPLORER_HIDDEN_STATES_MAX_BYTES",
        "its states' bytes: positions x layers x hidden x dtype",
        count,
    )
    queue: int = setting(
        32,
        "EXPLORER_QUEUE",
        'model requests waiting beyond the running ones; more get a 429 (the page: "busy")',
        count,
    )
    workers: int = setting(
        8,
        "EXPLORER_WORKERS",
        "model requests computing at once; generations among them decode together (one batch)",
        count,
    )
    max_logprobs: int = setting(
        MAX_K,
        "EXPLORER_MAX_LOGPROBS",
        "most alternatives a request may ask per position; -1: no cap (then -1 asks for the whole vocabulary)",
        top_k_cap,
        flag="--max-logprobs",
    )
    public: bool = False  # a public deployment (--public, EXPLORER_PUBLIC=1, or a Hugging Face Space)

    @classmethod
    def from_env(cls, public: bool = False, environ: Mapping[str, str] | None = None) -> Limits:
        """The limits EXPLORER_* variables set, over the defaults (PUBLIC_LIMITS' where `public`)."""
        base = PUBLIC_LIMITS if public else cls()
        limits = replace(base, **read(cls, os.environ if environ is None else environ), public=public)
        return replace(limits, workers=max(1, limits.workers))

    def max_new_tokens(self, context: int, prompt_tokens: int) -> int:
        """Most tokens a choice may generate after `prompt_tokens` of a model reading `context`."""
        room = max(context - prompt_tokens, 0)
        return min(room, self.max_tokens) if self.max_tokens else room

    def check_input(self, n: int, param: str = "prompt") -> None:
        """Refuse a prompt or text of `n` tokens over `max_input_tokens` (the model's context is the engine's check)."""
        if self.max_input_tokens and n > self.max_input_tokens:
            raise ExplorerError(
                f"The text is {n} tokens; this server takes at most {self.max_input_tokens} per request "
                "(EXPLORER_MAX_INPUT_TOKENS): shorten it.",
                param=param,
                code="input_tokens_above_cap",
            )

    def check_new_tokens(self, n: int, param: str = "max_tokens", context: int = 0) -> None:
        """Refuse asking for more than `max_tokens` new tokens (where unset: more than the model's `context`, when
        given)."""
        cap = self.max_tokens or context
        if cap and n > cap:
            raise ExplorerError(
                f"`{param}` (={n}) is more than this server generates per choice ({cap}"
                f"{', EXPLORER_MAX_TOKENS' if self.max_tokens else ': the model context'}): ask for fewer.",
                param=param,
                code="integer_above_max_value",
            )

    def report(self) -> dict:
        return {
            "public": self.public,
            "max_body_bytes": self.max_body_bytes,
            "max_choices": self.max_choices,
            "max_tokens": self.max_tokens or None,
            "max_input_tokens": self.max_input_tokens or None,
            "max_seconds": self.max_seconds or None,
            "full_vocab_max_prompt_tokens": self.full_vocab_max_prompt_tokens,
            "hidden_states": self.hidden_states,
            "hidden_states_max_tokens": self.hidden_states_max_tokens,
            "hidden_states_max_bytes": self.hidden_states_max_bytes,
            "queue": self.queue,
            "workers": self.workers,
        }

    def summary(self, context: int = 0) -> str:
        """One line for people: what an action here may cost (input capped at the model's `context` where known)."""
        most = min(self.max_input_tokens or context, context or self.max_input_tokens)
        parts = [
            f"texts up to {most:,} tokens" if most else None,
            f"up to {self.max_tokens:,} new tokens" if self.max_tokens else None,
            f"{self.max_seconds:g} s per action" if self.max_seconds else None,
            f"at most {self.queue} people waiting in line" if self.queue else None,
        ]
        return ", ".join(p for p in parts if p)


PUBLIC_LIMITS = Limits(
    max_body_bytes=200_000,
    max_choices=4,
    max_tokens=256,
    max_input_tokens=2048,
    max_seconds=60.0,
    full_vocab_max_prompt_tokens=32,
    hidden_states=False,  # EXPLORER_HIDDEN_STATES=1 turns it on (under the same caps)
    queue=16,
    workers=4,
    public=True,
)


@dataclass(frozen=True)
class RoomLimits:
    """The caps of rooms; EXPLORER_ROOMS_* set them (a public server starts from PUBLIC_ROOMS)."""

    rooms: int = setting(50, "EXPLORER_ROOMS_MAX", "rooms at once on this server", positive)
    per_address: int = setting(
        50,
        "EXPLORER_ROOMS_PER_ADDRESS",
        "rooms at once opened from one client address (behind a proxy EXPLORER_FORWARDED_ALLOW_IPS names, or a "
        "Space's: the client address it appended to X-Forwarded-For)",
        positive,
    )
    students: int = setting(200, "EXPLORER_ROOMS_STUDENTS", "students in one room", positive)
    joins_per_minute: int = setting(
        60,
        "EXPLORER_ROOMS_JOINS_PER_MINUTE",
        "students joining from one client address in a minute (a class behind one school router shares one)",
        positive,
    )
    answers: int = setting(1, "EXPLORER_ROOMS_ANSWERS", "answers per student per guess or choose step", positive)
    draws: int = setting(20, "EXPLORER_ROOMS_DRAWS", "draws per student per sample step", positive)
    lifetime_s: float = setting(
        3 * 3600.0, "EXPLORER_ROOMS_LIFETIME_S", "a room ends this long after it started", positive_seconds
    )
    lessons: str = setting(
        "", "EXPLORER_LESSONS", "a folder of the teacher's own lesson files, listed beside the built-ins"
    )
    idle_s: float = setting(
        3600.0, "EXPLORER_ROOMS_IDLE_S", "... or this long after its last request", positive_seconds
    )

    @classmethod
    def from_env(cls, public: bool = False, environ: Mapping[str, str] | None = None) -> RoomLimits:
        return replace(PUBLIC_ROOMS if public else cls(), **read(cls, os.environ if environ is None else environ))


PUBLIC_ROOMS = RoomLimits(
    rooms=20, per_address=3, students=80, joins_per_minute=60, answers=1, draws=20, lifetime_s=2 * 3600.0, idle_s=1800.0
)


# ---- the engines ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EngineOptions:
    """How models load and run here (the torch and llama.cpp engines; a remote one ignores these)."""

    kind: str = setting(
        "auto",
        "EXPLORER_ENGINE",
        "auto (llama.cpp for a .gguf, and for the default model on a CPU-only machine), torch or llama.cpp",
        flag="--engine",
    )
    device: str | None = setting(
        None,
        "EXPLORER_DEVICE",
        "auto (CUDA, then MPS, then CPU), cpu, cuda, cuda:N, mps",
        flag="--device",
        shown="auto",
    )
    dtype: str | None = setting(
        None,
        "EXPLORER_DTYPE",
        "auto (bfloat16 on a GPU, float32 elsewhere), float32, bfloat16, float16",
        flag="--dtype",
        shown="auto",
    )
    compile: bool = setting(
        True,
        "EXPLORER_COMPILE",
        "torch.compile the statistics kernels (0: eager, a few seconds less at load)",
        on_unless_off,
    )
    threads: int = setting(0, "EXPLORER_THREADS", "llama.cpp's threads; 0: every core", whole, shown="every core")
    context: int = setting(
        0,
        "EXPLORER_CONTEXT",
        "llama.cpp's context (KV positions); 0: the model's trained context, at most 8,192",
        whole,
        shown="8,192",
    )
    onednn: bool = setting(
        True, "EXPLORER_ONEDNN", "float32 linear layers on a CPU run on oneDNN's packed kernels (0: PyTorch's own)",
        on_unless_zero,
    )  # fmt: skip
    team: bool = setting(
        True,
        "EXPLORER_TEAM",
        "one thread runs every forward pass on all cores (0: each thread its own parallel work; read at import)",
        on_unless_zero,
    )
    llama_verbose: bool = setting(
        False, "EXPLORER_LLAMA_VERBOSE", "llama.cpp's own log on stderr", on_unless_blank_or_zero
    )
    cache: str = setting(
        "",
        "EXPLORER_CACHE",
        "where converted models and GGUF tokenizers are kept",
        shown="~/.cache/logprob-explorer",
    )
    hub_offline: bool = setting(
        False, "HF_HUB_OFFLINE", "Hugging Face's: never reach the hub (only folders and the local cache)",
        on_unless_blank_or_zero,
    )  # fmt: skip
    hub_endpoint: str = setting(
        "https://huggingface.co", "HF_ENDPOINT", "Hugging Face's: the hub's address (checked before a download)"
    )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> EngineOptions:
        return cls(**read(cls, os.environ if environ is None else environ))


# ---- the whole configuration ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Config:
    """A server's, the CLI's and the engines' settings, read once by an entry point and handed down."""

    models: tuple[str, ...] = setting(
        (),
        "EXPLORER_MODELS",
        "the models this server may serve (a,b,c, or `--model` repeated: hub ids or local folders); the first is the "
        "default",
        names,
        flag="--model",
        shown="EXPLORER_MODEL",
    )
    model: str | None = setting(
        None, "EXPLORER_MODEL", "the one model, where EXPLORER_MODELS is unset", flag="--model",
        shown="SmolLM2-135M-Instruct",
    )  # fmt: skip
    host: str = setting(
        "127.0.0.1", "EXPLORER_HOST", "the address the server listens on", flag="--host", shown="127.0.0.1 (0.0.0.0 on a Space)"
    )  # fmt: skip
    port: int = setting(7860, "EXPLORER_PORT", "the server's port", whole, flag="--port")
    share: bool = setting(
        False, "EXPLORER_SHARE", "1: a public share link through Gradio's tunnel", only_one, flag="--share"
    )
    auth: str | None = setting(
        None,
        "EXPLORER_AUTH",
        "user:password: locks the whole server: the page (Gradio's login), `/config`, every Gradio route and `/v1` "
        "(basic auth, or `Bearer user:password` when no API key is set)",
        flag="--auth",
        shown="off",
        secret=True,
    )
    api_key: str | None = setting(
        None, "EXPLORER_API_KEY", "guards `/v1` only (send `Authorization: Bearer <key>`); the page stays open",
        shown="off", secret=True,
    )  # fmt: skip
    public: bool = setting(
        False,
        "EXPLORER_PUBLIC",
        "public mode: the listed models only, the public limits, the HTTP API off unless `EXPLORER_API_KEY` is set",
        truthy,
        flag="--public",
        shown="on on a Space (`SPACE_ID` set), else off",
    )
    space: str = setting("", "SPACE_ID", "set by Hugging Face on a Space: public mode and 0.0.0.0 by default")
    forwarded_allow_ips: tuple[str, ...] = setting(
        (),
        "EXPLORER_FORWARDED_ALLOW_IPS",
        "the proxies in front of this server (addresses or networks, comma-separated; * any): only their "
        "X-Forwarded-For, -Host and -Proto are believed, anyone else's are ignored (as uvicorn's --forwarded-allow-ips)",
        networks,
        flag="--forwarded-allow-ips",
        shown="none (on a Space: its own proxy, on the Space's private network)",
    )
    allow_hub_models: bool | None = setting(
        None,
        "EXPLORER_ALLOW_HUB_MODELS",
        "whether visitors may type any hub id (never a local path); always off in public mode",
        truthy,
        shown="1 on 127.0.0.1, 0 on a Space or another host",
    )
    max_loaded_models: int = setting(
        2,
        "EXPLORER_MAX_LOADED_MODELS",
        "models kept in memory; the least recently used goes first (never one a request is using)",
        whole,
    )
    model_memory_mb: int = setting(
        -1,
        "EXPLORER_MODEL_MEMORY_MB",
        "the same, as a budget of weight memory in MB (0: none)",
        whole,
        shown="half the device's memory (the GPU's, else the machine's RAM)",
    )
    backend: str | None = setting(
        None, "EXPLORER_BACKEND", "a vLLM / OpenAI-compatible /v1 URL to use as the engine", flag="--backend"
    )
    backend_key: str | None = setting(None, "EXPLORER_BACKEND_KEY", "its API key", flag="--backend-key", secret=True)
    backend_tokenizer: str | None = setting(
        None,
        "EXPLORER_BACKEND_TOKENIZER",
        "a folder or hub id of the served model's tokenizer, or `server`: tokenize on the server",
        flag="--backend-tokenizer",
    )
    engine: EngineOptions = field(default_factory=EngineOptions)
    limits: Limits = field(default_factory=Limits)
    rooms: RoomLimits = field(default_factory=RoomLimits)
    read_from: tuple[tuple[str, str], ...] = field(
        default=(), repr=False, compare=False
    )  # the variables it was made of

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Config:
        """The configuration the variables of `environ` (default: this process's) describe."""
        environ = os.environ if environ is None else environ
        own = read(cls, environ)
        space = own.get("space", "")
        public = own.get("public", bool(space))
        if space and "host" not in own:  # a Space reaches the app from outside the container
            own["host"] = "0.0.0.0"
        return cls(
            **{**own, "public": public},
            read_from=tuple((name, environ[name]) for name in VARIABLES if name in environ),
            engine=EngineOptions.from_env(environ),
            limits=Limits.from_env(public, environ),
            rooms=RoomLimits.from_env(public, environ),
        )

    @classmethod
    def from_args(cls, a: Any, environ: Mapping[str, str] | None = None) -> Config:
        """The configuration of a command line `a` (argparse's namespace): each flag given over its variable."""
        parts: dict[str, dict[str, Any]] = {"": {}, "engine": {}, "limits": {}}
        for flag, (part, name) in FLAGS.items():
            value = getattr(a, flag, None)
            if value is not None and value is not False:  # given (a switch: switched on)
                parts[part][name] = value
        model = getattr(a, "model", None)
        if isinstance(model, list):  # serve: --model repeated
            parts[""]["models"] = tuple(model)
        elif model:
            parts[""]["model"] = model
        if "forwarded_allow_ips" in parts[""]:
            parts[""]["forwarded_allow_ips"] = networks("--forwarded-allow-ips", parts[""]["forwarded_allow_ips"])
        if "max_logprobs" in parts["limits"]:
            parts["limits"]["max_logprobs"] = top_k_cap("--max-logprobs", str(parts["limits"]["max_logprobs"]))
        config = cls.from_env(environ)
        config = replace(config, **parts[""], engine=replace(config.engine, **parts["engine"]))
        config = config.with_public(config.public)  # --public: the public limits
        return replace(config, limits=replace(config.limits, **parts["limits"]))

    def with_public(self, public: bool) -> Config:
        """The same settings for a public deployment (or not): its limits start from the public defaults."""
        if public == self.limits.public:
            return replace(self, public=public)
        environ = dict(self.read_from)
        limits = replace(Limits.from_env(public, environ), max_logprobs=self.limits.max_logprobs)
        return replace(self, public=public, limits=limits, rooms=RoomLimits.from_env(public, environ))

    @property
    def default_model(self) -> str | None:
        """The operator's first model (None: the engines' default)."""
        return (self.models or (self.model,))[0]

    @property
    def served(self) -> list[str]:
        """The operator's list: EXPLORER_MODELS, else EXPLORER_MODEL, else empty (the engines' default)."""
        return list(self.models) or ([self.model] if self.model else [])

    @property
    def proxies(self) -> tuple[str, ...]:
        """The peers whose forwarding headers are believed: EXPLORER_FORWARDED_ALLOW_IPS where set; on a Space its own
        proxy (nothing else reaches a Space's container: any peer on its private network); else none."""
        return self.forwarded_allow_ips or (SPACE_PROXY if self.space else ())

    def allow_hub(self) -> bool:
        """Whether visitors may type a hub id: EXPLORER_ALLOW_HUB_MODELS where set, else anywhere but on a Space."""
        return self.allow_hub_models if self.allow_hub_models is not None else not self.space


SPACE_PROXY = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "127.0.0.0/8", "::1", "fc00::/7")

FLAGS = {  # the CLI's flags (argparse's names; --model apart) -> (the part of a Config, its field there)
    "device": ("engine", "device"),
    "dtype": ("engine", "dtype"),
    "engine": ("engine", "kind"),
    "backend": ("", "backend"),
    "backend_key": ("", "backend_key"),
    "backend_tokenizer": ("", "backend_tokenizer"),
    "host": ("", "host"),
    "port": ("", "port"),
    "share": ("", "share"),
    "auth": ("", "auth"),
    "public": ("", "public"),
    "forwarded_allow_ips": ("", "forwarded_allow_ips"),
    "max_logprobs": ("limits", "max_logprobs"),
}


# ---- the one a process runs under ------------------------------------------------------------------------------
_used: Config | None = None


def variables() -> list[str]:
    """Every variable a Config reads, in field order."""
    out = []
    for cls in (Config, EngineOptions, Limits, RoomLimits):
        out += [f.metadata["env"] for f in fields(cls) if f.metadata.get("env")]
    return out


VARIABLES = tuple(variables())
ENGINE_VARIABLES = tuple(f.metadata["env"] for f in fields(EngineOptions))


T = TypeVar("T")


class FromEnviron(Generic[T]):
    """`build(os.environ)`, built again only when one of the variables `names` changed (a test's monkeypatch among
    them), else the one built before."""

    def __init__(self, names: tuple[str, ...], build: Callable[[Mapping[str, str]], T]):
        self.names, self.build = names, build
        self.seen: tuple[tuple[str | None, ...], T] | None = None  # (the variables' values, what they made)

    def __call__(self) -> T:
        values = tuple(os.environ.get(name) for name in self.names)
        if self.seen is None or self.seen[0] != values:
            self.seen = (values, self.build(os.environ))
        return self.seen[1]


_config_now = FromEnviron(VARIABLES, Config.from_env)
_engine_now = FromEnviron(ENGINE_VARIABLES, EngineOptions.from_env)  # only its variables: see engine_options


def current() -> Config:
    """The configuration in force: the one an entry point `use`s, else what the environment says now."""
    return _used if _used is not None else _config_now()


def engine_options() -> EngineOptions:
    """The engines' settings in force (only their variables are read: a bad limit does not stop a model loading);
    parsed again only when one of the engine variables changed, as `current()`."""
    return _used.engine if _used is not None else _engine_now()


@contextmanager
def use(config: Config) -> Iterator[Config]:
    """`config` is the one `current()` answers (in every thread) until the block ends; then the one before."""
    global _used
    before, _used = _used, config
    try:
        yield config
    finally:
        _used = before


def quiet_gradio() -> None:
    """Gradio sends no usage statistics from a server of ours unless its operator asked for them."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
