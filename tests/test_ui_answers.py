"""The Answers tab's handlers on the tiny models (no browser): the views show the engine's numbers, bad input says
what to change, a quiz's accuracy, table, diagram and CSV."""

from __future__ import annotations

import csv
import io
import json
import pathlib

import gradio as gr
import numpy as np
import pytest

from explorer.engine.analyses.answers import run_quiz, score_answers
from explorer.results.answers import read_quiz
from tests.helpers.page import GPT2, LLAMA, make_page, path_of

PROMPT = "The capital of France is"


@pytest.fixture(scope="module")
def ui(gpt2, llama):
    return make_page([gpt2, llama])


def quiz_file(tmp_path, n: int = 10) -> str:
    rows = [{"question": f"Is {i} even? Answer:", "choices": [" yes| Yes", " no"], "answer": i % 2} for i in range(n)]
    path = tmp_path / "quiz.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("name, fixture", [(GPT2, "gpt2"), (LLAMA, "llama")])
def test_answers_show_the_engines_numbers(ui, request, name, fixture):
    engine = request.getfixturevalue(fixture)
    tab = ui.tabs["answers"]
    out = tab.run(name, PROMPT, " Paris| paris\n London\n\n Rome")
    want = score_answers(engine, PROMPT, [[" Paris", " paris"], [" London"], [" Rome"]])
    bar = out[tab.plot].data[0]
    assert list(bar.x) == pytest.approx(want.normalised.tolist())
    assert list(bar.customdata) == pytest.approx(want.probabilities.tolist())
    table = out[tab.table]
    assert len(table) == 4
    assert table["logprob"].tolist() == pytest.approx([round(v.logprob, 5) for a in want.answers for v in a.variants])
    assert "prefers" in out[tab.summary]


@pytest.mark.parametrize(
    "prompt, text, words",
    [
        (PROMPT, "  \n", "at least one answer"),
        (PROMPT, " a| a", "each variant once"),
        (PROMPT, " a||", "empty variant"),
        ("", " a", "prompt is empty"),
    ],
)
def test_bad_input_says_what_to_change(ui, prompt, text, words):
    with pytest.raises(gr.Error, match=words):
        ui.tabs["answers"].run(GPT2, prompt, text)


def test_quiz(ui, gpt2, tmp_path):
    tab = ui.tabs["answers"]
    path = quiz_file(tmp_path)
    seen = []
    out = tab.quiz(GPT2, path, progress=lambda *a, **kw: seen.append(a))
    q = out[tab.state]
    want = run_quiz(gpt2, read_quiz(pathlib.Path(path).read_text(encoding="utf-8")))
    assert q.accuracy == want.accuracy
    assert q.accuracy == np.mean([int(np.argmax(x.result.normalised)) == x.right for x in want.questions])
    assert (
        f"{100 * want.accuracy:.1f}%" in out[tab.quiz_summary]
        and f"{want.calibration.ece:.4f}" in out[tab.quiz_summary]
    )
    bars = out[tab.diagram].data[0]
    assert list(bars.y) == pytest.approx(np.nan_to_num(want.calibration.accuracy).tolist())
    assert len(out[tab.quiz_df]) == 10 and len(seen) == 11
    rows = list(csv.DictReader(io.StringIO(pathlib.Path(path_of(out[tab.download])).read_text(encoding="utf-8"))))
    assert [int(r["correct"]) for r in rows] == [int(x.correct) for x in want.questions]


def test_quiz_refusals(ui, tmp_path):
    tab = ui.tabs["answers"]
    with pytest.raises(gr.Error, match="Upload a quiz file"):
        tab.quiz(GPT2, None, progress=lambda *a, **kw: None)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "choices": [" a", " b"], "answer": 5}\n', encoding="utf-8")
    with pytest.raises(gr.Error, match="index"):
        tab.quiz(GPT2, str(bad), progress=lambda *a, **kw: None)


def test_quiz_refuses_a_file_that_is_not_utf8(ui, tmp_path):
    tab = ui.tabs["answers"]
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes('{"question": "G\u00e9n\u00e8ve?", "choices": [" a", " b"], "answer": 0}'.encode("latin-1"))
    with pytest.raises(gr.Error, match=r"not UTF-8 \(bad byte at offset 15\): convert it"):
        tab.quiz(GPT2, str(bad), progress=lambda *a, **kw: None)


@pytest.mark.parametrize("button, handler", [("button", "run"), ("quiz_button", "quiz")])
def test_a_run_clears_its_outputs_first(ui, button, handler):
    """A click first empties every output (a failed run leaves no old result under its error), then runs."""
    tab = ui.tabs["answers"]
    fns = ui.demo.fns
    first = next(f for f in fns.values() if (getattr(tab, button)._id, "click") in f.targets)
    then = next(f for f in fns.values() if f.trigger_after == first._id)
    assert then.name == handler and [c._id for c in then.outputs] == [c._id for c in first.outputs]
    cleared = first.fn()
    assert {c._id for c in cleared} == {c._id for c in first.outputs}
    for c, v in cleared.items():
        if isinstance(c, gr.DownloadButton):
            assert v.value is None and v.interactive is False
        else:
            assert v is None
    assert tab.prompt not in cleared and tab.answers not in cleared
