"""Rooms: a lesson run for a class, in memory, bounded, and ending by itself.

A room holds its lesson, the current step, and per step every answer sent (student, answer) with its numbers. The
numbers of an answer are computed once per distinct answer and step (`Numbers`, filled by the caller: this module
runs no model), so thirty students guessing the same word cost one computation. Every cap refuses with a 429 that
says which cap and how to change it; only the teacher's key moves a room on or ends it.
"""

from __future__ import annotations

import csv
import hmac
import io
import math
import secrets
import threading
import time
import unicodedata
from collections import Counter
from dataclasses import dataclass, field

from explorer.config import RoomLimits as RoomLimits
from explorer.errors import ExplorerError
from explorer.lessons.schema import Lesson, Step, bare, shown
from explorer.results.next_token import NextToken

CODE_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read off a projector
MAX_ANSWER = 40  # characters of an answer


def _refuse(msg: str, code: str = "rate_limit_exceeded") -> ExplorerError:
    return ExplorerError(msg, code=code)


@dataclass
class Numbers:
    """What the model says of one distinct answer at one step (nats)."""

    logprob: float
    logprob_word: float


@dataclass
class StepState:
    step: Step
    answers: list[tuple[str, str]] = field(default_factory=list)  # (student, answer) in the order received
    numbers: dict[str, Numbers] = field(default_factory=dict)  # distinct answer -> its numbers
    model_top: list[dict] | None = None  # [{"answer", "logprob", "logprob_word"}...], best first
    model_entropy: float | None = None  # nats, of the next token
    temperature: float = 1.0  # sample steps: the temperature draws are made at
    next: NextToken | None = None  # sample steps: the next token's distribution, drawn from
    lock: threading.RLock = field(default_factory=threading.RLock)  # its numbers are computed once

    def counts(self) -> Counter:
        return Counter(a for _, a in self.answers)

    def per_student(self, student: str) -> int:
        return sum(1 for s, _ in self.answers if s == student)

    def last_answer(self, student: str) -> str | None:
        return next((a for s, a in reversed(self.answers) if s == student), None)

    def unscored(self) -> tuple[str, ...]:
        """The distinct answers that wait for their numbers (on ZeroGPU, until the teacher's next model call); a
        sample step's draws have none to wait for."""
        if self.step.kind == "sample":
            return ()
        return tuple(dict.fromkeys(a for _, a in self.answers if a not in self.numbers))


def entropy(counts: Counter) -> float:
    """Entropy (nats) of the class's answers as a distribution."""
    n = sum(counts.values())
    return -sum(c / n * math.log(c / n) for c in counts.values()) if n else 0.0


def clean_answer(value: object, step: Step) -> str:
    """A student's answer as counted: text, spaces collapsed, at most MAX_ANSWER characters; a choice of the step's."""
    if not isinstance(value, str):
        raise ExplorerError("`answer` must be text.", param="answer", code="invalid_value")
    visible = "".join(c for c in value if unicodedata.category(c) not in ("Cf", "Cc", "Cs"))  # no hidden marks
    answer = " ".join(visible.split())
    if not answer and step.kind != "sample":
        raise ExplorerError("`answer` is empty: type a word.", param="answer", code="invalid_value")
    if len(answer) > MAX_ANSWER:
        raise ExplorerError(
            f"`answer` has {len(answer)} characters; at most {MAX_ANSWER}: type one word or a short phrase.",
            param="answer",
            code="invalid_value",
        )
    if step.kind == "choose" and answer not in step.choices:
        raise ExplorerError(
            f"`answer` must be one of this step's choices: {', '.join(step.choices)}.",
            param="answer",
            code="invalid_value",
        )
    return answer


