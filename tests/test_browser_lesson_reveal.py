"""A lesson as a room plays it, in a real browser on the tiny GPT-2: a teacher's projector (1366x768) and three phones
(390x844) play three steps of a guess lesson. Before the teacher's *Show the next word* neither the projector nor any
phone has the word to come or a model's percentage anywhere in its page; after it all four show the word, and the
one chart lists every answer sent with the model's probability the room's JSON gives it, its first rows readable from
the back of a room. The *Temperature* step: a typed temperature reaches the phones, its bars sit on one absolute
scale, and a temperature typed just before *Next step* does not swallow the click."""

from __future__ import annotations

import math

import httpx
import pytest

from tests.helpers.browser import require_chromium

require_chromium()
pytestmark = pytest.mark.browser

PROJECTOR = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}
TEXT = "Yesterday the clever purple octopus painted seventeen tiny boats"
WORDS = ["purple", "octopus", "painted"]  # the three blanks after "Yesterday the clever"
GUESSES = [["dog", "dog", "red 🐙"], ["cat", "frog", "cta"], ["ran", "ran", "ran"]]  # none is the word to come

NO_NUMBERS = "() => document.body.innerText.includes('%')"


def open_room(url: str, lesson: dict) -> dict:
    r = httpx.post(url + "/rooms", json={"lesson": lesson}, timeout=60)
    assert r.status_code == 200, r.text
    return r.json()


def local(url: str, link: str) -> str:
    """A link the server made, on loopback."""
    return url + "/" + link.split("://", 1)[1].split("/", 1)[1]


def page_has(pg, word: str) -> bool:
    """Whether the word is anywhere in the page's DOM (its markup, attributes and text), case aside."""
    return word.lower() in pg.evaluate("() => document.documentElement.outerHTML").lower()


