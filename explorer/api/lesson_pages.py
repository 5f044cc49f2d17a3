"""What the lesson pages read besides a room's JSON: the pages themselves, the list of lessons, a room's QR code.

GET  /lessons                     the built-in lessons (and a folder's own, EXPLORER_LESSONS)
GET  /rooms/{room}/qr.svg, qr.png the join link as a QR code
GET  /lesson, /lesson/{room}, /lesson/{room}/teacher: the pages
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from explorer.api.framing import json_response
from explorer.api.offload import OffLoop
from explorer.errors import ExplorerError
from explorer.lessons import schema
from explorer.lessons.rooms import Rooms
from explorer.serving.models import Models
from explorer.serving.reach import base_url, qr_code


def page(name: str) -> HTMLResponse:
    """A lesson page with the shared style and script inside it (one request, no CDN)."""
    files = resources.files("explorer.lessons").joinpath("page")
    html = files.joinpath(name).read_text("utf-8")
    html = html.replace("/*STYLE*/", files.joinpath("style.css").read_text("utf-8"), 1)
    html = html.replace("/*SCRIPT*/", files.joinpath("lesson.js").read_text("utf-8"), 1)
    return HTMLResponse(html, headers={"Cache-Control": "no-store", "X-Frame-Options": "SAMEORIGIN"})


def listed_lessons(folder: str) -> list[dict]:
    """The built-in lessons, then the teacher's own in `folder` (a broken one says why)."""
    listed = [schema.builtin(n).to_dict() for n in schema.BUILTIN]
    for name, path in schema.folder_names(folder).items():
        try:
            listed.append({**schema.from_path(path, name).to_dict(), "own": True})
        except ExplorerError as err:
            listed.append({"name": name, "title": name, "about": err.message, "n_steps": 0, "error": err.message})
    return listed


def pages_router(
    models: Models, rooms: Rooms, guard: Callable[[Request], None], off: OffLoop | None = None
) -> APIRouter:
    """The routes above; `guard(request)` as the rooms' own routes; `off`: where QR codes are drawn (off the event
    loop, a few at once)."""
    router = APIRouter()
    off = off or OffLoop()

    @router.get("/lessons")
    async def lessons(request: Request):
        guard(request)
        return json_response({"data": listed_lessons(rooms.limits.lessons)})

    @router.get("/rooms/{code}/qr.{kind}")
    async def qr(code: str, kind: str, request: Request):
        guard(request)
        room = rooms.get(code)
        if kind not in ("svg", "png"):
            raise ExplorerError("The QR code comes as qr.svg or qr.png.", param="kind")
        base, _ = base_url(request.headers, request.url.scheme, models.host, models.public_url)
        drawn = await off(qr_code, f"{base}/lesson/{room.code}", kind)
        if drawn is None:  # this server's public address is too long for a QR code
            raise ExplorerError("The join link is too long for a QR code: students type the room's code instead.")
        return Response(drawn, media_type="image/svg+xml" if kind == "svg" else "image/png")

    def served(name: str) -> Callable:
        async def one_page(request: Request):
            guard(request)
            return page(name)

        return one_page

    router.add_api_route("/lesson", served("start.html"), methods=["GET"])
    router.add_api_route("/lesson/{code}", served("student.html"), methods=["GET"])
    router.add_api_route("/lesson/{code}/teacher", served("teacher.html"), methods=["GET"])
    return router
