"""The HTTP API through the real `openai` client on the module's `live` server: the `client` and `model` fixtures,
and the tests every engine passes, collected where they are imported (tests/test_api.py: the torch engine;
tests/test_llamacpp_tiny.py: llama.cpp)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx
import openai
import pytest
from openai.types.chat import ChatCompletionChunk


@pytest.fixture(scope="module")
def client(live):
    return openai.OpenAI(base_url=live.url + "/v1", api_key="unused", max_retries=0, timeout=60)


@pytest.fixture(scope="module")
def model(client):
    return client.models.list().data[0].id


def seeded_answers(client, model, n: int) -> tuple[list[tuple[int, str, list]], dict[tuple[int, int], tuple]]:
    """`n` seeded completions asked by 8 clients at once, request i of prompt i % 5 and seed i % 7, as (i, text,
    token logprobs); and before them each of those 35 requests asked alone: (i % 5, i % 7) -> (text, logprobs)."""
    prompts = ["The quick", "fox jumps", "The capital of", "def add(a, b):", "Grüße aus"]

    def ask(i):
        r = client.completions.create(
            model=model, prompt=prompts[i % 5], max_tokens=4, temperature=1.0, seed=i % 7, logprobs=1
        )
        return i, r.choices[0].text, r.choices[0].logprobs.token_logprobs

    alone = {(i % 5, i % 7): ask(i)[1:] for i in range(35)}
    with ThreadPoolExecutor(8) as pool:
        return list(pool.map(ask, range(n))), alone


def test_completion_logprobs(client, model, gpt2):
    r = client.completions.create(model=model, prompt="The quick brown", max_tokens=6, temperature=0, logprobs=5)
    lp = r.choices[0].logprobs
    assert len(lp.tokens) == len(lp.token_logprobs) == len(lp.top_logprobs) == r.usage.completion_tokens
    for tok, val, top in zip(lp.tokens, lp.token_logprobs, lp.top_logprobs):
        assert top[tok] == val and len(top) <= 6
    assert lp.text_offset[0] == 0 and r.choices[0].finish_reason == "length"


def test_token_id_prompt_is_scored_as_sent(client, model, gpt2):
    ids = gpt2.encode("fox jumps over")[1:]
    r = client.completions.create(
        model=model,
        prompt=ids,
        max_tokens=0,
        echo=True,
        logprobs=0,
        extra_body={"prompt_logprobs": 0, "return_token_ids": True},
    )
    ch = r.model_dump()["choices"][0]
    assert ch["prompt_token_ids"] == ids and all(e is None or len(e) == 1 for e in ch["prompt_logprobs"])


def test_streaming_chat_equals_non_stream(client, model):
    kw = dict(
        model=model,
        messages=[{"role": "user", "content": "Tell me about foxes"}],
        max_tokens=12,
        logprobs=True,
        top_logprobs=3,
        seed=11,
        temperature=0.9,
    )
    whole = client.chat.completions.create(**kw)
    chunks = list(client.chat.completions.create(**kw, stream=True, stream_options={"include_usage": True}))
    for c in chunks:
        ChatCompletionChunk.model_validate(c.model_dump())
    assert chunks[0].choices[0].delta.role == "assistant" and chunks[0].choices[0].logprobs is None
    entries = [
        e.model_dump() for c in chunks if c.choices and c.choices[0].logprobs for e in c.choices[0].logprobs.content
    ]
    assert entries == [e.model_dump() for e in whole.choices[0].logprobs.content]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content
    assert chunks[-1].usage.completion_tokens == whole.usage.completion_tokens
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == whole.choices[0].finish_reason


def test_streaming_completion(client, model):
    """The streamed chunks' logprobs, joined, are the non-stream body's, for a seeded sampled request."""
    kw = dict(model=model, prompt="The lazy", max_tokens=8, temperature=0.9, seed=4, logprobs=3)
    whole = client.completions.create(**kw)
    parts = list(client.completions.create(**kw, stream=True))
    assert "".join(p.choices[0].text for p in parts) == whole.choices[0].text
    lists = whole.choices[0].logprobs.model_dump()
    for key in ("tokens", "token_logprobs", "top_logprobs", "text_offset"):
        joined = [x for p in parts if p.choices[0].logprobs for x in getattr(p.choices[0].logprobs, key)]
        assert joined == lists[key], key
    assert parts[-1].choices[0].finish_reason == whole.choices[0].finish_reason


def test_bad_chat_and_unknown_model(live):
    r = httpx.post(
        live.url + "/v1/chat/completions", json={"messages": [{"role": "user", "content": "x"}], "top_logprobs": 2}
    )
    assert r.status_code == 400 and r.json()["error"]["param"] == "top_logprobs"
    r = httpx.post(live.url + "/v1/completions", json={"model": "nope/none", "prompt": "x"})
    assert r.status_code == 404 and r.json()["error"]["code"] == "model_not_found"
    r = httpx.post(live.url + "/v1/completions", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400
