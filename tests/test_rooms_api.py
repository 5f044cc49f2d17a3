"""Rooms over HTTP on the tiny GPT-2 (explorer/api/rooms.py): every number against /v1/completions with `echo` and
an independent log_softmax, the counts against what was sent, every refusal in the API's error shape."""

from __future__ import annotations

import io
import math
from collections import Counter

import httpx
import pytest
import torch

from explorer.results.words import END_SETS, end_class, end_masks
from tests.helpers.reference import ref_logprobs
from tests.helpers.rooms_http import get, join, post

LESSON = {
    "title": "Tiny",
    "steps": [
        {"kind": "guess", "text": "the quick brown fox jumps over the lazy dog", "start": 3, "blanks": 3},
        {"kind": "choose", "prompt": "the lazy", "choices": ["dog", "fox", "cat"], "note": "For the teacher."},
        {"kind": "sample", "prompt": "the quick", "temperature": 1.0},
    ],
}


@pytest.fixture()
def room(live):
    made = post(live.url, "/rooms", {"lesson": LESSON})
    live.app.state.rooms.joined.clear()  # each test's students join within a fresh minute
    yield made
    httpx.post(f"{live.url}/rooms/{made['room']}/end", json={"teacher_key": made["teacher_key"]}, timeout=30)


def teacher(live, room: dict, peek: bool = True) -> dict:
    """The room's current step as the teacher's page reads it, peeking (the class's answers, the model's top, before
    the reveal too) or not (what the projector shows)."""
    path = f"/rooms/{room['room']}" + ("?peek=1" if peek else "")
    return get(live.url, path, headers={"X-Teacher-Key": room["teacher_key"]})


def mine(live, room: dict, student: str) -> dict:
    """The student's own result, as their page polls it."""
    return get(live.url, f"/rooms/{room['room']}", headers={"X-Student": student})["mine"]


def echo_tail(url: str, context: str, answer: str, sep: str = " ") -> float:
    """The answer's tokens' summed logprob, as /v1/completions with `echo` scores `context + sep + answer`."""
    body = {"prompt": f"{context}{sep}{answer}", "max_tokens": 0, "echo": True, "logprobs": 0}
    lp = post(url, "/v1/completions", body)
    lp = lp["choices"][0]["logprobs"]
    return sum(x for x, o in zip(lp["token_logprobs"], lp["text_offset"]) if o >= len(context) and x is not None)


@torch.no_grad()
def corrected(engine, context: str, answer: str) -> float:
    """log p(answer as a whole word | context), from plain log_softmax rows and the end sets (results/words.py)."""
    text = f"{context} {answer}"
    ids = engine.encode(text)
    n_ctx = len(engine.encode(context))
    assert ids[:n_ctx] == engine.encode(context)  # the tiny tokenizer keeps the context's tokens whole
    logits = engine.model(torch.tensor([ids])).logits[0].float()
    lp = torch.log_softmax(logits, -1)  # (T, V): row i predicts token i + 1
    masks = torch.from_numpy(end_masks(engine.vocab[: engine.vocab_size], engine.special_ids))
    col = {n: i for i, n in enumerate(END_SETS)}

    def mass(row: int, cls: str) -> float:
        return float(torch.logsumexp(lp[row][masks[col[cls]]], -1))

    tokens = sum(float(lp[i - 1, ids[i]]) for i in range(n_ctx, len(ids)))
    return tokens + mass(len(ids) - 1, end_class(text)) - mass(n_ctx - 1, end_class(context))


