"""`return_hidden_states` on /v1/completions and /v1/chat/completions: the states equal a plain transformers forward
pass, the logprobs of the same request are unchanged, every encoding decodes by the documented recipe, the limits
and bad values are 400s naming the field, and engines without hidden states refuse clearly."""

from __future__ import annotations

import base64
import inspect
import json
from dataclasses import replace

import httpx
import numpy as np
import pytest
import torch

from explorer.api.handlers import chat_body, completion_body
from explorer.api.schemas import ChatRequest, CompletionRequest, parse
from explorer.engine.analyses.hidden import local_engine
from explorer.engine.capabilities import Capabilities
from explorer.errors import ExplorerError
from explorer.export import openai_chat, openai_completion
from explorer.export.hidden_states import Shape
from explorer.results.hidden import HiddenStates, hook_name
from explorer.results.scores import TokenScores
from explorer.rules.sampler import PUBLIC_LIMITS, Limits
from tests.helpers.api import client, model  # noqa: F401 - the module's openai client on the live server
from tests.helpers.samples import generated_chat
from tests.helpers.servers import LiveServer

TOL = 1e-5
LAYERS = [0, 1, -1, "final_norm"]  # the tiny models have L = 2 blocks


def decode(h: dict) -> np.ndarray:
    """The documented recipe: base64 bytes read as `dtype` (bfloat16 as uint16 shifted into float32's top half)."""
    if h["encoding_format"] == "float":
        return np.asarray(h["data"], np.float32).reshape(h["shape"])
    raw = base64.b64decode(h["data"])
    if h["dtype"] == "bfloat16":
        return (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32).reshape(h["shape"])
    return np.frombuffer(raw, "<" + {"float32": "f4", "float16": "f2"}[h["dtype"]]).reshape(h["shape"])


def blocks_and_norm(model) -> tuple[torch.nn.Module, torch.nn.Module]:
    """The last block and the final norm of a tiny GPT-2 or Llama."""
    base = model.base_model
    return (base.h[-1], base.ln_f) if hasattr(base, "h") else (base.layers[-1], base.norm)


@torch.inference_mode()
def reference(model, ids: list[int]) -> np.ndarray:
    """(T, L+2, H) from one plain forward pass: HF's entries 0..L-1, the last block's output (hooked), and the
    final norm applied to it (which HF reports as its entry L)."""
    last_block, norm = blocks_and_norm(model)
    seen = []
    hook = last_block.register_forward_hook(lambda m, a, out: seen.append(out[0] if isinstance(out, tuple) else out))
    try:
        out = model(torch.tensor([ids]), output_hidden_states=True)
    finally:
        hook.remove()
    pre = seen[-1][0]
    after = norm(pre)
    assert torch.allclose(after, out.hidden_states[-1][0], atol=TOL), "HF's entry L is the final norm's output"
    return torch.stack([*(h[0] for h in out.hidden_states[:-1]), pre, after], dim=1).numpy()


def post(live, route: str, body: dict) -> httpx.Response:
    return httpx.post(f"{live.url}/v1/{route}", json=body, timeout=60)


def states_of(live, route: str, body: dict) -> tuple[dict, list[dict]]:
    r = post(live, route, body)
    assert r.status_code == 200, r.text
    out = r.json()
    return out, [c["hidden_states"] for c in out["choices"]]


# ---- the numbers -----------------------------------------------------------------------------


