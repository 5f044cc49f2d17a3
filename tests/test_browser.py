"""The live app in real headless Chromium (Debian's), driven by Playwright, as a person would use it:
at 1400x1000 and on a 420-px phone, with the mouse and with the keyboard alone."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from playwright.sync_api import expect

from tests.helpers.browser import (
    SIZES,
    in_view,
    new_result,
    open_page,
    pick_tab,
    require_chromium,
    score,
    wait_detail,
)
from tests.helpers.reference import ref_logprobs

require_chromium()
pytestmark = pytest.mark.browser

TEXT = "The quick brown fox jumps over the lazy dog. The capital of France is Paris."


@pytest.fixture(params=list(SIZES))
def size(request):
    return request.param


@pytest.fixture
def page(browser, live, size):
    pg = open_page(browser, live.url, size, accept_downloads=True)
    yield pg
    pg.context.close()


def detail_pos(page) -> int:
    return int(page.locator("#token-detail .td").get_attribute("data-pos"))


def test_score_brings_results_into_view_and_reads_by_mouse(page, gpt2, size):
    score(page, TEXT)
    page.wait_for_timeout(300)
    assert in_view(page, "#heatmap .lx") and in_view(page, "#token-detail .td")
    assert page.locator("#heatmap [data-pos]").count() == len(gpt2.encode(TEXT))
    # hover: a card with the numbers and the top-5 (no per-token markup: from the page's one data blob)
    page.locator("#heatmap [data-pos='3']").hover()
    card = page.locator("#lx-card")
    card.wait_for(state="visible", timeout=5_000)
    assert "rank" in card.inner_text() and 1 <= card.locator("li").count() <= 5
    assert page.locator("#heatmap [data-pos='3'][title]").count() == 0
    # click: the detail of that token, in view, its chip highlighted
    page.locator("#heatmap [data-pos='4']").click()
    wait_detail(page, 4)
    assert in_view(page, "#token-detail .td") and "sel" in page.locator("#heatmap [data-pos='4']").get_attribute(
        "class"
    )
    assert (
        page.locator("#token-detail tr.act").count() == 1 and "(others)" in page.locator("#token-detail").inner_text()
    )


def test_keyboard_one_tab_stop_arrows_enter_and_span(page, gpt2, size):
    score(page, TEXT)
    page.locator("#heatmap a.lx-skip").focus()
    page.keyboard.press("Tab")
    first = page.evaluate("document.activeElement.dataset.pos")
    assert first is not None  # the text is one tab stop: the selected token
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.closest('#heatmap .lx') === null")  # ... and the next Tab leaves it
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("document.activeElement.dataset.pos") == first
    page.keyboard.press("Home")
    for want in ("1", "2", "3"):
        page.keyboard.press("ArrowRight")
        assert page.evaluate("document.activeElement.dataset.pos") == want
    page.keyboard.press("ArrowLeft")
    assert page.evaluate("document.activeElement.dataset.pos") == "2"
    assert page.locator("#lx-card").is_visible()  # the card follows the keyboard too
    page.keyboard.press("Enter")
    wait_detail(page, 2)
    # Shift+arrows select a span: its total logprob is the sum of the tokens' logprobs (computed independently)
    for _ in range(4):
        page.keyboard.press("Shift+ArrowRight")
    total = float(page.locator(".lx-span .sp-sum").get_attribute("data-sum"))
    ids = gpt2.encode(TEXT)
    lp = ref_logprobs(gpt2.model, ids)
    assert abs(total - sum(float(lp[p - 1, ids[p]]) for p in range(2, 7))) < 1e-4
    assert "Span 2–6 (5 tokens" in page.locator(".lx-span").inner_text()
    page.keyboard.press("End")
    assert page.evaluate("document.activeElement.dataset.pos") == str(len(ids) - 1)


def test_position_box_k_box_metric_and_sorting(page, size):
    score(page, TEXT)
    box = page.get_by_label("Position (type one, then Enter)")
    box.fill("6")
    box.press("Enter")
    wait_detail(page, 6)
    assert "sel" in page.locator("#heatmap [data-pos='6']").get_attribute("class")  # the heatmap follows the box
    k = page.get_by_label("number input for Alternatives shown (k)")
    k.fill("3")
    k.press("Enter")
    page.get_by_text("Top 3 alternatives", exact=False).wait_for(timeout=15_000)
    page.get_by_label("number input for Alternatives shown (k)").focus()
    page.get_by_label("range slider for Alternatives shown (k)").focus()
    page.keyboard.press("ArrowRight")  # the slider applies on arrow keys, too
    page.get_by_text("Top 4 alternatives", exact=False).wait_for(timeout=15_000)
    page.get_by_label("rank", exact=True).check()
    page.locator("#legend").get_by_text("top 1").wait_for(timeout=15_000)
    assert re.search(r"\bc[0-7]\b", page.locator("#heatmap [data-pos='2']").get_attribute("class"))
    if size == "wide":  # the table: a click on a column's header sorts by it
        page.get_by_text("Every token: a sortable table").click()
        table = page.locator("#token-table")
        table.get_by_text("logprob", exact=True).click()
        page.wait_for_timeout(800)
        first_row = table.inner_text().split("\n\n\n")[1]
        low = page.evaluate(
            "Math.min(...JSON.parse(document.querySelector('#heatmap .lx-data').textContent).lp.filter(x => x !== null))"
        )
        assert f"{low:.4f}" in first_row.split("\n")[:9]


def seed_box(page):
    return page.get_by_role("textbox", name=re.compile(r"^Seed")).filter(visible=True)


def generate(page, prompt):
    page.get_by_role("tab", name="Generate").click()
    page.get_by_label("Prompt", exact=True).fill(prompt)
    new_result(page, page.get_by_role("button", name="Generate", exact=True).click)  # this run's, not the last one's
    page.get_by_text("finish:", exact=False).first.wait_for(timeout=60_000)
    return page.locator("#heatmap .lx").inner_text(), page.locator("#summary").inner_text()


def test_an_empty_seed_gives_a_new_run_each_time_and_shows_it(page, size):
    page.get_by_role("tab", name="Generate").click()
    assert seed_box(page).input_value() == ""
    page.get_by_label("number input for Temperature (0 = greedy)").fill("1.5")
    page.get_by_label("number input for Max tokens").fill("16")
    runs = []
    for _ in range(2):
        text, summary = generate(page, "The lazy")
        seed = re.search(r"seed (\d+)", summary).group(1)
        page.get_by_role("button", name=f"Reuse seed {seed}").wait_for(timeout=10_000)
        runs.append((text, seed))
        assert seed_box(page).input_value() == ""  # still random for the next run
    assert runs[0][1] != runs[1][1] and runs[0][0] != runs[1][0]
    assert in_view(page, "#heatmap .lx") and in_view(page, "#token-detail .td")
    page.get_by_role("button", name=f"Reuse seed {runs[1][1]}").click()
    expect(seed_box(page)).to_have_value(runs[1][1], timeout=10_000)
    assert generate(page, "The lazy")[0] == runs[1][0]  # the shown seed replays the run


def test_generated_token_shows_raw_and_processed_side_by_side(browser, live, size):
    pg = open_page(browser, live.url, size)
    pg.get_by_role("tab", name="Generate").click()
    pg.get_by_label("number input for Top-k (0 = off)").fill("3")
    pg.get_by_text("processed: after", exact=False).click()
    generate(pg, "The lazy")
    detail = pg.locator("#token-detail")
    assert "Raw: the model" in detail.inner_text() and "After the sampler" in detail.inner_text()
    assert "kept 3 of" in detail.inner_text() and detail.locator("tr.cut").count() >= 1
    width = pg.viewport_size["width"]  # on a phone too, nothing of the detail is off-screen
    assert pg.evaluate("document.documentElement.scrollWidth") <= width
    assert all(t.bounding_box()["x"] + t.bounding_box()["width"] <= width + 1 for t in detail.locator("table").all())
    right = detail.bounding_box()["x"] + detail.bounding_box()["width"]  # both tables inside the detail's column
    assert all(t.bounding_box()["x"] + t.bounding_box()["width"] <= right + 1 for t in detail.locator("table").all())
    assert pg.evaluate(  # and no heading cut ("After the sampler" over "probabil")
        "[...document.querySelectorAll('#token-detail .sbs th, #token-detail .sbs caption')]"
        ".every(c => c.scrollWidth <= c.clientWidth + 1)"
    )
    pg.locator("#heatmap [data-pos='1']").click()
    wait_detail(pg, 1)
    assert "raw numbers" in detail.inner_text()  # a prompt token: raw, whatever the mode
    pg.context.close()


def test_one_click_downloads_with_descriptive_names(page, size):
    if size == "phone":
        pytest.skip("the same buttons; once is enough")
    score(page, "fox jumps, over\nthe dog")
    button = page.get_by_role("button", name="Download as vLLM's API answers (JSON)")
    page.locator("#dl-vllm:not([disabled])").wait_for(timeout=30_000)
    with page.expect_download() as dl:
        button.click()
    name = dl.value.suggested_filename
    assert re.fullmatch(r"tiny-gpt2-raw-\d{8}-\d{6}\.vllm\.json", name), name
    body = json.loads(Path(dl.value.path()).read_text(encoding="utf-8"))
    assert body["choices"][0]["prompt_logprobs"][0] is None
    assert len(body["choices"][0]["prompt_token_ids"]) == page.locator("#heatmap [data-pos]").count()
    with page.expect_download() as dl:
        page.get_by_role("button", name="Download a table for a spreadsheet (CSV)").click()
    import csv
    import io

    text = Path(dl.value.path()).read_bytes().decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert dl.value.suggested_filename.endswith(".tokens.csv") and "·" not in text and "↵" not in text
    assert "".join(r["token"] for r in rows) == "fox jumps, over\nthe dog"  # the real token text
    assert page.get_by_role("button", name="Download as OpenAI's Chat API answers (JSON)").is_disabled()
    with page.expect_download() as dl:  # the view as one HTML file, which opens here again
        page.get_by_role("button", name="Download this view, to open anywhere (HTML)").click()
    assert re.fullmatch(r"tiny-gpt2-raw-\d{8}-\d{6}\.view\.html", dl.value.suggested_filename)
    saved = Path(dl.value.path()).read_text(encoding="utf-8")
    assert 'id="logprob-data"' in saved and "<script src" not in saved and "http://" not in saved.split("</head>")[0]
    copy = Path(dl.value.path()).with_suffix(".html")
    copy.write_text(saved, encoding="utf-8")
    page.get_by_label("Text", exact=True).fill("")
    page.locator("#open-session input[type=file]").set_input_files(str(copy))
    page.locator("#share-note").filter(has_text="without running a model").wait_for(timeout=30_000)
    assert page.locator("#heatmap [data-pos]").count() == len(body["choices"][0]["prompt_token_ids"])


def test_markup_is_shown_as_text(page, size):
    if size == "phone":
        pytest.skip("escaping does not depend on the width")
    evil = "<img src=x onerror=alert(1)> <script>alert(2)</script> ${alert(3)}"
    score(page, evil)
    page.wait_for_timeout(500)
    assert page.dialogs == []
    assert page.locator("#heatmap img").count() == 0 and page.locator("#heatmap script").count() == 0
    shown = page.locator("#heatmap .lx").inner_text().replace("·", " ")
    assert "<img src=x onerror=alert(1)>" in shown and "${alert(3)}" in shown
    for pos in range(page.locator("#heatmap [data-pos]").count()):  # every token's detail and card, too
        page.locator(f"#heatmap [data-pos='{pos}']").click()
        wait_detail(page, pos)
    page.locator("#surprising button").first.click()
    page.wait_for_timeout(500)
    assert page.dialogs == [] and page.locator("img[src=x]").count() == 0


def test_most_surprising_jumps_to_the_token(page, size):
    score(page, TEXT)
    first = page.locator("#surprising button").first
    pos = int(first.get_attribute("data-jump"))
    data = json.loads(page.locator("#heatmap .lx-data").text_content())
    lps = np.array([x if x is not None else np.inf for x in data["lp"]])
    assert pos == int(np.argmin(lps))  # the lowest logprob first
    first.click()
    wait_detail(page, pos)
    assert in_view(page, "#token-detail .td")


def test_empty_text_shows_a_message_and_keeps_input(page, size):
    page.get_by_label("Text", exact=True).fill("   ")
    page.get_by_role("button", name="Score", exact=True).click()
    toast = page.get_by_test_id("toast-body").first
    toast.wait_for(timeout=15_000)
    assert "The text is empty" in toast.inner_text()
    assert page.get_by_label("Text", exact=True).input_value() == "   "
    box, model = toast.bounding_box(), page.locator("#model-status").bounding_box()
    assert box["y"] > model["y"] + model["height"]  # the message does not cover the model line


def test_stop_shows_only_while_an_action_runs(page, size):
    """No Stop on an idle page, none left after a result or an error (tests/test_browser_long.py sees it while a
    long scoring runs, and stops it)."""
    stop = page.get_by_role("button", name="Stop", exact=True)  # the visible ones only
    assert stop.count() == 0
    score(page, TEXT)
    expect(stop).to_have_count(0)
    pick_tab(page, "Generate")
    page.get_by_label("Prompt", exact=True).fill("the quick")
    new_result(page, page.get_by_role("button", name="Generate", exact=True).click)
    expect(stop).to_have_count(0)
    pick_tab(page, "Score")
    page.get_by_label("Text", exact=True).fill("")
    page.get_by_role("button", name="Score", exact=True).click()
    page.get_by_test_id("toast-body").first.wait_for(timeout=15_000)
    expect(stop).to_have_count(0)


def test_markup_in_an_error_message_is_shown_as_text(page, size):
    if size == "phone":
        pytest.skip("escaping does not depend on the width")
    score(page, "hello there")
    page.get_by_label("rank", exact=True).check()
    evil = "<img src=x onerror=window.__x=1>"
    field = page.get_by_label("Rank buckets (GLTR), Enter applies")
    field.fill(evil)
    field.press("Enter")
    toast = page.get_by_test_id("toast-body").first
    toast.wait_for(timeout=15_000)
    page.wait_for_timeout(500)
    assert evil in toast.inner_text()
    assert page.locator("img[src=x]").count() == 0 and page.evaluate("window.__x") is None


def test_presentation_mode(page, size):
    score(page, TEXT)
    small = page.locator("#heatmap .lx").evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
    page.locator("#present-btn").click()
    assert page.get_by_label("Text", exact=True).is_hidden() and page.locator("#model-status").is_hidden()
    big = page.locator("#heatmap .lx").evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
    assert big >= (1.8 if size == "wide" else 1.3) * small  # large type (scaled to a phone's width there)
    assert page.locator("#token-detail").is_visible() and page.locator("#downloads").is_hidden()
    page.keyboard.press("Escape")
    assert page.get_by_label("Text", exact=True).is_visible()


def test_nothing_of_the_results_before_the_first_run(page, size):
    assert page.locator("#results").is_hidden() and page.locator("#token-table").is_hidden()


@pytest.fixture(scope="module")
def two_models(gpt2, llama):
    """The app serving both tiny models (tiny-gpt2 is the default)."""
    from tests.helpers.servers import LiveServer

    srv = LiveServer(gpt2, llama, allow_hub=True)
    yield srv
    srv.stop()


def load_model(page, name):
    page.get_by_label("Model (pick one, or type a Hugging Face hub id)").click()
    page.get_by_role("option", name=name).click()
    page.get_by_role("button", name="Load model").click()
    page.locator("#model-status").filter(has_text=f"{name} is ready").wait_for(timeout=30_000)


def test_each_session_has_its_own_model(browser, two_models, gpt2, llama):
    """Two sessions, two models, scored at the same time; the API's default is untouched."""
    import httpx

    text = "The quick brown fox"
    pages = [open_page(browser, two_models.url) for _ in range(2)]
    for pg, name in zip(pages, ["tiny-gpt2", "tiny-llama"]):
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
    for pg in pages:
        pg.context.close()
    body = httpx.post(
        two_models.url + "/v1/completions", json={"model": "tiny-llama", "prompt": "x", "max_tokens": 1}, timeout=60
    ).json()
    assert body["model"] == "tiny-llama"
    assert two_models.models.get() is gpt2  # the default for /v1 clients that name no model