class Room:
    def __init__(self, code: str, lesson: Lesson, model: str, now: float):
        self.code, self.lesson, self.model = code, lesson, model
        self.teacher_key = secrets.token_urlsafe(18)
        self.created = self.touched = now
        self.current = 0
        self.students: dict[str, str] = {}  # id -> nickname ("" when none)
        self.steps = [StepState(s, temperature=s.temperature) for s in lesson.steps]
        self.ended = False
        self.owner = ""  # the client address that opened it
        self.lock = threading.Lock()

    def is_teacher(self, key: object) -> bool:
        return isinstance(key, str) and hmac.compare_digest(key.encode(), self.teacher_key.encode())

    def check_step(self, step: object) -> StepState:
        if isinstance(step, bool) or not isinstance(step, int):
            raise ExplorerError("`step` must be the step's number.", param="step", code="invalid_value")
        if step != self.current:
            raise ExplorerError(
                f"Step {step} is not the room's current step ({self.current}): the class has moved on.",
                param="step",
                code="step_not_current",
            )
        return self.steps[step]

    def step_view(self, teacher: bool = False) -> dict:
        """`GET /rooms/{room}`: the current step; for the teacher also the class's answers so far, the model's top,
        the word that comes next, the step's note and the accuracy over the steps done (a student sees the model's side and the
        word once they have answered, and never the class's answers before)."""
        st = self.steps[self.current]
        counts = st.counts() if teacher else Counter()
        done = self.steps[: self.current]  # the current step's word is not out yet
        return {
            "room": self.code,
            "title": self.lesson.title,
            "about": self.lesson.about,
            "model": self.model,
            "step": self.current,
            "n_steps": len(self.steps),
            "kind": st.step.kind,
            "context": st.step.context,
            "choices": list(st.step.choices),
            "temperature": st.temperature if st.step.kind == "sample" else None,
            "ended": self.ended,
            "n_students": len(self.students),
            "n_answered": len({s for s, _ in st.answers}),
            "n_answers": len(st.answers),
            "answers": dict(counts.most_common()),
            "answer_numbers": {a: vars(n) for a, n in st.numbers.items() if a in counts},
            "model_top": (st.model_top or []) if teacher else [],
            "entropy_class": entropy(counts) if teacher else None,
            "entropy_model": st.model_entropy if teacher else None,
            "actual": st.step.actual if teacher else None,
            "note": st.step.note if teacher else None,
            "accuracy": self.accuracy(done) if teacher else None,
        }

    def accuracy(self, done: list[StepState]) -> dict:
        """The class's and the model's top-1 accuracy over the guess steps so far (None before any)."""
        right = total = model_right = model_total = 0
        for st in done:
            if st.step.kind != "guess" or st.step.actual is None:
                continue
            truth = bare(st.step.actual)
            right += sum(1 for _, a in st.answers if bare(a) == truth)
            total += len(st.answers)
            if st.model_top:
                model_total += 1
                model_right += int(bare(st.model_top[0]["answer"]) == truth)
        return {
            "class": right / total if total else None,
            "class_answers": total,
            "model_right": model_right,
            "model": model_right / model_total if model_total else None,
            "model_steps": model_total,
        }

    def results(self) -> list[dict]:
        """Per step: the context, the actual word, the answers with counts and the model's numbers of each."""
        out = []
        for i, st in enumerate(self.steps):
            counts = st.counts()
            out.append(
                {
                    "step": i,
                    "kind": st.step.kind,
                    "context": st.step.context,
                    "actual": st.step.actual,
                    "temperature": st.temperature if st.step.kind == "sample" else None,
                    "answers": [
                        {
                            "answer": a,
                            "count": c,
                            "logprob": st.numbers[a].logprob if a in st.numbers else None,
                            "logprob_word": st.numbers[a].logprob_word if a in st.numbers else None,
                            "nicknames": sorted({self.students.get(s, "") for s, x in st.answers if x == a} - {""}),
                        }
                        for a, c in counts.most_common()
                    ],
                    "model_top": st.model_top or [],
                }
            )
        return out

    def results_csv(self) -> str:
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(["step", "kind", "context", "actual", "answer", "count", "logprob", "logprob_word", "nicknames"])
        empty = {"answer": "", "count": 0, "logprob": None, "logprob_word": None, "nicknames": []}
        for s in self.results():
            for a in s["answers"] or [empty]:
                w.writerow(
                    [
                        s["step"],
                        s["kind"],
                        _cell(s["context"]),
                        _cell(s["actual"] or ""),
                        _cell(a["answer"]),
                        a["count"],
                    ]
                    + ["" if a[k] is None else f"{a[k]:.6f}" for k in ("logprob", "logprob_word")]
                    + [_cell("; ".join(a["nicknames"]))]
                )
        return buf.getvalue()


