"""Answer sets (explorer/engine/analyses/answers.py, explorer/results/answers.py) against an independent computation.

Each variant's logprob equals the sum of plain log_softmax + gather over a fresh, uncached pass of the model over
prompt + variant (1e-5), on both tiny models, variants of different lengths in one batch; the served-model path
(score per variant) and the per-row default of continue_rows agree; a quiz's accuracy is the argmax of the
normalised answers; bad sets are refused with messages that say what to change.
"""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest
import torch

from explorer.engine.analyses import answers as eng
from explorer.engine.local.forward import ForwardEngine
from explorer.errors import ExplorerError
from explorer.results.answers import Answer, Answers, Question, Quiz, Variant, calibration, parse_answers, read_quiz

PROMPT = "The capital of France is"
SET = [[" Paris", " paris", " the city of Paris"], [" London"], [" a very long answer with many tokens in it"]]


@torch.no_grad()
def ref_variant(engine, prompt_ids: list[int], ids: list[int]) -> float:
    """Sum of log p(ids[j] | prompt + ids[:j]) from one fresh pass over prompt + ids (float64 log_softmax)."""
    x = torch.tensor([prompt_ids + ids])
    lp = torch.log_softmax(engine.model(x).logits[0].double(), -1)  # (T, V)
    p = len(prompt_ids)
    return float(sum(lp[p + j - 1, t] for j, t in enumerate(ids)))


def test_variants_equal_fresh_passes(engine):
    res = eng.score_answers(engine, PROMPT, SET)
    p = res.prompt_ids.tolist()
    lengths = {len(v.token_ids) for a in res.answers for v in a.variants}
    assert len(lengths) >= 3  # rows of different lengths share one padded batch
    for a in res.answers:
        for v in a.variants:
            ref = ref_variant(engine, p, v.token_ids.tolist())
            assert abs(v.logprob - ref) < 1e-5, (v.text, v.logprob, ref)
            assert abs(math.exp(v.logprob) - math.exp(ref)) < 1e-5
        want = np.logaddexp.reduce([ref_variant(engine, p, v.token_ids.tolist()) for v in a.variants])
        assert abs(a.logprob - want) < 1e-5
    norm = res.normalised
    assert abs(norm.sum() - 1) < 1e-12
    assert np.allclose(norm, res.probabilities / res.probabilities.sum())


@torch.inference_mode()
def test_served_path_and_row_default_agree(engine):
    """The served-model path (engine.score per variant) and ForwardEngine's one-row-at-a-time continue_rows."""
    res = eng.score_answers(engine, PROMPT, SET)
    p = res.prompt_ids.tolist()
    rows = [v.token_ids.tolist() for a in res.answers for v in a.variants]
    served = eng._scored(engine, p, rows)
    batched = [v.token_logprobs for a in res.answers for v in a.variants]
    for (lp, _), b in zip(served, batched):
        assert np.allclose(lp, b, atol=1e-5)
    x = torch.tensor([r[:-1] + [0] * (max(map(len, rows)) - len(r)) for r in rows])
    _, past = engine.body(torch.tensor([p]), None, cache=True)
    one = ForwardEngine.continue_rows(engine, x, past)
    many = engine.continue_rows(x, past)
    for j, r in enumerate(rows):
        n = len(r) - 1
        assert torch.allclose(one[j, :n], many[j, :n], atol=1e-5)


def test_tokenisation_boundary(gpt2):
    """A leading space joins the variant's first token (" Paris" is one token after the prompt); a prompt ending
    in a space is not a prefix of prompt + variant's ids, so the variant is tokenised alone, and says so."""
    res = eng.score_answers(gpt2, PROMPT, [[" Paris"]])
    v = res.answers[0].variants[0]
    assert v.tokenized == "joint"
    assert gpt2.tokenize(PROMPT + " Paris") == res.prompt_ids.tolist() + v.token_ids.tolist()
    assert "".join(v.token_text) == " Paris"
    spaced = eng.score_answers(gpt2, PROMPT + " ", [["Paris"]]).answers[0].variants[0]
    p = gpt2.tokenize(PROMPT + " ")
    joins = gpt2.tokenize(PROMPT + " Paris")[: len(p)] == p
    assert spaced.tokenized == ("joint" if joins else "alone")
    if not joins:
        assert spaced.token_ids.tolist() == gpt2.tokenize("Paris", add_special_tokens=False)


def test_llama_bos_and_joint(llama):
    res = eng.score_answers(llama, PROMPT, [[" Paris", " London"]])
    assert res.prompt_ids[0] == llama.tokenizer.bos_token_id
    for v in res.answers[0].variants:
        assert llama.tokenize(PROMPT + v.text) == res.prompt_ids.tolist() + v.token_ids.tolist()