def test_prompt_states_equal_a_transformers_forward(live, gpt2):
    prompt = "The capital of France is Paris."
    body = {"prompt": prompt, "max_tokens": 0, "echo": True, "logprobs": 2, "return_hidden_states": {"layers": LAYERS}}
    _, (h,) = states_of(live, "completions", body)
    ids = gpt2.encode(prompt)
    assert h["layers"] == [0, 1, 2, "final_norm"]
    assert h["hook_names"] == [
        "blocks.0.hook_resid_pre",
        "blocks.0.hook_resid_post",
        "blocks.1.hook_resid_post",
        "ln_final.hook_normalized",
    ]
    assert h["token_ids"] == ids and h["positions"] == list(range(len(ids)))
    assert h["shape"] == [len(ids), 4, 32] and (h["dtype"], h["endianness"], h["encoding_format"]) == (
        "float32",
        "little",
        "base64",
    )
    ref = reference(gpt2.model, ids)
    np.testing.assert_allclose(decode(h), ref[:, [0, 1, 2, 3]], atol=TOL, rtol=0)


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_every_layer_on_both_architectures(request, name):
    """LayerNorm (GPT-2) and RMSNorm (Llama): layer L is the norm's input, final_norm its output."""
    engine = request.getfixturevalue(name)
    req = parse(
        CompletionRequest,
        {"prompt": "fox jumps over", "max_tokens": 0, "echo": True, "return_hidden_states": {"layers": LAYERS}},
    )
    (h,) = [c["hidden_states"] for c in completion_body(engine, req, Limits())["choices"]]
    got = decode(h)
    np.testing.assert_allclose(got, reference(engine.model, h["token_ids"]), atol=TOL, rtol=0)
    with torch.inference_mode():
        normed = blocks_and_norm(engine.model)[1](torch.from_numpy(got[:, 2].copy())).numpy()
    np.testing.assert_allclose(got[:, 3], normed, atol=TOL, rtol=0)


def test_generated_states_are_those_of_the_tokens_read(live, gpt2):
    """A generation of N tokens has states at prompt + N - 1 positions: the last token was never read."""
    body = {
        "prompt": "The quick brown",
        "max_tokens": 6,
        "temperature": 0,
        "return_token_ids": True,
        "return_hidden_states": {"layers": LAYERS, "positions": "all"},
    }
    out, (h,) = states_of(live, "completions", body)
    ch = out["choices"][0]
    seq = ch["prompt_token_ids"] + ch["token_ids"]
    assert len(ch["token_ids"]) == 6 and h["positions"] == list(range(len(seq) - 1)) and h["token_ids"] == seq[:-1]
    np.testing.assert_allclose(decode(h), reference(gpt2.model, seq[:-1]), atol=TOL, rtol=0)


def test_logprobs_are_unchanged_by_the_field(live):
    score = {"prompt": "Logprobs tell you what", "max_tokens": 0, "echo": True, "logprobs": 3, "prompt_logprobs": 3}
    plain = post(live, "completions", score).json()["choices"][0]
    asked = post(live, "completions", {**score, "return_hidden_states": {"layers": [1]}}).json()["choices"][0]
    assert asked.pop("hidden_states")["shape"][0] == len(plain["prompt_logprobs"])
    assert asked == plain, "the scoring forward passes are exactly scoring's"
    gen = {"prompt": "The lazy", "max_tokens": 8, "temperature": 0.9, "seed": 3, "logprobs": 3}
    plain = post(live, "completions", gen).json()["choices"][0]
    asked = post(live, "completions", {**gen, "return_hidden_states": True}).json()["choices"][0]
    asked.pop("hidden_states")
    assert asked["text"] == plain["text"] and asked["logprobs"]["tokens"] == plain["logprobs"]["tokens"]
    np.testing.assert_allclose(
        asked["logprobs"]["token_logprobs"], plain["logprobs"]["token_logprobs"], atol=TOL, rtol=0
    )  # the batch's B rows may change the last bits (explorer/engine/batching/scheduler.py); alone here


def test_chat_states_follow_the_templated_prompt(live, gpt2):
    messages = [{"role": "user", "content": "Tell me about foxes"}]
    body = {
        "messages": messages,
        "max_tokens": 4,
        "temperature": 0,
        "return_token_ids": True,
        "return_hidden_states": {"layers": ["final_norm", 0], "positions": "prompt"},
    }
    out, (h,) = states_of(live, "chat/completions", body)
    ids = gpt2.encode_chat(messages)
    assert out["prompt_token_ids"] == ids and h["token_ids"] == ids and h["layers"] == ["final_norm", 0]
    np.testing.assert_allclose(decode(h), reference(gpt2.model, ids)[:, [3, 0]], atol=TOL, rtol=0)