def chart_rows(pg) -> dict[str, dict]:
    """The chart as drawn: word -> the widths its bars carry (the values they are drawn from) and their labels."""
    return pg.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('#chart table.chart tr')]
             .filter((tr) => tr.querySelector('.w'))
             .map((tr) => [tr.querySelector('.w').textContent, {
                class: tr.querySelector('.bar.class').dataset.value, model: tr.querySelector('.bar.model').dataset.value,
                label: tr.querySelector('.num.model').textContent, came: tr.classList.contains('came')}]))"""
    )


def test_the_word_and_the_model_stay_hidden_until_the_reveal_then_one_chart(browser, live, shots):
    made = open_room(live.url, {"title": "Sea life", "steps": [{"kind": "guess", "text": TEXT, "blanks": 3}]})
    code = made["room"]
    teacher = browser.new_context(viewport=PROJECTOR).new_page()
    teacher.goto(local(live.url, made["teacher_url"]))
    teacher.get_by_text("0 of 0 students answered").wait_for(timeout=60_000)
    teacher.get_by_label("Projector mode").check()
    phones = []
    for _ in range(3):
        pg = browser.new_context(viewport=PHONE).new_page()
        pg.goto(local(live.url, made["join_url"]))
        pg.get_by_label("Your guess for the next word").wait_for(timeout=60_000)
        phones.append(pg)
    for step, (word, row) in enumerate(zip(WORDS, GUESSES, strict=True)):
        for pg, guess in zip(phones, row, strict=True):
            pg.get_by_label("Your guess for the next word").fill(guess)
            pg.get_by_role("button", name="Send").dblclick()  # a second tap while the first is in flight: nothing
            pg.get_by_text(f"Answer received: “{guess}”").wait_for(timeout=60_000)
            assert pg.locator("#error").inner_text() == ""
        teacher.get_by_text("3 of 3 students answered").wait_for(timeout=30_000)
        # students joined (with their first answer): the join panel is the room's code in a corner
        assert teacher.locator("#join-panel").is_hidden() and code in teacher.locator("#corner").inner_text()
        for pg in [teacher, *phones]:  # 1. before the reveal: not the word, not one of the model's numbers
            assert not page_has(pg, word) and not pg.evaluate(NO_NUMBERS), (step, pg.url)
        if step == 0:
            teacher.screenshot(path=str(shots / "reveal-projector-1366-before.png"))
            phones[0].screenshot(path=str(shots / "reveal-phone-before.png"))
            teacher.set_viewport_size({"width": 1920, "height": 1080})
            teacher.screenshot(path=str(shots / "reveal-projector-1920-before.png"))
            teacher.set_viewport_size(PROJECTOR)
        if step == 2:  # the teacher's private peek: off the projected view only
            teacher.get_by_label("Projector mode").uncheck()
            teacher.get_by_label("Peek at the model (only on this screen)").check()
            teacher.get_by_text("Peeking: only you see").wait_for(timeout=10_000)
            assert word in teacher.locator("#chart").inner_text() and not any(page_has(pg, word) for pg in phones)
            teacher.get_by_label("Projector mode").check()  # projecting ends the peek at once
            assert teacher.locator("#peek").is_checked() is False and not page_has(teacher, word)
        teacher.get_by_role("button", name="Show the next word").click()
        for pg in [teacher, *phones]:  # 2. after it, the word on all four (no reload)
            pg.locator("#actual, #came-word").filter(has_text=word).first.wait_for(timeout=30_000)
        view = httpx.get(f"{live.url}/rooms/{code}", timeout=30).json()
        want = {r["word"]: r for r in view["chart"]}
        for pg in [teacher, phones[0]]:  # 3. every answer sent, with the model's probability of the room's JSON
            drawn = chart_rows(pg)
            assert {g for g in row} <= set(drawn) and set(drawn) <= set(want)
            for w, r in drawn.items():
                assert float(r["model"]) == pytest.approx(want[w]["p"], rel=1e-9)
                assert float(r["class"]) == pytest.approx(want[w]["share"], rel=1e-9)
                assert r["label"].endswith(pg.evaluate("pct", math.log(want[w]["p"])))
        # 4. projector mode: the chart's first five rows inside the 1366x768 viewport, their words 28 px or more
        first = teacher.locator("#chart table.chart").first.locator("tr:has(.w)")
        for i in range(min(5, first.count())):
            box = first.nth(i).bounding_box()
            assert box and box["y"] >= 0 and box["y"] + box["height"] <= PROJECTOR["height"], (i, box)
            size = first.nth(i).locator(".w").evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
            assert size >= 28
        assert teacher.locator("#context").evaluate("e => parseFloat(getComputedStyle(e).fontSize)") >= 36
        board = teacher.locator("#scoreboard").inner_text()
        assert f"The class guessed 0 of {step + 1} word" in board  # none of the guesses was the word
        if step == 0:
            teacher.screenshot(path=str(shots / "reveal-projector-1366-after.png"))
            phones[0].screenshot(path=str(shots / "reveal-phone-after.png"), full_page=True)
            teacher.set_viewport_size({"width": 1920, "height": 1080})
            teacher.screenshot(path=str(shots / "reveal-projector-1920-after.png"))
            teacher.set_viewport_size(PROJECTOR)
        if step < 2:
            teacher.get_by_role("button", name="Next step").click()
            teacher.get_by_text(f"Step {step + 2} of 3").wait_for(timeout=60_000)
            for pg in phones:
                pg.get_by_text(f"Step {step + 2} of 3").wait_for(timeout=30_000)
                assert pg.get_by_role("button", name="Send").is_enabled()
    for pg in [teacher, *phones]:
        pg.context.close()


def test_a_typed_temperature_reaches_the_phones_and_next_step_still_moves(browser, live, shots):
    steps = [{"kind": "sample", "prompt": "the quick brown"}, {"kind": "guess", "text": "one two three four"}]
    made = open_room(live.url, {"title": "Heat", "steps": steps})
    teacher = browser.new_context(viewport=PROJECTOR).new_page()
    teacher.goto(local(live.url, made["teacher_url"]))
    teacher.get_by_text("draws by 0 of 0 students").wait_for(timeout=60_000)
    phone = browser.new_context(viewport=PHONE).new_page()
    phone.goto(local(live.url, made["join_url"]))
    phone.get_by_role("button", name="Draw a word").wait_for(timeout=60_000)
    assert phone.locator("#temp").inner_text() == "1"
    for _ in range(3):
        phone.get_by_role("button", name="Draw a word").click()
        phone.get_by_role("button", name="Draw a word").wait_for(state="visible")
    phone.locator("#draws li").nth(2).wait_for(timeout=60_000)
    teacher.get_by_label("Temperature", exact=True).fill("3")
    teacher.get_by_label("Temperature", exact=True).press("Enter")
    phone.locator("#temp", has_text="3").wait_for(timeout=10_000)  # the phone follows, its old draws cleared
    assert phone.locator("#draws li").count() == 0
    teacher.get_by_text("Earlier, at temperature 1").wait_for(timeout=10_000)  # the old tally kept apart
    phone.get_by_role("button", name="Draw a word").click()
    phone.locator("#draws li").first.wait_for(timeout=60_000)
    teacher.get_by_text("1 draws by 1 of 1 students").wait_for(timeout=10_000)
    # one absolute scale: each bar's width over its track is its probability (or its share of the draws)
    bars = teacher.evaluate(
        """() => [...document.querySelectorAll('#chart .bar')].filter((b) => b.dataset.value !== '').map((b) =>
             [parseFloat(b.dataset.value), b.getBoundingClientRect().width / b.parentElement.getBoundingClientRect().width])"""
    )
    assert len(bars) >= 5
    for value, ratio in bars:
        assert abs(value - ratio) <= 0.01, bars
    view = httpx.get(f"{live.url}/rooms/{made['room']}", headers={"X-Teacher-Key": made["teacher_key"]}).json()
    assert view["temperature"] == 3 and [t["temperature"] for t in view["earlier"]] == [1.0]
    teacher.screenshot(path=str(shots / "temperature-projector.png"))
    # a temperature typed and, at once, Next step: both happen, in that order (the click used to be lost)
    teacher.get_by_label("Temperature", exact=True).fill("2")
    teacher.get_by_role("button", name="Next step").click()
    teacher.get_by_text("Step 2 of 2").wait_for(timeout=60_000)
    results = httpx.get(
        f"{live.url}/rooms/{made['room']}/results", headers={"X-Teacher-Key": made["teacher_key"]}, timeout=30
    ).json()
    assert results["steps"][0]["temperature"] == 2
    for pg in (teacher, phone):
        pg.context.close()
