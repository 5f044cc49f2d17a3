"""Lesson files (explorer/lessons/schema.py) and rooms' bookkeeping (explorer/lessons/rooms.py): no model here."""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest

from explorer.errors import ExplorerError
from explorer.lessons import schema
from explorer.lessons.rooms import RoomLimits, Rooms, clean_answer, entropy

GOOD = """title: A lesson
steps:
  - kind: guess
    text: The cat sat on the mat.
    start: 2
  - kind: choose
    prompt: The nurse said that
    choices: [he, she, they]
  - kind: sample
    prompt: I like
    temperature: 0.5
"""


def test_a_lesson_expands_into_steps():
    lesson = schema.load(GOOD)
    kinds = [s.kind for s in lesson.steps]
    assert kinds == ["guess"] * 4 + ["choose", "sample"]
    first = lesson.steps[0]
    assert (first.context, first.actual) == ("The cat", "sat")
    assert lesson.steps[3].actual == "mat."
    assert lesson.steps[4].choices == ("he", "she", "they")
    assert lesson.steps[5].temperature == 0.5


def test_a_note_goes_to_its_step_and_a_guess_entrys_to_its_first_blank():
    text = GOOD.replace("    start: 2\n", "    start: 2\n    note: >-\n      The model expects\n      a comma here.\n")
    text = text.replace("    temperature: 0.5\n", "    temperature: 0.5\n    note: Draw at least ten.\n")
    steps = schema.load(text).steps
    assert [s.note for s in steps] == ["The model expects a comma here.", "", "", "", "", "Draw at least ten."]
    assert all(s.note == "" for s in schema.load(GOOD).steps)  # optional


@pytest.mark.parametrize(
    ("note", "words"),
    [
        ("x" * (schema.MAX_NOTE + 1), [f"at most {schema.MAX_NOTE}", "`steps[1].note`", "line 9"]),
        ("[a, b]", ["`steps[1].note`", "non-empty text"]),
        ('""', ["`steps[1].note`", "non-empty text"]),
    ],
)
def test_a_bad_note_is_refused_with_its_field(note, words):
    text = GOOD.replace("    choices: [he, she, they]\n", f"    choices: [he, she, they]\n    note: {note}\n")
    with pytest.raises(ExplorerError) as err:
        schema.load(text)
    for w in words:
        assert w in err.value.message, err.value.message


def test_json_reads_as_yaml_does():
    import yaml

    assert schema.load(json.dumps(yaml.safe_load(GOOD))) == schema.load(GOOD)


@pytest.mark.parametrize("name", schema.BUILTIN)
def test_the_built_in_lessons_load(name):
    lesson = schema.builtin(name)
    assert lesson.name == name and lesson.title and lesson.steps
    assert {s.kind for s in lesson.steps} == {
        "guess-next-word": {"guess"},
        "temperature": {"sample"},
        "bias": {"choose"},
    }[name]


