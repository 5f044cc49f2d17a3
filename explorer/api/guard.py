"""Who may use the API: the API key (EXPLORER_API_KEY) or EXPLORER_AUTH's credentials; on a public server without a
key, nothing but the model list, /health and /version."""

from __future__ import annotations

import base64
import hmac

from fastapi import Request

from explorer.api.framing import error
from explorer.config import current
from explorer.errors import ExplorerError
from explorer.rules.sampler import Limits


def allowed(request: Request, key: str | None, auth: tuple[str, str] | None) -> bool:
    """Whether the request may use /v1: the API key as a bearer token, or with EXPLORER_AUTH (and no key) its
    credentials as HTTP basic auth or as the bearer token `user:password`."""
    scheme, _, got = request.headers.get("authorization", "").partition(" ")
    scheme, got = scheme.lower(), got.strip()
    if key:
        return scheme == "bearer" and hmac.compare_digest(got.encode(), key.encode())
    if auth:
        secret = f"{auth[0]}:{auth[1]}"
        if scheme == "basic":
            try:
                got = base64.b64decode(got, validate=True).decode("utf-8")
            except (ValueError, UnicodeDecodeError):
                return False
        return scheme in ("basic", "bearer") and hmac.compare_digest(got.encode(), secret.encode())
    return True


def api_key() -> str | None:
    """EXPLORER_API_KEY of the configuration in force (asked per request: a test sets it on a running server)."""
    return current().api_key


OPEN_WHEN_OFF = ("/models", "/health", "/version")  # what a public server without a key still answers (no model work)


def api_off(limits: Limits) -> bool:
    """A public server's API is off unless its operator set EXPLORER_API_KEY."""
    return limits.public and not api_key()


OFF_MESSAGE = (
    "The HTTP API is off on this public server: use the web page, or ask its operator to set EXPLORER_API_KEY "
    "(then send it as `Authorization: Bearer <key>`)."
)


class Guard:
    """ASGI middleware: refuses /v1 requests without the API key (or EXPLORER_AUTH's credentials); on a public
    server without a key, refuses everything but the model list, /health and /version."""

    def __init__(self, app, auth: tuple[str, str] | None = None, limits: Limits | None = None):
        self.app, self.auth, self.limits = app, auth, limits or Limits()

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            key = api_key()
            path = scope.get("path", "")
            if api_off(self.limits):
                if not path.endswith(OPEN_WHEN_OFF) and "/models/" not in path:
                    return await error(403, OFF_MESSAGE, None, "api_off")(scope, receive, send)
            elif not allowed(Request(scope), key, self.auth):
                how = "Bearer <EXPLORER_API_KEY>" if key else "Basic (the EXPLORER_AUTH user and password)"
                response = error(
                    401,
                    f"Missing or wrong credentials: send `Authorization: {how}`.",
                    None,
                    "invalid_api_key",
                    None if key else {"WWW-Authenticate": 'Basic realm="logprob-explorer"'},
                )
                return await response(scope, receive, send)
        await self.app(scope, receive, send)


def root_guard(auth: tuple[str, str] | None, limits: Limits | None = None):
    """For routes outside /v1 that run the model (/tokenize, /detokenize): the same key / credentials as /v1."""

    def guard(request: Request) -> None:
        if limits is not None and api_off(limits):
            raise ExplorerError(OFF_MESSAGE, code="api_off")
        if not allowed(request, api_key(), auth):
            raise ExplorerError(
                "Missing or wrong credentials: send the API key (or the EXPLORER_AUTH credentials).",
                code="invalid_api_key",
            )

    return guard


def room_guard(auth: tuple[str, str] | None):
    """For the rooms of lessons and their pages: open as the page is (a public server's too: rooms have caps of their
    own), locked by EXPLORER_AUTH where set (HTTP basic auth: a browser asks for it once)."""

    def guard(request: Request) -> None:
        if auth and not allowed(request, None, auth):
            raise ExplorerError(
                "This server is locked: sign in with its user name and password (EXPLORER_AUTH).",
                code="invalid_api_key",
            )

    return guard
