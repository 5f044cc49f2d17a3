"""The API as a drop-in for a vLLM 0.32 logprobs server (checked against the real one in test_vllm_shapes.py): keys,
their order, EOS, streaming ends, extensions."""

from __future__ import annotations

import json
import math

import httpx
import openai
import pytest
import torch
from openai.types.chat import ChatCompletion

from tests.helpers.reference import ref_logprobs

USER = [{"role": "user", "content": "Tell me about foxes"}]


def keys(text: str) -> list:
    """Key order of a JSON object as sent (not as a dict would keep it)."""
    return [k for k, _ in json.loads(text, object_pairs_hook=lambda pairs: pairs)]


def raw(url: str, route: str, body: dict) -> httpx.Response:
    r = httpx.post(f"{url}/v1/{route}", json=body, timeout=60)
    assert r.status_code == 200, r.text
    return r


@pytest.fixture(scope="module")
def client(live):
    return openai.OpenAI(base_url=live.url + "/v1", api_key="unused", max_retries=0, timeout=60)


def choice_keys(text: str) -> list[str]:
    body = json.loads(text, object_pairs_hook=lambda pairs: pairs)
    choices = dict(body)["choices"]
    return [k for k, _ in choices[0]]


def test_completion_keys_in_vllm_order_always_present(live):
    r = raw(live.url, "completions", {"prompt": "fox", "max_tokens": 2, "logprobs": 1, "temperature": 0})
    assert choice_keys(r.text) == [
        "index",
        "text",
        "logprobs",
        "finish_reason",
        "stop_reason",
        "token_ids",
        "prompt_logprobs",
        "prompt_token_ids",
        "routed_experts",
    ]
    ch = r.json()["choices"][0]
    assert ch["token_ids"] is None and ch["prompt_token_ids"] is None and ch["prompt_logprobs"] is None
    ids = raw(live.url, "completions", {"prompt": "fox", "max_tokens": 2, "return_token_ids": True}).json()["choices"][
        0
    ]
    assert len(ids["token_ids"]) == 2 and ids["prompt_token_ids"]


def test_chat_prompt_logprobs_at_the_top_level(live, gpt2):
    r = raw(
        live.url,
        "chat/completions",
        {"messages": USER, "max_tokens": 2, "prompt_logprobs": 2, "return_token_ids": True},
    )
    assert keys(r.text)[-7:-3] == ["usage", "prompt_logprobs", "prompt_token_ids", "prompt_text"]
    body = r.json()
    assert [k for k, _ in json.loads(r.text, object_pairs_hook=lambda p: p)[4][1][0]] == [
        "index",
        "message",
        "logprobs",
        "finish_reason",
        "stop_reason",
        "token_ids",
        "routed_experts",
    ]
    assert body["prompt_token_ids"] == gpt2.encode_chat(USER) and body["prompt_logprobs"][0] is None
    assert "prompt_logprobs" not in body["choices"][0]
    plain = raw(live.url, "chat/completions", {"messages": USER, "max_tokens": 2}).json()
    assert (
        plain["prompt_logprobs"] is None
        and plain["prompt_token_ids"] is None
        and plain["choices"][0]["token_ids"] is None
    )


def test_completion_top_logprobs_actual_token_first(live):
    body = raw(
        live.url,
        "completions",
        {"prompt": "The quick brown", "max_tokens": 6, "logprobs": 3, "temperature": 1.5, "seed": 3},
    ).json()
    lp = body["choices"][0]["logprobs"]
    for tok, top in zip(lp["tokens"], lp["top_logprobs"]):
        assert next(iter(top)) == tok
        rest = list(top.values())[1:]
        assert rest == sorted(rest, reverse=True)


