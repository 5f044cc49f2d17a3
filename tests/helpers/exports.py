"""Checks of section 12 of the shapes reference (docs/shapes.md) that every body passes, on any body."""

from __future__ import annotations


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