def test_the_model_box_reverts_when_a_load_fails(browser, two_models):
    pg = open_page(browser, two_models.url)
    box = pg.get_by_label("Model (pick one, or type a Hugging Face hub id)")
    box.fill("no-such-owner/no-such-model")
    box.press("Enter")
    pg.get_by_role("button", name="Load model").click()
    pg.get_by_test_id("toast-body").first.wait_for(timeout=60_000)
    pg.wait_for_function(
        "document.querySelector('input[aria-label^=\"Model (pick one\"]').value === 'tiny-gpt2'", timeout=15_000
    )
    pg.context.close()


def test_a_tap_on_a_touch_screen_shows_the_card_and_the_detail(browser, live, gpt2):
    pg = open_page(browser, live.url, "phone", has_touch=True, is_mobile=True)
    score(pg, TEXT)
    pg.locator("#heatmap [data-pos='5']").tap()
    pg.locator("#lx-card").wait_for(state="visible", timeout=5_000)
    assert "position 5" in pg.locator("#lx-card").inner_text()
    wait_detail(pg, 5)
    pg.wait_for_timeout(300)
    assert in_view(pg, "#token-detail .td") and in_view(pg, "#heatmap [data-pos='5']", whole=True)
    pg.context.close()


def test_a_tap_card_leaves_the_next_lines_readable_and_goes_by_itself(browser, live, gpt2):
    pg = open_page(browser, live.url, "phone", has_touch=True, is_mobile=True)
    score(pg, TEXT * 3)
    chip = pg.locator("#heatmap [data-pos='12']")
    chip.scroll_into_view_if_needed()
    chip.tap()
    card = pg.locator("#lx-card")
    card.wait_for(state="visible", timeout=5_000)
    c, t = card.bounding_box(), chip.bounding_box()
    assert c and t and (c["y"] + c["height"] <= t["y"] + 1 or c["y"] >= t["y"] + t["height"] - 1)
    assert c["y"] + c["height"] <= t["y"] + 1 or t["y"] - c["height"] - 6 < 0  # above the line when it fits
    card.wait_for(state="hidden", timeout=8_000)
    pg.context.close()