@pytest.fixture
def eos_soon(gpt2, monkeypatch):
    """The token a seeded request draws at its second step becomes EOS (a special token)."""
    body = {
        "prompt": "The capital of",
        "max_tokens": 6,
        "temperature": 1.5,
        "seed": 7,
        "logprobs": 2,
        "return_token_ids": True,
    }
    free = gpt2.encode("The capital of")
    from explorer.engine import generate
    from explorer.rules.sampler import SamplerSettings

    out = generate(gpt2, free, SamplerSettings(max_tokens=6, temperature=1.5, seed=7))[0]
    gen = out.token_ids[out.n_prompt :].tolist()
    j = next(i for i in range(1, len(gen)) if gen[i] not in gen[:i])
    monkeypatch.setattr(gpt2, "eos_ids", {gen[j]})
    monkeypatch.setattr(gpt2, "special_ids", gpt2.special_ids | {gen[j]})
    return body, gen[: j + 1]


def test_eos_counts_in_ids_logprobs_and_usage_not_text(live, gpt2, eos_soon):
    body, expected = eos_soon
    r = raw(live.url, "completions", body).json()
    ch = r["choices"][0]
    assert ch["token_ids"] == expected and ch["finish_reason"] == "stop" and ch["stop_reason"] is None
    eos_text = gpt2.vocab[expected[-1]].decode("utf-8", "backslashreplace")  # written as its token text (vLLM)
    assert len(ch["logprobs"]["tokens"]) == len(expected) and ch["logprobs"]["tokens"][-1] == eos_text
    assert r["usage"]["completion_tokens"] == len(expected)
    assert ch["text"] == gpt2.tokenizer.decode(expected[:-1]) or ch["text"].encode() == b"".join(
        gpt2.vocab[i] for i in expected[:-1]
    )
    chat = raw(
        live.url,
        "chat/completions",
        {"messages": USER, "max_tokens": 8, "temperature": 1.5, "seed": 7, "logprobs": True, "return_token_ids": True},
    ).json()
    c = chat["choices"][0]
    if c["finish_reason"] == "stop":  # ended on that EOS: no entry for it, usage counts it
        assert len(c["logprobs"]["content"]) == len(c["token_ids"]) - 1 == chat["usage"]["completion_tokens"] - 1
        ChatCompletion.model_validate(chat)


def test_stream_options_without_stream_is_a_400(live):
    r = httpx.post(live.url + "/v1/completions", json={"prompt": "x", "stream_options": {"include_usage": True}})
    assert r.status_code == 400 and r.json()["error"]["param"] == "stream_options"


def test_streamed_finish_rides_on_the_last_token(client):
    n = 5
    chunks = list(
        client.completions.create(
            model="tiny-gpt2",
            prompt="fox",
            max_tokens=n,
            temperature=0,
            stream=True,
            stream_options={"include_usage": True, "continuous_usage_stats": True},
        )
    )
    content = [c for c in chunks if c.choices]
    assert len(content) == n and content[-1].choices[0].finish_reason == "length"
    assert all(c.choices[0].finish_reason is None for c in content[:-1])
    assert [c.usage.completion_tokens for c in content] == list(range(1, n + 1))
    assert chunks[-1].usage.completion_tokens == n and not chunks[-1].choices
    chat = list(
        client.chat.completions.create(model="tiny-gpt2", messages=USER, max_tokens=n, temperature=0, stream=True)
    )
    assert len(chat) == n + 1 and chat[-1].choices[0].finish_reason == "length"  # role chunk, then n tokens


