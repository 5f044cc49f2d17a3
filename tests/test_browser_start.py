"""The simple start in real Chromium, as a teacher meets it: an example chip scores at once, a surprising token
clicked, the temperature typed, ten samples drawn, in four actions; the phone's first screen holds the text box and
its button; the keyboard reaches the text box at once (a skip link), in 3 Tab presses from the page's start, and
each tab list is one tab stop; every view the default `make run` offers (llama.cpp) runs without an error badge."""

from __future__ import annotations

import json
import re

import pytest

from tests.helpers.browser import SIZES, new_result, require_chromium, wait_detail

require_chromium()
pytestmark = pytest.mark.browser


def fresh(browser, url, size, scheme):
    ctx = browser.new_context(viewport=SIZES[size], color_scheme=scheme)
    pg = ctx.new_page()
    pg.goto(url + ("?__theme=dark" if scheme == "dark" else "?__theme=light"))
    pg.get_by_label("Text", exact=True).wait_for(timeout=60_000)
    return pg


def toasts(pg) -> list[str]:
    return pg.get_by_test_id("toast-body").all_inner_texts()


@pytest.mark.parametrize(("size", "scheme"), [("wide", "light"), ("phone", "dark")])
def test_a_teacher_scores_clicks_a_surprise_and_draws_at_a_temperature(browser, smollm_live, shots, size, scheme):
    pg = fresh(browser, smollm_live.url, size, scheme)
    actions = 0
    # 1. an example chip scores at once
    new_result(pg, pg.locator("#score-examples button").filter(has_text="The capital of France").click)
    actions += 1
    assert pg.get_by_label("Text", exact=True).input_value() == "The capital of France is Paris."
    # 2. the most surprising token, clicked
    data = json.loads(pg.locator("#heatmap .lx-data").text_content())
    lp = data["lp"]
    worst = min((p for p in range(len(lp)) if lp[p] is not None), key=lambda p: lp[p])
    pg.locator(f"#heatmap [data-pos='{worst}']").click()
    actions += 1
    wait_detail(pg, worst)
    assert not re.search(r"\d\.\de-\d", pg.locator("#token-detail").inner_text())  # plain percentages
    # 3. a typed temperature redraws at once
    box = pg.locator("#next-temperature input[type=number]")
    box.fill("0.3")
    box.press("Enter")
    actions += 1
    pg.locator("#next-view").filter(has_text="temperature 0.3").wait_for(timeout=60_000)
    view = pg.locator("#next-view").inner_text()
    assert "The next token would be" in view and "%" in view and "e-" not in view
    # 4. ten samples, each shown as the token drawn
    pg.get_by_role("button", name="Draw 10 samples").click()
    actions += 1
    pg.locator("#next-view .draws").wait_for(timeout=60_000)
    assert pg.locator("#next-view .draws span").count() == 10
    assert actions <= 4 and toasts(pg) == []
    pg.locator("#next-token").scroll_into_view_if_needed()
    pg.screenshot(path=str(shots / f"start-temperature-{scheme}-{size}.png"))
    pg.context.close()


def test_the_first_page_says_the_model_is_ready_in_plain_words_and_shows_no_stop(browser, smollm_live):
    """The status line says "SmolLM2-135M-Instruct is ready."; the engine, quantisation, vocabulary and memory are
    one click away (under the tabs, beside the model picker: the text box stays three Tab presses from the start);
    no Stop while nothing runs."""
    for size in ("wide", "phone"):
        pg = fresh(browser, smollm_live.url, size, "light")
        status = pg.locator("#model-status [data-testid=markdown]")  # its text, not the timer Gradio shows beside it
        status.filter(has_text="is ready").wait_for(timeout=60_000)
        assert status.inner_text().strip() == "SmolLM2-135M-Instruct is ready.", status.inner_text()
        assert pg.get_by_role("button", name="Stop", exact=True).count() == 0
        details = pg.locator("#model-details")
        assert not details.is_visible()
        pg.get_by_role("button", name="Details: engine, vocabulary, memory").click()  # one click
        opened = details.inner_text()
        assert "vocabulary 49,152" in opened and "with torch" in opened and "In memory now" in opened, opened
        pg.context.close()


