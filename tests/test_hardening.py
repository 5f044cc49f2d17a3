"""A careless client and an attacker against a running server: never a 500, never a hang, never a takeover."""

from __future__ import annotations

import contextlib
import gzip
import json
import signal
import threading
import time

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai.types import ErrorObject

from explorer.rules.sampler import Limits
from tests.helpers.servers import LiveServer, ServerProcess, before_each_pass

USER = [{"role": "user", "content": "hi"}]

# (route, body: dict to send as JSON or raw bytes, HTTP status, error param or None, error code or None)
BAD = [
    ("completions", b'{"prompt": "\xff\xfe", "max_tokens": 1}', 400, None, "invalid_encoding"),
    ("completions", b"{not json", 400, None, "invalid_json"),
    ("completions", b"[1, 2]", 400, None, "invalid_json"),
    ("completions", b'{"prompt": "a\\ud800b", "max_tokens": 1}', 400, "prompt", "invalid_value"),
    (
        "chat/completions",
        b'{"messages": [{"role": "user", "content": "a\\udfffb"}]}',
        400,
        "messages[0].content",
        "invalid_value",
    ),
    (
        "chat/completions",
        {"messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]},
        400,
        "messages[0].content",
        "invalid_value",
    ),
    (
        "chat/completions",
        {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]},
        400,
        "messages[0].content",
        "invalid_value",
    ),
    ("completions", {"prompt": "x", "logprobs": True}, 400, "logprobs", None),
    ("completions", {"prompt": "x", "logprobs": "5"}, 400, "logprobs", None),
    ("completions", {"prompt": "x", "n": "2"}, 400, "n", None),
    ("completions", {"prompt": [True, False]}, 400, "prompt", None),
    ("completions", {"prompt": "x", "max_tokens": 1_000_000}, 400, "max_tokens", "integer_above_max_value"),
    ("chat/completions", {"messages": USER, "max_completion_tokens": -1}, 400, "max_completion_tokens", None),
    ("chat/completions", {"messages": USER, "max_completion_tokens": 10**6}, 400, "max_completion_tokens", None),
    ("completions", {"prompt": ["x"] * 100, "max_tokens": 1}, 400, "n", "too_many_choices"),
    ("completions", {"prompt": "x", "max_tokens": 0, "stream": True}, 400, "max_tokens", None),
    ("completions", {"prompt": "x", "stop": ["y" * 100_000] * 4}, 400, "stop", None),
    ("chat/completions", {"messages": USER * 1000, "stream": True}, 400, "prompt", "context_length_exceeded"),
    (
        "chat/completions",
        {"messages": [{"role": "user", "content": "fox " * 300}], "stream": True},
        400,
        "prompt",
        "context_length_exceeded",
    ),
    ("completions", {"prompt": "x" * 3_000_000}, 413, None, "request_too_large"),
    ("completions", {"model": "/etc", "prompt": "x"}, 404, "model", "model_not_found"),
    ("completions", b"[" * 100_000 + b"]" * 100_000, 400, None, "invalid_json"),
    ("completions", b'{"prompt": "a", "max_tokens": ' + b"9" * 5000 + b"}", 400, None, "invalid_json"),
    ("completions", b'{"prompt": "a", "\\ud800": 1}', 400, "\\ud800", "invalid_value"),
    ("completions", {"prompt": "a", "stream": "yes"}, 400, "stream", None),
    ("completions", {"prompt": "a", "stream_options": [1]}, 400, "stream_options", None),
    ("chat/completions", {"messages": [{"role": "user"}], "max_tokens": 3}, 400, "messages", "invalid_value"),
    ("chat/completions", {"messages": [{"role": "user", "content": None}]}, 400, "messages", "invalid_value"),
    ("chat/completions", {"messages": USER, "n": 1_000_000_000}, 400, "n", "integer_above_max_value"),
    ("completions", {"prompt": "x", "temperature": -1}, 400, "temperature", "number_below_min_value"),
    (
        "chat/completions",
        b'{"messages": [{"role": "user", "content": "hi"}], "top_p": Infinity}',
        400,
        "top_p",
        "number_above_max_value",
    ),
]


def post(url: str, route: str, body, **kw) -> httpx.Response:
    if isinstance(body, bytes):
        return httpx.post(
            f"{url}/v1/{route}", content=body, headers={"content-type": "application/json"}, timeout=60, **kw
        )
    return httpx.post(f"{url}/v1/{route}", json=body, timeout=60, **kw)


