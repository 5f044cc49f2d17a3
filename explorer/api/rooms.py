"""Rooms for a class over HTTP (docs/api.md, "Rooms"): the JSON routes the lesson pages use, the pages, a QR code.

    GET  /lessons                     the built-in lessons
    POST /rooms                       {"lesson": NAME or a lesson, "model"?} -> room, join_url, teacher_url, teacher_key
    GET  /rooms/{room}                the current step and the class's answers (X-Teacher-Key: the word to come too)
    POST /rooms/{room}/answers        {"student", "step", "answer", "nickname"?} -> the student's result
    POST /rooms/{room}/step           {"teacher_key", "to"?} -> moves the class on (or to step `to`)
    POST /rooms/{room}/temperature    {"teacher_key", "temperature"} -> a sample step's temperature
    POST /rooms/{room}/end            {"teacher_key"} -> ends the room
    GET  /rooms/{room}/results        X-Teacher-Key; ?format=csv for CSV
    GET  /rooms/{room}/qr.svg, qr.png the join link as a QR code
    GET  /lesson, /lesson/{room}, /lesson/{room}/teacher: the pages

Model work runs through the server's gate (as /v1's); an answer's numbers are computed once per distinct answer and
step. Errors in the API's own shape: 400 naming the field, 404 an unknown room, 403 without the teacher's key, 429
beyond a cap.
"""

from __future__ import annotations

import ipaddress
import math
import secrets
from importlib import resources
from typing import Any

import numpy as np
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from explorer.api.framing import json_response, read_json
from explorer.engine.analyses.guesses import continuation, next_token
from explorer.errors import ExplorerError
from explorer.lessons import schema
from explorer.lessons.rooms import Numbers, Room, Rooms, StepState, clean_answer
from explorer.models import Models
from explorer.reach import base_url, qr_code
from explorer.results.next_token import NextToken
from explorer.settings import Limits

TOP = 10  # the model's entries shown per step
CANDIDATES = 40  # next tokens read to find the model's top words


def _page(name: str) -> HTMLResponse:
    """A lesson page with the shared style and script inside it (one request, no CDN)."""
    files = resources.files("explorer.lessons").joinpath("page")
    html = files.joinpath(name).read_text("utf-8")
    html = html.replace("/*STYLE*/", files.joinpath("style.css").read_text("utf-8"), 1)
    html = html.replace("/*SCRIPT*/", files.joinpath("lesson.js").read_text("utf-8"), 1)
    return HTMLResponse(html, headers={"Cache-Control": "no-store", "X-Frame-Options": "SAMEORIGIN"})


class Classroom:
    """The rooms of a server and the model work their steps and answers need."""

    def __init__(self, models: Models, limits: Limits, rooms: Rooms, gate):
        self.models, self.limits, self.rooms, self.gate = models, limits, rooms, gate

    async def compute(self, request: Request, fn):
        """`fn(engine)` in a gate slot (a full server: 429, as /v1)."""
        async with self.gate.slot() as token:
            return await self.gate.run(fn, request, token)

    # ---- per step: the model's side, once ----------------------------------------------------------------------
    def prepare(self, room: Room, st: StepState) -> None:
        """The model's top and entropy of a step (computed once: later calls return at once)."""
        if st.model_top is not None:
            return
        with st.lock, self.models.use(room.model) as engine:
            if st.model_top is not None:
                return
            if st.step.kind == "choose":
                top = []
                for c in st.step.choices:
                    n = self.numbers(engine, st, c)
                    top.append({"answer": c, "logprob": n.logprob, "logprob_word": n.logprob_word})
                st.model_top = sorted(top, key=lambda e: -e["logprob"])
                return
            nt = next_token(engine, st.step.context)
            st.model_entropy = nt.entropy(st.temperature if st.step.kind == "sample" else 1.0)
            if st.step.kind == "sample":
                st.model_top = self.sampler_top(nt, st.temperature)
                st.next = nt  # kept for draws
                return
            st.model_top = self._word_top(engine, st, nt.logprobs)

    def numbers(self, engine, st: StepState, answer: str) -> Numbers:
        with st.lock:
            n = st.numbers.get(answer)
            if n is None:
                n = st.numbers[answer] = Numbers(*continuation(engine, st.step.context, answer))
            return n

    def _word_top(self, engine, st: StepState, lp: np.ndarray) -> list[dict]:
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
                n = self.numbers(engine, st, w)
                top.append({"answer": w, "logprob": n.logprob, "logprob_word": n.logprob_word, "attached": False})
            else:  # it continues the word before the blank ("there" + "'s"): no word of its own to correct
                attached, _ = continuation(engine, st.step.context, w, "")
                top.append({"answer": w, "logprob": attached, "logprob_word": None, "attached": True})

        def best(e: dict) -> float:
            x = e["logprob_word"]
            return -(x if x is not None and math.isfinite(x) else e["logprob"])

        return sorted(top, key=best)

    @staticmethod
    def sampler_top(nt: NextToken, t: float) -> list[dict]:
        """The TOP likeliest next tokens at temperature t: their probability under the sampler (softmax(lp / t))."""
        return [{"answer": nt.text_of(i), "token_id": i, "logprob": float(np.log(p))} for i, p in nt.top(t, TOP)]

    def draw(self, room: Room, st: StepState) -> tuple[str, float]:
        """One next token drawn at the step's temperature: (its text, its logprob under the sampler)."""
        assert st.next is not None  # prepared before any draw
        (i,) = st.next.draw(st.temperature, 1, secrets.randbits(63))
        return st.next.text_of(i), float(np.log(st.next.probs(st.temperature)[i]))


