"""The rooms' HTTP routes as the tests call them: a status checked, the JSON body returned; a student joined."""

from __future__ import annotations

import httpx


def post(url: str, path: str, body: dict, status: int = 200, **kw) -> dict:
    r = httpx.post(url + path, json=body, timeout=60, **kw)
    assert r.status_code == status, r.text
    return r.json()


def get(url: str, path: str, status: int = 200, **kw) -> dict:
    r = httpx.get(url + path, timeout=60, **kw)
    assert r.status_code == status, r.text
    return r.json()


def join(url: str, code: str, nickname: str | None = None) -> str:
    """A student's secret, as the student's page joins the room."""
    body = {} if nickname is None else {"nickname": nickname}
    return post(url, f"/rooms/{code}/join", body)["student"]