def models_answer(url: str) -> None:
    assert httpx.get(url + "/v1/models", timeout=5).status_code == 200


@pytest.mark.parametrize(("route", "body", "status", "param", "code"), BAD, ids=range(len(BAD)))
def test_bad_input_is_a_clean_openai_error(live, route, body, status, param, code):
    r = post(live.url, route, body)
    assert r.status_code == status, r.text
    err = r.json()["error"]
    ErrorObject.model_validate(err)
    assert err["message"] and err["param"] == param and (code is None or err["code"] == code), err
    assert "/tmp" not in err["message"] and "Traceback" not in r.text
    models_answer(live.url)


def test_a_message_without_content_reads_as_one_with_a_bad_content(live):
    bad = post(live.url, "chat/completions", {"messages": [{"role": "user", "content": 5}], "max_tokens": 3})
    missing = post(live.url, "chat/completions", {"messages": [{"role": "user"}], "max_tokens": 3})
    assert missing.status_code == bad.status_code == 400, missing.text
    assert missing.json()["error"] == bad.json()["error"]
    assert "a string `content`" in missing.json()["error"]["message"]


def test_n_out_of_range_says_the_same_on_both_routes(live):
    chat = post(live.url, "chat/completions", {"messages": USER, "n": 1_000_000_000})
    text = post(live.url, "completions", {"prompt": "hi", "n": 1_000_000_000})
    assert chat.json()["error"] == text.json()["error"], (chat.text, text.text)
    assert chat.json()["error"]["message"] == "`n` (=1000000000) must be in [1, 16]."


@pytest.mark.parametrize("encoding", ["gzip", "br", "deflate, gzip"])
def test_a_compressed_body_is_a_415_saying_to_send_it_plain(live, encoding):
    body = gzip.compress(json.dumps({"prompt": "x", "max_tokens": 1}).encode())
    r = httpx.post(
        f"{live.url}/v1/completions",
        content=body,
        headers={"content-type": "application/json", "content-encoding": encoding},
        timeout=60,
    )
    assert r.status_code == 415, r.text
    err = r.json()["error"]
    ErrorObject.model_validate(err)
    assert err["message"] == f"Content-Encoding {encoding} is not supported: send the JSON uncompressed."
    assert err["code"] == "unsupported_content_encoding"
    plain = json.dumps({"prompt": "x", "max_tokens": 1}).encode()
    same = httpx.post(
        f"{live.url}/v1/completions",
        content=plain,
        headers={"content-type": "application/json", "content-encoding": "identity"},
        timeout=60,
    )
    assert same.status_code == 200, same.text


def test_one_token_prompts_are_scored(live):
    r = post(
        live.url, "completions", {"prompt": [5], "max_tokens": 0, "echo": True, "logprobs": 1, "prompt_logprobs": 2}
    )
    assert r.status_code == 200, r.text
    ch = r.json()["choices"][0]
    assert ch["logprobs"]["token_logprobs"] == [None] and ch["prompt_logprobs"] == [None]
    r = post(live.url, "completions", {"prompt": [5], "max_tokens": 2, "prompt_logprobs": 1, "temperature": 0})
    assert r.status_code == 200 and r.json()["choices"][0]["prompt_logprobs"] == [None]


@pytest.mark.parametrize(
    "extra", [{"temperature": 1e-40}, {"top_p": 5e-324}, {"temperature": 1e-40, "top_k": 3, "top_p": 0.5}]
)
def test_vanishing_temperature_and_top_p_still_sample(live, extra):
    r = post(live.url, "completions", {"prompt": "a", "max_tokens": 3, "logprobs": 1, **extra})
    assert r.status_code == 200, r.text
    with httpx.stream(
        "POST", live.url + "/v1/completions", json={"prompt": "a", "max_tokens": 3, "stream": True, **extra}, timeout=60
    ) as s:
        assert s.status_code == 200 and s.read().decode().rstrip().endswith("data: [DONE]")


def test_unknown_routes_and_methods_answer_in_openai_shape(live, client_model=None):
    for method, path, status in (("GET", "/v1/nope", 404), ("GET", "/v1/completions", 405)):
        r = httpx.request(method, live.url + path)
        assert r.status_code == status and ErrorObject.model_validate(r.json()["error"])
    import openai

    client = openai.OpenAI(base_url=live.url + "/v1", api_key="x", max_retries=0)
    assert client.models.retrieve("tiny-gpt2").id == "tiny-gpt2"
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("nope")


