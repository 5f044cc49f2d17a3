"""A class of 32 in one room on the default model (llama.cpp, as `make run` serves it; the torch engine where
llama-cpp-python is missing): 5 steps answered at once. No answer lost or counted twice, each student's numbers equal
that guess scored alone through /v1/completions with `echo`, the teacher's counts equal what was sent, the room gone
from memory once it expires, the caps answered 429. Latency is the bench's (bench/rooms_load.py), not asserted."""

from __future__ import annotations

import gc
import time
import weakref
from collections import Counter
from dataclasses import replace

import httpx
import pytest

from tests.helpers.rooms_load import run_class
from tests.helpers.servers import LiveServer

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(request):
    try:
        engine = request.getfixturevalue("smollm_gguf")
    except pytest.skip.Exception:
        engine = request.getfixturevalue("smollm")
    srv = LiveServer(engine)
    yield srv
    srv.stop()


def echo_tail(url: str, context: str, answer: str) -> float:
    body = {"prompt": f"{context} {answer}", "max_tokens": 0, "echo": True, "logprobs": 0}
    lp = httpx.post(url + "/v1/completions", json=body, timeout=60).json()["choices"][0]["logprobs"]
    return sum(x for x, o in zip(lp["token_logprobs"], lp["text_offset"]) if o >= len(context) and x is not None)


def test_a_class_of_32_answers_five_steps_at_once(server):
    run = run_class(server.url, students=32, steps=5)
    assert len(run["results"]) == 32 * 5
    truth: dict[tuple[int, str], float] = {}
    for (student, step), body in run["results"].items():
        context = run["views"][step]["context"]
        key = (step, body["answer"])
        if key not in truth:
            truth[key] = echo_tail(server.url, context, body["answer"])
        assert abs(body["logprob"] - truth[key]) <= 1e-4, (student, step)
        assert body["actual"] == run["views"][step]["actual"]
    for step, view in enumerate(run["views"]):
        sent = Counter(a for _, s, a in run["sent"] if s == step)
        assert view["answers"] == dict(sent) and view["n_answered"] == 32 and view["n_answers"] == 32
    app = server.server.config.app
    rooms = app.state.rooms
    room = rooms.get(run["room"])
    again = httpx.post(
        f"{server.url}/rooms/{run['room']}/answers",
        json={"student": run["students"][0], "step": 4, "answer": "x"},
        timeout=60,
    )
    assert again.status_code == 429
    rooms.limits = replace(rooms.limits, students=32)
    full = httpx.post(f"{server.url}/rooms/{run['room']}/join", json={"nickname": "newcomer"}, timeout=60)
    assert full.status_code == 429 and "full" in full.json()["error"]["message"]
    gone = weakref.ref(room)
    del room
    rooms.clock = lambda: time.monotonic() + 10 * 24 * 3600  # long past its lifetime
    assert httpx.get(f"{server.url}/rooms/{run['room']}", timeout=10).status_code == 404
    gc.collect()
    assert gone() is None and rooms.rooms == {}  # nothing of the room is kept