# ---- encodings and positions -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_smaller_dtypes_are_the_float32_values_rounded(live, dtype):
    ask = {"prompt": "Grüße aus München!", "max_tokens": 0, "echo": True}
    _, (full,) = states_of(live, "completions", {**ask, "return_hidden_states": {"layers": LAYERS}})
    _, (small,) = states_of(live, "completions", {**ask, "return_hidden_states": {"layers": LAYERS, "dtype": dtype}})
    assert small["dtype"] == dtype and len(base64.b64decode(small["data"])) == 2 * np.prod(small["shape"])
    want = torch.from_numpy(decode(full).copy()).to(getattr(torch, dtype)).float().numpy()
    np.testing.assert_array_equal(decode(small), want)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_float_encoding_equals_the_base64_one(live, dtype):
    ask = {"prompt": "def add(a, b):", "max_tokens": 0, "echo": True}
    spec = {"layers": [1, "final_norm"], "dtype": dtype}
    _, (b64,) = states_of(live, "completions", {**ask, "return_hidden_states": spec})
    _, (flt,) = states_of(live, "completions", {**ask, "return_hidden_states": {**spec, "encoding_format": "float"}})
    assert flt["encoding_format"] == "float" and isinstance(flt["data"][0][0][0], float)
    np.testing.assert_array_equal(decode(flt), decode(b64))


def test_positions_and_negative_layers(live):
    body = {"prompt": "The quick brown fox jumps", "max_tokens": 4, "temperature": 0}
    _, (every,) = states_of(live, "completions", {**body, "return_hidden_states": {"layers": [0, 1, 2]}})
    whole = decode(every)
    n = len(every["positions"])

    def ask(spec: dict) -> tuple[dict, np.ndarray]:
        _, (h,) = states_of(live, "completions", {**body, "return_hidden_states": spec})
        return h, decode(h)

    h, x = ask({"layers": [-3, -2, -1], "positions": "last"})
    assert h["layers"] == [0, 1, 2] and h["positions"] == [n - 1]
    np.testing.assert_array_equal(x, whole[-1:])
    h, x = ask({"layers": [2], "positions": [1, 3]})
    assert h["positions"] == [1, 2]
    np.testing.assert_array_equal(x[:, 0], whole[1:3, 2])
    h, x = ask({"layers": [1], "positions": [n - 2, 10_000]})  # clipped at the last position that has a state
    assert h["positions"] == [n - 2, n - 1]
    h, x = ask({"layers": [0], "positions": "prompt"})
    assert h["positions"] == list(range(n - 3)), "4 generated tokens: 3 of them have states"
    np.testing.assert_array_equal(x[:, 0], whole[: n - 3, 0])


def test_one_token_prompt_scored(live):
    _, (h,) = states_of(
        live, "completions", {"prompt": [5], "max_tokens": 0, "echo": True, "return_hidden_states": {"layers": [0]}}
    )
    assert h["shape"] == [1, 1, 32] and h["token_ids"] == [5]


# ---- SGLang's forms, through the openai client ------------------------------------------------------