def test_top_k_minus_one_is_off(live):
    assert post(live.url, "completions", {"prompt": "x", "max_tokens": 2, "top_k": -1, "seed": 1}).status_code == 200


def test_bearer_scheme_is_case_insensitive(live, monkeypatch):
    monkeypatch.setenv("EXPLORER_API_KEY", "sekret")
    assert httpx.get(live.url + "/v1/models", headers={"Authorization": "bearer sekret"}).status_code == 200
    assert httpx.get(live.url + "/v1/models", headers={"Authorization": "BEARER  sekret"}).status_code == 200
    assert httpx.get(live.url + "/v1/models", headers={"Authorization": "Basic sekret"}).status_code == 401


def test_limits_are_reported(live):
    body = httpx.get(live.url + "/v1/models").json()
    assert (
        body["limits"]["max_body_bytes"] == Limits().max_body_bytes
        and body["limits"]["max_choices"] == Limits().max_choices
    )


# ---- the whole server locked: EXPLORER_AUTH ------------------------------------------------


@pytest.fixture(scope="module")
def locked(gpt2):
    srv = LiveServer(gpt2, auth=("teacher", "s3cret"))
    yield srv
    srv.stop()


def test_auth_locks_page_config_gradio_routes_and_api(locked):
    for path in ("/config", "/gradio_api/info", "/v1/models"):
        assert httpx.get(locked.url + path).status_code == 401, path
    r = httpx.post(locked.url + "/gradio_api/call/load_model", json={"data": ["/etc"]})
    assert r.status_code == 401
    assert httpx.get(locked.url + "/v1/models", auth=("teacher", "s3cret")).status_code == 200
    assert httpx.get(locked.url + "/v1/models", auth=("teacher", "wrong")).status_code == 401
    with httpx.Client(base_url=locked.url) as c:  # the page's own login gives a session that works
        assert c.post("/login", data={"username": "teacher", "password": "s3cret"}).status_code == 200
        assert c.get("/config").status_code == 200


def test_the_page_cannot_change_what_api_clients_get(live):
    """Loading a model through the page's route changes only that page session."""
    from gradio_client import Client

    client = Client(live.url + "/", verbose=False)
    with pytest.raises(Exception, match=r"not available|not in the list of choices"):
        client.predict("/etc", api_name="/load_model")
    body = httpx.get(live.url + "/v1/models").json()
    assert [m["id"] for m in body["data"]] == ["tiny-gpt2"]


# ---- work one request causes ------------------------------------------------------------------


@pytest.fixture
def counted(long_gpt2, monkeypatch):
    """The 8k-context tiny model with a counter of forward passes."""
    calls: list[float] = []
    before_each_pass(monkeypatch, long_gpt2, lambda: calls.append(time.monotonic()))
    return long_gpt2, calls


def test_a_client_that_leaves_stops_the_work(counted):
    engine, calls = counted
    srv = LiveServer(engine)
    try:
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(
                srv.url + "/v1/completions", json={"prompt": "fox", "max_tokens": 8000, "temperature": 0}, timeout=1.0
            )
        time.sleep(1.0)  # the step in flight finishes
        after = len(calls)
        time.sleep(1.0)
        assert len(calls) == after, "work went on after the client left"
        assert after < 8000
    finally:
        srv.stop()


def test_queue_full_is_a_429_and_models_never_waits(counted):
    engine, calls = counted
    srv = LiveServer(engine, limits=Limits(workers=1, queue=0, max_seconds=30))
    try:
        t = threading.Thread(
            target=lambda: httpx.post(
                srv.url + "/v1/completions", timeout=60, json={"prompt": "fox", "max_tokens": 3000, "temperature": 0}
            )
        )
        t.start()
        while not calls:
            time.sleep(0.02)
        r = post(srv.url, "completions", {"prompt": "x", "max_tokens": 1})
        assert r.status_code == 429 and r.headers["retry-after"] and r.json()["error"]["code"] == "server_busy"
        models_answer(srv.url)  # it never waits for the work gate: an order, not a time, so load cannot fail it
        answered_at = len(calls)
        t.join(60)
        assert len(calls) > answered_at, "/v1/models answered only once the request holding the gate had ended"
    finally:
        srv.stop()


