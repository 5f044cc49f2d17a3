"""The live page (explorer/notebook/live.py) in a real browser, shared by tests/test_browser_live.py and
bench/live_page.py: a site built around the default model's GGUF, served on loopback with or without the two
cross-origin isolation headers, and a page driven as a person would (type, click Score or Generate, wait)."""

from __future__ import annotations

import threading
from contextlib import contextmanager

READY = "window.lxLiveState && (window.lxLiveState.ready || window.lxLiveState.error)"
DONE = "window.lxLiveState.lastRun || window.lxLiveState.error"


@contextmanager
def served(folder: str, isolate: bool):
    """`folder` on 127.0.0.1 (a free port), with the isolation headers where `isolate`; yields its base URL."""
    from explorer.notebook.live import serve

    srv = serve(folder, 0, isolate=isolate)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_port}/"
    finally:
        srv.shutdown()
        srv.server_close()


def open_live(page, base: str, query: str = "", timeout_s: float = 300) -> str:
    """Open the live page and wait until the model is loaded or the page says why not; its status line."""
    page.goto(base + "live.html" + query)
    page.wait_for_function(READY, timeout=timeout_s * 1000)
    return page.locator("#live-status").inner_text()


def run(page, text: str, action: str = "score", timeout_s: float = 600, **settings) -> dict:
    """Type `text`, set the generation `settings` (tokens, temp, topp, topk, seed by their box ids), click Score or
    Generate, wait for it to finish; the page's result as native JSON (an ExplorerError-like dict on failure)."""
    page.evaluate("window.lxLiveState.lastRun = null; window.lxLiveState.error = null")
    page.locator("#live-text").fill(text)
    for name, value in settings.items():
        page.locator(f"#live-{name}").fill(str(value))
    page.locator(f"#live-{action}").click()
    page.wait_for_function(DONE, timeout=timeout_s * 1000)
    error = page.evaluate("window.lxLiveState.error")
    if error:
        return {"error": error}
    return page.evaluate("({...window.lxLiveState.last, run: window.lxLiveState.lastRun})")
