"""A class in one room on loopback (the load test and bench/rooms_load.py): `students` join at once, then answer each
of `steps` guess steps at once, the teacher moves on once all have answered; what every student got, and how long each
answer took."""

from __future__ import annotations

import time

import httpx

from tests.helpers.threads import at_once

WORDS = ["there", "was", "a", "little", "girl", "dog"]
TEXT = "Once upon a time there was a little girl who lived in a small house at the edge of the forest."


def guess(student: int, step: int) -> str:
    return WORDS[(student * 7 + step) % len(WORDS)]


def run_class(url: str, students: int = 32, steps: int = 5) -> dict:
    """{"room", "students": [each student's secret, from their join], "sent": [(student, step, answer)],
    "results": {(student, step): body}, "latency_s": [...],
    "views": [the teacher's view at the end of each step], "teacher_key", "move_s": [the teacher's start and each
    move on, the model's side of the step prepared within it]}."""
    lesson = {"title": "Load", "steps": [{"kind": "guess", "text": TEXT, "start": 4, "blanks": steps}]}
    t = time.perf_counter()
    room = httpx.post(url + "/rooms", json={"lesson": lesson}, timeout=60).json()
    moves = [time.perf_counter() - t]
    code, key = room["room"], room["teacher_key"]
    sent, results, latency, views = [], {}, [], []
    with httpx.Client(timeout=120) as client:
        joined = at_once(
            [lambda i=i: client.post(f"{url}/rooms/{code}/join", json={"nickname": f"S{i}"}) for i in range(students)]
        )
        for r in joined:
            if isinstance(r, Exception):
                raise r
            assert r.status_code == 200, r.text
        secrets = [r.json()["student"] for r in joined]
        for step in range(steps):

            def answer(i: int, step: int = step):
                t = time.perf_counter()
                body = {"student": secrets[i], "step": step, "answer": guess(i, step)}
                r = client.post(f"{url}/rooms/{code}/answers", json=body)
                return r, time.perf_counter() - t

            out = at_once([lambda i=i: answer(i) for i in range(students)])
            for i, got in enumerate(out):
                if isinstance(got, Exception):
                    raise got
                r, dt = got
                assert r.status_code == 200, r.text
                sent.append((i, step, guess(i, step)))
                results[(i, step)] = r.json()
                latency.append(dt)
            views.append(client.get(f"{url}/rooms/{code}", headers={"X-Teacher-Key": key}).json())
            if step + 1 < steps:
                t = time.perf_counter()
                client.post(f"{url}/rooms/{code}/step", json={"teacher_key": key})
                moves.append(time.perf_counter() - t)
    return {"room": code, "teacher_key": key, "students": secrets, "sent": sent, "results": results, "latency_s": latency, "views": views,
            "move_s": moves}  # fmt: skip


def p95(values: list[float]) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, round(0.95 * (len(s) - 1)))]
