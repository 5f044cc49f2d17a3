"""The Batch tab in real headless Chromium on the tiny GPT-2: a CSV of texts uploaded and scored, the table's numbers
equal to the engine's, a text that cannot be scored kept with its reason, the table sorted from its column menu, and
a click on a row (after sorting) opening that text in the Score tab, scored there."""

from __future__ import annotations

import csv

import pytest

from explorer.engine import score_text
from tests.helpers.browser import open_page, pick_tab, require_chromium

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


def test_every_column_fits_at_1400_and_the_word_table_downloads(browser, live, gpt2, tmp_path, shots):
    """Issue #39: with an `error` column (a long message) every column of the table is within its box at 1,400 px;
    the word table's download is the CSV of `lm.word_table` (as `words --file`) for the same file."""
    from explorer.notebook.lm import LM

    path = tmp_path / "stimuli.csv"
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["item", "condition", "text"])
        w.writerows([["1", "a", "The horse [raced past the barn] fell."], ["2", "b", "Colourless green ideas."],
                     ["3", "c", "x " * 3000]])  # fmt: skip
    pg = open_page(browser, live.url, "wide")
    pick_tab(pg, "Batch")
    pg.locator("#batch-file input[type=file]").set_input_files(str(path))
    pg.get_by_role("button", name="Score every text").click()
    pg.locator("#batch-summary").filter(has_text="texts scored").wait_for(timeout=60_000)
    pg.locator("#batch-table [role=gridcell]").first.wait_for(timeout=30_000)
    pg.wait_for_timeout(300)
    heads = pg.evaluate(
        "() => { const box = document.querySelector('#batch-table').getBoundingClientRect();"
        " return [box.right, [...document.querySelectorAll('#batch-table th')].map(h => ["
        " h.innerText.trim(), h.getBoundingClientRect().right])]; }"
    )
    right, columns = heads
    assert [c for c, _ in columns][-1] == "Fast-DetectGPT" and "error" in [c for c, _ in columns]
    assert all(r <= right + 1 for _, r in columns), (right, columns)
    pg.locator("#batch-table").scroll_into_view_if_needed()
    pg.screenshot(path=str(shots / "batch-error-column-1400.png"))
    # the word table of every text: 2 texts are scored, the third is over the context: its row is named
    pg.get_by_role("button", name="Make the word table of every text").click()
    toast = pg.get_by_test_id("toast-body").first
    toast.wait_for(timeout=60_000)
    assert "Row 3 (line 4 of the file)" in toast.inner_text()
    ok = tmp_path / "ok.csv"
    ok.write_text(path.read_text(encoding="utf-8").rsplit("\n3,", 1)[0] + "\n", encoding="utf-8")
    pg.locator("#batch-file button[aria-label='Clear']").first.click()
    pg.locator("#batch-file input[type=file]").set_input_files(str(ok))
    pg.get_by_role("button", name="Make the word table of every text").click()
    pg.locator("#batch-words-note").filter(has_text="Word table").wait_for(timeout=60_000)
    with pg.expect_download() as got:
        pg.locator("#batch-dl-words").click()
    with open(got.value.path(), encoding="utf-8") as f:
        assert f.read() == LM(gpt2).word_table(str(ok)).to_csv()
    pg.context.close()
