"""A stand-in for ZeroGPU's device API on 127.0.0.1 (what the `spaces` package calls at SPACES_ZERO_DEVICE_API_URL),
and `serve` under the real package in ZeroGPU mode against it (tests/helpers/zerogpu_serve.py)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import httpx

from tests.helpers.repo import ROOT


class DeviceApi:
    """Answers /schedule (a GPU at once: index 0, a fresh allow token), /allow, /release and /startup-report, and
    keeps every call as (path, params) in `calls`."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, str]]] = []
        self.gpu_uuid = "GPU-0"  # what CUDA_VISIBLE_DEVICES is set to in the worker (a real GPU's, on one)
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                url = urlparse(self.path)
                params = {k: v[0] for k, v in parse_qs(url.query).items()}
                api.calls.append((url.path, params))
                answer = {}
                if url.path == "/schedule":
                    token = f"token-{len(api.calls)}"
                    answer = {"idle": True, "nvidiaIndex": 0, "nvidiaUUID": api.gpu_uuid, "allowToken": token}
                body = json.dumps(answer).encode() if answer else b""
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def durations(self) -> list[int]:
        """The seconds each /schedule asked for, in order."""
        return [int(p["durationSeconds"]) for path, p in self.calls if path == "/schedule"]

    def allowed_pids(self) -> set[int]:
        return {int(p["pid"]) for path, p in self.calls if path == "/allow"}

    def stop(self) -> None:
        self.server.shutdown()


class ZeroGpuServer:
    """`serve` in a second process on ZeroGPU (the package's mode on, its device API the stand-in `api`), ready when
    made; `report()`: what the package packed at start-up, and the server's pid."""

    def __init__(self, api: DeviceApi, models: list[str], tmp: Path, env: dict | None = None, args: tuple = ()):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        (tmp / "cgroup").write_text("0::/zerogpu-test\n")
        self.report_path = tmp / "report.json"
        env = {
            **os.environ,
            "GRADIO_ANALYTICS_ENABLED": "False",
            "HF_HUB_OFFLINE": "1",
            "SPACE_ID": "someone/logprob-explorer",
            "SPACES_ZERO_GPU": "true",
            "SPACES_ZERO_DEVICE_API_URL": api.url,
            "ZEROGPU_OFFLOAD_DIR": str(tmp / "tensors"),
            "ZEROGPU_PROC_SELF_CGROUP_PATH": str(tmp / "cgroup"),
            "ZEROGPU_TEST_REPORT": str(self.report_path),
            "PYTHONPATH": str(ROOT),
            **(env or {}),
        }
        flags = [a for m in models for a in ("--model", m)]
        cmd = [
            sys.executable,
            "-m",
            "tests.helpers.zerogpu_serve",
            *flags,
            "--port",
            str(port),
            "--host",
            "127.0.0.1",
            *args,
        ]
        self.log = open(tmp / "server.log", "w")  # noqa: SIM115 - open while the server runs
        self.proc = subprocess.Popen(  # a session of its own: stop() ends the package's forked workers with it
            cmd, env=env, cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.url = f"http://127.0.0.1:{port}"
        self.log_path = tmp / "server.log"
        for _ in range(1200):
            if self.proc.poll() is not None:
                raise RuntimeError("the server process ended:\n" + self.log_path.read_text()[-3000:])
            try:
                if httpx.get(self.url + "/", timeout=1).status_code == 200 and self.report_path.exists():
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("the server process did not start:\n" + self.log_path.read_text()[-3000:])

    def report(self) -> dict:
        return json.loads(self.report_path.read_text())

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):  # the server and every worker it forked
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.log.close()
