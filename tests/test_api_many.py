"""`/v1/completions` with a list of prompts and `max_tokens: 0` (echo scoring, lm-eval's loglikelihood request): the
prompts are scored together, several a forward pass on the torch engine (explorer/engine/passes/many.py), and each
choice equals the one its prompt gets in a request of its own, through the real `openai` client."""

from __future__ import annotations

import pytest

from tests.helpers.api import client, model  # noqa: F401 - the fixtures

TEXTS = [
    "The cat sat.",
    "The capital of France is Paris.",  # the first one's length (tiny GPT-2's tokens): one pass with it
    "The dog ran.",
    "a",  # one token: scored alone
    "Hi",
    "def add(a, b):\n    return a + b\n",
    "The capital of Spain is Madrid.",
    "Grüße aus Köln! 👋",
    "The cat sat.",  # the same prompt twice
]
ASK = {"max_tokens": 0, "echo": True, "logprobs": 3}
EXTRA = {"prompt_logprobs": 4, "return_token_ids": True}


def _choices(client, model, prompt, n=1) -> list[dict]:
    r = client.completions.create(model=model, prompt=prompt, n=n, **ASK, extra_body=EXTRA)
    return r.model_dump()["choices"]


def _same(got: dict, want: dict) -> None:
    """One choice against another: the same tokens, ids and top-k ids and ranks; logprobs to 1e-5."""
    assert got["text"] == want["text"] and got["prompt_token_ids"] == want["prompt_token_ids"]
    g, w = got["logprobs"], want["logprobs"]
    assert g["tokens"] == w["tokens"] and g["text_offset"] == w["text_offset"]
    assert g["token_logprobs"][0] is None and w["token_logprobs"][0] is None
    assert g["token_logprobs"][1:] == pytest.approx(w["token_logprobs"][1:], abs=1e-5)
    for gt, wt in zip(g["top_logprobs"], w["top_logprobs"]):
        assert (gt is None) == (wt is None)
        if gt is not None:
            assert list(gt) == list(wt) and list(gt.values()) == pytest.approx(list(wt.values()), abs=1e-5)
    for gp, wp in zip(got["prompt_logprobs"], want["prompt_logprobs"], strict=True):
        assert (gp is None) == (wp is None)
        if gp is not None:
            assert list(gp) == list(wp)
            for key in gp:
                assert gp[key]["rank"] == wp[key]["rank"] and gp[key]["decoded_token"] == wp[key]["decoded_token"]
                assert gp[key]["logprob"] == pytest.approx(wp[key]["logprob"], abs=1e-5)


def test_a_list_of_prompts_equals_each_prompt_alone(client, model, gpt2):
    lengths = [len(gpt2.encode(t)) for t in TEXTS]
    assert len(set(lengths)) < len(lengths) and min(lengths) == 1  # shared passes, and a prompt that goes alone
    got = _choices(client, model, TEXTS)
    assert [c["index"] for c in got] == list(range(len(TEXTS)))
    for text, choice in zip(TEXTS, got):
        (alone,) = _choices(client, model, text)
        _same(choice, {**alone, "index": choice["index"]})
    ids = [gpt2.encode(t) for t in TEXTS[:3]]  # token ids as sent, and n choices of each
    got = _choices(client, model, ids, n=2)
    assert len(got) == 6
    for i, choice in enumerate(got):
        _same(choice, _choices(client, model, TEXTS[i // 2])[0])


def test_the_prompts_share_forward_passes(client, model, gpt2, monkeypatch):
    """The list is scored in batched passes (one per length of two tokens or more), not one pass a prompt."""
    calls = {"rows": 0, "one": 0}
    rows, body = gpt2.continue_rows, gpt2.body

    def counted_rows(ids, past=None):
        calls["rows"] += 1
        return rows(ids, past)

    def counted_body(*args, **kwargs):
        calls["one"] += 1
        return body(*args, **kwargs)

    monkeypatch.setattr(gpt2, "continue_rows", counted_rows)
    monkeypatch.setattr(gpt2, "body", counted_body)
    _choices(client, model, TEXTS)
    lengths = {len(gpt2.encode(t)) for t in TEXTS} - {1}
    assert calls == {"rows": len(lengths), "one": 0}
    _choices(client, model, TEXTS[0])  # one prompt: its own pass, as before
    assert calls == {"rows": len(lengths), "one": 1}
