"""The HTTP side of the remote engine: one client for a vLLM / OpenAI-compatible server, JSON calls retried on
429 / 5xx / connection errors, server-sent events read to `[DONE]`, and every failure an ExplorerError that says
what the server said."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from explorer.errors import ExplorerError

RETRIES = 3  # idempotent calls (models, tokenize, scoring) retried on 429 / 5xx / connection errors


class Backend:
    """A server at `base` (its /v1 URL), with its API key."""

    def __init__(self, base_url: str, key: str | None = None, timeout: float = 120.0):
        self.base = base_url.rstrip("/")
        self.http = httpx.Client(timeout=timeout, headers={"Authorization": f"Bearer {key}"} if key else {})

    @property
    def shown(self) -> str:
        """The server's URL without any user:password in it, for people."""
        url = httpx.URL(self.base)
        return str(url.copy_with(username=None, password=None)) if url.userinfo else self.base

    def get(self, path: str) -> dict:
        return self.call("GET", path, None)

    def post(self, path: str, body: dict) -> dict:
        return self.call("POST", path, body)

    def call(self, method: str, path: str, body: dict | None, answer=None) -> dict:
        """One JSON call, retried with backoff on 429 / 5xx / connection errors; clear ExplorerErrors otherwise.

        `answer(response)`: read a 4xx answer instead of raising (returns None to raise as usual)."""
        url = route(self.base, path)
        for attempt in range(RETRIES + 1):
            try:
                r = self.http.request(method, url, json=body)
            except httpx.TimeoutException:
                raise self.late() from None
            except httpx.HTTPError as err:
                if attempt < RETRIES:
                    time.sleep(0.2 * 2**attempt)
                    continue
                raise ExplorerError(
                    f"Cannot reach the backend {self.shown}: {err}.", code="backend_unreachable"
                ) from None
            if r.status_code in (429, 500, 502, 503, 504) and attempt < RETRIES:
                time.sleep(min(float(r.headers.get("retry-after") or 0.2 * 2**attempt), 5.0))
                continue
            if answer is not None and 400 <= r.status_code < 500:
                read = answer(r)
                if read is not None:
                    return read
            return json_of(r, self.shown)
        raise AssertionError("unreachable")

    @contextmanager
    def events(self, path: str, body: dict):
        """The JSON events of a streamed POST (see `sse`); not reaching the server is an ExplorerError too."""
        try:
            with self.http.stream("POST", route(self.base, path), json=body) as r:
                if r.status_code != 200:
                    r.read()
                    json_of(r, self.shown)
                yield sse(r, self.http.timeout.read)
        except httpx.TimeoutException:
            raise self.late() from None
        except httpx.HTTPError as err:
            raise ExplorerError(f"Cannot reach the backend {self.shown}: {err}.", code="backend_unreachable") from None

    def late(self) -> ExplorerError:
        return ExplorerError(
            f"The backend {self.shown} did not answer within {self.http.timeout.read:g} s.", code="backend_timeout"
        )


def route(base: str, path: str) -> str:
    """`base` is the server's /v1 URL: /v1/... paths go under it; the utility routes (/tokenize) at its root, as vLLM's."""
    if path.startswith("/v1/"):
        return base + path[3:]
    return (base[: -len("/v1")] if base.endswith("/v1") else base) + path


def error_message(r: httpx.Response) -> str | None:
    """The `error.message` (or `message`) of an error answer, or None."""
    try:
        body = r.json()
    except (json.JSONDecodeError, ValueError):
        return None
    err = body.get("error") if isinstance(body, dict) else None
    msg = err.get("message") if isinstance(err, dict) else None
    return msg or (body.get("message") if isinstance(body, dict) else None)


def json_of(r: httpx.Response, base: str) -> dict:
    """The body of a backend answer, or an ExplorerError that says what the backend said."""
    try:
        body = r.json()
    except (json.JSONDecodeError, ValueError):
        raise ExplorerError(
            f"The backend {base} answered HTTP {r.status_code} with something that is not JSON.",
            code="backend_bad_answer",
        ) from None
    if r.status_code >= 400:
        err = body.get("error") if isinstance(body, dict) else None
        msg = error_message(r) or str(body)[:200]
        code = {401: "backend_unauthorized", 404: "model_not_found", 429: "server_busy"}.get(
            r.status_code, "backend_error"
        )
        raise ExplorerError(
            f"The backend answered HTTP {r.status_code}: {msg}",
            param=err.get("param") if isinstance(err, dict) else None,
            code=code if r.status_code >= 401 else (_code(err) or "backend_error"),
        )
    return body


def _code(err) -> str | None:
    """An error body's `code` when it is a string (vLLM sends the HTTP status as a number there)."""
    code = err.get("code") if isinstance(err, dict) else None
    return code if isinstance(code, str) else None


def sse(r: httpx.Response, waited: float | None = None) -> Iterator[dict]:
    """The JSON events of a server-sent-events body until `[DONE]`; an error event, a silence longer than `waited`
    seconds or a cut stream is an ExplorerError."""
    done = False
    try:
        for line in r.iter_lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                done = True
                break
            event = json.loads(data)
            if isinstance(event, dict) and "error" in event:
                raise ExplorerError(
                    f"The backend stopped the stream: {event['error'].get('message')}", code="backend_error"
                )
            yield event
    except httpx.TimeoutException:
        raise ExplorerError(f"The backend stopped answering for {waited or 0:g} s.", code="backend_timeout") from None
    except (httpx.HTTPError, json.JSONDecodeError) as err:
        raise ExplorerError(f"The backend's stream broke off ({type(err).__name__}).", code="backend_error") from None
    if not done:
        raise ExplorerError(
            "The backend's stream ended without [DONE]: the answer is incomplete.", code="backend_error"
        )
