"""The models a server may serve: the operator's list, loaded on first use, least recently used dropped first.

Who may load what:
- the operator names the models (`--model`, repeatable, the first is the default; or
  EXPLORER_MODELS=a,b,c): hub ids or local folders, which are then shown by their folder name;
- a visitor (page or API) may pick any of those, or type a hub id when the deployment
  allows it (`allow_hub`); never a local path, never `trust_remote_code`;
- whatever the reason a name cannot be served, the message is the same and shows no path.

Each browser session keeps its own current model name; `use(name)` pins a model while a
request computes with it, so eviction never drops a model in use.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from explorer.config import Config, current
from explorer.engine import DEFAULT_MODEL, ModelEngine, select
from explorer.engine.batching.scheduler import attach
from explorer.engine.capabilities import has_hidden_states, no_hidden_states
from explorer.engine.local.memory import device_memory_mb
from explorer.engine.select import EngineSpec
from explorer.errors import ExplorerError
from explorer.rules.sampler import Limits

log = logging.getLogger(__name__)
AnyEngine = ModelEngine  # a model loaded here (torch, llama.cpp), or a RemoteEngine served by a backend (--backend)
HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?$")


@dataclass(frozen=True)
class ModelSpec:
    name: str  # what pages, API clients and exports call it (never a filesystem path)
    source: str  # hub id or local folder, as the operator gave it
    trust_remote_code: bool = False
    hub_only: bool = False  # typed by a visitor: never read as a local folder
    twin_of: str | None = None  # the torch engine on the weights of this served model (its views need hidden states)


TWIN = " (torch engine)"  # the name a served model's torch twin is kept under (the page's memory line shows it)


def public_name(source: str) -> str:
    """A local folder is shown by its own name; a hub id as is."""
    if os.path.isdir(source) or source.startswith(("/", ".", "~")):
        return os.path.basename(os.path.normpath(os.path.expanduser(source))) or source
    return source


def specs_of(sources: list[str], trust_remote_code: bool = False) -> dict[str, ModelSpec]:
    """The operator's models by public name, in order; two folders may not share a name."""
    specs: dict[str, ModelSpec] = {}
    for src in sources:
        spec = ModelSpec(public_name(src), src, trust_remote_code)
        if spec.name in specs and specs[spec.name].source != src:
            raise ExplorerError(
                f"Two models are both called {spec.name!r}: give their folders different names.", param="model"
            )
        specs.setdefault(spec.name, spec)
    return specs