MISTAKES = [  # (the file, words its message must hold)
    (
        "title: A\nsteps:\n  - kind: guess\n    text: The cat sat.\n    strat: 1\n",
        ["`steps[0].strat`", "line 5", "start"],
    ),
    ("title: A\nsteps:\n  - kind: gues\n    text: x y\n", ["`steps[0].kind`", "line 3", "guess, sample, choose"]),
    (
        "title: A\nsteps:\n  - kind: choose\n    prompt: P\n    choices: [he]\n",
        ["`steps[0].choices`", "line 5", "2 to"],
    ),
    ("title: A\nsteps:\n  - kind: choose\n    prompt: P\n    choices: [he, he]\n", ["`steps[0].choices[1]`", "twice"]),
    (
        "title: A\nsteps:\n  - kind: sample\n    prompt: P\n    temperature: 9\n",
        ["`steps[0].temperature`", "line 5", "0.05 to 5"],
    ),
    ("title: A\nsteps:\n  - kind: guess\n    text: One\n", ["`steps[0].text`", "two words"]),
    ("title: A\nsteps:\n  - kind: guess\n    text: a b c\n    start: 7\n", ["`steps[0].start`", "1 to 2"]),
    ("title: A\nsteps:\n  - kind: sample\n", ["`steps[0]`", "`prompt` is missing"]),
    ("title: A\nsteps: []\n", ["`steps`", "non-empty"]),
    ("steps:\n  - kind: sample\n    prompt: P\n", ["the lesson", "`title` is missing"]),
    ("title: A\ncolour: red\nsteps: []\n", ["`colour`", "line 2"]),
    ("title: A\nsteps:\n  - kind: sample\n    prompt: [unclosed\n", ["YAML", "line 4"]),
    ('{"title": "A", "steps": [\n  {"kind": "sample", "prompt": "P",}\n]}', ["JSON", "line 2"]),
    ('{"title": "A",\n "steps": [{"kind": "sample", "prompt": ""}]}', ["`steps[0].prompt`", "line 2", "non-empty"]),
    ("- just\n- a list\n", ["mapping"]),
    ("title: A\nsteps:\n" + "  - kind: sample\n    prompt: P\n" * 41, ["more than 40 steps"]),
]


@pytest.mark.parametrize(("text", "words"), MISTAKES, ids=[m[1][0] for m in MISTAKES])
def test_each_mistake_names_its_field_and_line(text, words):
    with pytest.raises(ExplorerError) as err:
        schema.load(text)
    assert err.value.param == "lesson"
    for w in words:
        assert w in err.value.message, err.value.message


def test_a_file_too_large_or_not_text_is_refused():
    with pytest.raises(ExplorerError, match="at most 64,000"):
        schema.load(b"title: A\n" + b"#" * 70_000)
    with pytest.raises(ExplorerError, match="UTF-8"):
        schema.load(b"title: \xff\n")
    with pytest.raises(ExplorerError, match=r"There is no lesson .no-such-lesson.: choose a built-in"):
        schema.from_value("no-such-lesson")


def test_answers_are_cleaned_and_choices_held():
    lesson = schema.load(GOOD)
    guess, choose = lesson.steps[0], lesson.steps[4]
    assert clean_answer("  big   dog ", guess) == "big dog"
    for bad, msg in [("", "empty"), ("x" * 41, "at most 40"), (3, "text")]:
        with pytest.raises(ExplorerError, match=msg):
            clean_answer(bad, guess)
    with pytest.raises(ExplorerError, match="one of this step's choices: he, she, they"):
        clean_answer("it", choose)
    assert schema.bare("Forest.") == "forest"


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_rooms_are_capped_and_end_by_themselves():
    clock = Clock()
    rooms = Rooms(RoomLimits(rooms=2, students=2, answers=1, draws=3, lifetime_s=100, idle_s=50), clock=clock)
    lesson = schema.load(GOOD)
    a, b = rooms.open(lesson, "m"), rooms.open(lesson, "m")
    with pytest.raises(ExplorerError, match="limit") as err:
        rooms.open(lesson, "m")
    assert err.value.code == "rate_limit_exceeded"
    first, s1 = rooms.join(a)
    _, s2 = rooms.join(a)
    assert rooms.join(a, "Ann", first) == (first, s1)  # a student already in counts once
    with pytest.raises(ExplorerError, match="full"):
        rooms.join(a)
    st = a.steps[0]
    rooms.add_answer(a, s1, st, "dog")
    with pytest.raises(ExplorerError, match="already answered this step"):
        rooms.add_answer(a, s1, st, "cat")
    draw = a.steps[5]
    for _ in range(3):
        rooms.add_answer(a, s2, draw, "x")
    with pytest.raises(ExplorerError, match="3 draws"):
        rooms.add_answer(a, s2, draw, "x")
    assert a.students == {"s1": "Ann", "s2": ""}
    clock.t = 40
    rooms.get(a.code)  # a request keeps a room alive
    clock.t = 60  # b idle past 50 s
    assert rooms.get(a.code) is a
    with pytest.raises(ExplorerError) as gone:
        rooms.get(b.code)
    assert gone.value.code == "room_not_found"
    clock.t = 101  # a past its lifetime
    with pytest.raises(ExplorerError):
        rooms.get(a.code)
    assert rooms.rooms == {}


