"""A lesson in a real browser on the default model: the teacher starts *Guess the next word* from /lesson, three
students join (one on a phone) by the join link, each guesses three steps, and the teacher's live view counts them;
axe-core finds no serious violation on either page, in light or dark."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.browser import SIZES, require_chromium, serious

require_chromium()
pytestmark = pytest.mark.browser


def join_path(url: str) -> str:
    """The join link's path: tests open it on loopback whatever address the link names."""
    return "/" + url.split("://", 1)[1].split("/", 1)[1]


def test_a_class_guesses_three_words_with_the_teacher_watching(browser, smollm_live, shots):
    teacher_ctx = browser.new_context(viewport=SIZES["wide"], color_scheme="light")
    teacher = teacher_ctx.new_page()
    teacher.goto(smollm_live.url + "/lesson")
    teacher.get_by_role("button", name="Start “Guess the next word”").click()
    teacher.wait_for_url("**/teacher#key=*")
    teacher.get_by_text("0 of 0 students answered").wait_for(timeout=60_000)
    join = teacher.locator("#join").inner_text()
    assert join.endswith("/lesson/" + teacher.locator("#code").inner_text())
    assert "--host 0.0.0.0" in teacher.locator("#warning").inner_text()  # a loopback link says it cannot reach phones
    assert teacher.locator("#qr").evaluate("img => img.complete && img.naturalWidth > 0")

    students = []
    for size, scheme in [("wide", "light"), ("wide", "dark"), ("phone", "light")]:
        ctx = browser.new_context(viewport=SIZES[size], color_scheme=scheme)
        pg = ctx.new_page()
        pg.goto(smollm_live.url + join_path(join))
        pg.get_by_label("Your guess for the next word").wait_for(timeout=60_000)
        students.append(pg)
    phone = students[2]
    box = phone.get_by_label("Your guess for the next word").bounding_box()
    send = phone.get_by_role("button", name="Send").bounding_box()
    assert box and send and send["y"] + send["height"] <= SIZES["phone"]["height"]  # both on the first screen

    guesses = [["there", "there", "a"], ["was", "lived", "was"], ["a", "a", "one"]]
    for step, row in enumerate(guesses):
        context = students[0].locator("#context").inner_text()
        for pg, guess in zip(students, row):
            pg.get_by_label("Your guess for the next word").fill(guess)
            pg.get_by_role("button", name="Send").click()
            pg.get_by_text(f"Answer received: “{guess}”").wait_for(timeout=60_000)
        teacher.get_by_text("3 of 3 students answered").wait_for(timeout=30_000)
        teacher.get_by_role("button", name="Show the next word").click()
        for pg, guess in zip(students, row):
            pg.get_by_text("The model gave your guess").wait_for(timeout=60_000)
            result = pg.locator("#result").inner_text()
            assert f"“{guess}”" in result and "%" in result and "e-" not in result
            assert "The next word was" in result
        counts = teacher.locator("#chart").inner_text()
        for guess in set(row):
            assert guess in counts
        assert teacher.locator("#chart tr:has(.w)").count() >= 3
        assert "bits" in teacher.locator("#spread").inner_text()
        if step == 1:
            teacher.screenshot(path=str(shots / "lesson-teacher-wide.png"), full_page=True)
            phone.screenshot(path=str(shots / "lesson-student-phone.png"), full_page=True)
            students[1].screenshot(path=str(shots / "lesson-student-dark-wide.png"))
            assert serious(teacher) == [] and serious(phone) == [] and serious(students[1]) == []
        if step < 2:
            teacher.get_by_role("button", name="Next step").click()
            for pg in students:  # every student's page moves on by itself
                pg.wait_for_function(f"document.getElementById('context').innerText.trim() !== {context.strip()!r}")
    assert "The class guessed" in teacher.locator("#scoreboard").inner_text()
    with teacher.expect_download() as dl:
        teacher.get_by_role("button", name="Download results (CSV)").click()
    text = Path(dl.value.path()).read_text()
    assert text.count(",there,2,") == 1 and ",lived,1," in text
    teacher_ctx.close()
    for pg in students:
        pg.context.close()
