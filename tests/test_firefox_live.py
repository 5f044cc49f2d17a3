"""The live page in Firefox (Debian's firefox-esr, driven through its own WebDriver BiDi: tests/helpers/firefox_bidi.py),
with and without the cross-origin isolation headers: it loads the default model's GGUF, says how many threads it runs
on, and scores a text with the same token ids as the llama.cpp engine and logprobs within 0.5 nats (0.1 on average)."""

from __future__ import annotations

import asyncio
import os
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from explorer.engine import score_text
from explorer.notebook.live import LiveOptions
from explorer.notebook.site import build_site
from tests.helpers.firefox_bidi import FIREFOX, Firefox
from tests.helpers.live_page import DONE, READY, served

pytest.importorskip("tornado", reason="the Firefox test's WebDriver BiDi client is tornado's websocket")
if not os.path.exists(FIREFOX):
    pytest.skip(
        f"FIREFOX TEST SKIPPED: no Firefox at {FIREFOX} (apt-get install -y firefox-esr)", allow_module_level=True
    )
pytestmark = [pytest.mark.browser, pytest.mark.slow]
TEXT = "The capital of France is Paris. It is known for its museums, its food and the river Seine."


@pytest.fixture(scope="module")
def site(smollm_gguf, tmp_path_factory):
    out = tmp_path_factory.mktemp("live-firefox") / "site"
    build_site(str(out), [], "Live test", live=LiveOptions("SmolLM2-135M-Instruct", smollm_gguf.path))
    return str(out)


async def score_in_firefox(base: str) -> tuple[str, str, dict]:
    async with Firefox() as ff:
        await ff.goto(base + "live.html?text=" + urllib.parse.quote(TEXT))
        await ff.wait(READY, 300)
        status = await ff.js("document.getElementById('live-status').textContent")
        threads = await ff.js("document.getElementById('live-threads').textContent")
        if not await ff.js("window.lxLiveState.ready"):
            return status, threads, {}
        await ff.js("document.getElementById('live-score').click()")
        await ff.wait(DONE, 600)
        return status, threads, await ff.js("window.lxLiveState.error || window.lxLiveState.last")


@pytest.mark.parametrize("isolate", [True, False], ids=["isolated", "plain"])
def test_firefox_scores_like_the_engine(site, smollm_gguf, isolate):
    # its own loop on a thread of its own: an earlier browser test's loop may still run on this one
    with served(site, isolate) as base, ThreadPoolExecutor(1) as pool:
        status, threads, got = pool.submit(asyncio.run, score_in_firefox(base)).result()
    assert status.startswith("Ready") and "WebAssembly" in status, status
    assert ("cross-origin isolated" in threads) if isolate else threads.startswith("1 thread"), threads
    ref = score_text(smollm_gguf, TEXT, k=5)
    assert isinstance(got, dict) and got["token_ids"] == ref.token_ids.tolist(), got
    diff = np.abs(np.array(got["logprobs"][1:], dtype=np.float64) - ref.logprobs[1:])
    assert diff.max() <= 0.5 and diff.mean() <= 0.1, (diff.max(), diff.mean())
