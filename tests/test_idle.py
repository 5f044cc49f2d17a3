"""Small facts of the running server: an idle server does not spin (the page's Gradio queue polls every 0.25 s
with no action waiting or running, every 20 ms while one does, never every 1 ms as gradio's default: a thread
sets the pace every PACE_S), and one version is reported everywhere."""

import time

from explorer.server import BUSY_POLL_S, IDLE_POLL_S, PACE_S, PROGRESS_POLL_S
from tests.conftest import LiveServer, before_each_pass


def _paces(queue) -> tuple[float, float]:
    return queue.sleep_when_free, queue.progress_update_sleep_when_free


def test_the_page_queue_polls_slowly_when_idle_and_quickly_while_it_works(gpt2, monkeypatch):
    from gradio_client import Client

    srv = LiveServer(gpt2)
    try:
        queue = srv.server.config.app.state.demo._queue
        assert _paces(queue) == (IDLE_POLL_S, IDLE_POLL_S) and 0.01 <= BUSY_POLL_S < IDLE_POLL_S <= 0.25
        seen: list[tuple[float, float]] = []
        before_each_pass(monkeypatch, gpt2, lambda: (time.sleep(3 * PACE_S), seen.append(_paces(queue))))
        out = Client(srv.url + "/", verbose=False).predict("The quick brown fox", api_name="/score")
        assert "perplexity" in out[2]
        assert seen and set(seen) == {(BUSY_POLL_S, PROGRESS_POLL_S)}  # an action running: the quick pace
        for _ in range(int(6 * PACE_S / 0.02)):  # it settles once the action's event has ended
            if _paces(queue) == (IDLE_POLL_S, IDLE_POLL_S):
                break
            time.sleep(0.02)
        assert _paces(queue) == (IDLE_POLL_S, IDLE_POLL_S)
    finally:
        srv.stop()


def test_one_version_everywhere():
    """pyproject.toml, explorer.__version__ and the bodies' system_fingerprint say the same version."""
    import re

    import explorer
    from explorer.export.common import fingerprint
    from tests.repo import ROOT

    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)[1]
    assert explorer.__version__ == version and fingerprint() == f"logprob-explorer-{version}"
