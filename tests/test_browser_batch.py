"""The Batch tab in real headless Chromium on the tiny GPT-2: a CSV of texts uploaded and scored, the table's numbers
equal to the engine's, a text that cannot be scored kept with its reason, the table sorted from its column menu, and
a click on a row (after sorting) opening that text in the Score tab, scored there."""

from __future__ import annotations

import csv

import pytest

from explorer.engine import score_text
from tests.browser import open_page, pick_tab, require_chromium

require_chromium()
pytestmark = pytest.mark.browser

TEXTS = ["The cat sat on the mat.", "Colourless green ideas sleep furiously.", "", "A b c d e f g.", "Hello world"]


def cells(pg, col: int) -> list[str]:
    return pg.evaluate(
        "c => Array.from(document.querySelectorAll(`#batch-table [role=gridcell][data-col='${c}']`))"
        ".map(td => td.innerText.trim())",
        col,
    )


@pytest.mark.parametrize("size", ["wide", "phone"])
def test_batch_table_sort_and_open_in_score(browser, live, gpt2, tmp_path, size):
    path = tmp_path / "texts.csv"
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "text"])
        w.writerows([f"t{i}", t] for i, t in enumerate(TEXTS))
    pg = open_page(browser, live.url, size)
    pick_tab(pg, "Batch")
    pg.locator("#batch-file input[type=file]").set_input_files(str(path))
    pg.get_by_role("button", name="Score every text").click()
    pg.locator("#batch-summary").filter(has_text="texts scored").wait_for(timeout=60_000)
    assert f"4 of {len(TEXTS)} texts scored" in pg.locator("#batch-summary").inner_text()
    pg.locator("#batch-table [role=gridcell]").first.wait_for(timeout=30_000)
    header = pg.locator("#batch-table th").all_inner_texts()
    names = [h.strip() for h in header]
    ppl_col, err_col = names.index("perplexity"), names.index("error")
    assert cells(pg, 1) == [f"t{i}" for i in range(len(TEXTS))]
    want = {t: round(score_text(gpt2, t, 0).perplexity, 2) for t in TEXTS if t}
    shown = cells(pg, ppl_col)
    assert [float(x) for i, x in enumerate(shown) if TEXTS[i]] == pytest.approx([want[t] for t in TEXTS if t], abs=0.01)
    assert "empty" in cells(pg, err_col)[2]
    # sort by perplexity, descending, from the column's menu: the rows' ids follow the numbers
    th = pg.locator("#batch-table th").nth(ppl_col)
    th.click()
    th.locator("button.cell-menu-button").click(force=True)
    pg.get_by_role("menuitem", name="Sort descending").click()
    order = sorted((t for t in TEXTS if t), key=lambda t: -want[t])
    pg.wait_for_function(
        "first => document.querySelector(\"#batch-table [role=gridcell][data-col='1']\").innerText.trim() === first",
        arg=f"t{TEXTS.index(order[0])}",
        timeout=10_000,
    )
    ids = cells(pg, 1)
    assert ids[: len(order)] == [f"t{TEXTS.index(t)}" for t in order]
    # a click on the second row of the sorted table opens that text in the Score tab and scores it
    pg.locator("#batch-table [role=gridcell][data-col='2']").nth(1).click()
    box = pg.get_by_label("Text", exact=True)
    box.wait_for(state="visible", timeout=30_000)
    pg.wait_for_function(
        "t => document.querySelector('#heatmap .lx-data') && document.querySelector('#heatmap').innerText.length > 0"
        " && [...document.querySelectorAll('textarea')].some(a => a.value === t)",
        arg=order[1],
        timeout=60_000,
    )
    assert box.input_value() == order[1]
    pg.locator("#heatmap .lx-data").filter(has_text='"lp"').wait_for(state="attached", timeout=60_000)
    assert f"{want[order[1]]:.2f}" in pg.locator("#summary").inner_text()
    pg.context.close()
