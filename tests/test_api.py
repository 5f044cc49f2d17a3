"""The HTTP API on a live loopback server, driven by the real `openai` client."""

from __future__ import annotations

import gzip
import json
import math

import httpx
import numpy as np
import openai
import pytest
from openai.types import ErrorObject
from openai.types.chat import ChatCompletion

from tests.helpers.api import (  # noqa: F401 - the fixtures, and the tests every engine passes (run here on torch)
    client,
    model,
    seeded_answers,
    test_bad_chat_and_unknown_model,
    test_completion_logprobs,
    test_streaming_chat_equals_non_stream,
    test_streaming_completion,
    test_token_id_prompt_is_scored_as_sent,
)
from tests.helpers.reference import assert_rank_close, ref_logprobs


def test_models_capabilities(live):
    body = httpx.get(live.url + "/v1/models").json()
    caps = body["data"][0]["capabilities"]
    assert caps["full_vocab_max_prompt_tokens"] == 256 and caps["max_logprobs"] == 20


def test_echo_scoring_and_prompt_logprobs(client, model, gpt2):
    prompt = "The capital of France is Paris."
    r = client.completions.create(
        model=model,
        prompt=prompt,
        max_tokens=0,
        echo=True,
        logprobs=3,
        extra_body={"prompt_logprobs": 4, "return_token_ids": True},
    )
    body = r.model_dump()
    ch = body["choices"][0]
    assert ch["text"] == prompt
    assert ch["logprobs"]["token_logprobs"][0] is None and ch["logprobs"]["top_logprobs"][0] is None
    ids = ch["prompt_token_ids"]
    assert ids == gpt2.encode(prompt) and body["usage"]["prompt_tokens"] == len(ids)
    lp = ref_logprobs(gpt2.model, ids)
    pl = ch["prompt_logprobs"]
    assert pl[0] is None and len(pl) == len(ids)
    for pos in range(1, len(ids)):
        keys = list(pl[pos])
        assert keys[0] == str(ids[pos])
        actual = pl[pos][keys[0]]
        assert len(keys) == (5 if actual["rank"] > 4 else 4)
        assert_rank_close(actual["rank"], lp[pos - 1], ids[pos])
        for key, v in pl[pos].items():
            assert abs(v["logprob"] - float(lp[pos - 1, int(key)])) < 1e-4


def test_full_vocab_under_and_over_the_cap(client, model, gpt2):
    r = client.completions.create(
        model=model, prompt="fox jumps", max_tokens=1, temperature=0, extra_body={"prompt_logprobs": -1}
    )
    pl = r.model_dump()["choices"][0]["prompt_logprobs"]
    assert all(len(e) == gpt2.vocab_size for e in pl[1:])
    assert math.isclose(sum(math.exp(v["logprob"]) for v in pl[1].values()), 1.0, rel_tol=1e-3)
    with pytest.raises(openai.BadRequestError) as err:
        client.completions.create(
            model=model,
            prompt="fox jumps over the lazy dog. " * 12,
            max_tokens=1,
            n=3,
            extra_body={"prompt_logprobs": -1},
        )
    assert err.value.code == "full_vocab_prompt_too_long"
    ErrorObject.model_validate(err.value.body)
    # a top-k request of the same size has no cap
    client.completions.create(
        model=model, prompt="fox jumps over the lazy dog. " * 12, max_tokens=1, n=3, extra_body={"prompt_logprobs": 5}
    )


def test_chat_logprobs_true_without_top_logprobs(client, model):
    r = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "Hi 👋"}], max_tokens=8, logprobs=True, seed=1
    )
    ChatCompletion.model_validate(r.model_dump())
    content = r.choices[0].logprobs.content
    assert content and all(e.top_logprobs == [] for e in content)
    assert b"".join(bytes(e.bytes) for e in content) == r.choices[0].message.content.encode()