def test_a_guess_is_scored_as_the_completions_api_scores_it(live, gpt2, room):
    code = room["room"]
    assert room["join_url"].endswith(f"/lesson/{code}") and room["teacher_key"] in room["teacher_url"]
    assert "--host 0.0.0.0" in room["warning"]  # made on loopback: the link cannot reach a phone
    step = get(live.url, f"/rooms/{code}")
    assert (step["step"], step["kind"], step["context"]) == (0, "guess", "the quick brown")
    assert step["actual"] is None  # a student polling never sees the word to come
    assert teacher(live, room, peek=False)["actual"] is None and teacher(live, room)["actual"] == "fox"
    sent = {"s1": "fox", "s2": "fox", "s3": "dog", "s4": "lazy dog"}
    sent = {join(live.url, code): answer for answer in sent.values()}  # each student's secret, from their join
    for student, answer in sent.items():  # before the reveal a student learns only that the answer came
        got = post(live.url, f"/rooms/{code}/answers", {"student": student, "step": 0, "answer": answer})
        assert got == {"answer": answer, "received": True} == mine(live, room, student)
    post(live.url, f"/rooms/{code}/reveal", {"teacher_key": room["teacher_key"]})
    for student, answer in sent.items():
        r = mine(live, room, student)
        assert r["actual"] == "fox" and r["correct"] == (answer == "fox")
        assert abs(r["logprob"] - echo_tail(live.url, "the quick brown", answer)) <= 1e-4
        if " " not in answer:
            assert abs(r["logprob_word"] - corrected(gpt2, "the quick brown", answer)) <= 1e-4
    assert get(live.url, f"/rooms/{code}")["answers"] == dict(Counter(sent.values()))  # revealed: the class's too
    view = teacher(live, room)
    assert view["answers"] == dict(Counter(sent.values())) and view["n_answered"] == 4
    for e in view["model_top"]:  # the model's words carry the same numbers as a guess of them would
        sep = "" if e["attached"] else " "  # a token that attaches to the word before it (",") follows it at once
        assert abs(e["logprob"] - echo_tail(live.url, "the quick brown", e["answer"], sep)) <= 1e-4
    shown = [e["logprob"] if e["attached"] else e["logprob_word"] for e in view["model_top"]]  # what the page draws
    assert shown == sorted(shown, reverse=True) and len(shown) >= 3
    assert all((e["logprob_word"] is None) == e["attached"] for e in view["model_top"])
    ref = ref_logprobs(gpt2.model, [*gpt2.encode("the quick brown"), 0])[-1].double()
    assert abs(view["entropy_model"] - float(-(ref.exp() * ref).sum())) <= 1e-4


def test_thirty_students_on_one_word_cost_one_computation(live, room, monkeypatch):
    import explorer.api.rooms as rooms_api

    calls = []
    real = rooms_api.continuation
    monkeypatch.setattr(rooms_api, "continuation", lambda *a: calls.append(a[2]) or real(*a))
    code = room["room"]
    teacher(live, room)  # the model's own top, computed once per step
    before = len(calls)
    for _ in range(30):
        post(live.url, f"/rooms/{code}/answers", {"student": join(live.url, code), "step": 0, "answer": "zebra"})
    assert calls[before:] in ([], ["zebra"])  # one computation, or none where the model's top held it already
    assert teacher(live, room)["answers"] == {"zebra": 30}


def test_the_teacher_moves_the_class_on_and_downloads_the_results(live, room):
    code, key = room["room"], room["teacher_key"]
    a = join(live.url, code)
    post(live.url, f"/rooms/{code}/answers", {"student": a, "step": 0, "answer": "fox"})
    bad = post(live.url, f"/rooms/{code}/step", {"teacher_key": "guess"}, status=403)
    assert bad["error"]["code"] == "not_teacher" and bad["error"]["param"] == "teacher_key"
    post(live.url, f"/rooms/{code}/step", {}, status=403)
    assert post(live.url, f"/rooms/{code}/step", {"teacher_key": key})["step"] == 1
    late = post(live.url, f"/rooms/{code}/answers", {"student": a, "step": 0, "answer": "x"}, status=400)
    assert late["error"]["param"] == "step"
    assert get(live.url, f"/rooms/{code}")["context"] == "the quick brown fox"  # a late joiner starts here
    get(live.url, f"/rooms/{code}/results", status=403)
    data = get(live.url, f"/rooms/{code}/results", headers={"X-Teacher-Key": key})
    first = data["steps"][0]
    assert first["actual"] == "fox" and first["answers"][0]["answer"] == "fox" and first["answers"][0]["count"] == 1
    assert first["answers"][0]["logprob"] == pytest.approx(echo_tail(live.url, "the quick brown", "fox"), abs=1e-4)
    csv = httpx.get(f"{live.url}/rooms/{code}/results?format=csv", headers={"X-Teacher-Key": key}).text
    assert csv.splitlines()[0].startswith("step,kind,context,actual,answer,count") and ",fox,1," in csv
    post(live.url, f"/rooms/{code}/step", {"teacher_key": key, "to": 99}, status=400)
    assert post(live.url, f"/rooms/{code}/end", {"teacher_key": key})["ended"] is True
    assert get(live.url, f"/rooms/{code}", status=404)["error"]["code"] == "room_not_found"


