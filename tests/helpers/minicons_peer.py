"""minicons as a test peer: minicons 0.3.39 installed once into its own venv, run as a subprocess on a model
saved to a folder (tests/helpers/minicons_score.py is what runs there). Nothing here imports minicons.

- The venv is `.minicons-venv` in the repository (EXPLORER_MINICONS_VENV elsewhere); the first
  `make test-minicons` makes it (torch 2.13.0 first, so pip takes the local CPU wheel rather than a multi-GB CUDA
  build; then minicons, which brings its own transformers).
- Where minicons cannot be installed or does not import, the tier skips and says why, with pip's last lines.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.helpers.vllm_peer import Unavailable, install, tail

__all__ = ["Unavailable", "run_minicons", "venv_python"]

ROOT = Path(__file__).resolve().parents[2]
VERSION = "0.3.39"
VENV = Path(os.environ.get("EXPLORER_MINICONS_VENV") or ROOT / ".minicons-venv")
SCRIPT = Path(__file__).with_name("minicons_score.py")


def venv_python() -> Path:
    """The minicons venv's interpreter, installing minicons into it first when it is not there yet."""
    return install(VENV, f".minicons-{VERSION}", [f"minicons=={VERSION}"], "minicons, transformers, torch")


def run_minicons(model_dir: str, texts: list[str], bos_token: bool) -> dict:
    """minicons' numbers on `texts` (tests/helpers/minicons_score.py's JSON), run in the minicons venv."""
    py = venv_python()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    env.pop("PYTHONPATH", None)  # minicons' own transformers, not the app's
    args = json.dumps({"model": model_dir, "texts": texts, "bos_token": bos_token})
    done = subprocess.run([str(py), str(SCRIPT)], input=args, capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        raise AssertionError(f"minicons failed ({done.returncode}):\n{tail(done.stdout + done.stderr, 30)}")
    return json.loads(done.stdout.strip().splitlines()[-1])