@pytest.mark.parametrize(
    "answers, words",
    [
        ([], "at least one answer"),
        ([[" a", ""]], "empty variant"),
        ([[" a", " a"]], "twice in that answer"),
        ([[" a"], [" b", " a"]], "also in answer 1"),
        ([[f" x{i}"] for i in range(eng.MAX_ANSWERS + 1)], f"At most {eng.MAX_ANSWERS} answers"),
        ([[f" x{i}" for i in range(eng.MAX_VARIANTS + 1)]], f"At most {eng.MAX_VARIANTS} variants"),
    ],
)
def test_refusals(gpt2, answers, words):
    with pytest.raises(ExplorerError, match=words):
        eng.score_answers(gpt2, PROMPT, answers)


def test_refuses_empty_prompt_and_long_variant(gpt2):
    with pytest.raises(ExplorerError, match="prompt is empty"):
        eng.score_answers(gpt2, "", [[" a"]])
    with pytest.raises(ExplorerError, match="shorten it"):
        eng.score_answers(gpt2, PROMPT, [[" a" * (eng.MAX_VARIANT_TOKENS + 1)]])


def test_at_the_context_limit_and_with_hostile_text(gpt2):
    """A prompt that fills the context exactly leaves no room: refused with the context message; a variant of
    markup and control characters is scored as text (its logprob equals a fresh pass like any other)."""
    fill = " the" * (gpt2.context + 4)
    with pytest.raises(ExplorerError, match=rf"reads at most {gpt2.context}: shorten it"):
        eng.score_answers(gpt2, fill, [[" a"], [" b"]])
    hostile = ' <script>alert(1)</script>\x00\u202e"|'.rstrip("|")
    res = eng.score_answers(gpt2, PROMPT, [[hostile], [" b"]])
    v = res.answers[0].variants[0]
    ids = gpt2.tokenize(PROMPT) + v.token_ids.tolist()
    with torch.inference_mode():
        lp = gpt2.model(input_ids=torch.tensor([ids])).logits[0].double().log_softmax(-1)
    p = len(gpt2.tokenize(PROMPT))
    want = sum(float(lp[p - 1 + j, t]) for j, t in enumerate(v.token_ids.tolist()))
    assert v.text == hostile and abs(v.logprob - want) < 1e-5


def _quiz_text(n: int = 10) -> str:
    rows = []
    for i in range(n):
        rows.append(
            {"question": f"Question {i}: is {i} even? Answer:", "choices": [" yes| Yes", " no"], "answer": i % 2}
        )
    return "\n".join(json.dumps(r) for r in rows)


def test_quiz_accuracy_is_argmax(engine):
    items = read_quiz(_quiz_text())
    seen = []
    quiz = eng.run_quiz(engine, items, progress=lambda d, n: seen.append((d, n)))
    assert seen[0] == (0, 10) and seen[-1] == (10, 10)
    right = []
    for q, item in zip(quiz.questions, items):
        fresh = eng.score_answers(engine, item["question"], item["choices"])
        assert np.allclose(q.result.normalised, fresh.normalised, atol=1e-9)
        right.append(int(np.argmax(fresh.normalised)) == item["answer"])
    assert quiz.accuracy == pytest.approx(np.mean(right))
    d = Quiz.from_dict(json.loads(json.dumps(quiz.to_dict())))
    assert d.accuracy == quiz.accuracy and d.calibration.ece == pytest.approx(quiz.calibration.ece)


def test_answers_round_trip(gpt2):
    res = eng.score_answers(gpt2, PROMPT, SET)
    d = json.loads(json.dumps(res.to_dict(), allow_nan=False))
    assert d["format"] == "logprob-explorer/answers"
    back = Answers.from_dict(d)
    assert np.allclose(back.logprobs, res.logprobs) and back.best == res.best


# ---- pure: parsing and calibration ------------------------------------------------------------------------
def test_parse_answers_keeps_leading_spaces():
    assert parse_answers(" Paris| paris | the city of Paris \n\n London\n") == [
        [" Paris", " paris", " the city of Paris"],
        [" London"],
    ]


@pytest.mark.parametrize(
    "text, words",
    [
        ("", "no questions"),
        ("{not json", "not JSON"),
        ('{"question": "q", "choices": ["a"], "answer": 0}', "at least two choices"),
        ('{"question": "q", "choices": ["a", "b"], "answer": 2}', "index"),
        ('{"question": 1, "choices": ["a", "b"], "answer": 0}', '"question"'),
        ('{"question": "q", "choices": ["a", "b"]}', 'has no "answer" key'),
        ('{"question": "q", "choices": ["a", "b"], "answer": "c"}', "one of its variants, got 'c'"),
    ],
)
def test_read_quiz_refusals(text, words):
    with pytest.raises(ExplorerError, match=words):
        read_quiz(text)