def test_a_step_view_counts_what_was_sent_and_keeps_the_word_for_the_teacher():
    rooms = Rooms()
    room = rooms.open(schema.load(GOOD), "m")
    st = room.check_step(0)
    sent = ["sat", "sat", "lay", "Sat", "=cmd()"]
    for a in sent:
        _, sid = rooms.join(room)
        rooms.add_answer(room, sid, st, a)
    hidden = room.step_view(teacher=True)  # before the reveal the projector shows how many answered, nothing else
    assert hidden["n_answered"] == 5 and hidden["answers"] == {} and hidden["actual"] is None
    view = room.step_view(teacher=True, peek=True)  # the teacher's private peek
    assert view["answers"] == dict(Counter(sent).most_common()) and view["n_answered"] == 5
    assert view["actual"] == "sat" and room.step_view(peek=True)["actual"] is None  # a student cannot peek
    assert view["note"] == "" and room.step_view()["note"] is None
    st.revealed = True
    assert room.step_view()["actual"] == "sat" and room.step_view()["answers"] == view["answers"]
    assert view["entropy_class"] == pytest.approx(entropy(Counter(sent)))
    assert view["accuracy"]["class_answers"] == 0  # the step is not done: its word is not out
    room.current = 1
    done = room.step_view(teacher=True)["accuracy"]
    assert done["class"] == pytest.approx(3 / 5)  # "Sat" counts: case and punctuation aside
    with pytest.raises(ExplorerError, match="not the room's current step"):
        room.check_step(0)
    assert "'=cmd()" in room.results_csv()  # a spreadsheet does not run it
    assert not room.is_teacher("wrong") and room.is_teacher(room.teacher_key)


def test_joins_from_one_address_are_paced_and_a_locked_room_lets_nobody_new_in():
    clock = Clock()
    rooms = Rooms(RoomLimits(students=10, joins_per_minute=3), clock=clock)
    room = rooms.open(schema.load(GOOD), "m")
    joined = [rooms.join(room, address="10.0.0.7") for _ in range(3)]
    assert [sid for _, sid in joined] == ["s1", "s2", "s3"] and len({s for s, _ in joined}) == 3
    with pytest.raises(ExplorerError, match="wait 60 s") as err:
        rooms.join(room, address="10.0.0.7")
    assert err.value.code == "rate_limit_exceeded"
    assert rooms.join(room, address="10.0.0.8")[1] == "s4"  # another address is not held back
    assert rooms.join(room, "Bo", joined[0][0], "10.0.0.7") == joined[0]  # a reload joins again without counting
    clock.t = 59.5
    with pytest.raises(ExplorerError, match="wait 1 s"):
        rooms.join(room, address="10.0.0.7")
    clock.t = 60
    assert rooms.join(room, address="10.0.0.7")[1] == "s5"  # a minute on: one more
    room.roster.locked = True
    with pytest.raises(ExplorerError, match=f"Room {room.code} is locked: ask your teacher") as locked:
        rooms.join(room, address="10.0.0.9")
    assert locked.value.code == "room_locked"
    assert rooms.join(room, None, joined[1][0]) == joined[1]  # already in: a reload still works when locked
    assert room.students == {"s1": "Bo", "s2": "", "s3": "", "s4": "", "s5": ""}