def client_address(request: Request) -> str:
    """The address a request came from: behind a proxy on this machine or its network (a Space's), the last address
    it appended to X-Forwarded-For (a client cannot forge that one); else the peer's own."""
    peer = request.client.host if request.client else ""
    forwarded = [a.strip() for a in request.headers.get("x-forwarded-for", "").split(",") if a.strip()]
    try:
        private = ipaddress.ip_address(peer).is_private or ipaddress.ip_address(peer).is_loopback
    except ValueError:
        private = False
    return forwarded[-1] if forwarded and private else peer


def _key(request: Request, body: dict | None = None) -> str | None:
    return (body or {}).get("teacher_key") or request.headers.get("x-teacher-key")


def _teacher(room: Room, key: object) -> None:
    if not room.is_teacher(key):
        raise ExplorerError(
            "Only the teacher's link can do this: send the room's `teacher_key`.",
            param="teacher_key",
            code="not_teacher",
        )


def rooms_router(models: Models, limits: Limits, rooms: Rooms, gate, guard) -> APIRouter:
    """The routes above; `guard(request)` as the server's other routes outside /v1; links name the address
    `models.host` and `models.public_url` make reachable (explorer/reach.py)."""
    room_api = Classroom(models, limits, rooms, gate)
    router = APIRouter()

    def _base(request: Request) -> tuple[str, str | None]:
        return base_url(request.headers, request.url.scheme, models.host, models.public_url)

    def room_of(code: str) -> Room:
        return rooms.get(code)

    async def teachers(code: str, request: Request) -> tuple[Room, dict]:
        """The room and the request's body, where the request carries the room's teacher key (else a 403)."""
        guard(request)
        room = room_of(code)
        body = await read_json(request, limits.max_body_bytes)
        _teacher(room, _key(request, body))
        return room, body

    @router.get("/lessons")
    async def lessons(request: Request):
        guard(request)
        listed = [schema.builtin(n).to_dict() for n in schema.BUILTIN]
        for name, path in schema.folder_names(rooms.limits.lessons).items():  # the teacher's own: a broken one says why
            try:
                listed.append({**schema.from_path(path, name).to_dict(), "own": True})
            except ExplorerError as err:
                listed.append({"name": name, "title": name, "about": err.message, "n_steps": 0, "error": err.message})
        return json_response({"data": listed})

    @router.post("/rooms")
    async def open_room(request: Request):
        guard(request)
        body = await read_json(request, limits.max_body_bytes)
        if "lesson_text" in body:  # a lesson file's text, as uploaded on the page (YAML or JSON)
            if not isinstance(body["lesson_text"], str):
                raise ExplorerError(
                    "`lesson_text` must be a lesson file's text.", param="lesson_text", code="invalid_value"
                )
            lesson = schema.load(body["lesson_text"])
        elif "lesson" in body:
            lesson = schema.from_value(body["lesson"], rooms.limits.lessons)
        else:
            raise ExplorerError(
                f"Give `lesson`: a built-in lesson's name ({', '.join(schema.BUILTIN)}) or a lesson object.",
                param="lesson",
                code="invalid_value",
            )
        model = body.get("model") or lesson.model
        if model is not None and not isinstance(model, str):
            raise ExplorerError("`model` must be a served model's name.", param="model", code="invalid_value")
        name = models.resolve(model).name  # 404 for a model this server does not serve
        room = rooms.open(lesson, name, client_address(request))
        try:  # the first step's model side now: the class's first screen waits for nothing
            await room_api.compute(request, lambda: room_api.prepare(room, room.steps[0]))
        except ExplorerError:
            rooms.end(room)
            raise
        base, warning = _base(request)
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

    @router.get("/rooms/{code}")
    async def step(code: str, request: Request):
        guard(request)
        room = room_of(code)
        st = room.steps[room.current]
        teacher = room.is_teacher(_key(request))
        if teacher and st.model_top is None:  # a student's poll never waits on the model
            await room_api.compute(request, lambda: room_api.prepare(room, st))
        with room.lock:
            view = room.step_view(teacher=teacher)
        base, warning = _base(request)
        view["join_url"], view["warning"] = f"{base}/lesson/{room.code}", warning
        return json_response(view)

    @router.post("/rooms/{code}/answers")
    async def answer(code: str, request: Request):
        guard(request)
        room = room_of(code)
        body = await read_json(request, limits.max_body_bytes)
        st = room.check_step(body.get("step"))
        text = clean_answer(body.get("answer", ""), st.step)
        student = rooms.join(room, body.get("student"), body.get("nickname"))  # counted once the answer is sound
        if st.step.kind == "sample":
            if st.model_top is None:
                await room_api.compute(request, lambda: room_api.prepare(room, st))
            rooms.add_answer(room, student, st, "")  # the cap first: a refused draw costs nothing
            drawn, lp = room_api.draw(room, st)
            with room.lock:  # the placeholder becomes the draw
                i = st.answers.index((student, ""))
                st.answers[i] = (student, drawn)
            return json_response(
                {
                    "answer": drawn,
                    "logprob": lp,
                    "logprob_word": None,
                    "temperature": st.temperature,
                    "actual": None,
                    "model_top": st.model_top,
                }
            )

        def numbers():
            room_api.prepare(room, st)
            with models.use(room.model) as engine:
                return room_api.numbers(engine, st, text)

        rooms.add_answer(room, student, st, text)
        n = st.numbers.get(text) if st.model_top is not None else None  # the class's common guesses wait for nothing
        if n is None:
            n = await room_api.compute(request, numbers)
        return json_response(
            {
                "answer": text,
                "logprob": n.logprob,
                "logprob_word": n.logprob_word,
                "actual": st.step.actual,
                "correct": schema.bare(text) == schema.bare(st.step.actual) if st.step.actual else None,
                "model_top": st.model_top,
            }
        )

    @router.post("/rooms/{code}/step")
    async def move(code: str, request: Request):
        room, body = await teachers(code, request)
        to = body.get("to", room.current + 1)
        if isinstance(to, bool) or not isinstance(to, int) or not 0 <= to < len(room.steps):
            raise ExplorerError(
                f"`to` must be a step from 0 to {len(room.steps) - 1}, got {schema.shown(to)}"
                + (" (this was the last step)." if to == len(room.steps) else "."),
                param="to",
                code="invalid_value",
            )
        with room.lock:
            room.current = to
        st = room.steps[to]
        if st.model_top is None:  # the model's side of the new step now, before the class's answers arrive
            await room_api.compute(request, lambda: room_api.prepare(room, st))
        return json_response({"step": room.current, "n_steps": len(room.steps)})

    @router.post("/rooms/{code}/temperature")
    async def temperature(code: str, request: Request):
        room, body = await teachers(code, request)
        st = room.steps[room.current]
        t = body.get("temperature")
        lo, hi = schema.TEMPERATURE
        if st.step.kind != "sample":
            raise ExplorerError(
                "The current step draws nothing: temperature applies to sample steps.", param="temperature"
            )
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not lo <= t <= hi:
            raise ExplorerError(
                f"`temperature` must be a number from {lo} to {hi}, got {schema.shown(t)}.", param="temperature"
            )
        if st.model_top is None:
            await room_api.compute(request, lambda: room_api.prepare(room, st))
        with room.lock:
            st.temperature = float(t)
            st.answers.clear()  # draws at another temperature are another distribution
            assert st.next is not None  # prepared above
            st.model_top = room_api.sampler_top(st.next, st.temperature)
            st.model_entropy = st.next.entropy(st.temperature)
        return json_response({"temperature": st.temperature})

    @router.post("/rooms/{code}/end")
    async def end(code: str, request: Request):
        room, _ = await teachers(code, request)
        rooms.end(room)
        return json_response({"room": room.code, "ended": True})

    @router.get("/rooms/{code}/results")
    async def results(code: str, request: Request, format: str = "json"):
        guard(request)
        room = room_of(code)
        _teacher(room, _key(request))
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

    @router.get("/rooms/{code}/qr.{kind}")
    async def qr(code: str, kind: str, request: Request):
        guard(request)
        room = room_of(code)
        if kind not in ("svg", "png"):
            raise ExplorerError("The QR code comes as qr.svg or qr.png.", param="kind")
        base, _ = _base(request)
        return Response(
            qr_code(f"{base}/lesson/{room.code}", kind), media_type="image/svg+xml" if kind == "svg" else "image/png"
        )

    @router.get("/lesson")
    async def start_page(request: Request):
        guard(request)
        return _page("start.html")

    @router.get("/lesson/{code}")
    async def student_page(code: str, request: Request):
        guard(request)
        return _page("student.html")

    @router.get("/lesson/{code}/teacher")
    async def teacher_page(code: str, request: Request):
        guard(request)
        return _page("teacher.html")

    return router
