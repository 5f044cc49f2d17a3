"""The vllm tier for *Open a session*: bodies asked fresh of the real vLLM open number by number, and the recorded
set (tests/data/vllm/) still matches what the server answers now (the same keys in the same order, the same
strings and whole numbers, other numbers within 1e-4), so the files cannot drift from vLLM silently."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.export.read.documents import open_document
from tests.helpers.recorded import assert_opens_as_recorded, raw
from tests.helpers.vllm_record import COMPLETION, OFFLINE, REQUESTS, differences, fetch, fetch_stable, parsed

pytestmark = pytest.mark.vllm


@pytest.fixture(scope="module")
def fresh(vllm_server):
    """Each request of the recorded set, answered now (asked until two answers agree: see fetch_stable)."""
    answers: dict[str, bytes] = {}

    def get(name: str) -> bytes:
        if name not in answers:
            answers[name] = fetch_stable(vllm_server.url, name)
        return answers[name]

    return get


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_a_fresh_body_opens_and_the_recorded_file_still_matches_it(fresh, name):
    data = fresh(name)
    assert_opens_as_recorded(name, data)
    diffs = differences(parsed(name, raw(name)), parsed(name, data), tol=1e-4)
    assert not diffs, f"tests/data/vllm/{name} no longer matches the server (remake it: see its README):\n" + "\n".join(
        diffs[:10]
    )


@pytest.mark.parametrize("name", sorted(OFFLINE))
def test_the_offline_outputs_match_the_server_on_the_same_prompt(vllm_server, name):
    """The offline files are not remade here (vllm.LLM takes minutes to start beside the server): their prompt's
    numbers are checked against the server's prompt_logprobs for the same prompt (ids and ranks equal, 1e-4)."""
    offline = open_document(raw(name)).results[0]
    body = {**COMPLETION, "prompt": OFFLINE[name][0][0], "prompt_logprobs": 5, "return_token_ids": True}
    served = open_document(fetch(vllm_server.url, "/v1/completions", body)).results[0]
    p = served.n_prompt
    assert offline.n_prompt == p and offline.token_ids[:p].tolist() == served.token_ids[:p].tolist()
    assert offline.ranks[:p].tolist() == served.ranks[:p].tolist()
    np.testing.assert_allclose(offline.logprobs[1:p], served.logprobs[1:p], atol=1e-4)
    np.testing.assert_allclose(offline.top_logprobs[1:p, :5], served.top_logprobs[1:p, :5], atol=1e-4)