def _cell(text: str) -> str:
    """A CSV cell that a spreadsheet will not run as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


class Rooms:
    """Every room of this server, under one lock; rooms past their lifetime or idle time end by themselves."""

    def __init__(self, limits: RoomLimits | None = None, clock=time.monotonic):
        self.limits = limits or RoomLimits()
        self.clock = clock
        self.rooms: dict[str, Room] = {}
        self.lock = threading.Lock()

    def sweep(self) -> None:
        now = self.clock()
        with self.lock:
            for code in [c for c, r in self.rooms.items() if self._expired(r, now)]:
                del self.rooms[code]

    def _expired(self, r: Room, now: float) -> bool:
        return now - r.created > self.limits.lifetime_s or now - r.touched > self.limits.idle_s

    def open(self, lesson: Lesson, model: str, owner: str = "") -> Room:
        """A new room; `owner` is the client address that opened it (at most `per_address` rooms each)."""
        self.sweep()
        with self.lock:
            if len(self.rooms) >= self.limits.rooms:
                raise _refuse(
                    f"This server has {len(self.rooms)} rooms open, its limit (EXPLORER_ROOMS_MAX): end a room or "
                    "try again when one ends."
                )
            mine = sum(1 for r in self.rooms.values() if r.owner == owner)
            if mine >= self.limits.per_address:
                raise _refuse(
                    f"You have {mine} rooms open, the most one address may (EXPLORER_ROOMS_PER_ADDRESS): end one "
                    "(its teacher page, End the room) before starting another."
                )
            code = "".join(secrets.choice(CODE_LETTERS) for _ in range(5))
            while code in self.rooms:
                code = "".join(secrets.choice(CODE_LETTERS) for _ in range(5))
            room = self.rooms[code] = Room(code, lesson, model, self.clock())
            room.owner = owner
            return room

    def get(self, code: str) -> Room:
        self.sweep()
        with self.lock:
            room = self.rooms.get(code.upper() if isinstance(code, str) else code)
        if room is None:
            raise ExplorerError(
                f"There is no room {shown(code, 12)} (it may have ended): check the code on the projector.",
                code="room_not_found",
            )
        room.touched = self.clock()
        return room

    def end(self, room: Room) -> None:
        with self.lock:
            self.rooms.pop(room.code, None)

    def join(self, room: Room, student: object, nickname: object = None) -> str:
        """The student's id, counted in the room (a new one within the cap)."""
        if not isinstance(student, str) or not 1 <= len(student) <= 64:
            raise ExplorerError(
                "`student` must be text of 1 to 64 characters (the page makes one).",
                param="student",
                code="invalid_value",
            )
        nick = " ".join(nickname.split())[:24] if isinstance(nickname, str) else ""
        with room.lock:
            if student not in room.students:
                if len(room.students) >= self.limits.students:
                    raise _refuse(
                        f"Room {room.code} is full: it has {len(room.students)} students, its limit "
                        "(EXPLORER_ROOMS_STUDENTS)."
                    )
                room.students[student] = nick
            elif nick:
                room.students[student] = nick
        return student

    def add_answer(self, room: Room, student: str, st: StepState, answer: str) -> None:
        """Count one answer, within the per-student cap of its step."""
        cap = self.limits.draws if st.step.kind == "sample" else self.limits.answers
        with room.lock:
            if st.per_student(student) >= cap:
                if st.step.kind != "sample" and cap == 1:
                    raise _refuse("You have already answered this step: wait for the next one.")
                what = "draws" if st.step.kind == "sample" else "answers"
                raise _refuse(f"You have sent {cap} {what} for this step, the most allowed: wait for the next step.")
            st.answers.append((student, answer))