def test_a_removed_student_and_their_answers_are_gone_and_secrets_are_theirs_alone():
    rooms = Rooms()
    room = rooms.open(schema.load(GOOD), "m")
    (ann, a), (bob, b) = rooms.join(room, "Ann"), rooms.join(room, "Bob")
    for step in (0, 1):
        rooms.add_answer(room, a, room.steps[step], "sat")
        rooms.add_answer(room, b, room.steps[step], "lay")
    assert room.roster.member(ann) == a and room.roster.member(bob) == b
    assert room.roster_view()["students"] == [
        {"id": a, "nickname": "Ann", "n_answers": 2},
        {"id": b, "nickname": "Bob", "n_answers": 2},
    ]
    room.remove(b)
    assert [x["answer"] for s in room.results() for x in s["answers"]] == ["sat", "sat"]
    assert room.step_view(teacher=True, peek=True)["answers"] == {"sat": 1} and room.students == {a: "Ann"}
    for secret, code in ((bob, "removed"), ("made-up", "not_joined"), (a, "not_joined")):  # a public id is no secret
        with pytest.raises(ExplorerError) as err:
            room.roster.member(secret)
        assert err.value.code == code
    with pytest.raises(ExplorerError) as again:
        rooms.join(room, "Bob", bob)
    assert again.value.code == "removed"
    with pytest.raises(ExplorerError, match="no student"):
        room.remove(b)
    assert ann not in json.dumps(room.results()) + room.results_csv() + json.dumps(room.roster_view())


def test_nicknames_keep_only_visible_text():
    rooms = Rooms()
    room = rooms.open(schema.load(GOOD), "m")
    raw = "\u0000A\u202en\u200bn\ud800\u2066e\u061c  " + "x" * 40
    _, sid = rooms.join(room, raw)
    expected = "".join(c for c in raw if c.isprintable() or c == " ")  # an independent rule: no hidden characters
    assert room.students[sid] == " ".join(expected.split())[:24] == "Anne " + "x" * 19
    rooms.add_answer(room, sid, room.steps[0], "sat")
    shown_ = json.dumps(room.results(), ensure_ascii=False) + room.results_csv()
    assert not any(c in shown_ for c in "\u0000\u202e\u200b\ud800\u2066\u061c")
    with pytest.raises(ExplorerError, match="`nickname` must be text"):
        rooms.join(room, ["x"])


def test_entropy_of_counts():
    assert entropy(Counter()) == 0.0
    assert entropy(Counter({"a": 1, "b": 1})) == pytest.approx(0.6931471805599453)


def test_hostile_files_cost_their_size_and_get_a_message():
    """Nested aliases (a billion laughs) are walked once each, deep nesting is refused, in words."""
    import time

    laughs = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefgh", "bcdefghi")
    )
    t = time.perf_counter()
    with pytest.raises(ExplorerError, match="no field"):
        schema.load("title: A\n" + laughs + "steps: *i\n")
    assert time.perf_counter() - t < 5  # 9^9 paths if aliases were expanded
    levels = "[&a [x, x, x, x, x, x, x, x, x], " + ", ".join(
        f"&{c} [{', '.join([f'*{p}'] * 9)}]" for p, c in zip("abcdefg", "bcdefgh")
    )  # eight levels inline: 9^8 items once expanded
    for field in (f"kind: {levels}]", f"kind: sample\n    prompt: P\n    temperature: {levels}]"):
        t = time.perf_counter()
        with pytest.raises(ExplorerError) as err:
            schema.load(f"title: A\nsteps:\n  - {field}\n")
        assert len(err.value.message) < 300 and time.perf_counter() - t < 5  # named by its size, never written out
    with pytest.raises(ExplorerError, match="nests"):
        schema.load("[" * 5000 + "]" * 5000)
    with pytest.raises(ExplorerError):  # deep by indentation, within the size cap: a message, whichever
        schema.load("title: A\nsteps:\n" + "".join(" " * i + "- \n" for i in range(1, 300)))