def test_logprob_token_ids_equal_the_full_row(live, gpt2):
    wanted = [5, 17, 40]
    r = raw(
        live.url,
        "completions",
        {
            "prompt": "The lazy",
            "max_tokens": 4,
            "temperature": 0,
            "logprobs": 0,
            "logprob_token_ids": wanted,
            "return_token_ids": True,
        },
    ).json()
    ch = r["choices"][0]
    ids = ch["prompt_token_ids"] + ch["token_ids"]
    lp = ref_logprobs(gpt2.model, ids)
    n_p = len(ch["prompt_token_ids"])
    for j, top in enumerate(ch["logprobs"]["top_logprobs"]):
        row = lp[n_p + j - 1]
        for i in wanted:
            text = gpt2.vocab[i].decode("utf-8", "backslashreplace")
            if text in top and text != ch["logprobs"]["tokens"][j]:
                assert abs(top[text] - float(row[i])) < 1e-5
        assert len(top) <= len(wanted) + 1
    chat = raw(
        live.url,
        "chat/completions",
        {
            "messages": USER,
            "max_tokens": 3,
            "temperature": 0,
            "logprobs": True,
            "top_logprobs": 2,
            "logprob_token_ids": wanted,
            "return_token_ids": True,
        },
    ).json()
    c = chat["choices"][0]
    full = chat_ids = gpt2.encode_chat(USER) + c["token_ids"]
    lp = ref_logprobs(gpt2.model, full)
    for j, e in enumerate(c["logprobs"]["content"]):
        first, *rest = e["top_logprobs"]  # the sampled token first, then the ids in the order asked (vLLM)
        assert (first["bytes"], first["logprob"]) == (e["bytes"], e["logprob"])
        assert [t["bytes"] for t in rest] == [list(gpt2.vocab[i]) for i in wanted]
        got = {tuple(t["bytes"]): t["logprob"] for t in rest}
        assert len(got) == len(wanted)
        for i in wanted:
            assert abs(got[tuple(gpt2.vocab[i])] - float(lp[len(chat_ids) - len(c["token_ids"]) + j - 1, i])) < 1e-5


def test_an_asked_id_that_is_sampled_is_listed_once(live, gpt2):
    """vLLM lists the sampled token first, then the asked ids but the sampled one: never one token twice (chat,
    streamed and not, n = 2; completions keys its entries by text, so the sampled token appears once there too)."""
    greedy = raw(
        live.url, "chat/completions", {"messages": USER, "max_tokens": 1, "temperature": 0, "return_token_ids": True}
    )
    first = greedy.json()["choices"][0]["token_ids"][0]
    other = next(i for i in (5, 17, 40) if i != first)
    asked = {"logprobs": True, "logprob_token_ids": [first, other], "max_tokens": 2, "temperature": 0}
    body = raw(live.url, "chat/completions", {"messages": USER, "n": 2, **asked}).json()
    for c in body["choices"]:
        top = c["logprobs"]["content"][0]["top_logprobs"]
        assert [t["bytes"] for t in top] == [list(gpt2.vocab[first]), list(gpt2.vocab[other])]
    lines = httpx.post(
        f"{live.url}/v1/chat/completions", json={"messages": USER, "stream": True, **asked}, timeout=60
    ).text.splitlines()
    chunks = [json.loads(x[6:]) for x in lines if x.startswith("data: {")]
    streamed = [e for ch in chunks for c in ch["choices"] if c.get("logprobs") for e in c["logprobs"]["content"]]
    assert [t["bytes"] for t in streamed[0]["top_logprobs"]] == [list(gpt2.vocab[first]), list(gpt2.vocab[other])]
    cmpl = raw(
        live.url,
        "completions",
        {"prompt": "The lazy", "max_tokens": 1, "temperature": 0, "logprobs": 0, "return_token_ids": True},
    ).json()["choices"][0]["token_ids"][0]
    other = next(i for i in (5, 17, 40) if i != cmpl)
    c = raw(
        live.url,
        "completions",
        {"prompt": "The lazy", "max_tokens": 1, "temperature": 0, "logprobs": 0, "logprob_token_ids": [cmpl, other]},
    ).json()["choices"][0]["logprobs"]
    assert list(c["top_logprobs"][0]) == [c["tokens"][0], gpt2.vocab[other].decode("utf-8", "backslashreplace")]


