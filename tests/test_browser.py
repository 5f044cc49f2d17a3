"""The live app in real headless Chromium (Debian's), driven by Playwright, as a person would use it."""

from __future__ import annotations

import json

import pytest

from tests.browser import require_chromium

require_chromium()
pytestmark = pytest.mark.browser


@pytest.fixture
def page(browser, live):
    ctx = browser.new_context(accept_downloads=True, viewport={"width": 1280, "height": 1000})
    pg = ctx.new_page()
    dialogs = []
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    pg.dialogs = dialogs
    pg.goto(live.url)
    pg.get_by_label("Text", exact=True).wait_for(timeout=60_000)
    yield pg
    ctx.close()


def score(page, text):
    page.get_by_label("Text", exact=True).fill(text)
    page.get_by_role("button", name="Score", exact=True).click()


def test_score_heatmap_and_token_detail(page):
    score(page, "The quick brown fox jumps over the lazy dog.")
    chip = page.locator("#heatmap [data-pos='3']")
    chip.wait_for(timeout=30_000)
    assert "rank" in chip.get_attribute("title")
    assert page.locator("#heatmap [data-pos='0']").get_attribute("title").startswith("unscored")
    chip.click()
    page.get_by_text("Position 3").wait_for(timeout=15_000)
    table = page.get_by_label("Alternatives")
    assert "(others)" in page.content()
    assert table.count() >= 1
    # keyboard: focus a chip and press Enter
    page.locator("#heatmap [data-pos='5']").focus()
    page.keyboard.press("Enter")
    page.get_by_text("Position 5").wait_for(timeout=15_000)


def test_generate_with_seed_is_repeatable(page, live):
    texts = []
    for _ in range(2):
        page.goto(live.url)  # a fresh session each time
        page.get_by_role("tab", name="Generate").click()
        page.get_by_label("Prompt", exact=True).fill("The lazy")
        page.get_by_label("Seed (empty = random, shown in the summary)").fill("7")
        page.get_by_role("button", name="Generate", exact=True).click()
        page.get_by_text("seed 7", exact=False).wait_for(timeout=60_000)  # the summary appears when it is done
        texts.append(page.locator("#heatmap .lx").inner_text())
    assert texts[0] == texts[1] and len(texts[0]) > len("The lazy")


def test_download_json_parses(page):
    score(page, "fox jumps over the dog")
    page.locator("#heatmap [data-pos='2']").wait_for(timeout=30_000)
    page.get_by_role("button", name="Prepare download").click()
    link = page.locator("a[download]").first
    link.wait_for(timeout=30_000)
    with page.expect_download() as dl:
        link.click()
    body = json.loads(open(dl.value.path(), encoding="utf-8").read())
    assert body["choices"][0]["prompt_logprobs"][0] is None
    assert len(body["choices"][0]["prompt_token_ids"]) == page.locator("#heatmap [data-pos]").count()


def test_markup_is_shown_as_text(page):
    evil = "<img src=x onerror=alert(1)> <script>alert(2)</script> ${alert(3)}"
    score(page, evil)
    page.locator("#heatmap [data-pos='3']").wait_for(timeout=30_000)
    page.wait_for_timeout(1000)
    assert page.dialogs == []
    assert page.locator("#heatmap img").count() == 0 and page.locator("#heatmap script").count() == 0
    shown = page.locator("#heatmap .lx").inner_text().replace("·", " ")
    assert "<img src=x onerror=alert(1)>" in shown and "${alert(3)}" in shown
    for pos in range(page.locator("#heatmap [data-pos]").count()):  # every token's detail, too
        page.locator(f"#heatmap [data-pos='{pos}']").click()
        page.get_by_text(f"Position {pos} ", exact=False).first.wait_for(timeout=15_000)
    page.wait_for_timeout(500)
    assert page.dialogs == [] and page.locator("img[src=x]").count() == 0


def test_empty_text_shows_a_message_and_keeps_input(page):
    page.get_by_role("tab", name="Generate").click()
    page.get_by_label("Prompt", exact=True).fill("")
    page.get_by_role("tab", name="Score").click()
    page.get_by_label("Text", exact=True).fill("   ")
    page.get_by_role("button", name="Score", exact=True).click()
    page.get_by_text("The text is empty", exact=False).first.wait_for(timeout=15_000)
    assert page.get_by_label("Text", exact=True).input_value() == "   "


