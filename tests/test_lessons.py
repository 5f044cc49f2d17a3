"""Lesson files (explorer/lessons/schema.py) and rooms' bookkeeping (explorer/lessons/rooms.py): no model here."""

from __future__ import annotations

import json
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
    rooms.join(a, "s1")
    rooms.join(a, "s2")
    rooms.join(a, "s1", "Ann")  # a student already in counts once
    with pytest.raises(ExplorerError, match="full"):
        rooms.join(a, "s3")
    st = a.steps[0]
    rooms.add_answer(a, "s1", st, "dog")
    with pytest.raises(ExplorerError, match="already answered this step"):
        rooms.add_answer(a, "s1", st, "cat")
    draw = a.steps[5]
    for _ in range(3):
        rooms.add_answer(a, "s2", draw, "x")
    with pytest.raises(ExplorerError, match="3 draws"):
        rooms.add_answer(a, "s2", draw, "x")
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
    for i, a in enumerate(sent):
        rooms.join(room, f"s{i}")
        rooms.add_answer(room, f"s{i}", st, a)
    view = room.step_view(teacher=True)
    assert view["answers"] == dict(Counter(sent).most_common()) and view["n_answered"] == 5
    assert view["actual"] == "sat" and room.step_view()["actual"] is None and room.step_view()["answers"] == {}
    assert view["note"] == "" and room.step_view()["note"] is None
    assert view["entropy_class"] == pytest.approx(entropy(Counter(sent)))
    assert view["accuracy"]["class_answers"] == 0  # the step is not done: its word is not out
    room.current = 1
    done = room.step_view(teacher=True)["accuracy"]
    assert done["class"] == pytest.approx(3 / 5)  # "Sat" counts: case and punctuation aside
    with pytest.raises(ExplorerError, match="not the room's current step"):
        room.check_step(0)
    assert "'=cmd()" in room.results_csv()  # a spreadsheet does not run it
    assert not room.is_teacher("wrong") and room.is_teacher(room.teacher_key)


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


def test_one_address_opens_a_bounded_number_of_rooms():
    rooms = Rooms(RoomLimits(rooms=10, per_address=2))
    lesson = schema.load(GOOD)
    rooms.open(lesson, "m", "10.0.0.1")
    rooms.open(lesson, "m", "10.0.0.1")
    with pytest.raises(ExplorerError, match="EXPLORER_ROOMS_PER_ADDRESS"):
        rooms.open(lesson, "m", "10.0.0.1")
    rooms.open(lesson, "m", "10.0.0.2")  # another teacher is not held back


def test_the_address_behind_a_proxy_is_the_one_it_appended():
    from starlette.requests import Request

    from explorer.api.rooms import client_address

    def req(peer: str, forwarded: str | None) -> Request:
        headers = [(b"x-forwarded-for", forwarded.encode())] if forwarded else []
        return Request({"type": "http", "headers": headers, "client": (peer, 1234), "path": "/", "query_string": b""})

    assert client_address(req("10.1.2.3", "1.1.1.1, 203.0.113.9")) == "203.0.113.9"  # a Space's proxy
    assert client_address(req("8.8.4.4", "1.1.1.1")) == "8.8.4.4"  # a client's own header: not trusted
    assert client_address(req("127.0.0.1", None)) == "127.0.0.1"


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