def test_prompt_logprob_token_ids(live, gpt2):
    wanted = [5, 17]
    r = raw(
        live.url,
        "completions",
        {
            "prompt": "fox jumps over",
            "max_tokens": 0,
            "echo": True,
            "prompt_logprob_token_ids": wanted,
            "return_token_ids": True,
        },
    ).json()
    ch = r["choices"][0]
    ids = ch["prompt_token_ids"]
    lp = ref_logprobs(gpt2.model, ids)
    for pos in range(1, len(ids)):
        entry = ch["prompt_logprobs"][pos]
        assert next(iter(entry)) == str(ids[pos])
        for i in wanted:
            e = entry[str(i)]
            assert abs(e["logprob"] - float(lp[pos - 1, i])) < 1e-5
            assert e["rank"] == int((lp[pos - 1] >= lp[pos - 1, i]).sum())


def test_tokens_as_token_ids_round_trip(live, gpt2):
    r = raw(
        live.url,
        "completions",
        {
            "prompt": "fox",
            "max_tokens": 4,
            "temperature": 0,
            "logprobs": 2,
            "return_tokens_as_token_ids": True,
            "return_token_ids": True,
        },
    ).json()
    ch = r["choices"][0]
    assert [int(t.removeprefix("token_id:")) for t in ch["logprobs"]["tokens"]] == ch["token_ids"]
    assert all(k.startswith("token_id:") for top in ch["logprobs"]["top_logprobs"] for k in top)
    chat = raw(
        live.url,
        "chat/completions",
        {
            "messages": USER,
            "max_tokens": 3,
            "temperature": 0,
            "logprobs": True,
            "return_tokens_as_token_ids": True,
            "return_token_ids": True,
        },
    ).json()
    c = chat["choices"][0]
    assert [int(e["token"].removeprefix("token_id:")) for e in c["logprobs"]["content"]] == c["token_ids"][
        : len(c["logprobs"]["content"])
    ]


def test_continue_final_message_and_echo(live, gpt2):
    msgs = [{"role": "user", "content": "Name a fox"}, {"role": "assistant", "content": "The quick"}]
    body = {
        "messages": msgs,
        "max_tokens": 3,
        "temperature": 0,
        "add_generation_prompt": False,
        "continue_final_message": True,
        "echo": True,
        "return_token_ids": True,
    }
    r = raw(live.url, "chat/completions", body).json()
    prompt = r["prompt_token_ids"]
    assert prompt == gpt2.encode_chat(msgs, add_generation_prompt=False, continue_final_message=True)
    assert gpt2.tokenizer.decode(prompt).endswith("The quick")  # no end-of-turn marker after it
    assert r["choices"][0]["message"]["content"].startswith("The quick")
    bad = httpx.post(live.url + "/v1/chat/completions", json={**body, "add_generation_prompt": True})
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "continue_final_message"


def test_echo_fills_prompt_logprobs_with_no_logprobs_asked(live, gpt2):
    """vLLM: with `echo` and no `prompt_logprobs`, a conversation's prompt is scored at `top_logprobs` (0 unset):
    one entry per prompt token, the first null, each the actual token with its rank; streamed, none."""
    msgs = [{"role": "user", "content": "Name a fox"}, {"role": "assistant", "content": "The quick"}]
    body = {"messages": msgs, "max_tokens": 2, "temperature": 0, "add_generation_prompt": False}
    body |= {"continue_final_message": True, "echo": True, "return_token_ids": True}
    r = raw(live.url, "chat/completions", body).json()
    prompt, entries = r["prompt_token_ids"], r["prompt_logprobs"]
    assert entries[0] is None and len(entries) == len(prompt)
    lp = ref_logprobs(gpt2.model, prompt)
    for pos, e in enumerate(entries[1:], start=1):
        assert list(e) == [str(prompt[pos])]  # k 0: the actual token alone
        got = e[str(prompt[pos])]
        assert abs(got["logprob"] - float(lp[pos - 1, prompt[pos]])) < 1e-5
        assert got["rank"] == int((lp[pos - 1] > lp[pos - 1, prompt[pos]]).sum()) + 1
    two = raw(live.url, "chat/completions", {**body, "logprobs": True, "top_logprobs": 2}).json()["prompt_logprobs"]
    assert all(len(e) in (2, 3) for e in two[1:])  # the actual token and the top 2
    assert raw(live.url, "chat/completions", {**body, "echo": False}).json()["prompt_logprobs"] is None


