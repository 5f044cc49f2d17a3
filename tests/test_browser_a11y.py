"""Accessibility audit with axe-core (injected by axe-playwright-python): no serious or critical violation on
any tab, light and dark, before a result and with one shown (the heatmap's colours, the detail, the card)."""

from __future__ import annotations

import pytest

from tests.helpers.browser import require_chromium, serious

require_chromium()
pytestmark = pytest.mark.browser
pytest.importorskip("axe_playwright_python.sync_playwright", reason="pip install axe-playwright-python")


@pytest.fixture(params=["light", "dark"])
def page(request, browser, live):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    pg.goto(live.url + ("?__theme=dark" if request.param == "dark" else ""))
    pg.get_by_label("Text", exact=True).wait_for(timeout=60_000)
    yield pg
    ctx.close()


def tabs(page) -> list[str]:
    return [t.inner_text() for t in page.get_by_role("tab").all()]


def every_tab(page):
    """Open each tab of the top row and, in a group, each of its own tabs; yields each name once it is shown."""
    top = tabs(page)
    for name in top:
        page.get_by_role("tab", name=name, exact=True).click()
        page.wait_for_timeout(300)
        yield name
        for sub in [t for t in tabs(page) if t not in top]:  # a group's row, shown under the top row
            page.get_by_role("tab", name=sub, exact=True).click()
            page.wait_for_timeout(300)
            yield sub


def test_every_tab_before_a_result(page):
    assert {"Score", "Generate", "Chat"} <= set(tabs(page))
    found = {name: serious(page) for name in every_tab(page)}
    assert len(found) >= 12 and found == {name: [] for name in found}  # every view, grouped ones too


def test_with_results_shown(page):
    page.get_by_label("Text", exact=True).fill("The quick brown fox jumps over the lazy dog. <b>bold</b> 👋")
    page.get_by_role("button", name="Score", exact=True).click()
    page.locator("#heatmap .lx-data").filter(has_text='"lp"').wait_for(state="attached", timeout=60_000)
    page.get_by_text("Every token: a sortable table").click()
    page.get_by_text("Curves: rank, entropy").click()
    page.wait_for_timeout(1000)
    page.mouse.move(0, 0)
    page.locator("#heatmap [data-pos='3']").hover()  # the card, too
    page.locator("#lx-card").wait_for(state="visible")
    found = {"score": serious(page)}
    for metric in ("rank", "probability", "entropy", "surprisal"):  # every colour of every scale
        page.get_by_label(metric, exact=True).check()
        page.wait_for_timeout(600)
        found[metric] = serious(page)
    page.get_by_role("tab", name="Generate").click()
    page.get_by_label("Prompt", exact=True).fill("The lazy")
    page.get_by_label("number input for Top-k (0 = off)").fill("3")
    page.get_by_role("button", name="Generate", exact=True).click()
    page.get_by_text("finish:", exact=False).first.wait_for(timeout=60_000)
    page.wait_for_timeout(500)
    found["generate"] = serious(page)  # raw and processed side by side, the generated part marked
    for name in every_tab(page):
        found[name] = serious(page)
    page.locator("#present-btn").click()
    found["presentation"] = serious(page)
    assert found == {k: [] for k in found}
