"""The Surprisal view (a registered view: explorer/notebook/surprisal.py) in real headless Chromium: its tab under
*Read a result*, its curve and numbers, its download, its link; on a tiny model and on the default model's GGUF."""

from __future__ import annotations

import importlib.util
import json

import pytest

from explorer.engine import score_text
from explorer.notebook.page import data_of
from explorer.notebook.surprisal import surprisal
from tests.helpers.browser import open_page, pick_tab, require_chromium, score, serious

require_chromium()
pytestmark = pytest.mark.browser
TEXT = "The capital of France is Paris. The capital of Italy is Rome."
SIZES = {"wide": {"width": 1366, "height": 768}, "phone": {"width": 390, "height": 844}}


@pytest.fixture(scope="module")
def server(gpt2):
    from tests.helpers.servers import LiveServer

    srv = LiveServer(gpt2)
    yield srv
    srv.stop()


def open_surprisal(pg) -> None:
    pick_tab(pg, "Read a result")
    pick_tab(pg, "Surprisal")
    pg.get_by_role("button", name="Show the surprisal").click()
    pg.locator("#surprisal-body svg.lx-chart").first.wait_for(timeout=60_000)


def summary(engine, text: str) -> str:
    """What the view's summary says of `text` scored by `engine` (the page scores from no start token)."""
    s = surprisal(score_text(engine, text, 10))
    return f"mean {s.mean_bits:.3f} bits a token"


def test_the_tab_draws_the_numbers_downloads_and_shares_them(browser, server, gpt2, shots):
    pg = open_page(browser, server.url, viewport=SIZES["wide"], accept_downloads=True)
    score(pg, TEXT)
    open_surprisal(pg)
    body = pg.locator("#surprisal-body").inner_text()
    assert summary(gpt2, TEXT) in body
    assert pg.locator("#surprisal-table").get_by_role("row").count() > 10
    pg.screenshot(path=str(shots / "surprisal-wide.png"), full_page=False)
    if importlib.util.find_spec("axe_playwright_python"):  # the drawn view: no serious or critical axe violation
        assert serious(pg) == []
    with pg.expect_download() as dl:
        pg.locator("#surprisal-dl-html").click()
    path = dl.value.path()
    with open(path, encoding="utf-8") as f:
        data = data_of(f.read())
    want = surprisal(score_text(gpt2, TEXT, 10)).to_dict()
    assert json.dumps(data) == json.dumps(want)
    pg.get_by_role("button", name="Copy link").click()
    pg.wait_for_function(
        "() => document.querySelector('#share-link textarea, #share-link input').value.includes('?view=')"
    )
    url = pg.locator("#share-link textarea, #share-link input").first.input_value()
    pg.context.close()
    again = open_page(browser, url, viewport=SIZES["phone"], shown=False)
    again.locator("#surprisal-body svg.lx-chart").first.wait_for(timeout=60_000)
    assert summary(gpt2, TEXT) in again.locator("#surprisal-body").inner_text()
    assert again.get_by_role("tab", name="Surprisal", exact=True).get_attribute("aria-selected") == "true"
    again.locator("#surprisal-body").scroll_into_view_if_needed()
    again.screenshot(path=str(shots / "surprisal-phone.png"), full_page=False)
    again.context.close()


def test_the_tab_on_the_default_model(browser, smollm_gguf, shots):
    from tests.helpers.servers import LiveServer

    srv = LiveServer(smollm_gguf)
    try:
        pg = open_page(browser, srv.url, viewport=SIZES["wide"])
        text = "The capital of France is Paris. It is known for the Eiffel Tower."
        score(pg, text)
        open_surprisal(pg)
        assert summary(smollm_gguf, text) in pg.locator("#surprisal-body").inner_text()
        pg.locator("#surprisal-body").scroll_into_view_if_needed()
        pg.screenshot(path=str(shots / "surprisal-default-wide.png"), full_page=False)
        pg.context.close()
        pg = open_page(browser, srv.url, viewport=SIZES["phone"])
        score(pg, text)
        open_surprisal(pg)
        pg.locator("#surprisal-body").scroll_into_view_if_needed()
        pg.screenshot(path=str(shots / "surprisal-default-phone.png"), full_page=False)
        pg.context.close()
    finally:
        srv.stop()