def test_sglang_forms_with_the_openai_client(client, model, live):
    kw = dict(model=model, prompt="The quick brown", max_tokens=5, temperature=0)
    last_vec = client.completions.create(**kw, extra_body={"return_hidden_states": True})
    vec = last_vec.model_dump()["choices"][0]["hidden_states"]
    per_token = client.completions.create(**kw, extra_body={"return_hidden_states": "last"})
    rows = per_token.model_dump()["choices"][0]["hidden_states"]
    _, (h,) = states_of(live, "completions", {**kw, "return_hidden_states": {"layers": ["final_norm"]}})
    normed = decode(h)[:, 0]  # (P + 4, H)
    assert len(vec) == 32 and all(isinstance(v, float) for v in vec)
    np.testing.assert_allclose(vec, normed[-1], atol=TOL, rtol=0)  # the step that drew the last token
    assert np.asarray(rows).shape == (5, 32), "one vector per generated token: the state that drew it"
    np.testing.assert_allclose(rows, normed[-5:], atol=TOL, rtol=0)
    one = client.completions.create(**{**kw, "max_tokens": 1}, extra_body={"return_hidden_states": True})
    assert one.model_dump()["choices"][0]["hidden_states"] == [], "SGLang: a one-token generation gives []"
    chat = client.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": "Hi"}],
        max_tokens=3,
        extra_body={"return_hidden_states": True},
    )
    assert len(chat.model_dump()["choices"][0]["hidden_states"]) == 32


# ---- refusals and limits -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "param", "code"),
    [
        ({"layers": [3]}, "return_hidden_states.layers", "invalid_value"),
        ({"layers": [-4]}, "return_hidden_states.layers", "invalid_value"),
        ({"layers": [1, -2]}, "return_hidden_states.layers", "invalid_value"),
        ({"layers": [True]}, "return_hidden_states.layers", "invalid_value"),
        ({"layers": []}, "return_hidden_states.layers", "invalid_value"),
        ({}, "return_hidden_states.layers", "missing_required_parameter"),
        ({"layers": [0], "colour": 1}, "return_hidden_states.colour", "invalid_value"),
        ({"layers": [0], "dtype": "int8"}, "return_hidden_states.dtype", "invalid_value"),
        ({"layers": [0], "encoding_format": "hex"}, "return_hidden_states.encoding_format", "invalid_value"),
        ({"layers": [0], "positions": [3, 1]}, "return_hidden_states.positions", "invalid_value"),
        ({"layers": [0], "positions": "first"}, "return_hidden_states.positions", "invalid_value"),
        ("first", "return_hidden_states", "invalid_value"),
        (1, "return_hidden_states", "invalid_type"),
    ],
)
def test_bad_values_are_400s_naming_the_field(live, field, param, code):
    r = post(live, "completions", {"prompt": "x y", "max_tokens": 0, "echo": True, "return_hidden_states": field})
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert (err["param"], err["code"], err["type"]) == (param, code, "invalid_request_error") and err["message"]


@pytest.mark.parametrize(
    ("extra", "param", "says"),
    [
        ({"stream": True}, "return_hidden_states", "stream"),
        ({"n": 2}, "return_hidden_states", "`n` (=2) must be 1"),
        ({"best_of": 2}, "best_of", "not supported"),
    ],
)
def test_stream_n_and_best_of_are_refused_with_a_reason(live, extra, param, says):
    r = post(live, "completions", {"prompt": "x", "max_tokens": 2, "return_hidden_states": True, **extra})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == param and says in r.json()["error"]["message"]
    plain = post(live, "completions", {"prompt": "x", "max_tokens": 2, **extra, "stream": False})
    assert plain.status_code == (400 if "best_of" in extra else 200), "refused because of the capture"


def test_17_prompt_tokens_get_a_400_naming_16(live, gpt2):
    ids = list(range(5, 22))  # 17 prompt tokens
    r = post(live, "completions", {"prompt": ids, "max_tokens": 1, "return_hidden_states": {"layers": [0]}})
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert (err["param"], err["code"]) == ("return_hidden_states", "hidden_states_too_long")
    assert err["message"].startswith("Text too long for hidden states: 17 tokens, max is 16 ")
    assert "33,554,432" in err["message"] and "EXPLORER_HIDDEN_STATES_MAX_BYTES" in err["message"]
    _, (h,) = states_of(live, "completions", {"prompt": ids[:16], "max_tokens": 1, "return_hidden_states": True})
    assert len(h) == 0, "16 tokens are served (one generated token: SGLang's [])"


