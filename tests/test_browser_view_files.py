"""The tool tabs' HTML views (explorer/notebook/views.py) in real headless Chromium: opened from file:// and inside an
<iframe srcdoc> with every network request blocked and counted (none made), no page error, the numbers on screen;
light and dark screenshots (assets/screens/ with EXPLORER_SCREENS=1)."""

from __future__ import annotations

import html

import pytest

from tests.helpers.browser import offline_page, require_chromium
from tests.helpers.views import view_files

require_chromium()
pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def made(gpt2, llama):
    return view_files(gpt2, llama)


KEPT = "words"  # the one view whose screenshots assets/screens/ keeps (view-words-light.png, view-words-dark.png)


@pytest.mark.parametrize("name", ["words", "compare", "compare-spans", "answers", "why", "lens", "branch", "batch"])
def test_view_file_opens_offline_from_a_file_and_in_an_iframe(browser, made, name, tmp_path, shots):
    page_html, _ = made[name]
    shots = shots if name == KEPT else tmp_path
    path = tmp_path / f"{name}.view.html"
    path.write_text(page_html, encoding="utf-8")
    pg = offline_page(browser, lambda url: url.startswith("file://") or url.startswith("about:"))
    pg.goto(path.as_uri())
    pg.wait_for_load_state("load")
    text = pg.locator("main").inner_text()
    assert pg.locator("table.lx-nums td").count() > 0 and "logprob-explorer" in text
    box = pg.locator("main").bounding_box()
    assert box is not None and box["height"] > 200
    light = pg.evaluate("getComputedStyle(document.body).backgroundColor")
    pg.screenshot(path=str(shots / f"view-{name}-light.png"), full_page=False)
    pg.emulate_media(color_scheme="dark")
    dark = pg.evaluate("getComputedStyle(document.body).backgroundColor")
    assert light == "rgb(255, 255, 255)" and dark != light
    pg.screenshot(path=str(shots / f"view-{name}-dark.png"), full_page=False)
    # inside an iframe (srcdoc: a learning platform's or a slide's embed), on a blank page of the test's
    pg.emulate_media(color_scheme="light")
    pg.set_content(
        f'<iframe id="f" style="width:1100px;height:800px" srcdoc="{html.escape(page_html, quote=True)}"></iframe>'
    )
    frame = pg.frame_locator("#f")
    frame.locator("table.lx-nums").first.wait_for(timeout=10_000)
    inner = frame.locator("main").inner_text()
    assert inner == text
    assert pg.refused == [], pg.refused  # no request: every one would have been counted here
    assert pg.errors == [], pg.errors
    pg.context.close()


def test_the_words_tab_downloads_its_view(browser, live):
    """On the page: Show words, then *Download view (HTML)* gives the Words view's file, its JSON the words'."""
    import json

    from tests.helpers.browser import open_page, pick_tab, score

    pg = open_page(browser, live.url, "wide")
    score(pg, "The cat sat on the mat.")
    pick_tab(pg, "Words")
    pg.get_by_role("button", name="Show words").click()
    button = pg.locator("#words-dl-html")
    pg.wait_for_function("() => !document.querySelector('#words-dl-html').disabled", timeout=60_000)
    with pg.expect_download() as got:
        button.click()
    assert got.value.suggested_filename.endswith("-words.view.html")
    with open(got.value.path(), encoding="utf-8") as f:
        text = f.read()
    start = text.index('id="logprob-data">') + len('id="logprob-data">')
    body = json.loads(text[start : text.index("</script>", start)])
    assert [w["text"] for w in body["words"]][:3] == ["The", " cat", " sat"]
    pg.context.close()