def test_a_file_of_thousands_of_tiny_fields_is_refused_before_it_is_built():
    """63 KB of one-character list items (30,000 nodes; it stalled the server when built) gets a message, YAML or
    JSON, while a real lesson of the most steps and choices loads."""
    flood = "title: A\nsteps:\n  - kind: choose\n    prompt: T\n    choices: [" + ",".join(["x"] * 30_000) + "]\n"
    assert len(flood.encode()) < schema.MAX_BYTES
    with pytest.raises(ExplorerError, match="more than 5,000 fields"):
        schema.load(flood)
    with pytest.raises(ExplorerError, match="more than 5,000 fields"):
        schema.load(
            json.dumps(
                {"title": "A", "steps": [{"kind": "choose", "prompt": "T", "choices": [0] * 30_000}]},
                separators=(",", ":"),
            )
        )
    biggest = {
        "title": "A",
        "steps": [
            {
                "kind": "choose",
                "prompt": f"Step {i}",
                "note": "n",
                "choices": [f"w{j}" for j in range(schema.MAX_CHOICES)],
            }
            for i in range(schema.MAX_STEPS)
        ],
    }
    assert len(schema.load(json.dumps(biggest)).steps) == schema.MAX_STEPS
    import yaml

    assert len(schema.load(yaml.safe_dump(biggest)).steps) == schema.MAX_STEPS


def test_one_address_opens_a_bounded_number_of_rooms():
    rooms = Rooms(RoomLimits(rooms=10, per_address=2))
    lesson = schema.load(GOOD)
    rooms.open(lesson, "m", "10.0.0.1")
    rooms.open(lesson, "m", "10.0.0.1")
    with pytest.raises(ExplorerError, match="EXPLORER_ROOMS_PER_ADDRESS"):
        rooms.open(lesson, "m", "10.0.0.1")
    rooms.open(lesson, "m", "10.0.0.2")  # another teacher is not held back


def test_the_address_behind_a_proxy_is_the_one_it_appended():
    """As the routes see it, after the app's forwarding rule (explorer/api/proxy.py): a trusted proxy's header, the
    peer's own address otherwise."""
    from starlette.requests import Request

    from explorer.api.proxy import ForwardedHeaders, Proxies
    from explorer.api.rooms import client_address
    from explorer.config import SPACE_PROXY

    def address(proxies: tuple[str, ...], peer: str, forwarded: str | None, host: str = "") -> tuple[str, str]:
        headers = [(b"x-forwarded-for", forwarded.encode())] if forwarded else []
        headers += [(b"x-forwarded-host", host.encode())] if host else []
        scope = {"type": "http", "headers": headers, "client": (peer, 1234), "path": "/", "query_string": b""}
        request = Request(ForwardedHeaders(None, Proxies(proxies)).resolved(scope))
        return client_address(request), request.headers.get("x-forwarded-host", "")

    space = SPACE_PROXY  # what a Space trusts without a setting
    assert address(space, "10.1.2.3", "1.1.1.1, 203.0.113.9")[0] == "203.0.113.9"  # a Space's proxy
    assert address(space, "8.8.4.4", "1.1.1.1")[0] == "8.8.4.4"  # a client's own header: not trusted
    assert address(space, "127.0.0.1", None)[0] == "127.0.0.1"
    assert address((), "192.168.1.20", "10.9.0.1", "evil.example") == ("192.168.1.20", "")  # nothing configured
    assert address((), "127.0.0.1", "10.9.0.1")[0] == "127.0.0.1"
    two = ("10.0.0.2", "10.0.1.0/24")  # the operator's two proxies, one behind the other
    assert address(two, "10.0.0.2", "6.6.6.6, 203.0.113.9, 10.0.1.5", "a.example") == ("203.0.113.9", "a.example")
    assert address(two, "10.0.0.3", "203.0.113.9")[0] == "10.0.0.3"
    assert address(("*",), "8.8.8.8", "203.0.113.9")[0] == "203.0.113.9"


