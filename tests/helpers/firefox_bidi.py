"""Debian's Firefox (firefox-esr) driven through its own WebDriver BiDi (Playwright needs a patched Firefox of its
own, which cannot be installed here; geckodriver is not needed either): start it headless with a remote-debugging
port, open a session on its websocket (tornado's client), navigate and evaluate scripts in the page."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import tempfile

FIREFOX = os.environ.get("EXPLORER_FIREFOX") or shutil.which("firefox-esr") or "/usr/bin/firefox-esr"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Firefox:
    """One headless Firefox and one BiDi session on its first tab (use as an async context manager)."""

    def __init__(self) -> None:
        self.port, self.n, self.ws, self.ctx = free_port(), 0, None, ""
        self.profile = tempfile.mkdtemp(prefix="lx-firefox-")

    async def __aenter__(self) -> Firefox:
        from tornado.websocket import websocket_connect

        args = [FIREFOX, "-headless", "-no-remote", "-profile", self.profile, f"--remote-debugging-port={self.port}"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(120):
            try:
                self.ws = await websocket_connect(f"ws://127.0.0.1:{self.port}/session", max_message_size=2**26)
                break
            except OSError:
                await asyncio.sleep(0.5)
        if self.ws is None:
            raise RuntimeError("Firefox's WebDriver BiDi did not answer in 60 s")
        await self.cmd("session.new", {"capabilities": {}})
        self.ctx = (await self.cmd("browsingContext.getTree", {}))["contexts"][0]["context"]
        return self

    async def __aexit__(self, *exc) -> None:
        if self.ws is not None:
            self.ws.close()
        self.proc.terminate()
        self.proc.wait(timeout=30)
        shutil.rmtree(self.profile, ignore_errors=True)

    async def cmd(self, method: str, params: dict) -> dict:
        """One BiDi command's result (events in between are skipped)."""
        self.n += 1
        await self.ws.write_message(json.dumps({"id": self.n, "method": method, "params": params}))
        while True:
            m = json.loads(await self.ws.read_message())
            if m.get("id") == self.n:
                if m.get("type") == "error":
                    raise RuntimeError(f"{method}: {m.get('error')}: {m.get('message')}")
                return m["result"]

    async def goto(self, url: str) -> None:
        await self.cmd("browsingContext.navigate", {"context": self.ctx, "url": url, "wait": "complete"})

    async def js(self, expression: str):
        """The value of `expression` in the page (JSON-able; a promise awaited)."""
        r = await self.cmd(
            "script.evaluate",
            {"expression": f"JSON.stringify({expression})", "target": {"context": self.ctx}, "awaitPromise": True},
        )
        if r.get("type") == "exception":
            raise RuntimeError(r["exceptionDetails"].get("text"))
        value = r["result"].get("value")
        return None if value is None else json.loads(value)

    async def wait(self, expression: str, timeout_s: float) -> None:
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout_s
        while not await self.js(f"!!({expression})"):
            if loop.time() > end:
                raise TimeoutError(f"{expression} not true in {timeout_s} s")
            await asyncio.sleep(0.5)