def test_read_quiz_answer_by_text():
    items = read_quiz('{"question": "q", "choices": [" a| A", [" b", " B"]], "answer": " b"}')
    assert items[0]["choices"] == [[" a", " A"], [" b", " B"]] and items[0]["answer"] == 1
    # any variant of a choice names it, not only its first
    assert read_quiz('{"question": "q", "choices": [" a| A", [" b", " B"]], "answer": " B"}')[0]["answer"] == 1
    assert read_quiz('{"question": "q", "choices": [" a| A", [" b", " B"]], "answer": "A"}')[0]["answer"] == 0


def test_long_variant_is_quoted_short(gpt2):
    long = " x" * 25_000
    for answers in ([[long]], [[long], [long]]):
        with pytest.raises(ExplorerError) as e:
            eng.score_answers(gpt2, PROMPT, answers)
        assert len(e.value.message) < 200 and repr(long[:40]) + "…" in e.value.message


def test_calibration_by_hand():
    conf = np.array([0.05, 0.15, 0.95, 1.0, 0.55])
    right = np.array([False, True, True, False, True])
    cal = calibration(conf, right, bins=10)
    assert cal.count.tolist() == [1, 1, 0, 0, 0, 1, 0, 0, 0, 2]
    # bins: [0,.1): conf .05 acc 0; [.1,.2): .15 / 1; [.5,.6): .55 / 1; [.9,1]: .975 / .5
    want = (abs(0 - 0.05) + abs(1 - 0.15) + abs(1 - 0.55) + 2 * abs(0.5 - 0.975)) / 5
    assert cal.ece == pytest.approx(want)
    assert np.isnan(cal.confidence[2]) and cal.accuracy[9] == 0.5


def _hand(prompt: str, answers: list[list[str]], lp: float = -1.0) -> Answers:
    """An answer set built by hand (no model): each variant one token of logprob `lp`, then -2, -3, ..."""
    out, k = [], 0
    for a in answers:
        vs = []
        for v in a:
            k += 1
            vs.append(Variant(v, np.array([k], np.int64), [v], np.array([lp - k + 1], np.float64)))
        out.append(Answer(vs))
    return Answers("hand", prompt, np.array([0, 1], np.int64), out)


def test_summary_notes():
    from explorer.render.answers import answers_markdown

    one = answers_markdown(_hand("The capital is", [[" Paris"]]))
    assert "only its raw probability means anything" in one and "of the set" not in one
    assert "Warning" in answers_markdown(_hand("The capital is ", [[" Paris"], ["Rome"]]))
    assert "Warning" not in answers_markdown(_hand("The capital is ", [["Paris"], ["Rome"]]))
    assert "Warning" not in answers_markdown(_hand("The capital is", [[" Paris"], [" Rome"]]))


def test_separators_do_not_look_like_variants():
    from explorer.render.answers import TOKENS, variants_table

    v = Variant(" Paris is", np.array([1, 2], np.int64), [" Par", "is is"], np.array([-1.0, -2.0]))
    table = variants_table(Answers("hand", "x", np.array([0]), [Answer([v])]))
    assert "‖" in TOKENS and table[TOKENS].tolist() == ["·Par ‖ is·is"]
    quiz = Quiz("hand", [Question("q", _hand("q", [[" a", " A"], [" b"]]), 0)])
    row = next(iter(csv.DictReader(io.StringIO(quiz.to_csv()))))
    assert row["choices"] == " a /  b" and "|" not in row["normalised"] and len(row["normalised"].split(" / ")) == 2


def test_reliability_diagram_counts_and_phone_layout():
    from explorer.render.answers import answers_figure, reliability_figure

    qs = [Question(f"q{i}", _hand("q", [[" a"], [" b"]], lp=-0.1 * i), i % 2) for i in range(5)]
    quiz = Quiz("hand", qs)
    fig = reliability_figure(quiz)
    bars = fig.data[0]
    assert list(bars.text) == [f"n={c}" if c else "" for c in quiz.calibration.count.tolist()]
    assert sum(int(t[2:]) for t in bars.text if t) == 5
    assert fig.layout.legend.orientation == "h"
    assert len(fig.layout.title.text) <= 30 and len(fig.layout.xaxis.title.text) <= 30
    bar_fig = answers_figure(qs[0].result)
    assert len(bar_fig.layout.title.text) <= 40 and len(bar_fig.layout.xaxis.title.text) <= 30
