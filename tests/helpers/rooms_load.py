"""A class in one room on loopback (the load test and bench/rooms_load.py), in a class's real shape: every student joins
at once, then per guess step every student answers at once, about 18 distinct answers among 30 (a popular few given by half the class, then a long
tail of one each: words of several tokens, a misspelling, an emoji); the teacher reveals the word (*Show the next
word*), every student's page reads its result, and the teacher moves on. With `pages=True` the teacher's page and
every student's page poll the room the whole time, as the pages do (every 1.5 s and 2 s). What every student got,
and how long each answer, reveal and move took."""

from __future__ import annotations

import threading
import time

import httpx

from tests.helpers.threads import at_once

POPULAR = ["there", "was", "a"]  # half the class
TAIL = [  # one student each: the long tail
    "little",
    "girl",
    "princess",
    "wizard",
    "gingerbread",  # several tokens
    "extraordinarily",
    "teh",  # a misspelling
    "🐉",  # an emoji
    "lonely",
    "king",
    "dragon",
    "unicorn",
    "cat",
    "boy",
    "very",
    "mysterious",
]
TEXT = "Once upon a time there was a little girl who lived in a small house at the edge of the forest."


def guess(student: int, step: int) -> str:
    """Student `student`'s answer at `step`: even students among the popular three, odd ones each a word of the tail."""
    if student % 2 == 0:
        return POPULAR[(student // 2 + step) % len(POPULAR)]
    return TAIL[(student // 2 + step) % len(TAIL)]


class Pages:
    """The pages' polls while the class plays: the teacher's every 1.5 s, each student's every 2 s."""

    def __init__(self, url: str, code: str, key: str, secrets: list[str]):
        self.stop = threading.Event()
        polls = [(1.5, {"X-Teacher-Key": key})] + [(2.0, {"X-Student": s}) for s in secrets]
        self.threads = [
            threading.Thread(target=self.poll, args=(f"{url}/rooms/{code}", *p), daemon=True) for p in polls
        ]
        for t in self.threads:
            t.start()

    def poll(self, url: str, every: float, headers: dict) -> None:
        with httpx.Client(timeout=120) as client:
            while not self.stop.wait(every):
                client.get(url, headers=headers)

    def close(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=10)


def timed(fn) -> tuple[object, float]:
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def run_class(url: str, students: int = 32, steps: int = 5, pages: bool = False) -> dict:
    """{"room", "students": [each student's secret, from their join], "sent": [(student, step, answer)],
    "results": {(student, step): the student's result once revealed}, "latency_s": [each answer's], "views": [the teacher's view of each step once revealed], "teacher_key",
    "reveal_s": [each reveal's], "move_s": [the teacher's start and each move on, the model's side of the step
    prepared within it]}."""
    lesson = {"title": "Load", "steps": [{"kind": "guess", "text": TEXT, "start": 4, "blanks": steps}]}
    made, opened = timed(lambda: httpx.post(url + "/rooms", json={"lesson": lesson}, timeout=120))
    assert made.status_code == 200, made.text  # type: ignore[attr-defined]
    room = made.json()  # type: ignore[attr-defined]
    code, key = room["room"], room["teacher_key"]
    out: dict = {"room": code, "teacher_key": key, "sent": [], "results": {}, "latency_s": [], "views": []}
    out |= {"reveal_s": [], "move_s": [opened], "students": join_all(url, code, students)}
    polls = Pages(url, code, key, out["students"]) if pages else None
    try:
        with httpx.Client(timeout=120) as client:
            for step in range(steps):
                play_step(client, url, out, students, step)
                if step + 1 < steps:
                    _, dt = timed(lambda: client.post(f"{url}/rooms/{code}/step", json={"teacher_key": key}))
                    out["move_s"].append(dt)
    finally:
        if polls is not None:
            polls.close()
    return out


def join_all(url: str, code: str, students: int) -> list[str]:
    """Every student joins at once (as a class opening the link): each one's secret, in order."""
    with httpx.Client(timeout=120) as client:
        joined = at_once(
            [lambda i=i: client.post(f"{url}/rooms/{code}/join", json={"nickname": f"S{i}"}) for i in range(students)]
        )
    for r in joined:
        if isinstance(r, Exception):
            raise r
        assert r.status_code == 200, r.text
    return [r.json()["student"] for r in joined]


def play_step(client: httpx.Client, url: str, out: dict, students: int, step: int) -> None:
    """One step: every student answers at once, the teacher reveals, each student's page reads its result."""
    code, key = out["room"], out["teacher_key"]

    def answer(i: int):
        body = {"student": out["students"][i], "step": step, "answer": guess(i, step)}
        return timed(lambda: client.post(f"{url}/rooms/{code}/answers", json=body))

    for i, got in enumerate(at_once([lambda i=i: answer(i) for i in range(students)])):
        if isinstance(got, Exception):
            raise got
        r, dt = got
        assert r.status_code == 200, r.text
        out["sent"].append((i, step, guess(i, step)))
        out["latency_s"].append(dt)
    r, dt = timed(lambda: client.post(f"{url}/rooms/{code}/reveal", json={"teacher_key": key}))
    assert r.status_code == 200, r.text  # type: ignore[attr-defined]
    out["reveal_s"].append(dt)
    out["views"].append(client.get(f"{url}/rooms/{code}", headers={"X-Teacher-Key": key}).json())
    for i in range(students):
        out["results"][(i, step)] = client.get(f"{url}/rooms/{code}", headers={"X-Student": out["students"][i]}).json()[
            "mine"
        ]


def p95(values: list[float]) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(0.95 * (len(s) - 1)))]
