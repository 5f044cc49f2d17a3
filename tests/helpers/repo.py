"""The repository's own files, for the tests that read them all (docs, layering): no virtualenv, caches or build
output."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SKIP_DIRS = {
    ".git",
    ".venv",
    ".vllm-venv",  # the peer tiers' own venvs (tests/helpers/vllm_peer.py, tests/helpers/lmeval_peer.py)
    ".lmeval-venv",
    ".minicons-venv",  # tests/helpers/minicons_peer.py and bench/many_texts.py
    "__pycache__",
    ".pytest_cache",
    ".hypothesis",
    ".ruff_cache",
    ".mypy_cache",
    ".gradio",
    "build",
    "dist",
    "out",
    "node_modules",
}


def repo_files(pattern: str = "*") -> Iterator[Path]:
    """Every path below the root matching `pattern`, sorted, outside SKIP_DIRS and *.egg-info folders."""
    for path in sorted(ROOT.rglob(pattern)):
        parts = path.relative_to(ROOT).parts
        if not any(p in SKIP_DIRS or p.endswith(".egg-info") for p in parts):
            yield path