def test_a_teachers_folder_of_lessons_opens_by_name_never_by_path(tmp_path):
    (tmp_path / "plants.yaml").write_text(
        "title: Plants\nsteps:\n  - kind: guess\n    text: Green plants need light.\n"
    )
    (tmp_path / "broken.json").write_text('{"title": "B", "steps": []}')
    (tmp_path / "bias.yaml").write_text(
        "title: Not the built-in\nsteps: []\n"
    )  # a built-in's name stays the built-in's
    assert set(schema.folder_names(tmp_path)) == {"plants", "broken"}
    lesson = schema.from_value("plants", tmp_path)
    assert lesson.title == "Plants" and lesson.name == "plants" and lesson.steps[0].context == "Green plants need"
    assert schema.from_value("bias", tmp_path).title == "Is the model biased?"
    with pytest.raises(ExplorerError, match=r"broken\.json: Lesson: `steps`"):
        schema.from_value("broken", tmp_path)
    for outside in ("../plants", str(tmp_path / "plants.yaml"), "plants.yaml"):
        with pytest.raises(ExplorerError, match="There is no lesson"):
            schema.from_value(outside, tmp_path)


def test_a_lesson_or_a_step_may_reveal_at_once():
    text = GOOD.replace("title:", "reveal: at-once\ntitle:", 1)
    assert {s.reveal for s in schema.load(text).steps} == {"at-once"}
    assert {s.reveal for s in schema.load(GOOD).steps} == {"teacher"}
    with pytest.raises(ExplorerError, match=r"`reveal`.*teacher, at-once"):
        schema.load(GOOD.replace("title:", "reveal: later\ntitle:", 1))
    one = {"title": "T", "steps": [{"kind": "choose", "prompt": "a b", "choices": ["x", "y"], "reveal": "at-once"},
                                   {"kind": "choose", "prompt": "a b", "choices": ["x", "y"]}]}  # fmt: skip
    assert [s.reveal for s in schema.from_value(one).steps] == ["at-once", "teacher"]


def hidden_numbers(view: dict) -> list:
    """Every number of the model's side a step view carries (none before the reveal)."""
    return [view[k] for k in ("answer_numbers", "model_top", "entropy_model", "actual", "chart") if view[k]]


def test_the_chart_puts_each_word_of_the_class_beside_the_models_probability():
    from explorer.lessons.chart import MODEL_ROWS
    from explorer.lessons.rooms import Numbers

    rooms = Rooms()
    room = rooms.open(schema.load(GOOD), "m")
    st = room.check_step(0)
    sent = ["lay", "sat", "sat", "Sat", "🐱", "slept"]
    for a in sent:
        _, sid = rooms.join(room)
        rooms.add_answer(room, sid, st, a)
    lp = {"lay": -1.0, "sat": -0.5, "Sat": -4.0, "🐱": -12.0, "slept": -3.0}
    st.numbers = {a: Numbers(x - 0.1, x) for a, x in lp.items()}
    top = [(",", -0.2, None, True), ("sat", -0.6, -0.5, False), ("on", -2.0, -2.2, False), ("do", -2.5, -4.0, False)]
    st.model_top = [{"answer": w, "logprob": a, "logprob_word": b, "attached": t} for w, a, b, t in top]
    assert hidden_numbers(room.step_view(teacher=True)) == []
    st.revealed = True
    rows = room.step_view()["chart"]
    said = [r for r in rows if r["said"]]
    assert [r["word"] for r in said] == ["sat", "Sat", "lay", "🐱", "slept"]  # by count, the word that came first
    assert {r["word"]: r["count"] for r in said} == dict(Counter(sent))
    for r in said:  # the class's share and the model's whole-word probability, both absolute
        assert r["share"] == pytest.approx(Counter(sent)[r["word"]] / len(sent))
        assert r["p"] == pytest.approx(math.exp(lp[r["word"]]))
        assert r["actual"] == (r["word"].lower() == "sat")
    unsaid = {r["word"]: r for r in rows if not r["said"]}
    assert list(unsaid) == [",", "on", "do"][:MODEL_ROWS]  # "sat" was said: not again
    assert unsaid[","]["plain"] == "a comma" and unsaid[","]["p"] == pytest.approx(math.exp(-0.2))
    assert unsaid["on"]["plain"] == "" and unsaid["do"]["plain"] == "the start of a longer word"
    board = room.scoreboard()  # "sat" is the class's most given and the model's likeliest word (the comma is none)
    assert (board["steps"], board["class_right"], board["model_right"]) == (1, 1, 1)
    assert board["beaten"] == []  # "sat" and "Sat": 3 of 6 answers, under the model's 61%
    st.answers += [(f"t{i}", "sat") for i in range(4)]  # 7 of 10 now: the class beat the model
    assert room.scoreboard()["beaten"] == [0]


