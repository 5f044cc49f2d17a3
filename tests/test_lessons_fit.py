"""Each built-in lesson's premise holds on the default model (SmolLM2-135M-Instruct, the Q4_1 GGUF that llama.cpp
serves): a failure names every step that does not fit, with the model's numbers there.

- *Guess the next word*: at every blank the likeliest next token starts a word (a space, then a letter), so the
  class can guess it; a step whose likeliest token is punctuation or a piece of a word needs a `note` that says so.
- *Is the model biased?*: each step's lean, as LEANS (measured) says: the favoured pronoun at least LEAN times as
  likely as the other, as the room shows them (a word's corrected probability); a step that a teacher would expect
  to lean but where the model does not (within NO_LEAN) keeps a note that says so.
- *Temperature*: the likeliest next token starts a word and most of the top ten do (the draws are words, not
  fragments); at a temperature below 1 one token takes most draws, above 1 none takes half.

The numbers are the rooms' own (explorer/api/rooms.py `side_of`, explorer/engine/analyses/guesses.py
`next_token`). Measured on the GGUF with llama.cpp (the torch engine's converted copy gives the same leans within
3 points): docs/lessons.md, "The built-in lessons on the default model", has the table.
"""

from __future__ import annotations

import math
import re

import pytest

from explorer.api.rooms import Ask, side_of
from explorer.engine.analyses.guesses import next_token
from explorer.lessons import schema

pytestmark = pytest.mark.slow

WORD_START = re.compile(r" [^\W\d_]")  # a space, then a letter: " there", not ",", "'s", " 3" or "ly"
LEAN = 2.0  # a lean the class can see: the favoured word at least twice as likely as the other
NO_LEAN = 1.5  # "no clear lean": neither word 1.5 times as likely as the other
# prompt -> (the likelier word, the less likely one), or None where the lesson's note says the model shows no lean.
# Measured (GGUF, llama.cpp; he / she / they): nurse 7.6% / 38.8% / 3.5%, carpenter 40.8% / 11.6% / 4.4%,
# engineer 25.9% / 20.8% / 10.0%. Today's lesson ("The X said that") gave she first for every job, the engineer's
# included: nurse 2.7% / 12.7%, engineer 2.4% / 4.6%, teacher 1.2% / 6.0%.
LEANS: dict[str, tuple[str, str] | None] = {
    "The nurse was late because": ("she", "he"),
    "The carpenter was late because": ("he", "she"),
    "The engineer was late because": None,
}
MOST_AT_LOW_T = 0.8  # below temperature 1, the likeliest token takes at least this share of the draws
MOST_AT_HIGH_T = 0.5  # above 1, less than this


def word_start(token: str) -> bool:
    return WORD_START.match(token) is not None


def shown(p: float) -> str:
    return f"{100 * p:.1f}%"


def guess_misfits(engine, lesson: schema.Lesson) -> list[str]:
    out = []
    for i, step in enumerate(lesson.steps):
        nt = next_token(engine, step.context)
        (top, p), *_ = nt.top(1.0, 1)
        token = nt.text_of(top)
        if not word_start(token) and not step.note:
            out.append(
                f"step {i + 1} ({step.context!r} ___ {step.actual!r}): the likeliest next token is {token!r} "
                f"({shown(p)}), not a word's start, and the step has no note that says so"
            )
    return out


def choose_misfits(engine, lesson: schema.Lesson) -> list[str]:
    out = []
    for i, step in enumerate(lesson.steps):
        where = f"step {i + 1} ({step.context!r})"
        if step.context not in LEANS:
            out.append(f"{where}: not measured: add its lean on the default model to LEANS")
            continue
        side = side_of(engine, Ask(step, 1.0, prepare=True))
        seen = {e["answer"]: math.exp(shown_logprob(e)) for e in side.top or []}
        numbers = ", ".join(f"{w} {shown(p)}" for w, p in seen.items())
        lean = LEANS[step.context]
        if lean is None:
            he, she = seen["he"], seen["she"]
            if max(he, she) > NO_LEAN * min(he, she):
                out.append(f"{where}: the lesson says the model shows no clear lean here, but it does: {numbers}")
            if not step.note:
                out.append(f"{where}: the model shows no clear lean here ({numbers}): the step needs a note saying so")
        elif seen[lean[0]] < LEAN * seen[lean[1]]:
            out.append(f"{where}: {lean[0]!r} is not {LEAN:g} times as likely as {lean[1]!r}: {numbers}")
    return out


def shown_logprob(entry: dict) -> float:
    """What the pages show of a model entry: its corrected word logprob where there is one (teacher.html's word())."""
    x = entry.get("logprob_word")
    return x if x is not None and math.isfinite(x) else entry["logprob"]


def sample_misfits(engine, lesson: schema.Lesson) -> list[str]:
    out = []
    for i, step in enumerate(lesson.steps):
        where, t = f"step {i + 1} ({step.context!r}, temperature {step.temperature:g})", step.temperature
        nt = next_token(engine, step.context)
        tops = nt.top(1.0, 10)
        words = sum(word_start(nt.text_of(j)) for j, _ in tops)
        if not word_start(nt.text_of(tops[0][0])) or words < 8:
            listed = ", ".join(f"{nt.text_of(j)!r} {shown(p)}" for j, p in tops)
            out.append(f"{where}: {words} of the top 10 start a word: {listed}")
        most = nt.top(t, 1)[0][1]
        if t < 1.0 and most < MOST_AT_LOW_T:
            out.append(f"{where}: the likeliest token takes only {shown(most)} of the draws")
        if t > 1.0 and most >= MOST_AT_HIGH_T:
            out.append(f"{where}: the likeliest token still takes {shown(most)} of the draws")
    return out


@pytest.mark.parametrize("name", schema.BUILTIN)
def test_each_built_in_lesson_fits_the_default_model(smollm_gguf, name):
    lesson = schema.builtin(name)
    kinds = {s.kind for s in lesson.steps}
    assert len(kinds) == 1, f"{name}: one kind of step per built-in lesson, got {kinds}"
    misfits = {"guess": guess_misfits, "choose": choose_misfits, "sample": sample_misfits}[kinds.pop()]
    failures = misfits(smollm_gguf, lesson)
    assert not failures, f"{lesson.title!r} does not fit the default model:\n" + "\n".join(failures)


@pytest.mark.parametrize(
    ("token", "starts"), [(" there", True), (" Über", True), (",", False), ("'s", False), (" 3", False), ("ly", False)]
)
def test_a_word_start_is_a_space_then_a_letter(token, starts):
    assert word_start(token) is starts
