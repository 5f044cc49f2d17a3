"""The Why tab in real headless Chromium on the default model (SmolLM2-135M): why " Paris" rather than " London".

Scored "The capital of France is Paris", the inspector's " Paris" selected, Why? with " London" as the contrast:
" France" is among the strongest contributors; the chips' colours and the ranked list agree with the engine's values;
Copy link's URL reopens the same view. Screenshots of the tab at a teacher's wide screen and a phone go where
the others do (assets/screens/ with EXPLORER_SCREENS=1), for a person to look at.
"""

from __future__ import annotations

import re

import pytest

from explorer.engine.analyses.attribution import DETAIL, attribute
from explorer.engine.passes.scoring import score_text
from tests.helpers.browser import open_page, require_chromium

require_chromium()
pytestmark = pytest.mark.browser
TEXT = "The capital of France is Paris"


@pytest.fixture(scope="module")
def server(smollm):
    from tests.helpers.servers import LiveServer

    srv = LiveServer(smollm)
    yield srv
    srv.stop()


def _why(pg, pos: int, contrast: str) -> None:
    pg.locator(f"#heatmap [data-pos='{pos}']").click()
    pg.get_by_text(f"Position {pos}", exact=False).first.wait_for(timeout=15_000)
    pg.get_by_role("button", name="Why this token? (opens the Why tab)").click()  # runs with the tab's settings
    pg.locator("#why-text .tg").wait_for(timeout=60_000)
    pg.get_by_label("Rather than (optional: a token or words, e.g. “ London” or “ New York”, or #id)").fill(contrast)
    pg.get_by_role("button", name="Why? (the selected token)").click()
    pg.locator("#why-summary").filter(has_text="rather than").wait_for(timeout=90_000)  # this run's summary


@pytest.mark.parametrize("size", ["wide", "phone"])
def test_why_paris_rather_than_london(browser, server, smollm, shots, size):
    pg = open_page(browser, server.url, size)
    pg.get_by_label("Text", exact=True).fill(TEXT)
    pg.get_by_role("button", name="Score", exact=True).click()
    r = score_text(smollm, TEXT, 5)
    pos = r.n - 1
    pg.locator(f"#heatmap [data-pos='{pos}']").wait_for(timeout=60_000)
    _why(pg, pos, " London")
    london = smollm.tokenize(" London", add_special_tokens=False)[0]
    a = attribute(smollm, r, pos, contrast=london, detail=DETAIL)
    top = a.ranked(3)
    assert " France" in [a.unit_text[u] for u in top], [(a.unit_text[u], a.values[u]) for u in top]
    # the list: the engine's order and values
    rows = pg.locator("#why-text").locator("xpath=ancestor::div[contains(@class,'tabitem')]").get_by_role("row")
    texts = [rows.nth(i + 1).inner_text() for i in range(min(3, rows.count() - 1))]
    for i, u in enumerate(top):
        assert a.unit_text[u].replace(" ", "·") in texts[i] and f"{round(float(a.values[u]), 5):g}" in texts[i], (
            i,
            texts,
        )
    # the chips: the strongest has the strongest colour of its sign, and its tooltip says the sign in words
    chips = pg.locator("#why-text .t")
    assert chips.count() == a.n + 1
    u = top[0]
    cls = chips.nth(u).get_attribute("class") or ""
    assert ("r3" if a.values[u] > 0 else "l3") in cls
    assert ("raises" if a.values[u] > 0 else "lowers") in (chips.nth(u).get_attribute("title") or "")
    summary = pg.locator("#why-summary").inner_text()
    assert f"{a.f:.4f}" in summary and "Occlusion" in summary
    pg.screenshot(path=str(shots / f"why-paris-{size}.png"), full_page=True)  # tests/helpers/browser.py screens_dir
    # the link reopens the same view
    pg.get_by_role("button", name="Copy link").click()
    link = pg.get_by_label("Link")
    pg.wait_for_function(
        "() => document.querySelector('#share-link textarea, #share-link input').value.includes('?view=')"
    )
    url = link.input_value()
    assert re.search(r"\?view=2\.", url)
    again = open_page(browser, url, size, shown=False)
    again.locator("#why-summary").filter(has_text="rather than").wait_for(timeout=120_000)
    again_chips = again.locator("#why-text .t")
    again_chips.nth(a.n).wait_for(timeout=30_000)
    assert again_chips.count() == a.n + 1
    assert again_chips.nth(u).get_attribute("class") == cls
    assert again.locator("#why-summary").inner_text() == summary
    print(f"\nWhy ' Paris' rather than ' London' on {smollm.name}: f = {a.f:.4f}; "
          + ", ".join(f"{a.unit_text[j]!r} {a.values[j]:+.4f}" for j in a.ranked(a.n)))  # fmt: skip
    again.context.close()
    pg.context.close()


@pytest.mark.parametrize("size", ["wide", "phone"])
def test_why_this_token_brings_its_result_into_view(browser, server, size):
    from tests.helpers.browser import in_view

    pg = open_page(browser, server.url, size)
    pg.get_by_label("Text", exact=True).fill(TEXT)
    pg.get_by_role("button", name="Score", exact=True).click()
    pg.locator("#heatmap [data-pos='3']").wait_for(timeout=60_000)
    pg.locator("#heatmap [data-pos='3']").click()
    pg.get_by_text("Position 3", exact=False).first.wait_for(timeout=15_000)
    pg.get_by_role("button", name="Why this token? (opens the Why tab)").click()
    pg.locator("#why-text .tg").wait_for(timeout=60_000)
    assert in_view(pg, "#why-summary")
    pg.context.close()
