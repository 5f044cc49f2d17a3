"""The teacher keeps the room, in a real browser on the tiny model: two phones join (one gives a name), the teacher
sees them by name and locks the room, a late phone is told the room is locked, the teacher removes a student and
their answer leaves the class's count while their phone says they left. Teacher at 1366x768, phones at 390x844;
axe-core finds no serious violation on the pages."""

from __future__ import annotations

import pytest

from tests.helpers.browser import require_chromium, serious
from tests.helpers.rooms_http import post

require_chromium()
pytestmark = pytest.mark.browser

TEACHER = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}
LESSON = {"title": "Tiny", "steps": [{"kind": "guess", "text": "the quick brown fox jumps", "start": 3, "blanks": 2}]}
GUESS = "Your guess for the next word"


def path_of(url: str) -> str:
    """A link's path: tests open it on loopback whatever address the link names."""
    return "/" + url.split("://", 1)[1].split("/", 1)[1]


def test_the_teacher_locks_the_room_and_removes_a_student(browser, live, shots):
    made = post(live.url, "/rooms", {"lesson": LESSON})
    live.app.state.rooms.joined.clear()
    code = made["room"]
    teacher = browser.new_context(viewport=TEACHER).new_page()
    teacher.on("dialog", lambda d: d.accept())  # "Remove …? Their answers go with them."
    teacher.goto(live.url + path_of(made["teacher_url"]))
    teacher.get_by_text("Nobody has joined yet.").wait_for(timeout=30_000)

    def phone():
        pg = browser.new_context(viewport=PHONE, is_mobile=True).new_page()
        pg.goto(live.url + path_of(made["join_url"]))
        return pg

    ann, bob = phone(), phone()
    for pg in (ann, bob):
        pg.get_by_label(GUESS).wait_for(timeout=30_000)
    ann.get_by_label("Your name (optional)").fill("Ann")
    ann.get_by_label("Your name (optional)").press("Tab")
    ann.get_by_text("Saved.").wait_for(timeout=10_000)
    teacher.get_by_role("heading", name="Students (2)").wait_for(timeout=10_000)
    teacher.locator("#students li").filter(has_text="Ann").wait_for(timeout=10_000)  # by the name, at the next poll

    teacher.get_by_role("button", name="Lock the room").click()
    teacher.get_by_text("Locked: nobody new can join").wait_for(timeout=10_000)
    late = phone()
    late.get_by_text(f"Room {code} is locked: ask your teacher to let you in.").wait_for(timeout=10_000)
    assert late.locator("h1").inner_text() == f"Room {code} is locked" and late.get_by_label(GUESS).is_hidden()
    late.screenshot(path=str(shots / "lesson-late-phone-locked.png"))

    for pg, guess in ((ann, "fox"), (bob, "dog")):
        pg.get_by_label(GUESS).fill(guess)
        pg.get_by_role("button", name="Send").click()
        pg.get_by_text("Answer received").wait_for(timeout=30_000)
    teacher.get_by_text("2 of 2 students answered").wait_for(timeout=10_000)
    teacher.get_by_role("button", name="Show the next word").click()
    for pg in (ann, bob):
        pg.get_by_text("The model gave your guess").wait_for(timeout=30_000)
    teacher.screenshot(path=str(shots / "lesson-teacher-roster.png"), full_page=True)
    assert serious(teacher) == [] and serious(late) == []

    bobs = teacher.locator("#students li").filter(has_not_text="Ann")  # "(no name) s1" or "s2": the order they joined
    assert bobs.inner_text().startswith("(no name) s")
    bobs.get_by_role("button", name="Remove").click()
    teacher.get_by_text("1 of 1 students answered").wait_for(timeout=10_000)
    said = teacher.locator("#chart table").first  # the class's words (the model's unsaid ones follow apart)
    assert "dog" not in said.inner_text() and "fox" in said.inner_text()
    assert teacher.get_by_role("heading", name="Students (1)").is_visible()
    bob.get_by_text("Your teacher removed you from this room").wait_for(timeout=10_000)
    assert bob.get_by_label(GUESS).is_hidden()
    bob.screenshot(path=str(shots / "lesson-removed-phone.png"))
    ann.screenshot(path=str(shots / "lesson-student-named-phone.png"), full_page=True)
    assert serious(bob) == [] and serious(ann) == []
    assert late.get_by_role("button", name="Try again").is_visible()  # the late phone asks again once unlocked
    teacher.get_by_role("button", name="Unlock the room").click()
    teacher.get_by_text("Anyone with the code can join").wait_for(timeout=10_000)
    late.get_by_role("button", name="Try again").click()
    late.get_by_label(GUESS).wait_for(timeout=30_000)
    assert late.locator("h1").inner_text() != f"Room {code} is locked"
    post(live.url, f"/rooms/{code}/end", {"teacher_key": made["teacher_key"]})
    for pg in (teacher, ann, bob, late):
        pg.context.close()