def test_the_phone_first_screen_holds_the_text_box_and_its_button(browser, smollm_live, shots):
    pg = fresh(browser, smollm_live.url, "phone", "light")
    text = pg.get_by_label("Text", exact=True).bounding_box()
    button = pg.get_by_role("button", name="Score", exact=True).bounding_box()
    height = SIZES["phone"]["height"]
    assert text and button and text["y"] + text["height"] <= height and button["y"] + button["height"] <= height
    pg.screenshot(path=str(shots / "start-light-phone.png"))
    pg.context.close()
    for scheme in ("light", "dark"):
        wide = fresh(browser, smollm_live.url, "wide", scheme)
        wide.screenshot(path=str(shots / f"start-{scheme}-wide.png"))
        wide.context.close()


def test_the_keyboard_reaches_the_text_box_at_once_and_a_tab_list_is_one_stop(browser, smollm_live):
    pg = fresh(browser, smollm_live.url, "wide", "light")
    pg.locator(".lx-skip-start").wait_for(state="attached", timeout=30_000)
    pg.keyboard.press("Tab")
    assert pg.evaluate("document.activeElement.textContent") == "Skip to the text box"
    pg.keyboard.press("Enter")
    assert pg.evaluate("document.activeElement.closest('#score-text') !== null")
    stops = pg.evaluate(  # per tab list (the top row, each group's row)
        "[...document.querySelectorAll('[role=tablist]')]"
        ".map(l => [...l.querySelectorAll('[role=tab]')].filter(t => t.tabIndex >= 0).length)"
    )
    assert stops and set(stops) == {1}
    pg.get_by_role("tab", name="Score").focus()
    pg.keyboard.press("ArrowRight")
    assert pg.evaluate("document.activeElement.textContent.trim()") == "Generate"
    assert pg.get_by_label("Prompt", exact=True).is_visible()
    pg.context.close()


STOP = """() => { const e = document.activeElement; const r = e.getBoundingClientRect();
  return {box: !!e.closest('#score-text'), name: (e.getAttribute('aria-label') || e.textContent || '').trim(),
          y: r.top + window.scrollY, height: r.height}; }"""
KEYBOARD_SIZES = {"wide": SIZES["wide"], "phone": {"width": 420, "height": 900}}  # the phone


@pytest.mark.parametrize("size", list(KEYBOARD_SIZES))
def test_the_text_box_is_three_tab_presses_from_the_start_in_the_order_seen(browser, live, size):
    """From the page's start, Tab reaches the Score tab's text box in at most 3 presses (the skip link, the tab list,
    the box), with no positive tabindex and every stop before it above it on the screen (WCAG 2.4.3); the lesson
    link, the walkthrough, the numbers and the model picker come after it, below it, and are all reached."""
    pg = browser.new_context(viewport=KEYBOARD_SIZES[size]).new_page()
    pg.goto(live.url)
    pg.get_by_label("Text", exact=True).wait_for(timeout=60_000)
    pg.locator(".lx-skip-start").wait_for(state="attached", timeout=30_000)
    assert pg.evaluate("[...document.querySelectorAll('[tabindex]')].filter(e => e.tabIndex > 0).length") == 0
    stops = []
    for _ in range(40):
        pg.keyboard.press("Tab")
        stops.append(pg.evaluate(STOP))
    at = next((i for i, s in enumerate(stops) if s["box"]), None)
    assert at is not None and at + 1 <= 3, [s["name"] for s in stops[:10]]
    box = stops[at]
    assert all(s["y"] + s["height"] <= box["y"] + 1 for s in stops[:at])  # each stop before the box is above it
    after = [s for s in stops[at + 1 :] if not s["box"]]
    names = [s["name"] for s in after]
    for want in ("Show me how, in 3 steps", "Start a lesson", "What the numbers mean", "Load model"):
        hit = next((s for s in after if s["name"].startswith(want)), None)
        assert hit is not None and hit["y"] >= box["y"] + box["height"], (want, names)
    assert any(n.startswith("Model (") for n in names), names
    pg.context.close()