def test_the_token_cap_is_a_setting(gpt2):
    # every position of the prompt and none generated (the one generated token has no state): n positions returned
    req = parse(
        CompletionRequest, {"prompt": "The quick brown fox", "max_tokens": 1, "return_hidden_states": {"layers": [0]}}
    )
    n = len(gpt2.encode("The quick brown fox"))
    with pytest.raises(ExplorerError) as err:
        completion_body(gpt2, req, Limits(hidden_states_max_tokens=n - 1))
    assert err.value.message.startswith(f"Text too long for hidden states: {n} tokens, max is {n - 1} ")
    assert err.value.param == "return_hidden_states" and err.value.code == "hidden_states_too_long"
    completion_body(gpt2, req, Limits(hidden_states_max_tokens=n))  # at the cap: served


LONG_CHAT = [
    {"role": "system", "content": "You are a helpful assistant who answers in one short and friendly sentence."},
    {"role": "user", "content": "Hi"},
]


def test_the_token_cap_counts_the_positions_returned_not_the_prompt(client, model, live, gpt2):
    """A chat whose template makes the prompt longer than the cap (SmolLM2's default system prompt: 31 tokens) still
    gets SGLang's `true` (1 position) and `"last"` (one per generated token); asking for every prompt position is
    what the cap refuses, with the count it bounds."""
    assert len(gpt2.encode_chat(LONG_CHAT)) > 16
    kw = dict(model=model, messages=LONG_CHAT, max_tokens=2, temperature=0)
    one = client.chat.completions.create(**kw, extra_body={"return_hidden_states": True})
    assert len(one.model_dump()["choices"][0]["hidden_states"]) == 32
    rows = client.chat.completions.create(**kw, extra_body={"return_hidden_states": "last"})
    assert np.asarray(rows.model_dump()["choices"][0]["hidden_states"]).shape == (2, 32)
    _, (h,) = states_of(
        live, "chat/completions", {**kw, "return_hidden_states": {"layers": [0, 1], "positions": "last"}}
    )
    assert h["shape"] == [1, 2, 32]
    prompt = len(gpt2.encode_chat(LONG_CHAT))
    r = post(live, "chat/completions", {**kw, "return_hidden_states": {"layers": [0], "positions": "prompt"}})
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["code"] == "hidden_states_too_long"
    msg = err["message"]
    assert msg.startswith(f"Text too long for hidden states: {prompt} tokens, max is 16 (positions whose states")
    assert f"({prompt} positions x 1 layer x 32 x 4 bytes)" in msg and "1 layers" not in msg


def test_one_position_and_one_layer_read_as_such(gpt2):
    req = parse(
        CompletionRequest,
        {"prompt": "fox", "max_tokens": 2, "return_hidden_states": {"layers": [0], "positions": "last"}},
    )
    with pytest.raises(ExplorerError) as err:
        completion_body(gpt2, req, Limits(hidden_states_max_bytes=10))
    assert "(1 position x 1 layer x 32 x 4 bytes)" in err.value.message
    assert "1 tokens" not in err.value.message and "1 token, max is 16" in err.value.message


