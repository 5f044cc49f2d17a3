"""EleutherAI's lm-evaluation-harness as a test peer: `lm-eval` installed once into its own venv, run as a
subprocess against our HTTP API (`local-completions`) and in process on the same folder (`hf`). Nothing here
imports lm-eval: it runs in its own interpreter.

- The venv is `.lmeval-venv` in the repository (EXPLORER_LMEVAL_VENV elsewhere); the first `make test-lmeval`
  makes it (about 2 min: torch 2.13.0 first, so pip takes the local CPU wheel rather than a multi-GB CUDA build;
  then `lm-eval[hf,api]` with the app's own transformers version; torchvision, torchaudio and torchcodec are
  removed where pip pulled them, since PyPI's builds break transformers' import beside that torch and a text
  model needs none of them).
- The tasks are small local ones (tests/data/lmeval/*.yaml, `dataset_path: json` on files beside them): no hub.
- Where lm-eval cannot be installed or does not import, the tier skips and says why, with pip's last lines.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.vllm_peer import Unavailable, install, tail

__all__ = ["Unavailable", "install", "venv_python"]

ROOT = Path(__file__).resolve().parents[2]
VERSION = "0.4.13"
# the app's own transformers, so the in-process run and the server differ in the path only, not the library
TRANSFORMERS = importlib.metadata.version("transformers")
VENV = Path(os.environ.get("EXPLORER_LMEVAL_VENV") or ROOT / ".lmeval-venv")
TASKS = ROOT / "tests" / "data" / "lmeval"
RUN_S = 1800  # one lm-eval run; the in-process `hf` one on the long document is the slowest


def venv_python() -> Path:
    """The lm-eval venv's interpreter, installing lm-eval into it first when it is not there yet."""
    packages = [f"lm-eval[hf,api]=={VERSION}", f"transformers=={TRANSFORMERS}"]
    return install(VENV, f".lm-eval-{VERSION}-transformers-{TRANSFORMERS}", packages, "lm_eval, transformers, torch")


@dataclass
class Run:
    """One lm-eval run: its aggregate metrics per task, its logged samples per task, its wall time (s, the
    interpreter's start included) and what it printed."""

    results: dict[str, dict]
    samples: dict[str, list[dict]]
    seconds: float
    log: str


def run_lmeval(model: str, model_args: dict, tasks: list[str], out: Path, device: str | None = None) -> Run:
    """`lm_eval --model MODEL --model_args ... --tasks ... --include_path tests/data/lmeval --log_samples`, run in
    the tasks' folder (their data files are named relative to it); results and samples read back from `out`."""
    py = venv_python()
    args = ",".join(f"{k}={v}" for k, v in model_args.items())
    cmd = [str(py), "-m", "lm_eval", "--model", model, "--model_args", args, "--tasks", ",".join(tasks)]
    cmd += ["--include_path", str(TASKS), "--batch_size", "1", "--log_samples", "--output_path", str(out)]
    cmd += ["--device", device] if device else []
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    env["HF_DATASETS_CACHE"] = str(out / "datasets")  # a fresh copy of the local data each run
    out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=TASKS, timeout=RUN_S)
    seconds = time.monotonic() - start
    log = done.stdout + done.stderr
    (out / "lm_eval.log").write_text(log)
    if done.returncode != 0:
        raise AssertionError(f"`lm_eval --model {model}` failed ({done.returncode}):\n{tail(log, 30)}")
    [results] = out.rglob("results_*.json")
    samples = {}
    for task in tasks:
        [path] = out.rglob(f"samples_{task}_*.jsonl")
        samples[task] = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return Run(json.loads(results.read_text())["results"], samples, seconds, log)
