"""Long texts in the browser: the 3,000th token's detail in view at both sizes, and Stop within one block."""

from __future__ import annotations

import pytest

from tests.helpers.browser import in_view, open_page, require_chromium, score, wait_detail

require_chromium()
pytestmark = pytest.mark.browser


@pytest.fixture(params=["wide", "phone"])
def size(request):
    return request.param


@pytest.fixture(scope="module")
def long_live(long_gpt2):
    """The app on the 8,192-position tiny GPT-2."""
    from tests.helpers.servers import LiveServer

    srv = LiveServer(long_gpt2)
    yield srv
    srv.stop()


def test_clicking_the_3000th_token_shows_its_detail_in_view(browser, long_live, gpt2, size):
    words = "fox jumps over the lazy dog. "
    text = words * (3600 // len(gpt2.encode(words)) + 1)
    pg = open_page(browser, long_live.url, size)
    score(pg, text)
    chip = pg.locator("#heatmap [data-pos='3000']")
    chip.scroll_into_view_if_needed()
    chip.click()
    wait_detail(pg, 3000)
    pg.wait_for_timeout(300)
    assert in_view(pg, "#token-detail .td") and in_view(pg, "#heatmap [data-pos='3000']", whole=True)
    pg.context.close()


def test_stop_ends_a_long_scoring_within_one_block(browser, long_live, long_gpt2, gpt2, monkeypatch):
    """4,000 tokens, slowed to ~0.3 s a block: progress shows block by block, Stop shows while it runs (and only
    then), and after Stop at most the block already running is computed (counted, not timed)."""
    import time

    calls = []
    body = long_gpt2.body

    def slow(*a, **kw):
        calls.append(1)
        time.sleep(0.3)
        return body(*a, **kw)

    monkeypatch.setattr(long_gpt2, "body", slow)
    words = "fox jumps over the lazy dog. "
    pg = open_page(browser, long_live.url)
    stop = pg.get_by_role("button", name="Stop", exact=True)  # the visible ones only
    assert stop.count() == 0  # nothing runs: no Stop
    text = words * (4600 // len(gpt2.encode(words)) + 1)
    assert len(gpt2.encode(text)) >= 4000
    score(pg, text, done=False)
    pg.locator("#heatmap .lx-progress").wait_for(timeout=60_000)  # the first block's heatmap, with a progress bar
    pg.wait_for_function("document.querySelectorAll('#heatmap .lx .t:not(.u)').length > 256", timeout=60_000)
    assert stop.count() == 1  # the Score tab's, while it runs
    stop.click()
    at_stop = len(calls)
    pg.wait_for_timeout(2500)  # several blocks' time
    assert len(calls) - at_stop <= 1 and at_stop < 4000 // 256
    assert pg.locator("#heatmap .lx-data").filter(has_text='"lp"').count() == 0  # it never completed
    assert stop.count() == 0  # stopped: nothing runs
    pg.context.close()