def test_the_byte_budget_counts_positions_layers_and_the_dtype(gpt2):
    ids = gpt2.encode("fox jumps")
    spec = {"layers": [0, 1], "positions": "all"}
    body = {"prompt": "fox jumps", "max_tokens": 3, "temperature": 0}
    positions = len(ids) + 2  # the last generated token has no state
    need = positions * 2 * 32 * 4
    with pytest.raises(ExplorerError) as err:
        completion_body(
            gpt2,
            parse(CompletionRequest, {**body, "return_hidden_states": spec}),
            Limits(hidden_states_max_bytes=need - 1),
        )
    msg = err.value.message
    assert msg.startswith("Too many bytes for hidden states: ") and f"{need:,} bytes ({positions} positions" in msg
    assert f"max is {need - 1:,} (EXPLORER_HIDDEN_STATES_MAX_BYTES)" in msg and "max is 16 " in msg
    assert err.value.code == "hidden_states_too_large"
    half = parse(CompletionRequest, {**body, "return_hidden_states": {**spec, "dtype": "float16"}})
    assert completion_body(gpt2, half, Limits(hidden_states_max_bytes=need // 2))["choices"][0]["hidden_states"]


def test_the_limits_are_settings(monkeypatch):
    assert (Limits().hidden_states_max_tokens, Limits().hidden_states_max_bytes) == (16, 33_554_432)
    assert Limits().hidden_states and not PUBLIC_LIMITS.hidden_states, "public: off unless the operator says"
    monkeypatch.setenv("EXPLORER_HIDDEN_STATES_MAX_TOKENS", "7")
    monkeypatch.setenv("EXPLORER_HIDDEN_STATES_MAX_BYTES", "1000")
    limits = Limits.from_env()
    assert (limits.hidden_states_max_tokens, limits.hidden_states_max_bytes) == (7, 1000)
    assert limits.report()["hidden_states_max_tokens"] == 7 and limits.report()["hidden_states"]
    assert not Limits.from_env(public=True).hidden_states
    monkeypatch.setenv("EXPLORER_HIDDEN_STATES", "1")
    assert Limits.from_env(public=True).hidden_states
    monkeypatch.setenv("EXPLORER_HIDDEN_STATES", "0")
    assert not Limits.from_env().hidden_states
    monkeypatch.setenv("EXPLORER_HIDDEN_STATES", "maybe")
    with pytest.raises(ExplorerError, match="EXPLORER_HIDDEN_STATES"):
        Limits.from_env()


def test_public_mode_is_off_unless_the_operator_turns_it_on(gpt2):
    req = parse(CompletionRequest, {"prompt": "fox", "max_tokens": 2, "return_hidden_states": True})
    with pytest.raises(ExplorerError) as err:
        completion_body(gpt2, req, PUBLIC_LIMITS)
    assert err.value.code == "hidden_states_off" and err.value.param == "return_hidden_states"
    assert "EXPLORER_HIDDEN_STATES=1" in err.value.message
    assert len(completion_body(gpt2, req, replace(PUBLIC_LIMITS, hidden_states=True))["choices"]) == 1
    plain = parse(CompletionRequest, {"prompt": "fox", "max_tokens": 2})
    assert completion_body(gpt2, plain, PUBLIC_LIMITS)["choices"], "only the capture is off"


def test_the_model_card_reports_the_caps(live, gpt2):
    (card,) = httpx.get(f"{live.url}/v1/models", timeout=30).json()["data"]
    caps = card["capabilities"]
    assert (caps["hidden_states_max_tokens"], caps["hidden_states_max_bytes"]) == (16, 33_554_432)
    assert caps["full_vocab_max_prompt_tokens"] == 256
    srv = LiveServer(gpt2, limits=PUBLIC_LIMITS)
    try:
        (card,) = httpx.get(f"{srv.url}/v1/models", timeout=30).json()["data"]
    finally:
        srv.stop()
    assert (card["capabilities"]["hidden_states_max_tokens"], card["capabilities"]["hidden_states_max_bytes"]) == (0, 0)


def test_chat_budget_is_the_room_left(gpt2):
    """Chat without max_tokens may generate up to the context: that many positions count against the bytes."""
    req = parse(ChatRequest, {"messages": [{"role": "user", "content": "Hi"}], "return_hidden_states": {"layers": [0]}})
    with pytest.raises(ExplorerError) as err:
        chat_body(gpt2, req, Limits(hidden_states_max_bytes=1000))
    assert f"({gpt2.context - 1} positions x 1 layer x 32 x 4 bytes)" in err.value.message


def test_llamacpp_refuses_with_the_engine_that_can(tiny_gguf):
    srv = LiveServer(tiny_gguf)
    try:
        r = post(srv, "completions", {"prompt": "x y", "max_tokens": 1, "return_hidden_states": True})
    finally:
        srv.stop()
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["param"] == "return_hidden_states" and err["code"] == "not_available"
    assert "llama.cpp" in err["message"] and "--engine torch" in err["message"]


class _Remote:
    """A served model as the refusal reads it: its name and capabilities (a real one needs a backend server)."""

    name = "served"
    capabilities = Capabilities.remote(max_logprobs=20, full_vocab_max_prompt_tokens=0)


def test_a_remote_engine_refuses_with_the_engine_that_can():
    with pytest.raises(ExplorerError) as err:
        local_engine(_Remote())  # type: ignore[arg-type]
    assert err.value.code == "not_available_remote" and err.value.param == "return_hidden_states"
    assert "remote server" in err.value.message and "--engine torch" in err.value.message


# ---- the result type ------------------------------------------------------------------------------------


def test_hook_names_and_round_trip():
    assert [hook_name(x) for x in (0, 1, 12, "final_norm")] == [
        "blocks.0.hook_resid_pre",
        "blocks.0.hook_resid_post",
        "blocks.11.hook_resid_post",
        "ln_final.hook_normalized",
    ]
    h = HiddenStates(
        [0, "final_norm"], np.array([4, 5]), np.array([2, 3]), np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    )
    back = HiddenStates.from_dict(h.to_dict())
    assert back.to_dict() == h.to_dict() and back.values.dtype == np.float32


def _states() -> HiddenStates:
    """Two positions of generated_chat's tokens, two layers, width 3."""
    values = np.arange(12, dtype=np.float32).reshape(2, 2, 3) / 7
    return HiddenStates([0, "final_norm"], np.array([10, 72]), np.array([1, 2]), values)


def test_the_states_travel_in_the_result_and_the_exporters_write_them():
    """#56: a result carries its states; each exporter writes `hidden_states` from the result alone (no argument
    beside the results), after the choice's other keys, and refuses with a reason when asked for states a result
    does not carry."""
    h = _states()
    r = replace(generated_chat(), hidden_states=h)
    shape = Shape("object", "float32", "base64")
    completion = openai_completion.export([r], options=openai_completion.Options(logprobs=2, hidden_states=shape))
    chat = openai_chat.export([r], options=openai_chat.Options(hidden_states=shape))
    for body in (completion, chat):
        (c,) = body["choices"]
        assert list(c)[-1] == "hidden_states"
        assert c["hidden_states"]["token_ids"] == [10, 72] and c["hidden_states"]["positions"] == [1, 2]
        np.testing.assert_array_equal(decode(c["hidden_states"]), h.values)
    last = openai_completion.export([r], options=openai_completion.Options(hidden_states=Shape("sglang_last")))
    assert last["choices"][0]["hidden_states"] == h.values[:, 0, :].tolist()
    assert "hidden_states" not in openai_chat.export([r])["choices"][0]  # not asked: not written
    for exporter in (openai_completion.export, openai_chat.export):
        assert not any("hidden" in p for p in inspect.signature(exporter).parameters), exporter
    with pytest.raises(ExplorerError) as err:
        openai_chat.export([generated_chat()], options=openai_chat.Options(hidden_states=shape))
    assert err.value.param == "return_hidden_states" and "carry no hidden states" in err.value.message


def test_a_result_with_states_round_trips_and_one_without_keeps_its_shape():
    r = replace(generated_chat(), hidden_states=_states())
    back = TokenScores.from_dict(json.loads(json.dumps(r.to_dict())))
    assert back.hidden_states is not None and back.hidden_states.to_dict() == _states().to_dict()
    assert "hidden_states" not in generated_chat().to_dict()
    assert TokenScores.from_dict(generated_chat().to_dict()).hidden_states is None