def test_time_limit_stops_a_long_request(counted):
    engine, _ = counted
    srv = LiveServer(engine, limits=Limits(max_seconds=0.5))
    try:
        r = post(srv.url, "completions", {"prompt": "fox", "max_tokens": 8000, "temperature": 0})
        assert r.status_code == 400 and r.json()["error"]["code"] == "request_timeout"
        assert "EXPLORER_MAX_SECONDS" in r.json()["error"]["message"]
    finally:
        srv.stop()


def test_full_vocab_body_is_streamed_and_equal(live, gpt2):
    body = {"prompt": "fox jumps over", "max_tokens": 0, "echo": True, "prompt_logprobs": -1}
    with httpx.stream("POST", live.url + "/v1/completions", json=body, timeout=60) as r:
        assert r.status_code == 200 and "content-length" not in r.headers  # chunked: never one big buffer
        data = json.loads(r.read())
    pl = data["choices"][0]["prompt_logprobs"]
    assert pl[0] is None and all(len(e) == gpt2.vocab_size for e in pl[1:])
    npy = httpx.post(live.url + "/v1/completions", json=body, headers={"Accept": "application/x-npy"}, timeout=60)
    import io

    import numpy as np

    rows = np.load(io.BytesIO(npy.content))
    assert rows.dtype == np.float16 and rows.shape == (len(pl) - 1, gpt2.vocab_size)
    first = {int(i): v["logprob"] for i, v in pl[1].items()}
    assert abs(float(rows[0, 7]) - first[7]) < 1e-2


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    route=st.sampled_from(["completions", "chat/completions"]),
    fields=st.dictionaries(
        st.sampled_from(
            [
                "model",
                "prompt",
                "messages",
                "max_tokens",
                "max_completion_tokens",
                "temperature",
                "top_p",
                "top_k",
                "n",
                "seed",
                "stop",
                "echo",
                "logprobs",
                "top_logprobs",
                "prompt_logprobs",
                "stream",
                "stream_options",
            ]
        ),
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(-3, 8),
            st.floats(allow_nan=False, allow_infinity=False, width=32),
            st.text(max_size=8),
            st.lists(st.integers(-2, 500), max_size=4),
            st.lists(st.text(max_size=4), max_size=3),
            st.just([{"role": "user", "content": "hi"}]),
            st.dictionaries(st.text(max_size=5), st.booleans(), max_size=2),
        ),
        max_size=8,
    ),
)
def test_fuzzed_bodies_are_200_or_4xx(live, route, fields):
    r = post(live.url, route, fields)
    assert r.status_code == 200 or 400 <= r.status_code < 500, (fields, r.status_code, r.text[:300])
    if r.status_code != 200:
        ErrorObject.model_validate(r.json()["error"])


# ---- shutdown ---------------------------------------------------------------------------------


def test_sigterm_stops_the_server_within_five_seconds(long_gpt2_dir):
    server = ServerProcess(long_gpt2_dir)
    proc, url = server.proc, server.url
    try:

        def long_request():  # about 20 s of work; the server cuts it
            with contextlib.suppress(httpx.HTTPError):
                httpx.post(
                    url + "/v1/completions",
                    timeout=60,
                    json={"prompt": "fox", "max_tokens": 8000, "n": 8, "temperature": 0},
                )

        threading.Thread(target=long_request, daemon=True).start()
        time.sleep(1.0)
        t = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
        assert time.monotonic() - t < 5.0
    finally:
        server.stop()


def test_load_errors_never_show_a_path(tmp_path):
    from explorer.errors import ExplorerError
    from explorer.serving.models import Models

    broken = tmp_path / "secret-dir" / "mymodel"
    broken.mkdir(parents=True)  # a folder without config.json
    models = Models([str(broken)], allow_hub=True)
    assert models.names == ["mymodel"]
    for name in (None, "mymodel"):
        with pytest.raises(ExplorerError) as err:
            models.get(name)
        assert (
            str(tmp_path) not in str(err.value) and "secret-dir" not in str(err.value) and "mymodel" in str(err.value)
        )
    for name in (str(broken), str(tmp_path), "../x", "~/.ssh"):
        with pytest.raises(ExplorerError, match="is not available here") as err:
            models.get(name)