class Models:
    """Registry of loadable models, keyed by public name; at most `max_loaded` (and `max_mb` of weights) in memory."""

    def __init__(
        self,
        models: list[str] | None = None,
        *,
        device: str | None = None,
        dtype: str | None = None,
        trust_remote_code: bool = False,
        max_loaded: int | None = None,
        max_mb: int | None = None,
        allow_hub: bool | None = None,
        loader=None,
        public: bool = False,
        limits: Limits | None = None,
        engine: str | None = None,
        config: Config | None = None,
    ):
        """The operator's `models` (else `config`'s list, else the default model); every argument left unset comes
        from `config` (default: the configuration in force, explorer/config.py)."""
        config = config or current()
        self.specs = specs_of([m for m in (models or []) if m] or config.served or [DEFAULT_MODEL], trust_remote_code)
        self.default = next(iter(self.specs))
        self.device = device or config.engine.device
        self.dtype = dtype or config.engine.dtype
        self.options = config.engine  # how its models load and run (EXPLORER_COMPILE, EXPLORER_THREADS, ...)
        self.max_loaded = max(1, max_loaded if max_loaded is not None else config.max_loaded_models)
        # weights in memory at most (0: no budget); by default half of what the device has
        self.max_mb = max_mb if max_mb is not None else config.model_memory_mb
        if self.max_mb < 0:
            self.max_mb = device_memory_mb(self.device) // 2
        allow_hub = config.allow_hub() if allow_hub is None else allow_hub
        if public and allow_hub:
            log.warning("public mode: visitors pick only the listed models (EXPLORER_ALLOW_HUB_MODELS is ignored)")
        self.public = public
        # what one request may cost, on the page and the API
        self.limits = limits or config.with_public(public).limits
        self.allow_hub = allow_hub and not public  # a public server: the operator's list only
        self.compile: bool | None = None  # torch.compile the statistics (None: EXPLORER_COMPILE); off on ZeroGPU
        self.engine = engine  # auto | torch | llama.cpp (None: EXPLORER_ENGINE, else auto: engine/select.py) | remote
        self._loader = loader or self._load
        self._engines: OrderedDict[str, AnyEngine] = OrderedDict()  # least recently used first
        self._pins: dict[str, int] = {}
        self._lock = threading.Lock()  # guards _engines and _pins
        self._load_lock = threading.Lock()  # one load at a time (they are memory-heavy)
        _REGISTRIES.add(self)
        self.host: str | None = None  # the address the server listens on (set by it: links name one phones reach)
        self.public_url: str | None = None  # a share tunnel's public URL, when there is one
        self.batch_size = 0  # set by a server: its local models decode their generations together (serve_batched)
        self._said: set[str] = set()

    def _load(self, spec: ModelSpec) -> AnyEngine:
        """`spec`'s engine, loaded here (a served model's twin on the torch engine)."""
        return select.load(
            EngineSpec(
                spec.source,
                select.TORCH if spec.twin_of else self.engine,
                device=self.device,
                dtype=self.dtype,
                trust_remote_code=spec.trust_remote_code,
                name=spec.twin_of or spec.name,
                hub_only=spec.hub_only,
                compile=self.compile,
                options=self.options,
            )
        )

    def forget_locks(self) -> None:
        """In a forked child (a ZeroGPU worker): a lock another thread of the parent held at the fork stays held here,
        where that thread does not exist (only the forking one is copied); the child's registry takes fresh ones, each
        loaded engine a fresh forward lock, and no pin of the parent's threads holds a model here."""
        self._lock, self._load_lock = threading.Lock(), threading.Lock()
        self._pins = {}
        for engine in self._engines.values():
            if hasattr(engine, "lock"):
                engine.lock = threading.Lock()

    def serve_batched(self, size: int) -> None:
        """From now on every local model here, loaded or to be, decodes up to `size` generations together
        (explorer/engine/batching/scheduler.py); each says at start-up what its batch's KV cache may take."""
        self.batch_size = size
        with self._lock:
            engines = list(self._engines.values())
        for engine in engines:
            self._batched(engine)

    def preload_for_zero_gpu(self) -> list[AnyEngine]:
        """ZeroGPU (zerogpu.py beside this): every listed model loaded now, while the `spaces` package's patching makes
        `cuda` placeholders in this process, so that the package packs its weights once at start-up and each GPU
        worker finds them; never evicted (a model loaded later would load inside a worker, and go with it); never
        torch.compile'd (kernels compiled and warmed up here would be built on the placeholders, in the process
        that has no GPU). Returns the engines, default first."""
        self.compile = False
        self.max_loaded, self.max_mb = max(self.max_loaded, len(self.specs)), 0
        return [self.get(name) for name in self.names]

    def _batched(self, engine: AnyEngine) -> None:
        if not self.batch_size:
            return
        lim = self.limits
        positions = (lim.max_input_tokens or engine.context) + (lim.max_tokens or engine.context)
        said = attach(engine, self.batch_size, positions)
        if said and said not in self._said:  # once per model, however many faces ask
            self._said.add(said)
            print(said, file=sys.stderr)

    # ---- what may be served ------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        """The operator's models, default first (the page's menu, GET /v1/models)."""
        return list(self.specs)

    def listed(self) -> list[str]:
        """The operator's models, then any other model loaded now (typed hub ids)."""
        with self._lock:
            return self.names + [n for n in self._engines if n not in self.specs]

    def unavailable(self, name: object) -> ExplorerError:
        shown = str(name)[:80]
        hint = "pick one from the list" + (" or type a Hugging Face hub id such as 'gpt2'" if self.allow_hub else "")
        return ExplorerError(
            f"Model {shown!r} is not available here: {hint} (available: {', '.join(self.names)}).",
            param="model",
            code="model_not_found",
        )

    def resolve(self, name: str | None) -> ModelSpec:
        """The spec for `name` (None or '' = the default); hub ids only where allowed, never a local path."""
        if name is None or (isinstance(name, str) and not name.strip()):
            return self.specs[self.default]
        if not isinstance(name, str):
            raise self.unavailable(name)
        name = name.strip()
        if name in self.specs:
            return self.specs[name]
        if self.allow_hub and HUB_ID.match(name) and ".." not in name:
            return ModelSpec(name, name, trust_remote_code=False, hub_only=True)
        raise self.unavailable(name)

    # ---- loaded engines ------------------------------------------------------------------
    def loaded(self, name: str | None = None) -> AnyEngine | None:
        """The engine for `name` when it is in memory now (never loads)."""
        with self._lock:
            return self._engines.get(self.resolve(name).name)

    def in_memory(self) -> list[tuple[str, float]]:
        """(name, MB of weights) of each model in memory now, least recently used first (the page shows them)."""
        with self._lock:
            return [(name, _weights_mb(e)) for name, e in self._engines.items()]

    def engine_of(self, name: str) -> str | None:
        """Which engine serves `name`: the loaded one's, else the one it would load with (None: cannot say)."""
        engine = self.loaded(name)
        if engine is not None:
            return engine.capabilities.engine
        if select.is_remote(self.engine):  # a backend's models (explorer/server.py remote_models)
            return select.REMOTE
        try:
            spec = self.resolve(name)
            return select.plan(spec.source, self.engine, self.device, spec.hub_only, self.options)[0]
        except ExplorerError:
            return None

    def twin(self, name: str | None) -> ModelSpec | None:
        """The torch engine's spec on the weights `name` serves through llama.cpp, or None where torch cannot read
        them (a GGUF file of its own: only the default model's is converted here) or `name` is not served so."""
        spec = self.resolve(name)
        if not select.torch_reads(self.engine_of(spec.name), spec.source, self.device, spec.hub_only):
            return None
        return ModelSpec(spec.name + TWIN, spec.source, spec.trust_remote_code, spec.hub_only, twin_of=spec.name)

    def without(self, name: str | None, need: str) -> str | None:
        """Why a view needing `need` (a Capabilities field: "hidden_states") cannot run on `name`, in one
        sentence; None where it can (on the engine serving it, or on its torch twin: `use_for`)."""
        kind = self.engine_of(self.resolve(name).name)
        if kind is None or has_hidden_states(kind) or self.twin(name) is not None:
            return None
        return no_hidden_states(kind)

    @contextmanager
    def use_for(self, name: str | None, need: str) -> Iterator[AnyEngine]:
        """The engine for `name` when it has `need` (a Capabilities field), else its torch twin on the same weights
        (loaded on first use, then kept as any model is); an ExplorerError saying why where neither can."""
        with self.use(name) as engine:
            if getattr(engine.capabilities, need):
                yield engine
                return
        spec = self.twin(name)
        if spec is None:
            raise ExplorerError(self.without(name, need) or "This view is not available here.", code="not_available")
        with self._pinned(spec) as engine:
            yield engine

    def add(self, engine: AnyEngine) -> None:
        """Register an already-loaded engine under its name (server start-up, tests)."""
        with self._lock:
            if engine.name not in self.specs:
                self.specs[engine.name] = ModelSpec(engine.name, engine.name)
            self._engines[engine.name] = engine
            self._engines.move_to_end(engine.name)
        self._batched(engine)

    def get(self, name: str | None = None) -> AnyEngine:
        """The engine for `name`, loaded on first use."""
        with self.use(name) as engine:
            return engine

    @contextmanager
    def use(self, name: str | None = None) -> Iterator[AnyEngine]:
        """The engine for `name`, pinned (never evicted) until the block ends."""
        with self._pinned(self.resolve(name)) as engine:
            yield engine

    @contextmanager
    def _pinned(self, spec: ModelSpec) -> Iterator[AnyEngine]:
        engine = self._pin(spec)
        try:
            yield engine
        finally:
            with self._lock:
                self._pins[spec.name] -= 1

    def _pin(self, spec: ModelSpec) -> AnyEngine:
        with self._lock:
            engine = self._engines.get(spec.name)
            if engine is not None:
                self._engines.move_to_end(spec.name)
                self._pins[spec.name] = self._pins.get(spec.name, 0) + 1
                return engine
        with self._load_lock:
            with self._lock:
                engine = self._engines.get(spec.name)
            if engine is None:
                try:
                    engine = self._loader(spec)
                except ExplorerError as err:
                    if spec.hub_only:  # a visitor's guess: one message whatever the reason
                        raise self.unavailable(spec.name) from None
                    raise ExplorerError(
                        f"Model {spec.name!r} could not be loaded: {_no_paths(str(err), spec)}",
                        param="model",
                        code=err.code or "model_load_failed",
                    ) from None
            self._batched(engine)
            with self._lock:
                self._engines[spec.name] = engine
                self._engines.move_to_end(spec.name)
                self._pins[spec.name] = self._pins.get(spec.name, 0) + 1
                self._evict(keep=spec.name)
            return engine

    def _evict(self, keep: str) -> None:
        """Drop least recently used engines (not pinned, not `keep`) while over the count or the memory budget."""

        def over() -> bool:
            mb = sum(_weights_mb(e) for e in self._engines.values())
            return len(self._engines) > self.max_loaded or (self.max_mb > 0 and mb > self.max_mb)

        for name in list(self._engines):
            if not over():
                return
            if name != keep and self._pins.get(name, 0) == 0:
                log.info("unloading %s (least recently used)", name)
                del self._engines[name]
        if over():
            log.warning("over the model budget: every other model is in use")


_REGISTRIES: weakref.WeakSet[Models] = weakref.WeakSet()  # every registry of this process


def _forget_locks() -> None:
    for registry in list(_REGISTRIES):
        registry.forget_locks()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_locks)


def _weights_mb(engine: ModelEngine) -> float:
    return getattr(engine, "weights_mb", 0.0)


_ABS_PATH = re.compile(r"(?<![\w.])(?:/|~/|[A-Za-z]:\\)[^\s'\"]+")


def _no_paths(message: str, spec: ModelSpec) -> str:
    """The loader's message with the operator's folder shown as the model's name and any other path hidden."""
    message = message.replace(spec.source, spec.name) if spec.source != spec.name else message
    return _ABS_PATH.sub("<path>", message)