def test_a_new_temperature_starts_a_new_tally_and_keeps_the_old_apart():
    lesson = schema.from_value({"title": "T", "steps": [{"kind": "sample", "prompt": "a b"}]})
    room = Rooms().open(lesson, "m")
    st = room.check_step(0)
    st.answers += [("a", " x"), ("b", " x"), ("a", " y")]
    st.new_tally(3.0)
    assert st.answers == [] and st.temperature == 3.0
    assert st.earlier == [{"temperature": 1.0, "answers": {" x": 2, " y": 1}}]
    st.new_tally(0.5)  # nothing drawn at 3: nothing to keep
    assert len(st.earlier) == 1 and st.temperature == 0.5


PIECES = [b" pi", b"zza", b"e", b" x", b","]  # a vocabulary where each text drawn names its tokens


def test_a_draw_is_a_whole_word_with_the_probability_of_its_path():
    """Classroom.draw on a hand-made vocabulary: tokens drawn until the next starts a new word, the word's probability
    the product of its tokens' and of a word ending there (1 - the mass of the tokens that continue it)."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np

    from explorer.api.rooms import Classroom
    from explorer.results.next_token import NextToken

    def nt(*p: float) -> NextToken:
        with np.errstate(divide="ignore"):
            return NextToken("m", "", np.log(np.array(p, dtype=np.float32)), PIECES)

    lesson = schema.from_value({"title": "T", "steps": [{"kind": "sample", "prompt": "I like"}]})
    st = Rooms().open(lesson, "m").check_step(0)
    st.next = nt(0.6, 0, 0, 0.3, 0.1)
    st.following = {
        " pi": nt(0, 0.5, 0.3, 0.2, 0),
        " pizza": nt(0, 0, 0.4, 0.6, 0),
        " pizzae": nt(0, 0, 0, 1, 0),
        " pie": nt(0, 0, 0, 0.9, 0.1),
        " x": nt(0, 0, 0, 1, 0),
    }
    want = {" pi": 0.6 * 0.2, " pizza": 0.6 * 0.5 * 0.6, " pizzae": 0.6 * 0.5 * 0.4, " pie": 0.6 * 0.3, " x": 0.3}
    want[","] = 0.1  # punctuation: a draw of its own
    assert sum(want.values()) == pytest.approx(1.0)
    classroom = Classroom(None, None, None, None)  # type: ignore[arg-type]  # no model: every text is known

    async def draws(n: int) -> list:
        return [await classroom.draw(None, None, st) for _ in range(n)]  # type: ignore[arg-type]

    with ThreadPoolExecutor(1) as pool:  # a loop of its own: a browser test's may still run on this thread
        got = pool.submit(asyncio.run, draws(300)).result()
    for text, lp, whole in got:
        assert whole and lp == pytest.approx(math.log(want[text]), abs=1e-6), text
    assert {t for t, _, _ in got} >= {" pizza", " pie", " x"}  # each over 15%: all met in 300 draws
