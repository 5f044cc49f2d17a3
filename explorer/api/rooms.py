"""Rooms for a class over HTTP (docs/api.md, "Rooms"): the JSON routes the lesson pages use (the pages, the list of
lessons and the QR code: explorer/api/lesson_pages.py).

    POST /rooms                       {"lesson": NAME or a lesson, "model"?} -> room, join_url, teacher_url, teacher_key
    GET  /rooms/{room}                the current step; once revealed the class's answers, the model's side, the word
                                      that came and the chart (X-Teacher-Key with ?peek=1: those before the reveal;
                                      X-Student: that student's own answer, `mine`, its result once revealed)
    POST /rooms/{room}/join           {"nickname"?, "student"?} -> {"student": the student's secret, "id", "nickname"}
    POST /rooms/{room}/answers        {"student": the secret, "step", "answer"} -> received (the student's result
                                      once the step is revealed; a sample step's draw at once)
    POST /rooms/{room}/reveal         {"teacher_key"} -> shows the current step to everyone (its waiting answers scored)
    POST /rooms/{room}/lock           {"teacher_key", "locked"} -> no new student joins (or they may again)
    POST /rooms/{room}/remove         {"teacher_key", "student": a public id} -> the student and their answers out
    POST /rooms/{room}/step           {"teacher_key", "to"?} -> moves the class on (or to step `to`)
    POST /rooms/{room}/temperature    {"teacher_key", "temperature"} -> a sample step's temperature
    POST /rooms/{room}/end            {"teacher_key"} -> ends the room
    GET  /rooms/{room}/results        X-Teacher-Key; ?format=csv for CSV

The model's work runs through the server's gate and its runner (explorer/api/runner.py: here, or on ZeroGPU in a
`spaces.GPU` call), always as one call of `model_side` for whatever steps need it, so the numbers are the same
wherever it runs. An answer's numbers are computed once per distinct answer and step:
- anywhere but ZeroGPU, when the first student sends that answer (scored as it arrives: the reveal waits for nothing);
- on ZeroGPU (`per_step`), where every call reserves GPU time from the visitor's daily quota, no student's request
  runs the model: a step's side (its top words, which scores the likeliest answers too) is computed in one call when
  the class reaches it, an answer among those is answered at once, and the others wait ("pending") for the teacher's
  next call: *Show the next word* (`reveal`), *Next step* (the same call prepares the next step) or the results'
  download. A class costs about two GPU calls a step, however many students it has.
Errors in the API's own shape: 400 naming the field, 404 an unknown room, 403 without the teacher's key (or a student's
secret, or joining a locked room), 429 beyond a cap. A student is known only by the secret their join was given;
the teacher sees a public id ("s1") and the nickname, never the secret. Lessons are read and QR codes drawn off the
event loop, a few at once (explorer/api/offload.py), after the caps that refuse them.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from fastapi import APIRouter, Request
from fastapi.responses import Response

from explorer.api.framing import json_response, read_json
from explorer.api.lesson_pages import pages_router
from explorer.api.offload import OffLoop
from explorer.api.runner import HERE, Runner, Work
from explorer.engine.analyses.guesses import continuation, next_token
from explorer.errors import ExplorerError
from explorer.lessons import schema
from explorer.lessons.rooms import DRAWING, Numbers, Room, Rooms, StepState, clean_answer
from explorer.lessons.schema import Step
from explorer.results.next_token import NextToken
from explorer.rules.sampler import Limits
from explorer.serving.models import Models
from explorer.serving.reach import base_url

TOP = 10  # the model's entries shown per step
CANDIDATES = 40  # next tokens read to find the model's top words
ANSWER_TOKENS = 8  # tokens an answer adds to its context, at most (for the duration a GPU call asks)
WORD_TOKENS = 6  # tokens a drawn word has at most
FOLLOWING = 32  # per sample step, the texts drawn so far whose next token is kept (each a (V,) float32 row)


# ---- the model's side of a step: functions of an engine, run wherever the runner runs them ----------------------
@dataclass(frozen=True)
class Ask:
    """What one step asks of the model: its side (`prepare`: the top, the entropy, a sample step's next token) and
    the numbers of `answers`; `known`: numbers computed before (not computed again)."""

    step: Step
    temperature: float
    prepare: bool
    answers: tuple[str, ...] = ()
    known: dict[str, Numbers] = field(default_factory=dict)


@dataclass
class Side:
    """What the model said of one step; numpy and Python only (it crosses back from a GPU call)."""

    numbers: dict[str, Numbers]  # answer -> its numbers, nats
    top: list[dict] | None = None  # the model's entries, best first (None: not asked)
    entropy: float | None = None  # nats, of the next token (at a sample step's temperature)
    next_logprobs: np.ndarray | None = None  # (V,) float32: a sample step's next token, drawn from


def model_side(engine, asks: list[Ask]) -> list[Side]:
    """Each ask's side, in order: the one function a room's model work runs (in a GPU call on ZeroGPU)."""
    return [side_of(engine, ask) for ask in asks]


def side_of(engine, ask: Ask) -> Side:
    """One step's side: the top of the model (when asked) and the numbers of each answer, each computed once."""
    side = Side(dict(ask.known))
    context = ask.step.context

    def scored(answer: str) -> Numbers:
        if answer not in side.numbers:
            side.numbers[answer] = Numbers(*continuation(engine, context, answer))
        return side.numbers[answer]

    if ask.prepare and ask.step.kind == "choose":
        top = [{"answer": c, **vars(scored(c))} for c in ask.step.choices]
        side.top = sorted(top, key=lambda e: -e["logprob"])
    elif ask.prepare:
        nt = next_token(engine, context)
        side.entropy = nt.entropy(ask.temperature if ask.step.kind == "sample" else 1.0)
        if ask.step.kind == "sample":
            side.top, side.next_logprobs = sampler_top(nt, ask.temperature), nt.logprobs
        else:
            side.top = word_top(engine, context, nt.logprobs, scored)
            if ask.step.actual:  # the word that came has its number on the chart, said or not
                scored(ask.step.actual)
    for answer in ask.answers:
        scored(answer)
    return side


def word_top(engine, context: str, lp: np.ndarray, scored: Callable[[str], Numbers]) -> list[dict]:
    """The words the model's likeliest next tokens begin, each with its exact probability as a whole word: after
    a space where the token starts with one (" window"), else attached to the text (",", "'s")."""
    seen: list[tuple[str, str]] = []  # (sep, word)
    for i in np.argsort(-lp)[:CANDIDATES].tolist():
        text = engine.vocab[i].decode("utf-8", "replace")
        word, sep = text.strip(), " " if text[:1].isspace() else ""
        if word and word.isprintable() and (sep, word) not in seen and "\ufffd" not in word:
            seen.append((sep, word))
        if len(seen) == TOP:
            break
    top = []
    for sep, w in seen:
        if sep == " ":
            n = scored(w)
            top.append({"answer": w, "logprob": n.logprob, "logprob_word": n.logprob_word, "attached": False})
        else:  # it continues the word before the blank ("there" + "'s"): no word of its own to correct
            attached, _ = continuation(engine, context, w, "")
            top.append({"answer": w, "logprob": attached, "logprob_word": None, "attached": True})

    def best(e: dict) -> float:
        x = e["logprob_word"]
        return -(x if x is not None and math.isfinite(x) else e["logprob"])

    return sorted(top, key=best)


def sampler_top(nt: NextToken, t: float) -> list[dict]:
    """The TOP likeliest next tokens at temperature t: their probability under the sampler (softmax(lp / t))."""
    return [{"answer": nt.text_of(i), "token_id": i, "logprob": float(np.log(p))} for i, p in nt.top(t, TOP)]


def next_logprobs(engine, text: str) -> np.ndarray:
    """(V,) float32: the next token's logprobs after `text` (a drawn word's next piece)."""
    return next_token(engine, text).logprobs


_CONTINUES: dict[int, tuple[Sequence[bytes], np.ndarray]] = {}  # id of a vocabulary -> (it, its mask)


def continues(vocab: Sequence[bytes]) -> np.ndarray:
    """(V,) bool: the tokens that continue the word before them (they start with a letter, a digit or an
    apostrophe, not a space or punctuation); computed once per vocabulary (kept with it: an id a freed vocabulary
    had may name another later)."""
    known = _CONTINUES.get(id(vocab))
    if known is None or known[0] is not vocab:
        first = [b.decode("utf-8", "replace")[:1] for b in vocab]
        known = _CONTINUES[id(vocab)] = (vocab, np.array([c.isalnum() or c in "'’" for c in first], dtype=bool))
    return known[1]


def word_like(text: str) -> bool:
    """Whether a drawn text can go on as a word: it ends in a letter or a digit."""
    return bool(text) and text[-1].isalnum()


def positions(engine, ask: Ask) -> int:
    """The positions an ask's forward passes read, at most: what its GPU call's duration is sized from."""
    passes = len(ask.answers)
    if ask.prepare:
        passes += (
            len(ask.step.choices) if ask.step.kind == "choose" else 1 + (TOP + 1 if ask.step.kind == "guess" else 0)
        )
    return passes * (len(engine.encode(ask.step.context)) + ANSWER_TOKENS)


# ---- the rooms' model work, through the gate and the runner ---------------------------------------------------
class Classroom:
    """The rooms of a server and the model work their steps and answers need (see the module)."""

    def __init__(self, models: Models, limits: Limits, rooms: Rooms, gate, run: Runner = HERE, per_step: bool = False):
        self.models, self.limits, self.rooms, self.gate = models, limits, rooms, gate
        self.run, self.per_step = run, per_step

    async def compute(self, request: Request, fn: Callable[[], Any]) -> Any:
        """`fn()` in a gate slot (a full server: 429, as /v1)."""
        async with self.gate.slot() as token:
            return await self.gate.run(fn, request, token)

    async def fill(self, request: Request, room: Room, wanted: dict[int, Sequence[str]], alone: bool = True) -> None:
        """The side of each step in `wanted` (by index) that lacks it, and the numbers of its answers that lack them,
        in one call of the model's work; none when nothing lacks. `alone=False`: the answers only along with their
        step's side (a student's on ZeroGPU: never a call of its own)."""
        if any(_ask(room.steps[i], answers, alone) is not None for i, answers in wanted.items()):
            await self.compute(request, lambda: self.fill_now(room, wanted, alone))

    def fill_now(self, room: Room, wanted: dict[int, Sequence[str]], alone: bool = True) -> None:
        """`fill` on this thread: the steps' locks taken in order (a step's numbers are computed once), then one
        call of `model_side` through the runner."""
        with ExitStack() as held:
            for i in sorted(wanted):
                held.enter_context(room.steps[i].lock)
            asks = [(room.steps[i], _ask(room.steps[i], wanted[i], alone)) for i in sorted(wanted)]
            todo = [(st, ask) for st, ask in asks if ask is not None]
            if not todo:
                return
            with self.models.use(room.model) as engine:
                tokens = sum(positions(engine, ask) for _, ask in todo)
                sides = self.run.call(engine, Work(model_side, ([ask for _, ask in todo],), tokens_in=tokens))
                for (st, _), side in zip(todo, sides, strict=True):
                    _apply(st, side, engine)

    async def draw(self, request: Request, room: Room, st: StepState) -> tuple[str, float, bool]:
        """One whole word drawn at the step's temperature: tokens drawn until the next one starts a new word (at
        most WORD_TOKENS); (its text, its logprob under the sampler, whether it is whole). The probability of a word
        is that of its tokens times that of a token ending it. On ZeroGPU (no student's request runs the model) and
        past FOLLOWING texts a step keeps, a draw stops at the pieces already known: it may be a word's start."""
        assert st.next is not None  # prepared before any draw
        t, nt, text, lp = st.temperature, st.next, "", 0.0
        for _ in range(WORD_TOKENS):
            p = nt.probs(t)  # (V,) float64
            (i,) = nt.draw(t, 1, secrets.randbits(63))
            mask = continues(nt.vocab)[: len(p)]
            if text and not mask[i]:  # the word ended here: the chance of that, not the next word's
                return text, lp + float(np.log(max(1e-300, 1.0 - float(p[mask].sum())))), True
            text, lp = text + nt.text_of(i), lp + float(np.log(p[i]))
            if not word_like(text):  # punctuation or a new line: a draw of its own
                return text, lp, True
            following = await self.following(request, room, st, text)
            if following is None:
                return text, lp, False
            nt = following
        return text, lp, False

    async def following(self, request: Request, room: Room, st: StepState, text: str) -> NextToken | None:
        """The next token after the step's prompt and `text` (cached per text; None where it may not be computed:
        on ZeroGPU, or past FOLLOWING texts)."""
        if text not in st.following and not self.per_step and len(st.following) < FOLLOWING:
            await self.compute(request, lambda: self.follow_now(room, st, text))
        return st.following.get(text)

    def follow_now(self, room: Room, st: StepState, text: str) -> None:
        """`following` on this thread: one forward pass through the runner, once per text."""
        with st.lock:
            if text in st.following:
                return
            context = st.step.context + text
            with self.models.use(room.model) as engine:
                work = Work(next_logprobs, (context,), tokens_in=len(engine.encode(context)))
                st.following[text] = NextToken(engine.name, context, self.run.call(engine, work), engine.vocab)


def _ask(st: StepState, answers: Sequence[str], alone: bool = True) -> Ask | None:
    """What a step lacks of the model's side and of the numbers of `answers` (`alone=False`: of the answers only
    when the side is lacking too); None when nothing."""
    missing = tuple(dict.fromkeys(a for a in answers if a not in st.numbers))
    if st.model_top is not None and (not missing or not alone):
        return None
    prepare = st.model_top is None
    return Ask(st.step, st.temperature, prepare, missing, dict(st.numbers) if prepare else {})


def _apply(st: StepState, side: Side, engine) -> None:
    """A side the model computed, kept in the step (numbers known before stay; the top last: it marks it ready)."""
    for answer, n in side.numbers.items():
        st.numbers.setdefault(answer, n)
    if side.top is None:
        return
    st.model_entropy = side.entropy
    if side.next_logprobs is not None:
        st.next = NextToken(engine.name, st.step.context, side.next_logprobs, engine.vocab)
    st.model_top = side.top


def received(st: StepState, answer: str) -> dict:
    """What a student sees of their answer: before the step is shown, only that it came; after, their result."""
    return answer_result(st, answer) if st.shown else {"answer": answer, "received": True}


def answer_result(st: StepState, answer: str) -> dict:
    """A student's result for a guess or a choice: the model's numbers of it (None while they wait: `pending`)."""
    n = st.numbers.get(answer)
    actual = st.step.actual
    return {
        "answer": answer,
        "received": True,
        "logprob": n.logprob if n is not None else None,
        "logprob_word": n.logprob_word if n is not None else None,
        "pending": n is None,
        "actual": actual,
        "correct": schema.bare(answer) == schema.bare(actual) if actual else None,
        "model_top": st.model_top,
    }


def mine_of(st: StepState, student: str) -> dict | None:
    """A student's own answer at a step as their poll sees it (None before they answer, or on a sample step)."""
    mine = st.last_answer(student)
    return received(st, mine) if mine is not None and st.step.kind != "sample" else None


def client_address(request: Request) -> str:
    """The address a request came from: the peer's own, or behind a proxy the operator trusts (a Space's) the client
    address it forwarded (explorer/api/proxy.py resolves it before any route runs)."""
    return request.client.host if request.client else ""


def _key(request: Request, body: dict | None = None) -> str | None:
    return (body or {}).get("teacher_key") or request.headers.get("x-teacher-key")


def _teacher(room: Room, key: object) -> None:
    if not room.is_teacher(key):
        raise ExplorerError(
            "Only the teacher's link can do this: send the room's `teacher_key`.",
            param="teacher_key",
            code="not_teacher",
        )


def lesson_of(body: dict, folder: str) -> schema.Lesson:
    """The lesson a `POST /rooms` names: a lesson file's text (`lesson_text`), a built-in's name or a lesson object."""
    if "lesson_text" in body:  # a lesson file's text, as uploaded on the page (YAML or JSON)
        if not isinstance(body["lesson_text"], str):
            raise ExplorerError(
                "`lesson_text` must be a lesson file's text.", param="lesson_text", code="invalid_value"
            )
        return schema.load(body["lesson_text"])
    if "lesson" in body:
        return schema.from_value(body["lesson"], folder)
    raise ExplorerError(
        f"Give `lesson`: a built-in lesson's name ({', '.join(schema.BUILTIN)}) or a lesson object.",
        param="lesson",
        code="invalid_value",
    )


def step_to(room: Room, to: object) -> int:
    """The step `to` names, checked: a step of the room."""
    if isinstance(to, bool) or not isinstance(to, int) or not 0 <= to < len(room.steps):
        raise ExplorerError(
            f"`to` must be a step from 0 to {len(room.steps) - 1}, got {schema.shown(to)}"
            + (" (this was the last step)." if to == len(room.steps) else "."),
            param="to",
            code="invalid_value",
        )
    return to


def temperature_of(st: StepState, t: object) -> float:
    """A sample step's new temperature, checked."""
    lo, hi = schema.TEMPERATURE
    if st.step.kind != "sample":
        raise ExplorerError("The current step draws nothing: temperature applies to sample steps.", param="temperature")
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not lo <= t <= hi:
        raise ExplorerError(
            f"`temperature` must be a number from {lo} to {hi}, got {schema.shown(t)}.", param="temperature"
        )
    return float(t)


# ---- the routes -------------------------------------------------------------------------------------------------
class RoomRoutes:
    """The handlers of the routes above, one method each; `guard(request)` as the server's other routes outside
    /v1; links name the address `models.host` and `models.public_url` make reachable (explorer/serving/reach.py)."""

    def __init__(self, classroom: Classroom, guard: Callable[[Request], None], off: OffLoop | None = None):
        self.room_api, self.guard = classroom, guard
        self.models, self.limits, self.rooms = classroom.models, classroom.limits, classroom.rooms
        self.off = off or OffLoop()  # lessons read off the event loop, a few at once

    def base(self, request: Request) -> tuple[str, str | None]:
        return base_url(request.headers, request.url.scheme, self.models.host, self.models.public_url)

    async def teachers(self, code: str, request: Request) -> tuple[Room, dict]:
        """The room and the request's body, where the request carries the room's teacher key (else a 403)."""
        self.guard(request)
        room = self.rooms.get(code)
        body = await read_json(request, self.limits.max_body_bytes)
        _teacher(room, _key(request, body))
        return room, body

    async def open_room(self, request: Request):
        self.guard(request)
        body = await read_json(request, self.limits.max_body_bytes)
        self.rooms.check_open(client_address(request))  # the caps first: a refused room reads no lesson
        lesson = await self.off(lesson_of, body, self.rooms.limits.lessons)
        model = body.get("model") or lesson.model
        if model is not None and not isinstance(model, str):
            raise ExplorerError("`model` must be a served model's name.", param="model", code="invalid_value")
        name = self.models.resolve(model).name  # 404 for a model this server does not serve
        room = self.rooms.open(lesson, name, client_address(request))
        try:  # the first step's model side now: the class's first screen waits for nothing
            await self.room_api.fill(request, room, {0: ()})
        except ExplorerError:
            self.rooms.end(room)
            raise
        self.rooms.get(room.code)  # touched: the time its first step took to prepare is not idle time
        base, warning = self.base(request)
        return json_response(
            {
                "room": room.code,
                "join_url": f"{base}/lesson/{room.code}",
                "teacher_url": f"{base}/lesson/{room.code}/teacher#key={room.teacher_key}",
                "teacher_key": room.teacher_key,
                "qr_url": f"{base}/rooms/{room.code}/qr.svg",
                "warning": warning,
                "title": lesson.title,
                "n_steps": len(lesson.steps),
                "model": name,
            }
        )

    async def step(self, code: str, request: Request, peek: str = ""):
        self.guard(request)
        room = self.rooms.get(code)
        teacher = room.is_teacher(_key(request))
        if teacher:  # a student's poll never waits on the model
            await self.room_api.fill(request, room, {room.current: ()})
        secret = request.headers.get("x-student")
        student = room.roster.member(secret) if secret else None  # their own result only (403: not theirs)
        with room.lock:
            view = room.step_view(teacher=teacher, peek=peek.lower() in ("1", "true", "yes"))
            st = room.steps[room.current]
            if teacher:  # only on ZeroGPU does an answer wait for its numbers past its own request
                view["n_pending"] = len(st.unscored()) if self.room_api.per_step else 0
                view.update(room.roster_view())
            if student:  # the student's own result of this step (one that waited for its numbers has them now)
                view["mine"] = mine_of(st, student)
        base, warning = self.base(request)
        view["join_url"], view["warning"] = f"{base}/lesson/{room.code}", warning
        return json_response(view)

    async def answer(self, code: str, request: Request):
        self.guard(request)
        room = self.rooms.get(code)
        body = await read_json(request, self.limits.max_body_bytes)
        st = room.check_step(body.get("step"))
        number = int(body["step"])  # the current step's index, checked above
        text = clean_answer(body.get("answer", ""), st.step)
        student = room.roster.member(body.get("student"))  # the public id of the secret its join gave
        if st.step.kind == "sample":
            return json_response(await self.drawn(request, room, number, student))
        self.rooms.add_answer(room, student, st, text)
        # scored as it arrives (the reveal waits for nothing); on ZeroGPU (per_step) only with its step's side
        await self.room_api.fill(request, room, {number: (text,)}, alone=not self.room_api.per_step)
        return json_response(received(st, text))

    async def drawn(self, request: Request, room: Room, number: int, student: str) -> dict:
        """A student's draw at sample step `number`: a whole word drawn from the step's prepared side (its pieces
        after the first computed once per text drawn, see Classroom.draw)."""
        st = room.steps[number]
        await self.room_api.fill(request, room, {number: ()})
        self.rooms.add_answer(room, student, st, DRAWING)  # the cap first: a refused draw costs nothing
        t = st.temperature
        drawn, lp, whole = await self.room_api.draw(request, room, st)
        with room.lock:  # the placeholder becomes the draw (gone if the teacher started a new tally meanwhile)
            if (student, DRAWING) in st.answers and t == st.temperature:
                st.answers[st.answers.index((student, DRAWING))] = (student, drawn)
                st.numbers.setdefault(drawn, Numbers(lp, lp if whole else None))  # the chart's probability
        return {
            "answer": drawn,
            "logprob": lp,
            "logprob_word": lp if whole else None,
            "whole_word": whole,
            "temperature": t,
            "actual": None,
            "model_top": st.model_top,
        }

    async def join(self, code: str, request: Request):
        """A student joins (or, with the secret they were given, joins again after a reload)."""
        self.guard(request)
        room = self.rooms.get(code)
        body = await read_json(request, self.limits.max_body_bytes)
        secret, sid = self.rooms.join(room, body.get("nickname"), body.get("student"), client_address(request))
        return json_response({"room": room.code, "student": secret, "id": sid, "nickname": room.students.get(sid, "")})

    async def lock(self, code: str, request: Request):
        room, body = await self.teachers(code, request)
        locked = body.get("locked")
        if not isinstance(locked, bool):
            raise ExplorerError("`locked` must be true or false.", param="locked", code="invalid_value")
        room.roster.locked = locked
        return json_response({"room": room.code, "locked": locked})

    async def remove(self, code: str, request: Request):
        room, body = await self.teachers(code, request)
        room.remove(body.get("student"))
        return json_response({"room": room.code, "removed": body["student"]})

    async def reveal(self, code: str, request: Request):
        room, _ = await self.teachers(code, request)
        now = room.current
        waiting = room.steps[now].unscored()
        await self.room_api.fill(request, room, {now: waiting})
        with room.lock:
            room.steps[now].revealed = True  # after its numbers: every page shows the full result at once
        return json_response({"step": now, "scored": len(waiting), "revealed": True})

    async def move(self, code: str, request: Request):
        room, body = await self.teachers(code, request)
        to = step_to(room, body.get("to", room.current + 1))
        with room.lock:
            left, room.current = room.current, to
        wanted: dict[int, Sequence[str]] = {to: ()}  # the new step's side now, before the class's answers arrive
        waiting = room.steps[left].unscored()
        if self.room_api.per_step and left != to and waiting:  # on ZeroGPU the same call scores what waits of it
            wanted[left] = waiting
        await self.room_api.fill(request, room, wanted)
        return json_response({"step": room.current, "n_steps": len(room.steps)})

    async def temperature(self, code: str, request: Request):
        room, body = await self.teachers(code, request)
        st = room.steps[room.current]
        t = temperature_of(st, body.get("temperature"))
        await self.room_api.fill(request, room, {room.current: ()})
        with room.lock:
            if t != st.temperature:
                st.new_tally(t)  # draws at another temperature are another distribution: kept apart
            assert st.next is not None  # prepared above
            st.model_top = sampler_top(st.next, st.temperature)
            st.model_entropy = st.next.entropy(st.temperature)
        return json_response({"temperature": st.temperature})

    async def end(self, code: str, request: Request):
        room, _ = await self.teachers(code, request)
        self.rooms.end(room)
        return json_response({"room": room.code, "ended": True})

    async def results(self, code: str, request: Request, format: str = "json"):
        self.guard(request)
        room = self.rooms.get(code)
        _teacher(room, _key(request))
        if self.room_api.per_step:  # on ZeroGPU what waits for its numbers is scored now, every step in one call
            waiting = {i: st.unscored() for i, st in enumerate(room.steps)}
            await self.room_api.fill(request, room, {i: w for i, w in waiting.items() if w})
        with room.lock:
            if format == "csv":
                return Response(
                    room.results_csv(),
                    media_type="text/csv",
                    headers={"Content-Disposition": f'attachment; filename="room-{room.code}.csv"'},
                )
            data: dict[str, Any] = {"room": room.code, "lesson": room.lesson.title, "model": room.model}
            data["steps"] = room.results()
        return json_response(data)


def rooms_router(
    models: Models, limits: Limits, rooms: Rooms, gate, guard, run: Runner = HERE, per_step: bool = False
) -> APIRouter:
    """The routes above and the lesson pages'; the model's work through `gate` and `run`; `per_step`: on ZeroGPU,
    where no student's request runs the model (see the module)."""
    routes = RoomRoutes(Classroom(models, limits, rooms, gate, run, per_step), guard)
    router = APIRouter()
    router.include_router(pages_router(models, rooms, guard, routes.off))
    router.add_api_route("/rooms", routes.open_room, methods=["POST"])
    router.add_api_route("/rooms/{code}", routes.step, methods=["GET"])
    router.add_api_route("/rooms/{code}/answers", routes.answer, methods=["POST"])
    router.add_api_route("/rooms/{code}/join", routes.join, methods=["POST"])
    router.add_api_route("/rooms/{code}/lock", routes.lock, methods=["POST"])
    router.add_api_route("/rooms/{code}/remove", routes.remove, methods=["POST"])
    router.add_api_route("/rooms/{code}/reveal", routes.reveal, methods=["POST"])
    router.add_api_route("/rooms/{code}/step", routes.move, methods=["POST"])
    router.add_api_route("/rooms/{code}/temperature", routes.temperature, methods=["POST"])
    router.add_api_route("/rooms/{code}/end", routes.end, methods=["POST"])
    router.add_api_route("/rooms/{code}/results", routes.results, methods=["GET"])
    return router
