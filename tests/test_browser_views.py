"""The Compare, What-if, Look up and Words views in real headless Chromium: reachable, drawn, the engine's numbers."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from explorer.engine import score_ids
from explorer.engine.analyses.compare import compare_ids
from explorer.engine.analyses.lookup import lookup
from explorer.engine.analyses.whatif import logits_row, whatif
from explorer.results.words import words
from explorer.rules.sampler import SamplerSettings
from tests.helpers.browser import pick_tab, require_chromium, score, wait_detail

require_chromium()
pytestmark = pytest.mark.browser
TEXT = "The capital of France is Paris. The capital of Italy is Rome."


@pytest.fixture(scope="module")
def server(gpt2, llama, gpt2_b):
    """The app with three models: tiny-gpt2 (the default), tiny-llama, tiny-gpt2-b (the Compare tab's default B)."""
    from tests.helpers.servers import LiveServer

    srv = LiveServer(gpt2, llama, gpt2_b)
    yield srv
    srv.stop()


@pytest.fixture
def page(browser, server):
    ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
    pg = ctx.new_page()
    pg.goto(server.url)
    pg.get_by_label("Text", exact=True).wait_for(timeout=60_000)
    yield pg
    ctx.close()


def scored(page, text=TEXT):
    """Score `text` in the Score tab (the inspector then holds it) and wait for the heatmap."""
    page.get_by_label("Text", exact=True).fill(text)
    page.get_by_role("button", name="Score", exact=True).click()
    page.locator("#heatmap [data-pos='3']").wait_for(timeout=30_000)


def test_compare_view(page, gpt2, gpt2_b):
    pick_tab(page, "Compare")
    page.get_by_label("Text to compare").fill(TEXT)
    page.get_by_role("button", name="Compare", exact=True).click()
    chip = page.locator("#compare-heatmap [data-pos='4']")
    chip.wait_for(timeout=30_000)
    c = compare_ids(gpt2, gpt2_b, gpt2.encode(TEXT), k=10)
    assert page.locator("#compare-heatmap [data-pos]").count() == c.m
    title = chip.get_attribute("title")  # "A -x · B -y · Δ +z · JS w"
    assert f"A {c.logprob_a[4]:.3f}" in title and f"B {c.logprob_b[4]:.3f}" in title and f"JS {c.js[4]:.4f}" in title
    chip.click()
    detail = page.get_by_text("Position 4:", exact=False).first
    detail.wait_for(timeout=15_000)
    text = detail.inner_text()
    assert (
        f"KL(A‖B) {c.kl_ab[4]:.4f}" in text
        and f"KL(B‖A) {c.kl_ba[4]:.4f}" in text
        and f"{c.delta_logprob[4]:+.4f}" in text
    )
    assert page.get_by_text("mean KL(A‖B)", exact=False).count() >= 1


def test_whatif_view(page, gpt2):
    scored(page)
    page.locator("#heatmap [data-pos='5']").click()  # the inspector's selected token
    page.get_by_text("Position 5", exact=False).first.wait_for(timeout=15_000)
    pick_tab(page, "What-if")
    page.get_by_role("button", name="What if? (at the selected token)").click()
    summary = page.get_by_text("Position 5, actual token", exact=False).first
    summary.wait_for(timeout=30_000)
    ids = gpt2.encode(TEXT)
    w = whatif(logits_row(gpt2, ids, 5), SamplerSettings(), ids[:5], [], ids[5], 15)  # the sliders' defaults: all off
    text = summary.inner_text()
    assert "Position 5" in text and f"{w.raw.prob:.3%}" in text and f"{w.processed.entropy:.3f}" in text
    page.get_by_text("processed: what the sampler draws from").wait_for(timeout=15_000)  # the bars are drawn


def test_whatif_follows_a_typed_temperature_and_the_picked_token(page, gpt2):
    scored(page)
    page.locator("#heatmap [data-pos='5']").click()
    page.get_by_text("Position 5", exact=False).first.wait_for(timeout=15_000)
    pick_tab(page, "What-if")
    page.get_by_role("button", name="What if? (at the selected token)").click()
    page.get_by_text("Position 5, actual token", exact=False).first.wait_for(timeout=30_000)
    ids = gpt2.encode(TEXT)
    box = page.locator("input[type=number][aria-label='number input for Temperature (0 = greedy)']")
    box.fill("0.5")
    box.press("Enter")  # typed, not dragged: the view follows
    w = whatif(logits_row(gpt2, ids, 5), SamplerSettings(temperature=0.5), ids[:5], [], ids[5], 15)
    page.get_by_text(f"{w.processed.entropy:.3f}", exact=False).first.wait_for(timeout=30_000)
    page.locator("#heatmap [data-pos='3']").click()  # another token picked while What-if is shown
    page.get_by_text("Position 3, actual token", exact=False).first.wait_for(timeout=30_000)


def test_whatif_on_a_phone_keeps_its_titles_apart_and_describes_its_chart(browser, server, gpt2):
    """At 420 px the two charts' titles overlap neither each other nor Plotly's toolbar; the chart's text
    alternative reads its numbers (the raw chart's top probability among them)."""
    pg = browser.new_page(viewport={"width": 420, "height": 900})
    pg.goto(server.url)
    score(pg, TEXT)
    pg.locator("#heatmap [data-pos='5']").click()
    wait_detail(pg, 5)
    pick_tab(pg, "What-if")
    pg.get_by_role("button", name="What if? (at the selected token)").click()
    pg.get_by_text("Position 5, actual token", exact=False).first.wait_for(timeout=30_000)
    plot = pg.locator(".js-plotly-plot").filter(has_text="processed: what the sampler draws from")
    plot.wait_for(timeout=15_000)
    plot.scroll_into_view_if_needed()
    plot.hover()  # Plotly's toolbar shows on hover
    boxes = [t.bounding_box() for t in plot.locator("g.annotation").all()]
    bar = plot.locator(".modebar").bounding_box()

    def apart(a, b) -> bool:
        return a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"] or a["y"] + a["height"] <= b["y"] or \
            b["y"] + b["height"] <= a["y"]  # fmt: skip

    assert len(boxes) == 2 and apart(boxes[0], boxes[1]) and (bar is None or all(apart(b, bar) for b in boxes))
    alt = plot.get_by_role("img").first.get_attribute("aria-label") or ""
    assert "raw: the model's distribution" in alt
    ids = gpt2.encode(TEXT)
    w = whatif(logits_row(gpt2, ids, 5), SamplerSettings(), ids[:5], [], ids[5], 15)
    top = float(np.exp(w.raw_logprobs[0]))
    assert alt.startswith("Chart of") and f"{top:.3f}".rstrip("0").rstrip(".") in alt
    pg.close()


def test_lookup_view(page, gpt2):
    scored(page)
    page.get_by_role("tab", name="Look up").click()
    page.get_by_label("Tokens to look up").fill(" capital of\n17")
    page.get_by_role("button", name="Look up", exact=True).click()
    note = page.get_by_text("the curves show the", exact=False).first
    note.wait_for(timeout=30_000)
    found = lookup(gpt2, gpt2.encode(TEXT), [" capital of", "17"])
    joints = [f"{found[0].joint_logprobs[p]:.3f}" for p in np.flatnonzero(~np.isnan(found[0].joint_logprobs))]
    assert len(joints) == 2 and all(j in note.inner_text() for j in joints)
    page.get_by_text("its rank (log; 1 = the top guess)").wait_for(timeout=15_000)  # the curves are drawn
    assert page.get_by_text("is token", exact=False).count() >= 1


def test_words_view(page, gpt2):
    text = "Grüße aus München! 東京 is big. 👋"
    scored(page, text)
    pick_tab(page, "Words")
    page.get_by_role("button", name="Show words").click()
    page.locator("#words-heatmap [data-pos='2']").wait_for(timeout=30_000)
    w = words(score_ids(gpt2, gpt2.encode(text), k=1))
    chips = page.locator("#words-heatmap [data-pos]")
    assert chips.count() == w.n
    j = int(np.argmax(w.n_tokens))
    assert f"logprob {w.logprobs[j]:.3f}" in chips.nth(j).get_attribute("title")
    chips.nth(j).click()
    page.get_by_text(f"Word {j}", exact=False).first.wait_for(timeout=15_000)
    shown = page.locator("#words-heatmap .wx").inner_text().replace("·", " ").replace("↵", "")
    assert re.sub(r"\s+", "", shown) == re.sub(r"\s+", "", text)
    assert math.isfinite(float(np.nansum(w.logprobs)))


def test_compare_two_prompts_view(page, gpt2):
    from explorer.engine.analyses.compare import compare_prompt_texts

    pick_tab(page, "Compare")
    page.get_by_label("One model, two prompts").check()
    page.get_by_label("Prompt A").wait_for(timeout=15_000)
    model_b = page.get_by_label("Model B", exact=True)
    assert model_b.count() == 0 or not model_b.is_visible()
    page.get_by_label("Prompt A").fill("The capital of France is")
    page.get_by_label("Prompt B").fill("The capital of Italy is")
    page.get_by_label("Text to compare").fill(" Paris.")
    page.get_by_role("button", name="Compare", exact=True).click()
    chip = page.locator("#compare-heatmap [data-pos='0']")
    chip.wait_for(timeout=30_000)
    c = compare_prompt_texts(gpt2, "The capital of France is", "The capital of Italy is", " Paris.", 10)
    assert page.locator("#compare-heatmap [data-pos]").count() == c.m
    title = chip.get_attribute("title")
    assert f"A {c.logprob_a[0]:.3f}" in title and f"JS {c.js[0]:.4f}" in title
    assert page.get_by_text("the same continuation after two prompts", exact=False).count() >= 1
