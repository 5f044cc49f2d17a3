"""The Branch and Logit lens tabs in real headless Chromium, driven as a person would."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import pick_tab, require_chromium

require_chromium()
pytestmark = pytest.mark.browser


@pytest.fixture
def page(browser, live):
    ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
    pg = ctx.new_page()
    pg.goto(live.url)
    pg.get_by_label("Text", exact=True).wait_for(timeout=60_000)
    yield pg
    ctx.close()


def tick(page, rank: int) -> None:
    """Tick the alternative of this rank in the Branch tab's list."""
    page.locator("label").filter(has_text=re.compile(rf"·\s+rank {rank}(\s|$)")).first.click()


def test_branch_twice_then_three_leaves(page):
    page.get_by_role("tab", name="Generate", exact=True).click()
    page.get_by_label("Prompt", exact=True).fill("The lazy")
    page.get_by_role("button", name="Generate", exact=True).click()
    pick_tab(page, "Branch")
    page.get_by_text("of the current result").wait_for(timeout=60_000)  # the generation is done: a token is selected
    pos = page.locator("#heatmap [data-pos]").count() - 2
    page.locator(f"#heatmap [data-pos='{pos}']").click()  # the inspector (below every tab) picks where to branch
    page.get_by_text(f"Position {pos} of the current result").wait_for(timeout=30_000)
    tick(page, 2)
    page.get_by_role("button", name="Continue from here").click()
    leaves = page.locator("#branch-tree .leaf")
    page.wait_for_function("document.querySelectorAll('#branch-tree .leaf').length === 2", timeout=60_000)

    fork = page.locator("#branch-tree .tn.fork").first
    node = int(fork.get_attribute("data-node"))
    fork.click()  # a node's detail, and its alternatives to branch again
    page.get_by_text(re.compile(rf"^Node {node}, position {pos}")).wait_for(timeout=30_000)
    tick(page, 3)
    page.get_by_role("button", name="Continue from here").click()
    page.wait_for_function("document.querySelectorAll('#branch-tree .leaf').length === 3", timeout=60_000)
    texts = leaves.all_inner_texts()
    assert len(texts) == 3 and all(re.search(r"Σ logprob -?\d+\.\d\d · perplexity \d", t) for t in texts), texts

    last = page.locator("#branch-tree .tn").last
    node = int(last.get_attribute("data-node"))
    last.click()
    page.get_by_text(re.compile(rf"^Node {node}, position \d+")).wait_for(timeout=30_000)
    assert page.locator("#branch-tree .tn.sel").count() == 1


def test_lens_heatmap_and_cell_top_k(page):
    page.get_by_role("tab", name="Score", exact=True).click()
    page.get_by_label("Text", exact=True).fill("The quick brown fox jumps over the lazy dog.")
    page.get_by_role("button", name="Score", exact=True).click()
    page.locator("#heatmap [data-pos='3']").wait_for(timeout=30_000)

    pick_tab(page, "Logit lens")
    page.get_by_role("button", name="Run the logit lens").click()
    cell = page.locator("#lens-grid tr[data-l='1'] td").nth(3)  # layer 1, position 3
    cell.wait_for(timeout=60_000)
    assert page.locator("#lens-grid tr[data-l]").count() == 3  # embeddings, one block, the output
    assert "layer 1 · pos 3 · rank" in cell.get_attribute("title")
    cell.click()
    page.get_by_text(re.compile(r"^Layer 1: after 1 block, position 3")).wait_for(timeout=30_000)
    expect(page.get_by_label("That layer's top-k")).to_contain_text("(others)", timeout=30_000)