def test_every_view_the_default_run_offers_runs_without_an_error(browser, smollm_gguf, shots):
    """On llama.cpp (as `make run` serves the default model) the Logit lens and the gradient methods of Why run
    on the torch engine on the same weights, and say so."""
    from tests.helpers.browser import pick_tab, score
    from tests.helpers.servers import LiveServer

    srv = LiveServer(smollm_gguf)
    try:
        pg = fresh(browser, srv.url, "wide", "light")
        score(pg, "The capital of France is Paris.")
        pick_tab(pg, "Logit lens")
        assert pg.get_by_role("button", name="Run the logit lens").is_enabled()
        pg.get_by_role("button", name="Run the logit lens").click()
        pg.locator("#lens-grid .lens-note").wait_for(timeout=120_000)
        assert "torch engine on the same weights" in pg.locator("#lens-grid .lens-note").inner_text()
        pick_tab(pg, "Why")
        pg.get_by_label(re.compile("Integrated gradients")).check()
        pg.locator("#heatmap [data-pos='5']").click()
        pg.get_by_role("button", name="Why? (the selected token)").click()
        pg.locator("#why-summary").filter(has_text="torch engine on the same weights").wait_for(timeout=120_000)
        assert toasts(pg) == []
        pg.screenshot(path=str(shots / "why-on-llamacpp-wide.png"))
        pg.context.close()
    finally:
        srv.stop()


@pytest.mark.parametrize(("size", "scheme"), [("wide", "light"), ("phone", "dark")])
def test_the_walkthrough_shows_three_steps_and_can_be_skipped_and_replayed(browser, smollm_live, shots, size, scheme):
    pg = fresh(browser, smollm_live.url, size, scheme)
    pg.get_by_role("button", name="Show me how, in 3 steps").click()
    tour = pg.get_by_role("dialog")
    for n, title, target in [(1, "Score a sentence", "#score-examples"), (2, "Click the most surprising token", None),
                             (3, "Change the temperature", "#next-token")]:  # fmt: skip
        assert f"Step {n} of 3" in tour.inner_text() and title in tour.inner_text()
        if target:
            assert "lx-tour-target" in (pg.locator(target).get_attribute("class") or "")
        if n == 1:
            pg.screenshot(path=str(shots / f"start-walkthrough-{scheme}-{size}.png"))
            card = tour.bounding_box()  # the card on the screen, whole, on a phone too
            assert card and card["x"] >= 0 and card["x"] + card["width"] <= SIZES[size]["width"] + 1
        tour.get_by_role("button", name="Done" if n == 3 else "Next").click()
    assert tour.is_hidden() and pg.locator(".lx-tour-target").count() == 0
    pg.get_by_role("button", name="Show me how, in 3 steps").click()  # a teacher replays it
    assert "Step 1 of 3" in tour.inner_text()
    pg.keyboard.press("Escape")
    assert tour.is_hidden()
    pg.context.close()


def test_the_expert_views_are_grouped_and_a_group_reopens_at_the_view_last_used(browser, smollm_live):
    """Score, Generate and Chat first, the expert views in groups one click away; the browser remembers the view
    last opened in a group, and *Copy link* describes the view a group shows."""
    from tests.helpers.browser import pick_tab

    pg = fresh(browser, smollm_live.url, "wide", "light")
    top = [t.inner_text() for t in pg.get_by_role("tab").all()]
    assert top[:3] == ["Score", "Generate", "Chat"] and {"Read a result", "Compare and many"} <= set(top)
    assert "Logit lens" not in top  # grouped: shown once its group is opened
    stored = "() => localStorage.getItem('logprob-explorer-groups')"
    before = pg.evaluate(stored)
    pick_tab(pg, "Logit lens")
    pg.get_by_role("button", name="Run the logit lens").wait_for(timeout=30_000)
    pg.wait_for_function(f"before => ({stored})() !== before", arg=before, timeout=30_000)  # the browser remembers
    pg.reload()
    pg.get_by_label("Text", exact=True).wait_for(timeout=60_000)
    assert pg.get_by_role("tab", name="Score", exact=True).get_attribute("aria-selected") == "true"  # lands on Score
    pg.get_by_role("tab", name="Read a result", exact=True).click()
    lens = pg.get_by_role("tab", name="Logit lens", exact=True)
    pg.wait_for_function("() => [...document.querySelectorAll('[role=tab]')].some(t => "
                         "t.textContent.trim() === 'Logit lens' && t.getAttribute('aria-selected') === 'true')")  # fmt: skip
    assert (
        lens.get_attribute("aria-selected") == "true"
        and pg.get_by_role("button", name="Run the logit lens").is_visible()
    )
    pg.get_by_role("tab", name="Score", exact=True).click()
    new_result(pg, pg.locator("#score-examples button").first.click)
    pg.get_by_role("tab", name="Read a result", exact=True).click()  # the group opens at the lens: Copy link says so
    pg.get_by_role("button", name="Copy link").click()
    pg.locator("#link-note").filter(has_text="Run the logit lens first").wait_for(timeout=30_000)
    pg.context.close()