def test_a_choose_step_gives_each_choice_its_exact_probability(live, room):
    code, key = room["room"], room["teacher_key"]
    post(live.url, f"/rooms/{code}/step", {"teacher_key": key, "to": 3})
    view = teacher(live, room)
    assert view["kind"] == "choose" and view["choices"] == ["dog", "fox", "cat"]
    got = {e["answer"]: e["logprob"] for e in view["model_top"]}
    for c in ("dog", "fox", "cat"):
        assert abs(got[c] - echo_tail(live.url, "the lazy", c)) <= 1e-4
    a = join(live.url, code)
    bad = post(live.url, f"/rooms/{code}/answers", {"student": a, "step": 3, "answer": "cow"}, status=400)
    assert bad["error"]["param"] == "answer" and "dog, fox, cat" in bad["error"]["message"]
    assert "logprob" not in post(live.url, f"/rooms/{code}/answers", {"student": a, "step": 3, "answer": "cat"})
    assert teacher(live, room, peek=False)["model_top"] == []  # the bias stays hidden until the reveal
    post(live.url, f"/rooms/{code}/reveal", {"teacher_key": key})
    assert mine(live, room, a)["logprob"] == pytest.approx(got["cat"])


def test_draws_follow_the_temperature_the_teacher_sets(live, gpt2, room):
    code, key = room["room"], room["teacher_key"]
    post(live.url, f"/rooms/{code}/step", {"teacher_key": key, "to": 4})
    post(live.url, f"/rooms/{code}/temperature", {"teacher_key": key, "temperature": 0.5})
    view = teacher(live, room)
    assert view["kind"] == "sample" and view["temperature"] == 0.5
    ref = ref_logprobs(gpt2.model, [*gpt2.encode("the quick"), 0])[-1].double()
    tempered = torch.log_softmax(ref / 0.5, -1)
    for e in view["model_top"]:
        assert abs(e["logprob"] - float(tempered[e["token_id"]])) <= 1e-4
    assert abs(view["entropy_model"] - float(-(tempered.exp() * tempered).nan_to_num(0.0).sum())) <= 1e-4
    d = [join(live.url, code), join(live.url, code)]
    drawn = [post(live.url, f"/rooms/{code}/answers", {"student": d[i // 20], "step": 4})["answer"] for i in range(40)]
    assert sum(teacher(live, room)["answers"].values()) == 40 and all(isinstance(d, str) for d in drawn)
    over = post(live.url, f"/rooms/{code}/answers", {"student": d[0], "step": 4}, status=429)
    assert "20 draws" in over["error"]["message"]
    post(live.url, f"/rooms/{code}/temperature", {"teacher_key": key, "temperature": 9}, status=400)


BAD = [  # (body, the field named)
    ({"step": 0, "answer": "x"}, "student"),
    ({"student": "a", "step": "0", "answer": "x"}, "step"),
    ({"student": "a", "step": 0, "answer": "x" * 41}, "answer"),
    ({"student": "a", "step": 0, "answer": ""}, "answer"),
    ({"student": "a", "step": 0, "answer": ["x"]}, "answer"),
]


@pytest.mark.parametrize(("body", "param"), BAD, ids=[b[1] + str(i) for i, b in enumerate(BAD)])
def test_bad_answers_name_their_field(live, room, body, param):
    err = post(live.url, f"/rooms/{room['room']}/answers", body, status=400)["error"]
    assert err["param"] == param and err["message"]


def test_bad_rooms_are_refused_in_words(live, room):
    assert post(live.url, "/rooms", {}, status=400)["error"]["param"] == "lesson"
    assert "guess-next-word" in post(live.url, "/rooms", {"lesson": "nope"}, status=400)["error"]["message"]
    assert post(live.url, "/rooms", {"lesson": "bias", "model": "no-such"}, status=404)["error"]["code"]
    err = post(live.url, "/rooms", {"lesson_text": "title: A\nsteps:\n  - kind: sample\n    prompt: ''\n"}, status=400)
    assert "line 4" in err["error"]["message"]
    assert get(live.url, "/rooms/ZZZZZ", status=404)["error"]["code"] == "room_not_found"
    r = httpx.post(f"{live.url}/rooms/{room['room']}/answers", content=b"{not json", timeout=10)
    assert r.status_code == 400 and r.json()["error"]["message"]
    names = [x["name"] for x in get(live.url, "/lessons")["data"]]
    assert names == ["guess-next-word", "temperature", "bias"]


def test_a_second_answer_to_a_step_is_refused(live, room):
    code = room["room"]
    a = join(live.url, code)
    post(live.url, f"/rooms/{code}/answers", {"student": a, "step": 0, "answer": "fox"})
    err = post(live.url, f"/rooms/{code}/answers", {"student": a, "step": 0, "answer": "dog"}, status=429)
    assert "already answered this step" in err["error"]["message"]
    assert teacher(live, room)["answers"] == {"fox": 1}


def test_the_qr_code_decodes_to_the_join_link(live, room):
    zxingcpp = pytest.importorskip("zxingcpp")
    from PIL import Image

    png = httpx.get(f"{live.url}/rooms/{room['room']}/qr.png", timeout=10)
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    found = zxingcpp.read_barcodes(Image.open(io.BytesIO(png.content)))
    assert [b.text for b in found] == [room["join_url"]]
    svg = httpx.get(f"{live.url}/rooms/{room['room']}/qr.svg", timeout=10)
    assert svg.headers["content-type"].startswith("image/svg+xml") and b"<svg" in svg.content


def test_pages_are_served_with_their_script_inside(live, room):
    for path in ("/lesson", f"/lesson/{room['room']}", f"/lesson/{room['room']}/teacher"):
        r = httpx.get(live.url + path, timeout=10)
        assert r.status_code == 200 and "function pct(" in r.text and "/*SCRIPT*/" not in r.text


def test_a_link_behind_every_interface_names_the_local_network_address():
    from explorer.serving.reach import base_url, lan_address

    def at(host: str, bind: str | None, public: str | None = None):
        return base_url({"host": host}, "http", bind, public)

    lan = lan_address()
    url, warning = at("127.0.0.1:7860", "0.0.0.0")
    if lan is None:
        assert warning and "127.0.0.1" in url  # no network here: the link says it cannot reach phones
    else:
        assert (url, warning) == (f"http://{lan}:7860", None)
    assert at("127.0.0.1:7860", "127.0.0.1")[1].startswith("This link names this computer only")
    assert at("localhost:7860", "127.0.0.1")[1] is not None
    assert at("192.168.1.20:7860", "0.0.0.0") == ("http://192.168.1.20:7860", None)
    assert at("127.0.0.1:7860", "127.0.0.1", "https://abc.gradio.live/") == ("https://abc.gradio.live", None)
    assert base_url({"host": "x.hf.space", "x-forwarded-proto": "https"}, "http", "0.0.0.0", None) == (
        "https://x.hf.space",
        None,
    )


def test_a_student_sees_nobodys_answers_and_a_bad_answer_joins_nobody(live, room):
    code = room["room"]
    a, c = join(live.url, code, "Ann"), join(live.url, code)
    post(live.url, f"/rooms/{code}/answers", {"student": a, "step": 0, "answer": "fox"})
    post(live.url, f"/rooms/{code}/answers", {"student": "b", "step": 0, "answer": "x" * 99}, status=400)
    post(live.url, f"/rooms/{code}/answers", {"student": c, "step": 0, "answer": "fo\u200bx\u202e"})
    seen = get(live.url, f"/rooms/{code}")
    assert seen["answers"] == {} and seen["model_top"] == [] and seen["actual"] is None and seen["accuracy"] is None
    view = teacher(live, room)
    assert view["n_students"] == 2 and view["answers"] == {"fox": 2}  # hidden marks stripped; "b" never joined
    assert view["accuracy"]["class_answers"] == 0  # the current step's word is not out: no accuracy from it yet
    key = room["teacher_key"]
    post(live.url, f"/rooms/{code}/step", {"teacher_key": key})
    after = teacher(live, room)["accuracy"]
    assert (after["class"], after["class_answers"], after["model_steps"]) == (1.0, 2, 1)
    results = get(live.url, f"/rooms/{code}/results", headers={"X-Teacher-Key": key})
    assert results["steps"][0]["answers"][0]["nicknames"] == ["Ann"]


def test_a_steps_note_is_the_teachers_alone(live, room):
    code, key = room["room"], room["teacher_key"]
    post(live.url, f"/rooms/{code}/step", {"teacher_key": key, "to": 3})  # the choose step, the one with a note
    assert teacher(live, room)["note"] == "For the teacher."
    a = join(live.url, code)
    post(live.url, f"/rooms/{code}/answers", {"student": a, "step": 3, "answer": "dog"})
    for revealed in (False, True):  # a student sees no note before the reveal, nor after it
        if revealed:
            post(live.url, f"/rooms/{code}/reveal", {"teacher_key": key})
        for seen in (get(live.url, f"/rooms/{code}"), get(live.url, f"/rooms/{code}", headers={"X-Student": a})):
            assert seen["note"] is None and "For the teacher" not in str(seen)


def test_a_lesson_longer_than_the_models_context_is_refused_at_once(live):
    """The tiny GPT-2 reads 128 positions: a lesson text past them gets a 400 before a room is left open."""
    long = " ".join(["word"] * 400)
    lesson = {"title": "Long", "steps": [{"kind": "sample", "prompt": long}]}
    before = len(live.app.state.rooms.rooms)
    err = post(live.url, "/rooms", {"lesson": lesson}, status=400)["error"]
    assert err["message"] and len(live.app.state.rooms.rooms) == before


def model_numbers(view: dict) -> list:
    """What of the model's side and the word to come a response carries (nothing before the reveal)."""
    keys = ("answer_numbers", "model_top", "entropy_model", "entropy_class", "actual", "chart", "answers")
    return [(k, view[k]) for k in keys if view.get(k)]


def test_nothing_of_the_model_shows_before_the_reveal_and_the_chart_after(live, room):
    code, key = room["room"], room["teacher_key"]
    given = {"a": "fox", "b": "fox", "c": "dog", "d": "lazy dog", "e": "🦊", "f": "foxx"}
    ids = {name: join(live.url, code) for name in given}  # each student's secret, from their join
    sent = {ids[name]: answer for name, answer in given.items()}
    for student, answer in sent.items():
        got = post(live.url, f"/rooms/{code}/answers", {"student": student, "step": 0, "answer": answer})
        assert got == {"answer": answer, "received": True}
    for view in (teacher(live, room, peek=False), get(live.url, f"/rooms/{code}", headers={"X-Student": ids["a"]})):
        assert model_numbers(view) == [] and view["revealed"] is False
        assert view.get("mine") in (None, {"answer": "fox", "received": True})  # a's own answer, nothing more
        assert view["n_answered"] == 6
    peeked = teacher(live, room)
    assert peeked["actual"] == "fox" and peeked["chart"] and peeked["revealed"] is False  # the peek is the teacher's
    assert get(live.url, f"/rooms/{code}?peek=1", headers={"X-Student": ids["a"]})["actual"] is None  # not a student's
    assert post(live.url, f"/rooms/{code}/reveal", {"teacher_key": "nope"}, status=403)["error"]["code"]
    assert post(live.url, f"/rooms/{code}/reveal", {"teacher_key": key})["revealed"] is True
    after = get(live.url, f"/rooms/{code}", headers={"X-Student": ids["c"]})
    assert after["revealed"] is True and after["actual"] == "fox" and after["mine"]["answer"] == "dog"
    assert after["mine"]["logprob"] == pytest.approx(echo_tail(live.url, "the quick brown", "dog"), abs=1e-4)
    rows = after["chart"]
    said = {r["word"]: r for r in rows if r["said"]}
    assert {w: r["count"] for w, r in said.items()} == dict(Counter(sent.values()))
    for w, r in said.items():  # each word's probability is the room's own number of it, as a whole word
        n = after["answer_numbers"][w]
        want = n["logprob_word"] if n["logprob_word"] is not None and math.isfinite(n["logprob_word"]) else n["logprob"]
        assert r["p"] == pytest.approx(math.exp(want)) and r["share"] == pytest.approx(r["count"] / len(sent))
        assert r["actual"] == (w == "fox")
    assert all(r["word"] not in said for r in rows if not r["said"])  # the model's words nobody said, after
    board = after["scoreboard"]
    assert board["steps"] == 1 and board["class_right"] == 1  # "fox" was the class's most given
    post(live.url, f"/rooms/{code}/step", {"teacher_key": key})
    assert teacher(live, room, peek=False)["revealed"] is False  # the next step starts hidden


def test_a_step_that_reveals_at_once_answers_with_the_result(live):
    lesson = {**LESSON, "reveal": "at-once"}
    made = post(live.url, "/rooms", {"lesson": lesson})
    a = join(live.url, made["room"])
    r = post(live.url, f"/rooms/{made['room']}/answers", {"student": a, "step": 0, "answer": "fox"})
    assert r["actual"] == "fox" and r["correct"] is True and r["logprob"] is not None
    assert get(live.url, f"/rooms/{made['room']}")["revealed"] is True
