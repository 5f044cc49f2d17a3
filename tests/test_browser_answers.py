"""The Answers tab in real headless Chromium on the tiny GPT-2: a 10-question quiz uploaded, run, and the
reliability diagram's data read from the page equal to the engine's calibration; the summary's accuracy and ECE."""

from __future__ import annotations

import json

import numpy as np
import pytest

from explorer.engine.analyses.answers import run_quiz
from explorer.results.answers import read_quiz
from tests.helpers.browser import open_page, pick_tab, require_chromium

require_chromium()
pytestmark = pytest.mark.browser


def test_quiz_reliability_diagram(browser, live, gpt2, tmp_path):
    rows = [{"question": f"Is {i} even? Answer:", "choices": [" yes| Yes", " no"], "answer": i % 2} for i in range(10)]
    text = "\n".join(json.dumps(r) for r in rows)
    path = tmp_path / "quiz.jsonl"
    path.write_text(text, encoding="utf-8")
    want = run_quiz(gpt2, read_quiz(text))
    pg = open_page(browser, live.url)
    pick_tab(pg, "Answers")
    pg.locator("#answers-quiz-file input[type=file]").set_input_files(str(path))
    pg.get_by_role("button", name="Run the quiz").click()
    pg.locator("#answers-quiz-summary").filter(has_text="ECE").wait_for(timeout=60_000)
    summary = pg.locator("#answers-quiz-summary").inner_text()
    assert f"{100 * want.accuracy:.1f}%" in summary and f"{want.calibration.ece:.4f}" in summary
    plot = pg.locator("#answers-reliability .js-plotly-plot")
    plot.wait_for(timeout=30_000)
    data = plot.evaluate("el => el.data.map(t => ({name: t.name, x: Array.from(t.x), y: Array.from(t.y)}))")
    bars = next(t for t in data if t["name"] == "accuracy")
    assert bars["y"] == pytest.approx(np.nan_to_num(want.calibration.accuracy).tolist())
    title = plot.evaluate("el => el.layout.title.text")
    assert f"ECE {want.calibration.ece:.4f}" in title
