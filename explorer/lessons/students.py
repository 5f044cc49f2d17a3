"""Who is in a room and the text they type: the `Roster` (each student's secret, issued by the server when they join
and theirs alone, the public id and nickname the teacher sees, the lock, who was removed) and `visible`, the one rule
for a student's text (answers and nicknames alike), kept and shown."""

from __future__ import annotations

import secrets
import unicodedata

from explorer.errors import ExplorerError
from explorer.lessons.schema import shown

MAX_NICKNAME = 24  # characters of a nickname


def visible(value: str) -> str:
    """`value` as a student's text is kept and shown: control, format (zero-width, direction) and surrogate
    characters dropped, spaces collapsed."""
    return " ".join("".join(c for c in value if unicodedata.category(c) not in ("Cf", "Cc", "Cs")).split())


def removed() -> ExplorerError:
    """What a student the teacher removed is told (403)."""
    return ExplorerError(
        "Your teacher removed you from this room: ask them if you should join again.", param="student", code="removed"
    )


class Roster:
    """Who is in a room: each student's secret (theirs alone, issued when they join) -> the public id the teacher sees
    ("s1"); their nicknames; whether the teacher locked the room; the secrets of the students the teacher removed."""

    def __init__(self):
        self.nicknames: dict[str, str] = {}  # public id -> nickname ("" when none), in the order they joined
        self.ids: dict[str, str] = {}  # secret -> public id
        self.removed: set[str] = set()  # secrets of removed students
        self.locked = False
        self.made = 0  # public ids issued

    def member(self, secret: object) -> str:
        """The public id of the student whose secret this is; else a 403 the student's page shows."""
        if not isinstance(secret, str) or not secret:
            raise ExplorerError(
                "`student` must be the secret `POST /rooms/{room}/join` gave (the page keeps it).",
                param="student",
                code="invalid_value",
            )
        if secret in self.ids:
            return self.ids[secret]
        if secret in self.removed:
            raise removed()
        raise ExplorerError("Join the room first: reload this page.", param="student", code="not_joined")

    def add(self, nickname: str) -> tuple[str, str]:
        """(a new student's secret, their public id)."""
        self.made += 1
        secret, sid = secrets.token_urlsafe(16), f"s{self.made}"
        self.ids[secret], self.nicknames[sid] = sid, nickname
        return secret, sid

    def remove(self, sid: object) -> None:
        secret = next((k for k, v in self.ids.items() if v == sid), None)
        if secret is None:
            raise ExplorerError(
                f"There is no student {shown(sid, 12)} in this room: send the `id` the room's `students` list gives.",
                param="student",
                code="invalid_value",
            )
        self.nicknames.pop(self.ids.pop(secret))
        self.removed.add(secret)


def clean_nickname(value: object) -> str:
    """A nickname as kept and shown: visible text, at most MAX_NICKNAME characters ("" for none)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ExplorerError("`nickname` must be text.", param="nickname", code="invalid_value")
    return visible(value)[:MAX_NICKNAME].strip()
