"""`python app.py --max-logprobs N` in real Chromium: Score, Generate and Chat each show a result and no error, and
the inspector lists at most N alternatives (its k slider tops out at N); with N = 0 the page still scores."""

from __future__ import annotations

import pytest

from tests.helpers.browser import BLOB, new_result, open_page, pick_tab, require_chromium, score
from tests.helpers.servers import ServerProcess

require_chromium()
pytestmark = pytest.mark.browser

TEXT = "The quick brown fox jumps over the lazy dog."


def app_with_cap(gpt2_dir, cap: int) -> ServerProcess:
    return ServerProcess(gpt2_dir, app=True, args=("--max-logprobs", str(cap)))


@pytest.fixture(scope="module")
def capped(gpt2_dir):
    srv = app_with_cap(gpt2_dir, 5)
    yield srv
    srv.stop()


def blob_k(pg) -> int:
    """The most alternatives the page's data holds for any token (what the hover card reads)."""
    return pg.evaluate(f"Math.max(...JSON.parse({BLOB}.textContent).ti.map(t => (t || []).length))")


def listed(pg) -> list[int]:
    """Alternatives each table of the token detail lists (less '(others)' and the actual token added below)."""
    return [
        t.locator("tbody tr").count() - 1 - t.locator("tr", has_text="outside this list").count()
        for t in pg.locator("#token-detail table.alts").all()
    ]


def run_tab(pg, tab: str, box: str, text: str, button: str) -> None:
    pick_tab(pg, tab)
    pg.get_by_label(box, exact=True).fill(text)
    new_result(pg, pg.get_by_role("button", name=button, exact=True).click)


def test_a_capped_app_scores_generates_and_chats(browser, capped, tmp_path):
    pg = open_page(browser, capped.url)
    slider = pg.get_by_label("range slider for Alternatives shown (k)")
    assert slider.get_attribute("max") == "5" and slider.input_value() == "5"
    new_result(pg, lambda: score(pg, TEXT, done=False))
    assert blob_k(pg) == 5 and listed(pg) == [5]
    assert "Top 5 alternatives" in pg.locator("#token-detail").inner_text()
    pg.screenshot(path=str(tmp_path / "score-cap5.png"))
    run_tab(pg, "Generate", "Prompt", "Once upon a time", "Generate")
    assert blob_k(pg) == 5 and all(n <= 5 + 1 for n in listed(pg))  # raw beside processed, each + the actual
    run_tab(pg, "Chat", "Message", "Hello there", "Send")
    assert blob_k(pg) == 5 and "Hello·there" in pg.locator("#heatmap").inner_text()  # the chat, scored
    box = pg.get_by_label("number input for Alternatives shown (k)")  # typing more than the cap: refused in words
    box.fill("20")
    box.press("Enter")
    pg.get_by_test_id("toast-body").first.wait_for(timeout=15_000)
    assert "maximum value 5" in pg.get_by_test_id("toast-body").first.inner_text()
    assert all(n <= 5 + 1 for n in listed(pg))
    pg.context.close()


def test_a_cap_of_zero_still_scores_and_says_why_no_alternatives(browser, gpt2_dir):
    srv = app_with_cap(gpt2_dir, 0)
    try:
        pg = open_page(browser, srv.url)
        new_result(pg, lambda: score(pg, TEXT, done=False))
        detail = pg.locator("#token-detail").inner_text()
        assert blob_k(pg) == 0 and listed(pg) == [0] and "No alternatives recorded" in detail and "rank" in detail
        assert pg.get_by_label("range slider for Alternatives shown (k)").is_disabled()
        assert "--max-logprobs 0" in pg.locator("#results").inner_text()
        pg.context.close()
    finally:
        srv.stop()
