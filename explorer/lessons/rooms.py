"""Rooms: a lesson run for a class, in memory, bounded, and ending by itself.

A room holds its lesson, the current step, who joined (`Roster`: each student's secret, issued by the server and
theirs alone, and the public id and nickname the teacher sees; the lock; who was removed), and per step every answer
sent (student's public id, answer) with its numbers. The numbers of an answer are computed once per distinct answer
and step (`Numbers`, filled by the caller: this module runs no model), so thirty students guessing the same word cost
one computation. Every cap refuses with a 429 that says which cap and how to change it; only the teacher's key moves
a room on, locks it, removes a student or ends it.
"""

from __future__ import annotations

import csv
import hmac
import io
import math
import secrets
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field

from explorer.config import RoomLimits as RoomLimits
from explorer.errors import ExplorerError
from explorer.lessons.chart import chart, scoreboard
from explorer.lessons.schema import Lesson, Step, bare, shown
from explorer.lessons.students import Roster, clean_nickname, removed, visible
from explorer.results.next_token import NextToken

CODE_LETTERS = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read off a projector
MAX_ANSWER = 40  # characters of an answer
DRAWING = "\x00drawing"  # a draw in flight, counted against the cap (no answer or token's text is this)


def _refuse(msg: str, code: str = "rate_limit_exceeded") -> ExplorerError:
    return ExplorerError(msg, code=code)


@dataclass
class Numbers:
    """What the model says of one distinct answer at one step (nats)."""

    logprob: float
    logprob_word: float | None  # None: not a whole word (a draw that stopped at a word's start)