def test_max_logprobs_cap_is_a_setting(live, gpt2, monkeypatch):
    r = httpx.post(live.url + "/v1/chat/completions", json={"messages": USER, "logprobs": True, "top_logprobs": 21})
    assert r.status_code == 400 and "20" in r.json()["error"]["message"]
    monkeypatch.setenv("EXPLORER_MAX_LOGPROBS", "-1")
    assert httpx.get(live.url + "/v1/models").json()["data"][0]["capabilities"]["max_logprobs"] == -1
    chat = raw(
        live.url,
        "chat/completions",
        {"messages": USER, "max_tokens": 2, "temperature": 0, "logprobs": True, "top_logprobs": -1},
    ).json()
    for e in chat["choices"][0]["logprobs"]["content"]:
        assert len(e["top_logprobs"]) == gpt2.vocab_size
        assert math.isclose(sum(math.exp(t["logprob"]) for t in e["top_logprobs"]), 1.0, rel_tol=1e-3)
    comp = raw(live.url, "completions", {"prompt": "fox", "max_tokens": 1, "temperature": 0, "logprobs": -1}).json()
    assert len(comp["choices"][0]["logprobs"]["top_logprobs"][0]) > 1
    monkeypatch.setenv("EXPLORER_MAX_LOGPROBS", "3")
    r = httpx.post(live.url + "/v1/completions", json={"prompt": "x", "logprobs": 4})
    assert r.status_code == 400 and "at most 3" in r.json()["error"]["message"]


def test_tokenize_detokenize_health_version(live, gpt2):
    for base in (live.url, live.url + "/v1"):
        t = httpx.post(base + "/tokenize", json={"prompt": "fox jumps"}).json()
        assert (
            t["tokens"] == gpt2.encode("fox jumps")
            and t["count"] == len(t["tokens"])
            and t["max_model_len"] == gpt2.context
        )
        c = httpx.post(base + "/tokenize", json={"messages": USER}).json()
        assert c["tokens"] == gpt2.encode_chat(USER)
        d = httpx.post(base + "/detokenize", json={"tokens": t["tokens"]}).json()
        assert d["prompt"] == gpt2.tokenizer.decode(t["tokens"])
        assert httpx.post(base + "/detokenize", json={"tokens": [10**9]}).status_code == 400
    assert httpx.get(live.url + "/health").status_code == 200
    assert httpx.get(live.url + "/version").json()["version"]


@pytest.mark.parametrize(
    "body",
    [
        {"use_beam_search": True},
        {"tools": [{"type": "function", "function": {"name": "f"}}]},
        {"logit_bias": {"5": 3}},
        {"response_format": {"type": "json_object"}},
        {"chat_template": "{{ messages }}"},
        {"best_of": 3},
    ],
)
def test_unsupported_fields_are_refused_by_name(live, body):
    r = httpx.post(live.url + "/v1/chat/completions", json={"messages": USER, "max_tokens": 1, **body})
    assert r.status_code == 400 and r.json()["error"]["param"] == next(iter(body))


def test_harmless_defaults_are_accepted(live):
    raw(
        live.url,
        "chat/completions",
        {
            "messages": USER,
            "max_tokens": 1,
            "tool_choice": "none",
            "tools": [],
            "response_format": {"type": "text"},
            "user": "me",
        },
    )


