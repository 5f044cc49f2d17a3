"""A lesson in a real browser on ZeroGPU (the real `spaces` package against the device API's stand-in,
tests/helpers/zerogpu.py, on the tiny model): two students' guesses are received (one the step did not already score,
one of the model's top words), neither a GPU call of its own; the teacher's *Show the next word* scores the waiting one
in one GPU call and reveals the step, and both pages fill in their results by themselves, the waiting one's number
that of an independent log_softmax + gather."""

from __future__ import annotations

import httpx
import pytest
import torch

from tests.helpers.browser import require_chromium, serious
from tests.helpers.zerogpu import DeviceApi, ZeroGpuServer

require_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.zerogpu]

PHONE = {"width": 420, "height": 900}
RECEIVED = "Answer received"


@pytest.fixture
def zero_server(gpt2_dir, tmp_path):
    api = DeviceApi()
    env = {"ZEROGPU_TEST_NO_DEVICE": "1", "EXPLORER_MAX_SECONDS": "40"}
    srv = ZeroGpuServer(api, [gpt2_dir], tmp_path, env=env, args=("--device", "cpu"))
    yield srv, api
    srv.stop()
    api.stop()


def join_path(url: str) -> str:
    return "/" + url.split("://", 1)[1].split("/", 1)[1]


def kept_result(pg) -> dict:
    """The result the student's page shows, as it keeps it (sessionStorage: what a reload shows again)."""
    return pg.evaluate(
        "() => { const k = Object.keys(sessionStorage).find((k) => k.startsWith('lesson-result-'));"
        " return JSON.parse(sessionStorage.getItem(k)); }"
    )


LINES = """s => {
  const p = [...document.querySelectorAll("#result p")].find((e) => e.textContent.includes(s));
  const r = document.createRange(), i = p.firstChild.textContent.indexOf(s);
  r.setStart(p.firstChild, i); r.setEnd(p.firstChild, i + s.length);
  return new Set([...r.getClientRects()].map((b) => Math.round(b.top))).size;
}"""


def lines_of(pg, text: str) -> int:
    """How many lines `text` spans in the student's result, as laid out."""
    return pg.evaluate(LINES, text)


def test_a_waiting_guess_fills_in_when_the_teacher_shows_the_next_word(browser, zero_server, gpt2, gpt2_dir, shots):
    srv, device_api = zero_server
    teacher = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    teacher.goto(srv.url + "/lesson")
    teacher.get_by_role("button", name="Start “Guess the next word”").click()
    teacher.wait_for_url("**/teacher#key=*")
    teacher.get_by_text("0 of 0 students answered").wait_for(timeout=60_000)
    code, key = teacher.locator("#code").inner_text(), teacher.url.split("#key=", 1)[1]
    view = httpx.get(f"{srv.url}/rooms/{code}?peek=1", headers={"X-Teacher-Key": key}, timeout=60).json()  # a peek
    # words the step's side scored: the model's likeliest whole words, and the word that came (on a random tiny model
    # the likeliest may all be pieces that continue the word before the blank)
    top = [e["answer"] for e in view["model_top"] if not e["attached"]] + [view["actual"]]
    unscored = "zebra"
    assert top and unscored not in [e["answer"] for e in view["model_top"]]

    students = []
    for _ in range(2):
        pg = browser.new_context(viewport=PHONE).new_page()
        pg.errors = []
        pg.on("pageerror", lambda e, pg=pg: pg.errors.append(str(e)))
        pg.goto(srv.url + join_path(teacher.locator("#join").inner_text()))
        pg.get_by_label("Your guess for the next word").wait_for(timeout=60_000)
        students.append(pg)
    waiting, answered = students
    calls = len(device_api.durations())

    # 1. both guesses are received, with no number and no error; neither is a GPU call of its own
    waiting.get_by_label("Your guess for the next word").fill(unscored)
    waiting.get_by_role("button", name="Send").click()
    waiting.get_by_text(f"{RECEIVED}: “{unscored}”").wait_for(timeout=30_000)
    result = waiting.locator("#result")
    assert "%" not in result.inner_text()
    assert (
        waiting.locator("#error").inner_text() == ""
        and waiting.get_by_label("Your guess for the next word").is_disabled()
    )
    assert kept_result(waiting) == {"answer": unscored, "received": True}
    waiting.screenshot(path=str(shots / "lesson-student-zerogpu-waiting.png"), full_page=True)
    answered.get_by_label("Your guess for the next word").fill(top[0])
    answered.get_by_role("button", name="Send").click()
    answered.get_by_text(f"{RECEIVED}: “{top[0]}”").wait_for(timeout=30_000)
    assert len(device_api.durations()) == calls  # neither answer was a GPU call of its own
    teacher.get_by_text("1 answer waits for the model's numbers").wait_for(timeout=30_000)

    # 2. the teacher shows the next word: one GPU call, and the waiting page fills in by its own poll, no reload
    teacher.get_by_role("button", name="Show the next word").click()
    waiting.get_by_text("The model gave your guess").wait_for(timeout=60_000)
    answered.get_by_text("The model gave your guess").wait_for(timeout=60_000)
    assert f"“{top[0]}”" in answered.locator("#result").inner_text() and kept_result(answered)["pending"] is False
    assert len(device_api.durations()) == calls + 1
    assert RECEIVED not in result.inner_text() and waiting.locator("#error").inner_text() == ""
    mine = kept_result(waiting)
    assert mine["answer"] == unscored and mine["pending"] is False
    shown = mine["logprob_word"] if mine["logprob_word"] is not None else mine["logprob"]
    percent = waiting.evaluate("pct", shown)
    assert f"“{unscored}” a {percent} chance" in result.inner_text()
    assert lines_of(waiting, percent) == 1  # never "a <" at a line's end and "0.0001%" on the next (a phone's width)
    waiting.screenshot(path=str(shots / "lesson-student-zerogpu-scored.png"), full_page=True)
    assert serious(waiting) == []
    assert waiting.errors == [] and answered.errors == []

    # 3. its number: an independent log_softmax + gather over the guess's tokens after the context
    from transformers import AutoModelForCausalLM

    from tests.helpers.reference import ref_logprobs

    context = view["context"]
    ctx, ids = gpt2.encode(context), gpt2.encode(f"{context} {unscored}")
    assert ids[: len(ctx)] == ctx
    lp = ref_logprobs(AutoModelForCausalLM.from_pretrained(gpt2_dir).eval(), ids)  # (T-1, V)
    want = float(lp[torch.arange(len(ctx) - 1, len(ids) - 1), ids[len(ctx) :]].double().sum())
    assert abs(mine["logprob"] - want) <= 1e-4, (mine, want)
    for pg in [teacher, *students]:
        pg.context.close()