@dataclass
class StepState:
    step: Step
    answers: list[tuple[str, str]] = field(default_factory=list)  # (student, answer) in the order received
    numbers: dict[str, Numbers] = field(default_factory=dict)  # distinct answer -> its numbers
    model_top: list[dict] | None = None  # [{"answer", "logprob", "logprob_word"}...], best first
    model_entropy: float | None = None  # nats, of the next token
    temperature: float = 1.0  # sample steps: the temperature draws are made at
    next: NextToken | None = None  # sample steps: the next token's distribution, drawn from
    following: dict[str, NextToken] = field(default_factory=dict)  # sample steps: text drawn so far -> the next token
    earlier: list[dict] = field(default_factory=list)  # sample steps: [{"temperature", "answers"}] of past tallies
    revealed: bool = False  # the teacher has shown the word and the model's side
    lock: threading.RLock = field(default_factory=threading.RLock)  # its numbers are computed once
    _chart: tuple[tuple, list[dict]] | None = field(default=None, repr=False, compare=False)  # (its key, the chart)

    @property
    def shown(self) -> bool:
        """Whether the step's word and the model's side are out: revealed by the teacher, a step that reveals each
        answer at once, or a sample step (its draws are the model's side)."""
        return self.revealed or self.step.reveal == "at-once" or self.step.kind == "sample"

    def counts(self) -> Counter:
        """Each answer's count (not a draw in flight)."""
        return Counter(a for _, a in self.answers if a != DRAWING)

    def chart(self) -> list[dict] | None:
        """The class against the model (explorer/lessons/chart.py): on a sample step the class's draws beside the
        sampler's probabilities; None before the model's side."""
        if self.model_top is None:
            return None
        key = (tuple(self.answers), tuple(map(id, self.numbers.values())), id(self.model_top), self.temperature)
        if self._chart is None or self._chart[0] != key:  # drawn once per change, not once per phone's poll
            self._chart = (key, chart(self.step, self.counts(), self.numbers, self.model_top))
        return self._chart[1]

    def new_tally(self, temperature: float) -> None:
        """A sample step's draws start again at `temperature`; the draws so far are kept apart, by theirs."""
        if self.answers:
            self.earlier.append({"temperature": self.temperature, "answers": dict(self.counts().most_common())})
        self.answers.clear()
        self.numbers.clear()  # a draw's probability is at the temperature it was drawn at
        self.temperature = temperature

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
    answer = visible(value)
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
        self.roster = Roster()
        self.steps = [StepState(s, temperature=s.temperature) for s in lesson.steps]
        self.ended = False
        self.owner = ""  # the client address that opened it
        self.lock = threading.Lock()

    @property
    def students(self) -> dict[str, str]:
        """Public id -> nickname ("" when none) of each student in the room, in the order they joined."""
        return self.roster.nicknames

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

    def remove(self, sid: object) -> None:
        """The student `sid` (a public id) out of the room, their answers out of every step."""
        with self.lock:
            self.roster.remove(sid)
            for st in self.steps:
                st.answers[:] = [(s, a) for s, a in st.answers if s != sid]

    def roster_view(self) -> dict:
        """The teacher's view of who is in: the lock, and each student's public id, nickname and answers sent."""
        sent = Counter(s for st in self.steps for s, _ in st.answers)
        students = [{"id": s, "nickname": n, "n_answers": sent[s]} for s, n in self.students.items()]
        return {"locked": self.roster.locked, "students": students}

    def step_view(self, teacher: bool = False, peek: bool = False) -> dict:
        """`GET /rooms/{room}`: the current step and how many answered; once the step is shown (revealed, see
        StepState.shown) the class's answers, the model's side, the word that came and the chart, for everyone; before
        it none of these, except to a teacher who asks to `peek`. The teacher also gets who answered (by nickname),
        the step's note and the accuracy over the steps done."""
        st = self.steps[self.current]
        out = st.shown or (teacher and peek)
        done = self.steps[: self.current]  # the current step's word is not out yet
        view = {
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
            "reveal": st.step.reveal,
            "revealed": st.shown,
            "ended": self.ended,
            "n_students": len(self.students),
            "n_answered": len({s for s, _ in st.answers}),
            "n_answers": len(st.answers),
            "answered_by": sorted({self.students.get(s, "") for s, _ in st.answers} - {""}) if teacher else [],
            "accuracy": self.accuracy(done) if teacher else None,
            "note": st.step.note if teacher else None,  # the lesson's note: the teacher's alone
            "scoreboard": self.scoreboard(),
        }
        return view | self.model_view(st, teacher if st.step.kind == "sample" else out)

    @staticmethod
    def model_view(st: StepState, out: bool) -> dict:
        """The class's answers and the model's side of a step: filled where `out`, empty before the reveal."""
        counts = st.counts() if out else Counter()
        return {
            "answers": dict(counts.most_common()),
            "answer_numbers": {a: vars(n) for a, n in st.numbers.items() if a in counts},
            "model_top": (st.model_top or []) if out else [],
            "entropy_class": entropy(counts) if out else None,
            "entropy_model": st.model_entropy if out else None,
            "actual": st.step.actual if out else None,
            "chart": st.chart() if out else None,
            "earlier": list(st.earlier) if out else [],
        }

    def scoreboard(self) -> dict:
        """The class against the model over the guess steps shown so far (explorer/lessons/chart.py)."""
        return scoreboard([(st.step, st.counts(), st.chart() if st.shown else None) for st in self.steps])

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
        self.joined: dict[str, deque[float]] = {}  # client address -> the times of its joins in the last minute
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
            self._check_open(owner)
            code = "".join(secrets.choice(CODE_LETTERS) for _ in range(5))
            while code in self.rooms:
                code = "".join(secrets.choice(CODE_LETTERS) for _ in range(5))
            room = self.rooms[code] = Room(code, lesson, model, self.clock())
            room.owner = owner
            return room

    def check_open(self, owner: str = "") -> None:
        """`open`'s caps, checked before the lesson is read (a 429 costs the server nothing)."""
        self.sweep()
        with self.lock:
            self._check_open(owner)

    def _check_open(self, owner: str) -> None:
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

    def join(self, room: Room, nickname: object = None, secret: object = None, address: str = "") -> tuple[str, str]:
        """(the student's secret, their public id): a new student in the room, within its cap, its lock and the joins
        one address may make a minute; `secret` one this room issued before (a page reloaded): the same student,
        their nickname updated where one is given."""
        nick = clean_nickname(nickname)
        with room.lock:
            if isinstance(secret, str) and secret in room.roster.removed:
                room.roster.member(secret)  # refused: the teacher removed them
            if isinstance(secret, str) and secret in room.roster.ids:
                sid = room.roster.ids[secret]
                if nickname is not None:
                    room.students[sid] = nick
                return secret, sid
            if room.roster.locked:
                raise ExplorerError(f"Room {room.code} is locked: ask your teacher to let you in.", code="room_locked")
            if len(room.students) >= self.limits.students:
                raise _refuse(
                    f"Room {room.code} is full: it has {len(room.students)} students, its limit "
                    "(EXPLORER_ROOMS_STUDENTS)."
                )
            self.admit(address)
            return room.roster.add(nick)

    def admit(self, address: str) -> None:
        """One more join from `address`, within `joins_per_minute` (else a 429 saying how long to wait)."""
        now = self.clock()
        with self.lock:
            for a in [a for a, q in self.joined.items() if now - q[-1] >= 60]:
                del self.joined[a]  # addresses quiet for a minute are forgotten
            q = self.joined.setdefault(address, deque())
            while q and now - q[0] >= 60:
                q.popleft()
            if len(q) >= self.limits.joins_per_minute:
                raise _refuse(
                    f"{len(q)} students joined from your address in the last minute, the most allowed "
                    f"(EXPLORER_ROOMS_JOINS_PER_MINUTE): wait {math.ceil(60 - (now - q[0]))} s, then reload the page."
                )
            q.append(now)

    def add_answer(self, room: Room, student: str, st: StepState, answer: str) -> None:
        """Count one answer, within the per-student cap of its step."""
        cap = self.limits.draws if st.step.kind == "sample" else self.limits.answers
        with room.lock:
            if student not in room.students:  # removed by the teacher since their request began
                raise removed()
            if st.per_student(student) >= cap:
                if st.step.kind != "sample" and cap == 1:
                    raise _refuse("You have already answered this step: wait for the next one.")
                what = "draws" if st.step.kind == "sample" else "answers"
                raise _refuse(f"You have sent {cap} {what} for this step, the most allowed: wait for the next step.")
            st.answers.append((student, answer))