def test_markup_in_an_error_message_is_shown_as_text(page):
    evil = "<img src=x onerror=window.__x=1>"
    page.get_by_label("Rank bucket thresholds (GLTR)").fill(evil)
    score(page, "hello there")
    toast = page.get_by_test_id("toast-body").first
    toast.wait_for(timeout=15_000)
    page.wait_for_timeout(500)
    assert evil in toast.inner_text()
    assert page.locator("img[src=x]").count() == 0 and page.evaluate("window.__x") is None


@pytest.fixture(scope="module")
def two_models(gpt2, llama):
    """The app serving both tiny models (tiny-gpt2 is the default)."""
    from tests.conftest import LiveServer

    srv = LiveServer(gpt2, llama)
    yield srv
    srv.stop()


def load_model(page, name):
    page.get_by_label("Model (pick one of this server's models)").click()
    page.get_by_role("option", name=name).click()
    page.get_by_role("button", name="Load model").click()
    page.get_by_text(f"Loaded {name} on", exact=False).wait_for(timeout=30_000)


def test_each_session_has_its_own_model(browser, two_models, gpt2, llama):
    """Two sessions, two models, scored at the same time; the API's default is untouched."""
    import httpx

    text = "The quick brown fox"
    ctxs = [browser.new_context(viewport={"width": 1280, "height": 1000}) for _ in range(2)]
    pages = [ctx.new_page() for ctx in ctxs]
    for pg, name in zip(pages, ["tiny-gpt2", "tiny-llama"]):
        pg.goto(two_models.url)
        pg.get_by_label("Text", exact=True).wait_for(timeout=60_000)
        load_model(pg, name)
        pg.get_by_label("Text", exact=True).fill(text)
    for pg in pages:  # both at about the same time
        pg.get_by_role("button", name="Score", exact=True).click()
    seen = []
    for pg in pages:
        summary = pg.get_by_text("perplexity", exact=False).first
        summary.wait_for(timeout=60_000)
        chips = pg.locator("#heatmap [data-pos]")
        seen.append((summary.inner_text(), chips.count(), chips.first.inner_text()))
    (sa, na, fa), (sb, nb, fb) = seen
    assert "tiny-gpt2" in sa and "tiny-llama" not in sa and "tiny-llama" in sb and "tiny-gpt2" not in sb
    assert (na, nb) == (len(gpt2.encode(text)), len(llama.encode(text))) and (na, fa) != (nb, fb)
    for ctx in ctxs:
        ctx.close()
    body = httpx.post(two_models.url + "/v1/completions", json={"model": "tiny-llama", "prompt": "x", "max_tokens": 1},
                      timeout=60).json()
    assert body["model"] == "tiny-llama"
    assert two_models.models.get() is gpt2  # the default for /v1 clients that name no model


@pytest.fixture(scope="module")
def long_live(long_gpt2):
    """The app on the 8,192-position tiny GPT-2."""
    from tests.conftest import LiveServer

    srv = LiveServer(long_gpt2)
    yield srv
    srv.stop()


def test_five_thousand_tokens(browser, long_live, gpt2):
    """A 5,000-token text renders as 5,000 chips and its last token still opens on click."""
    words = "fox jumps over the lazy dog. "
    n = len(gpt2.encode(words))
    text = words * (6000 // n + 1)  # tokens merge across repeats: aim above 5,000
    ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = ctx.new_page()
    page.goto(long_live.url)
    page.get_by_label("Text", exact=True).fill(text)
    page.get_by_role("button", name="Score", exact=True).click()
    page.get_by_text("perplexity", exact=False).first.wait_for(timeout=120_000)
    count = page.locator("#heatmap [data-pos]").count()
    assert count >= 5000
    last = page.locator(f"#heatmap [data-pos='{count - 1}']")
    last.scroll_into_view_if_needed()
    last.click()
    page.get_by_text(f"Position {count - 1} ", exact=False).first.wait_for(timeout=60_000)
    ctx.close()
