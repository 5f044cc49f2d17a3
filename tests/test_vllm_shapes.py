"""The shape oracle: every request of tests/helpers/vllm_requests.py sent to a real vLLM and to our server on the same
model folder, the two answers compared key by key (tests/helpers/shape_diff.py). A difference passes only when
docs/api.md's table "Where we differ from vLLM" lists it, with its reason; a listed difference that no longer
occurs fails too, so the table stays exactly true."""

from __future__ import annotations

import re

import pytest

from tests.helpers.repo import ROOT
from tests.helpers.shape_diff import allowed, diff
from tests.helpers.vllm_peer import answer
from tests.helpers.vllm_requests import REQUESTS

pytestmark = pytest.mark.vllm

ROW = re.compile(r"^\| `([^`]+)` \| `([^`]*)` \| (.+) \|$")


def documented() -> list[tuple[str, str]]:
    """(request glob, path glob) of each row of docs/api.md's table of differences from vLLM."""
    text = (ROOT / "docs" / "api.md").read_text()
    section = text.split("## Where we differ from vLLM", 1)[1].split("\n## ", 1)[0]
    return [(m[1], m[2]) for line in section.splitlines() if (m := ROW.match(line.strip()))]


def differences(req, ours: tuple[int, object], theirs: tuple[int, object]) -> list[tuple[str, str]]:
    (so, bo), (sv, bv) = ours, theirs
    if so != sv:
        return [("status", f"{so} vs {sv}")]
    if req.name == "models" and isinstance(bv, dict):  # vLLM serves the folder under a second name: cards 1..
        bv = {**bv, "data": bv["data"][:1]}
    return diff(bo, bv)


@pytest.fixture(scope="module")
def ours(smollm):
    from tests.helpers.servers import LiveServer

    srv = LiveServer(smollm)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def answers(vllm_server, ours) -> dict:
    """name -> (our answer, vLLM's answer), each (status, body)."""
    return {r.name: (answer(ours.url, r), answer(vllm_server.url, r)) for r in REQUESTS}


def test_the_table_is_read():
    rules = documented()
    assert len(rules) >= 10 and all(r and p is not None for r, p in rules)


@pytest.mark.parametrize("req", REQUESTS, ids=lambda r: r.name)
def test_our_answer_is_vllms(req, answers):
    found = differences(req, *answers[req.name])
    rules = documented()
    undocumented = [f"{path or '(body)'}: {what}" for path, what in found if not allowed(path, req.name, rules)]
    assert not undocumented, "\n".join(undocumented)


def test_every_documented_difference_still_occurs(answers):
    rules = documented()
    seen = {
        rule
        for req in REQUESTS
        for path, _ in differences(req, *answers[req.name])
        for rule in rules
        if allowed(path, req.name, [rule])
    }
    assert [r for r in rules if r not in seen] == []


def test_numbers_agree_and_ranks_are_equal(answers):
    """The oracle compares numbers to 1e-4: show it saw real numbers (not two empty bodies)."""
    ours, theirs = answers["cmpl-echo-score"]
    a, b = ours[1]["choices"][0]["logprobs"], theirs[1]["choices"][0]["logprobs"]
    assert len(a["token_logprobs"]) == len(b["token_logprobs"]) == 5
    assert max(abs(x - y) for x, y in zip(a["token_logprobs"][1:], b["token_logprobs"][1:])) <= 1e-4
    ranks = lambda body: [e and next(iter(e.values()))["rank"] for e in body["choices"][0]["prompt_logprobs"]]  # noqa: E731
    assert ranks(ours[1]) == ranks(theirs[1])
