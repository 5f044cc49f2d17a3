"""The app served for a test: in a thread of this process (`LiveServer`) or as a second process (`ServerProcess`),
and a hook ahead of each of an engine's forward passes (`before_each_pass`) to slow or count a server's work."""

from __future__ import annotations

import os

from tests.helpers.repo import ROOT


def before_each_pass(monkeypatch, engine, before) -> None:
    """Call `before()` ahead of each of `engine`'s forward passes: a prompt's (`body`) and a served model's batched
    decode step (`body_rows`); tests slow or count a server's work with it."""
    for name in ("body", "body_rows"):
        real = getattr(engine, name)
        monkeypatch.setattr(engine, name, lambda *a, _real=real, **kw: (before(), _real(*a, **kw))[1])


class LiveServer:
    """The real app (web UI + /v1 API) on a loopback port, in a background thread."""

    def __init__(self, *engines, auth=None, limits=None, models=None, host="127.0.0.1", **models_kw):
        import socket
        import threading

        import uvicorn

        from explorer.server import build_app
        from explorer.serving.models import Models

        self.models = models or Models([e.name for e in engines], **{"allow_hub": False, **models_kw})
        for e in engines:
            self.models.add(e)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"  # tests connect to loopback, whatever `host` it listens on
        self.app = build_app(self.models, auth, limits, host=host)
        # forwarding headers by the app's own rule, as `serve` runs it (uvicorn's would believe any loopback peer)
        config = uvicorn.Config(self.app, host=host, port=self.port, log_level="warning", proxy_headers=False)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        import time

        for _ in range(200):
            if self.server.started:
                break
            time.sleep(0.05)
        assert self.server.started, "the test server did not start"

    def stop(self):
        self.server.should_exit = True
        self.thread.join(timeout=10)


class ServerProcess:
    """`python -m explorer serve` on a model folder (None: the default model) in a second process, on a free loopback
    port, ready when made; `app=True`: `python app.py` as a Space starts it; `env`: more environment (a None value
    takes a variable out); `args`: more command-line flags; `python`: the interpreter (default: this one), run in
    folder `cwd`."""

    def __init__(
        self,
        model_dir: str | None,
        env: dict | None = None,
        app: bool = False,
        args: tuple[str, ...] = (),
        python: str | None = None,
        cwd: str | None = None,
    ):
        import socket
        import subprocess
        import sys
        import time

        import httpx

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = {
            **os.environ,
            "GRADIO_ANALYTICS_ENABLED": "False",
            "HF_HUB_OFFLINE": "1",
            "EXPLORER_COMPILE": "0",
            **(env or {}),
        }
        entry = [str(ROOT / "app.py")] if app else ["-m", "explorer", "serve"]
        model = ["--model", model_dir] if model_dir else []
        cmd = [python or sys.executable, *entry, *model, "--device", "cpu", "--port", str(port), *args]
        self.proc = subprocess.Popen(
            cmd,
            env={k: v for k, v in env.items() if v is not None},
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.url = f"http://127.0.0.1:{port}"
        for _ in range(600):
            try:
                if httpx.get(self.url + "/v1/models", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("the server process did not start")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
