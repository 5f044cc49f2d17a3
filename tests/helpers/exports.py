"""Checks of section 12 of the shapes reference (docs/shapes.md) that every body passes, on any body, and a body
read back through the strict writer and the page's importer."""

from __future__ import annotations

import json

import numpy as np
import pytest

from explorer.export import dumps
from explorer.export.read.documents import open_document
from explorer.results.scores import TokenScores


def check_completion_logprobs(lp: dict, k: int, echo: bool) -> None:
    n = len(lp["tokens"])
    assert len(lp["token_logprobs"]) == len(lp["top_logprobs"]) == len(lp["text_offset"]) == n
    for i in range(n):
        if echo and i == 0:
            assert lp["token_logprobs"][0] is None and lp["top_logprobs"][0] is None
            continue
        assert lp["token_logprobs"][i] is not None
        top = lp["top_logprobs"][i]
        assert top[lp["tokens"][i]] == lp["token_logprobs"][i]
        assert len(top) <= k + 1


def check_prompt_logprobs(entries: list, ids: list[int], k: int) -> None:
    assert entries[0] is None and len(entries) == len(ids)
    for pos in range(1, len(ids)):
        e = entries[pos]
        keys = list(e)
        assert keys[0] == str(ids[pos])
        actual = e[keys[0]]
        if k == -1:
            continue
        assert len(keys) == (k + 1 if actual["rank"] > k else k)
        others = sorted(v["rank"] for key, v in e.items() if key != keys[0])
        expected = [r for r in range(1, k + 1) if not (actual["rank"] <= k and r == actual["rank"])]
        assert others == expected
        best = max(e.values(), key=lambda v: v["logprob"])
        assert best["rank"] == 1


def read_back(body: dict) -> TokenScores:
    """The one result in `body` written by the strict writer (`dumps`), parsed by a strict parser and opened as the page
    opens a file; the parsed text must be the body, key by key and number by number."""
    text = dumps(body)
    parsed = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
    assert parsed == json.loads(json.dumps(body))  # the plain writer's text of the same body
    (r,) = open_document(text).results
    return r


def assert_generated_read_back(body: dict, r: TokenScores) -> None:
    """`body` (an export of `r`) reads back with `r`'s generated tokens and their logprobs, float32 for float32."""
    got, m = read_back(body), r.n - r.n_prompt
    assert m > 0 and got.n >= m, (got.n, m)
    np.testing.assert_array_equal(got.logprobs[got.n - m :], r.logprobs[r.n_prompt :])
    assert got.token_bytes[got.n - m :] == r.token_bytes[r.n_prompt :]
