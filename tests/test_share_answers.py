"""The Answers tab's link: a round trip, a link made on the tab (after a quiz too) that reopens the same prompt and
answers and rescores them to the numbers the tab itself showed, and hostile fields read as one clear message."""

from __future__ import annotations

import json

import pytest

from explorer.engine.analyses.answers import MAX_ANSWERS, MAX_VARIANTS, run_quiz, score_answers
from explorer.errors import ExplorerError
from explorer.results.answers import read_quiz
from explorer.ui.links import MAX_TEXT_CHARS, decode, encode
from explorer.ui.tabs.answers import AnswersLink
from tests.helpers.share import SCRIPT, built, last, note_of, pack, page_values, restore, shown_tab, view  # noqa: F401

PROMPT = "The capital of France is"
ANSWERS = " Paris| paris\n London\n\n Rome"
SCORED = [[" Paris", " paris"], [" London"], [" Rome"]]
NO_RESULT = [[], None, 0, "logprob", "1, 10, 100, 1000", 10, "", False, "eos", "", "", []]  # Share.inputs order


@pytest.mark.parametrize(
    "own",
    [AnswersLink(PROMPT, ANSWERS), AnswersLink(SCRIPT, f"{SCRIPT}| 東京 👋\n x"), AnswersLink("", " a")],
)
def test_an_answers_link_round_trips(own):
    s = view("answers", own, model="tiny-gpt2")
    code = encode(s)
    assert code.startswith("2.") and len(code) < 400
    v = decode(code)
    assert v == s and v.tab == "answers" and v.base.tab == "" and v.tool.answers == own.answers


def _copied(p, values_tab: dict, base=NO_RESULT):
    """The link *Copy link* makes on the Answers tab from the tab's controls' `values_tab` (by component)."""
    values = page_values(p, base, current="answers", model="tiny-gpt2", components=values_tab)
    return p.share.copy_link(values)


def test_an_answers_link_reopens_the_same_prompt_answers_and_numbers(built, gpt2):
    p, _, calls = built
    a = p.tabs["answers"]
    own = a.run("tiny-gpt2", PROMPT, ANSWERS)
    out = _copied(p, {a.prompt: PROMPT, a.answers: ANSWERS})
    assert out[p.share.link_note] == ""
    v = decode(out[p.share.code])
    assert v.tab == "answers" and v.base.tab == "" and v.base.model == "tiny-gpt2"
    assert (v.tool.answers_prompt, v.tool.answers) == (PROMPT, ANSWERS)
    outs = restore(built, encode(v))
    assert "Opened a shared link: answers" in note_of(p, outs) and calls == []
    assert last(outs, a.prompt) == PROMPT and last(outs, a.answers) == ANSWERS
    assert shown_tab(p, outs) == "answers" and last(outs, p.share.current) == "answers"
    assert last(outs, a.summary) == own[a.summary] and "prefers" in own[a.summary]
    assert last(outs, a.plot).to_dict() == own[a.plot].to_dict()
    assert last(outs, a.table).equals(own[a.table])
    want = score_answers(gpt2, PROMPT, SCORED)  # the engine's own numbers, not the tab's
    assert list(last(outs, a.plot).data[0].customdata) == pytest.approx(want.probabilities.tolist())
    lps = [round(x.logprob, 5) for ans in want.answers for x in ans.variants]
    assert last(outs, a.table)["logprob"].tolist() == pytest.approx(lps)


def test_a_link_made_after_a_quiz_reopens_the_prompt_and_answers(built, gpt2, tmp_path):
    """The quiz is a file: not in the link; the link still carries the boxes, and no inspector result."""
    p, _, calls = built
    a = p.tabs["answers"]
    rows = [{"question": f"Is {i} even? Answer:", "choices": [" yes", " no"], "answer": i % 2} for i in range(2)]
    path = tmp_path / "quiz.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    quiz = run_quiz(gpt2, read_quiz(path.read_text()))
    scored = list(
        p.tabs["score"].score("tiny-gpt2", "Hello there", metric="logprob", thresholds_text="1, 10, 100, 1000", k=10)
    )[-1]
    result = scored[p.inspector.result]
    base = [result, None, 1, "logprob", "1, 10, 100, 1000", 10, "Hello there", False, "eos", "", "", []]
    out = _copied(p, {a.prompt: PROMPT, a.answers: ANSWERS, a.quiz_file: str(path), a.state: quiz}, base)
    v = decode(out[p.share.code])
    assert v.base.tab == "" and v.source is None and v.tool == AnswersLink(PROMPT, ANSWERS)
    assert "quiz" not in json.dumps(v.to_dict())
    outs = restore(built, encode(v))
    assert last(outs, a.answers) == ANSWERS and "prefers" in last(outs, a.summary) and calls == []
    assert all(p.inspector.result not in o for o in outs)  # the inspector's result is not rerun


@pytest.mark.parametrize(
    "answers, words",
    [("", "Type the answers first"), (" \n ", "Type the answers first"), ("\n".join(f" a{i}" for i in range(27)),
                                                                            f"At most {MAX_ANSWERS} answers")],
)  # fmt: skip
def test_nothing_or_too_much_to_score_makes_no_link(built, answers, words):
    p = built[0]
    a = p.tabs["answers"]
    out = _copied(p, {a.prompt: PROMPT, a.answers: answers})
    assert out[p.share.code] == "" and words in out[p.share.link_note]


BAD = {
    "answers type": {"answers": [" Paris"]},
    "answers number": {"answers": 7},
    "answers long": {"answers": "x" * (AnswersLink.MAX_CHARS + 1)},
    "too many answers": {"answers": "\n".join(f" a{i}" for i in range(MAX_ANSWERS + 1))},
    "too many variants": {"answers": "|".join(f" v{i}" for i in range(MAX_VARIANTS + 1))},
    "prompt type": {"answers_prompt": None, "answers": " a"},
    "prompt long": {"answers_prompt": "p" * (MAX_TEXT_CHARS + 1), "answers": " a"},
}


@pytest.mark.parametrize("name", list(BAD))
def test_hostile_answers_fields_are_one_clear_message(built, name):
    p, _, calls = built
    code = pack({"tab": "answers", **BAD[name]})
    with pytest.raises(ExplorerError, match=r"^This link is damaged or cut short: `answers"):
        decode(code)
    calls.clear()
    outs = restore(built, code)
    assert len(outs) == 1 and "This link is damaged" in note_of(p, outs) and calls == []


@pytest.mark.parametrize("answers, words", [(" a| a", "each variant once"), (" a||", "empty variant")])
def test_a_link_the_tab_refuses_opens_with_the_tabs_message(built, answers, words):
    p = built[0]
    a = p.tabs["answers"]
    outs = restore(built, encode(view("answers", AnswersLink(PROMPT, answers), model="tiny-gpt2")))
    assert words in note_of(p, outs) and last(outs, a.answers) == answers
    assert a.summary not in {k for o in outs for k in o}