def test_sampling_extensions_reach_the_sampler(live, gpt2):
    """Processed logprobs reflect the penalties: recomputed here by hand for a greedy request."""
    body = {
        "prompt": "fox",
        "max_tokens": 6,
        "temperature": 0,
        "logprobs": 0,
        "frequency_penalty": 1.5,
        "return_token_ids": True,
    }
    ch = raw(live.url, "completions", body).json()["choices"][0]
    ids = ch["prompt_token_ids"] + ch["token_ids"]
    with torch.no_grad():
        logits = gpt2.model(torch.tensor([ids])).logits[0].float()
    out = ch["token_ids"]
    for j in range(len(out)):
        counts = torch.bincount(torch.tensor(out[:j], dtype=torch.long), minlength=logits.shape[-1]).float()
        assert int((logits[len(ch["prompt_token_ids"]) + j - 1] - 1.5 * counts).argmax()) == out[j]
    r = httpx.post(live.url + "/v1/completions", json={"prompt": "x", "min_tokens": 5, "max_tokens": 2})
    assert r.status_code == 400 and r.json()["error"]["param"] == "min_tokens"


def _events(url: str, body: dict) -> list[dict]:
    with httpx.stream("POST", f"{url}/v1/completions", json={**body, "stream": True}, timeout=60) as r:
        assert r.status_code == 200
        data = [line[5:].strip() for line in r.iter_lines() if line.startswith("data:")]
    assert data[-1] == "[DONE]"
    return [json.loads(d) for d in data[:-1]]


def test_a_stop_string_keeps_the_token_that_completed_it(live, gpt2):
    """vLLM keeps every generated token up to the one that completed the stop string in the logprobs lists and
    in usage (the text is cut before it); streamed, that token comes last, with the finish."""
    free = raw(live.url, "completions", {"prompt": "The quick", "max_tokens": 8, "temperature": 0}).json()
    text = free["choices"][0]["text"]
    stop = text.strip()[:2] if len(text.strip()) >= 2 else text.strip()
    assert stop, "the tiny model generated only spaces"
    body = {"prompt": "The quick", "max_tokens": 8, "temperature": 0, "logprobs": 1, "stop": [stop]}
    body["return_token_ids"] = True
    ch = raw(live.url, "completions", body).json()
    c = ch["choices"][0]
    assert c["finish_reason"] == "stop" and c["stop_reason"] == stop and stop not in c["text"]

    def decoded(ids):
        return b"".join(gpt2.vocab[i] for i in ids).decode("utf-8", "replace")

    assert stop in decoded(c["token_ids"]) and stop not in decoded(c["token_ids"][:-1])  # the last one completed it
    assert len(c["logprobs"]["tokens"]) == len(c["token_ids"]) == ch["usage"]["completion_tokens"]
    events = _events(live.url, body)
    streamed = [e["choices"][0] for e in events if e["choices"]]
    assert [s["token_ids"][0] for s in streamed] == c["token_ids"]
    assert streamed[-1]["finish_reason"] == "stop" and "".join(s["text"] for s in streamed) == c["text"]
    assert events[-1]["system_fingerprint"].startswith("logprob-explorer-")


def test_echo_streams_the_prompt_first_and_fills_prompt_logprobs(live):
    body = {"prompt": "The lazy dog", "max_tokens": 3, "temperature": 0, "logprobs": 2, "echo": True}
    whole = raw(live.url, "completions", body).json()["choices"][0]
    n = len(whole["logprobs"]["tokens"]) - 3  # echo with logprobs fills prompt_logprobs too (vLLM)
    assert whole["prompt_logprobs"][0] is None and len(whole["prompt_logprobs"]) == n
    events = [e["choices"][0] for e in _events(live.url, body)]
    assert events[0]["prompt_token_ids"] is not None and events[0]["logprobs"]["token_logprobs"][0] is None
    joined = {k: [x for e in events for x in e["logprobs"][k]] for k in ("tokens", "token_logprobs", "text_offset")}
    assert joined["tokens"] == whole["logprobs"]["tokens"]
    assert joined["text_offset"] == whole["logprobs"]["text_offset"]
    assert "".join(e["text"] for e in events) == whole["text"]
    assert all(
        a == b or abs(a - b) < 1e-5
        for a, b in zip(joined["token_logprobs"], whole["logprobs"]["token_logprobs"])
        if a is not None
    )
