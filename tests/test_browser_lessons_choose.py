"""A choose step in a real browser on the tiny model: the student's result names the model's likeliest *of the
choices* ("Of the three choices, it expected ..."), the choice and probability the room's JSON gives, and the
teacher's page holds the step's note folded, where a student's page has none of it."""

from __future__ import annotations

import math

import httpx
import pytest

from tests.helpers.browser import SIZES, require_chromium

require_chromium()
pytestmark = pytest.mark.browser

NOTE = "A note only the teacher reads."
LESSON = {
    "title": "Pick",
    "steps": [{"kind": "choose", "prompt": "the lazy", "choices": ["dog", "fox", "cat"], "note": NOTE}],
}


def pct(logprob: float) -> str:
    """A probability as lesson.js's pct() writes it (whole percent from 10, one decimal from 1, else 2 digits)."""
    p = 100 * math.exp(logprob)
    if p >= 10:
        return f"{p:.0f}%"
    if p >= 1:
        return f"{p:.1f}%"
    return f"{p:.2g}%"


def test_a_choose_result_speaks_of_the_choices_and_the_note_stays_with_the_teacher(browser, live):
    room = httpx.post(live.url + "/rooms", json={"lesson": LESSON}, timeout=60).json()
    code, key = room["room"], room["teacher_key"]
    try:
        phone = browser.new_context(viewport=SIZES["phone"]).new_page()
        phone.goto(f"{live.url}/lesson/{code}")
        phone.get_by_role("button", name="fox").click()
        httpx.post(f"{live.url}/rooms/{code}/reveal", json={"teacher_key": key}, timeout=60)
        phone.get_by_text("Of the three choices, it expected").wait_for(timeout=30_000)
        top = httpx.get(f"{live.url}/rooms/{code}", headers={"X-Teacher-Key": key}, timeout=60).json()["model_top"][0]
        said = phone.locator("#result").inner_text()
        assert f"Of the three choices, it expected “{top['answer']}” most" in said and "It expected" not in said
        assert f"most: {pct(top['logprob_word'] if top['logprob_word'] is not None else top['logprob'])}." in said
        assert NOTE not in phone.content()

        teacher = browser.new_context(viewport=SIZES["wide"]).new_page()
        teacher.goto(f"{live.url}/lesson/{code}/teacher#key={key}")
        summary = teacher.get_by_text("A note for you on this step")
        summary.wait_for(timeout=30_000)
        assert not teacher.get_by_text(NOTE).is_visible()  # folded: a projector does not show it by itself
        summary.click()
        assert teacher.get_by_text(NOTE).is_visible()
        phone.context.close()
        teacher.context.close()
    finally:
        httpx.post(f"{live.url}/rooms/{code}/end", json={"teacher_key": key}, timeout=30)