def test_chat_top_logprobs_21_is_a_400_with_param(client, model):
    with pytest.raises(openai.BadRequestError) as err:
        client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": "Hi"}], logprobs=True, top_logprobs=21
        )
    assert err.value.status_code == 400 and err.value.param == "top_logprobs"
    ErrorObject.model_validate(err.value.body)


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"prompt": "x", "logprobs": -1}, "logprobs"),
        ({"prompt": "x", "logprobs": 21}, "logprobs"),
        ({"prompt": "x", "temperature": -1}, "temperature"),
        ({"prompt": "x", "top_p": 0}, "top_p"),
        ({"prompt": "x", "max_tokens": "many"}, "max_tokens"),
        ({"prompt": "x", "stream": True, "prompt_logprobs": 1}, "prompt_logprobs"),
        ({"prompt": "", "max_tokens": 2}, "prompt"),
        ({"prompt": [1, 2, 99999], "max_tokens": 2}, "prompt"),
        ({"max_tokens": 2}, "prompt"),
        ({"prompt": "x", "max_tokens": 0, "echo": True, "n": 10**6}, "n"),
    ],
)
def test_bad_completions_are_400_in_openai_shape(live, body, param):
    r = httpx.post(live.url + "/v1/completions", json=body)
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    ErrorObject.model_validate(err)
    assert err["param"] == param and isinstance(err["code"], str) and err["message"]


def test_gzip_when_asked(live):
    body = {"prompt": "fox jumps over the dog", "max_tokens": 1, "prompt_logprobs": -1, "return_token_ids": True}
    raw = httpx.post(live.url + "/v1/completions", json=body, headers={"Accept-Encoding": "gzip"})
    assert raw.headers.get("content-encoding") == "gzip"
    plain = httpx.post(live.url + "/v1/completions", json=body, headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers
    assert json.loads(raw.content)["choices"][0]["prompt_token_ids"] == plain.json()["choices"][0]["prompt_token_ids"]
    assert len(gzip.compress(plain.content)) < len(plain.content)


def test_api_key_enforced(live, monkeypatch, model):
    monkeypatch.setenv("EXPLORER_API_KEY", "sekret")
    r = httpx.get(live.url + "/v1/models")
    assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_api_key"
    ok = openai.OpenAI(base_url=live.url + "/v1", api_key="sekret", max_retries=0)
    assert ok.models.list().data[0].id == model
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=live.url + "/v1", api_key="wrong", max_retries=0).models.list()


def test_load_loses_nothing_and_mixes_nothing(client, model):
    """8 concurrent clients, 200 requests: each seeded answer equals the same request made alone (the same text;
    the logprobs within 1e-5: the generations decode in one batch, whose float32 sums may differ in the last bits)."""
    results, alone = seeded_answers(client, model, 200)
    assert len(results) == 200
    for i, text, lps in results:
        want_text, want_lps = alone[(i % 5, i % 7)]
        assert text == want_text and len(lps) == len(want_lps)
        np.testing.assert_allclose(lps, want_lps, atol=1e-5, rtol=0)


def test_echo_top_k_beside_full_vocab_prompt_logprobs(client, model, gpt2):
    r = client.completions.create(
        model=model,
        prompt="fox jumps over",
        max_tokens=0,
        echo=True,
        logprobs=3,
        extra_body={"prompt_logprobs": -1, "return_token_ids": True},
    )
    ch = r.model_dump()["choices"][0]
    ids = ch["prompt_token_ids"]
    lp = ref_logprobs(gpt2.model, ids)
    for pos in range(1, len(ids)):
        top = ch["logprobs"]["top_logprobs"][pos]
        assert 3 <= len(top) <= 4
        best = sorted(lp[pos - 1].tolist(), reverse=True)[:3]
        assert sorted(top.values(), reverse=True)[:3] == pytest.approx(best, abs=1e-4)
        assert len(ch["prompt_logprobs"][pos]) == gpt2.vocab_size
