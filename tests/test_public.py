"""A public deployment (--public, EXPLORER_PUBLIC=1, or a Hugging Face Space): the operator's models only, the caps
on the page and the API alike, the API off without a key, the page's actions bounded, ZeroGPU's spaces.GPU."""

from __future__ import annotations

import functools
import inspect
import json
import time

import httpx
import pytest

from explorer.errors import ExplorerError
from explorer.rules.sampler import PUBLIC_LIMITS, Limits
from explorer.server import deployment
from explorer.serving.models import Models
from explorer.serving.reach import is_public
from tests.helpers.servers import LiveServer, before_each_pass

ENV = [
    "SPACE_ID",
    "EXPLORER_PUBLIC",
    "EXPLORER_API_KEY",
    "EXPLORER_AUTH",
    "EXPLORER_ALLOW_HUB_MODELS",
    "EXPLORER_MAX_TOKENS",
    "EXPLORER_MAX_INPUT_TOKENS",
    "EXPLORER_MAX_SECONDS",
    "EXPLORER_MAX_CHOICES",
    "EXPLORER_QUEUE",
    "EXPLORER_WORKERS",
    "EXPLORER_FULL_VOCAB_MAX_PROMPT_TOKENS",
    "EXPLORER_MAX_BODY_BYTES",
]
LONG = "the quick brown fox jumps over the lazy dog " * 10


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


def public_limits(**kw) -> Limits:
    from dataclasses import replace

    return replace(PUBLIC_LIMITS, **kw)


@pytest.fixture
def public(gpt2):
    """The tiny model served publicly, inputs capped at 16 tokens."""
    srv = LiveServer(gpt2, limits=public_limits(max_input_tokens=16), public=True)
    yield srv
    srv.stop()


def gradio_error(client, *args, api_name: str) -> str:
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError) as err:
        client.predict(*args, api_name=api_name)
    return str(err.value)


# ---- switching it on ---------------------------------------------------------------------
def test_public_mode_is_on_with_the_flag_the_variable_or_on_a_space(monkeypatch):
    assert not is_public()
    assert is_public(True)
    monkeypatch.setenv("SPACE_ID", "someone/logprob-explorer")
    assert is_public()
    monkeypatch.setenv("EXPLORER_PUBLIC", "0")  # an operator may switch it off on a Space
    assert not is_public()
    monkeypatch.delenv("SPACE_ID")
    monkeypatch.setenv("EXPLORER_PUBLIC", "1")
    assert is_public()


def test_public_limits_are_tighter_and_each_a_setting(monkeypatch):
    loose, tight = Limits.from_env(), Limits.from_env(public=True)
    assert tight == PUBLIC_LIMITS and tight.public and not loose.public
    assert tight.max_tokens and tight.max_input_tokens and not loose.max_tokens and not loose.max_input_tokens
    assert tight.max_choices < loose.max_choices and tight.max_seconds < loose.max_seconds
    monkeypatch.setenv("EXPLORER_MAX_TOKENS", "100")
    monkeypatch.setenv("EXPLORER_MAX_INPUT_TOKENS", "900")
    assert Limits.from_env(public=True).max_tokens == 100 and Limits.from_env(public=True).max_input_tokens == 900
    assert "900 tokens" in Limits.from_env(public=True).summary()


# ---- models: the allowlist only --------------------------------------------------------------
def test_a_public_registry_serves_its_list_only(tmp_path, monkeypatch):
    monkeypatch.setenv("EXPLORER_ALLOW_HUB_MODELS", "1")  # ignored on a public server
    loads = []
    models = Models(["first-model", "second-model"], public=True, loader=loads.append)
    assert models.default == "first-model" and not models.allow_hub
    for name in ["gpt2", "openai-community/gpt2", str(tmp_path), "/etc/passwd", "../first-model", "~/x", "a" * 500]:
        with pytest.raises(ExplorerError) as err:
            models.resolve(name)
        message = str(err.value)
        assert "is not available here" in message and "first-model, second-model" in message
        assert "hub id" not in message  # (the name is echoed as typed, cut at 80 characters: no server path)
    assert loads == []


def test_a_space_is_public(gpt2, monkeypatch):
    monkeypatch.setenv("SPACE_ID", "someone/logprob-explorer")
    registry = deployment([gpt2.name], host="0.0.0.0")
    assert registry.public and registry.limits.public and not registry.allow_hub
    assert registry.limits == PUBLIC_LIMITS


# ---- the HTTP API: off without a key ------------------------------------------------------
def test_the_api_is_off_without_a_key(public):
    for route, body in [("/v1/completions", {"prompt": "fox"}), ("/v1/chat/completions", {"messages": []})]:
        r = httpx.post(public.url + route, json=body, timeout=30)
        assert r.status_code == 403 and r.json()["error"]["code"] == "api_off"
        assert "EXPLORER_API_KEY" in r.json()["error"]["message"]
    r = httpx.post(public.url + "/tokenize", json={"prompt": "fox"}, timeout=30)
    assert r.status_code == 403 and r.json()["error"]["code"] == "api_off"
    models = httpx.get(public.url + "/v1/models", timeout=30)
    assert models.status_code == 200  # what the server offers and its caps stay readable
    caps = models.json()["limits"]
    assert caps["public"] is True and caps["max_tokens"] == PUBLIC_LIMITS.max_tokens
    assert caps["max_input_tokens"] == 16 and caps["max_choices"] == PUBLIC_LIMITS.max_choices
    assert httpx.get(public.url + "/health", timeout=30).status_code == 200


def test_with_a_key_the_api_answers_within_the_caps(public, monkeypatch):
    import openai

    monkeypatch.setenv("EXPLORER_API_KEY", "s3cret")
    r = httpx.post(public.url + "/v1/completions", json={"prompt": "fox", "max_tokens": 1}, timeout=30)
    assert r.status_code == 401
    client = openai.OpenAI(base_url=public.url + "/v1", api_key="s3cret", max_retries=0)
    ok = client.completions.create(model="tiny-gpt2", prompt="the fox", max_tokens=2, temperature=0, logprobs=2)
    assert len(ok.choices[0].logprobs.tokens) == 2
    refused = {
        "EXPLORER_MAX_TOKENS": dict(prompt="fox", max_tokens=PUBLIC_LIMITS.max_tokens + 1),
        "EXPLORER_MAX_INPUT_TOKENS": dict(prompt=LONG, max_tokens=1),
        "EXPLORER_MAX_CHOICES": dict(prompt="fox", max_tokens=1, n=PUBLIC_LIMITS.max_choices + 1),
        "full vocabulary": dict(prompt="fox " * 6, max_tokens=1, n=4, extra_body={"prompt_logprobs": -1}),
    }
    for cap, kw in refused.items():
        with pytest.raises(openai.BadRequestError) as err:
            client.completions.create(model="tiny-gpt2", **kw)
        assert cap in str(err.value), (cap, str(err.value))


# ---- the page: the same caps, a time limit, the list only ----------------------------------------
def test_the_page_refuses_over_cap_requests_naming_the_cap(public):
    from gradio_client import Client

    client = Client(public.url + "/", verbose=False)
    message = gradio_error(client, LONG, "probability", "1, 10, 100, 1000", 5, api_name="/score")
    assert "EXPLORER_MAX_INPUT_TOKENS" in message and "16" in message
    message = gradio_error(client, "gpt2", api_name="/load_model")  # the menu itself takes only its choices
    assert "not in the list of choices" in message or "not available here" in message
    out = client.predict("the fox", "probability", "1, 10, 100, 1000", 5, api_name="/score")
    assert "data-pos=" in out[0]  # within the caps it works


def test_the_page_says_what_the_server_allows(public):
    from gradio_client import Client

    from explorer.ui.model_picker import details_text, public_text, status_lines

    assert "EXPLORER" not in public_text(public.models)  # for people: plain words
    text = status_lines(public.models, public.models.loaded("tiny-gpt2"), "tiny-gpt2")
    assert "public server" in text and "16 tokens" in text and "tiny-gpt2 is ready" in text.replace("**", "")
    assert "In memory now" in details_text(public.models, public.models.loaded("tiny-gpt2"), "tiny-gpt2")
    client = Client(public.url + "/", verbose=False)
    assert client.predict("tiny-gpt2", api_name="/load_model")  # the status after a load keeps the lines
    config = httpx.get(public.url + "/config", timeout=30).json()
    assert any("public server" in str(c.get("props", {}).get("value", "")) for c in config["components"])


def test_a_page_action_stops_at_the_time_cap(long_gpt2, monkeypatch):
    from gradio_client import Client

    before_each_pass(monkeypatch, long_gpt2, lambda: time.sleep(0.02))
    srv = LiveServer(long_gpt2, limits=public_limits(max_seconds=0.5), public=True)
    try:
        client = Client(srv.url + "/", verbose=False)
        names = client.view_api(return_format="dict", print_info=False)["named_endpoints"]
        params = [p["parameter_name"] for p in names["/generate"]["parameters"]]
        values = {"prompt": "the fox", "max_tokens": 200, "temperature": 0}
        args = [values.get(p, d["parameter_default"]) for p, d in zip(params, names["/generate"]["parameters"])]
        t = time.monotonic()
        message = gradio_error(client, *args, api_name="/generate")
        assert "EXPLORER_MAX_SECONDS" in message and "0.5 s" in message
        assert time.monotonic() - t < 30
    finally:
        srv.stop()


# ---- a Space: public, and the model's work under spaces.GPU -----------------------------------------
def test_as_a_space_the_models_work_goes_through_spaces_gpu(gpt2, monkeypatch):
    """The wrapping as on ZeroGPU, in process (tests/test_zerogpu.py runs the package's own fork against a stand-in
    of its device API): which actions go through spaces.GPU, and the duration each call asks."""
    import spaces
    from gradio_client import Client

    from explorer.server import page_app
    from explorer.serving import zerogpu

    real, wrapped, calls = spaces.GPU, {}, []

    def spy(fn, duration=60):
        inner = real(fn, duration=duration)  # off ZeroGPU: the function as is
        wrapped[fn.__name__] = duration
        if inspect.isgeneratorfunction(fn):  # as spaces.GPU on ZeroGPU: a generator stays one

            def steps(*a, **kw):
                calls.append((fn.__name__, duration(*a, **kw)))
                yield from inner(*a, **kw)

            return functools.wraps(fn)(steps)

        def run(*a, **kw):
            calls.append((fn.__name__, duration(*a, **kw)))
            return inner(*a, **kw)

        return functools.wraps(fn)(run)

    monkeypatch.setattr(spaces, "GPU", spy)
    monkeypatch.setattr(zerogpu, "active", lambda: True)
    monkeypatch.setenv("SPACE_ID", "someone/logprob-explorer")
    registry = deployment([gpt2.name], host="0.0.0.0")
    registry.add(gpt2)
    demo, _ = page_app(registry, registry.limits)
    on_gpu = {f.name for f in demo.fns.values() if f.concurrency_id == "model"}
    assert {"score", "generate", "chat", "compare", "branch", "detail_of"} <= on_gpu
    assert set(wrapped) >= {"score", "generate", "chat", "compare", "branch", "detail_of"}
    assert all(callable(d) for d in wrapped.values())  # sized per call from its arguments
    assert "load" not in wrapped and "restyle" not in wrapped  # loading is at start-up; restyling needs no model
    srv = LiveServer(gpt2, models=registry)
    try:
        out = Client(srv.url + "/", verbose=False).predict(
            "the fox", "probability", "1, 10, 100, 1000", 5, api_name="/score"
        )
        assert "data-pos=" in out[0] and ("score", zerogpu.FLOOR_S) in calls  # a short text asks the floor
    finally:
        srv.stop()


def test_app_py_on_a_space_starts_public_with_the_api_off(gpt2_dir):
    from tests.helpers.servers import ServerProcess

    srv = ServerProcess(gpt2_dir, env={"SPACE_ID": "someone/logprob-explorer"}, app=True)
    try:
        assert httpx.get(srv.url + "/v1/models", timeout=10).json()["limits"]["public"] is True
        r = httpx.post(srv.url + "/v1/completions", json={"prompt": "fox", "max_tokens": 1}, timeout=30)
        assert r.status_code == 403 and r.json()["error"]["code"] == "api_off"
        page = httpx.get(srv.url + "/", timeout=30)
        assert page.status_code == 200 and "logprob-explorer" in page.text
    finally:
        srv.stop()


def test_a_public_server_refuses_huge_uploads(public):
    big = httpx.post(
        public.url + "/gradio_api/upload", files={"files": ("s.json", b"{" + b" " * 11_000_000)}, timeout=60
    )
    assert big.status_code == 413
    small = httpx.post(public.url + "/gradio_api/upload", files={"files": ("s.json", b"{}")}, timeout=60)
    assert small.status_code == 200


def call_event(srv, name: str, data: list) -> list[dict]:
    """Call the page's event whose handler is `name` straight through Gradio's queue, as a stranger could."""
    import json
    import uuid

    demo = srv.server.config.app.state.demo
    index, fn = next((i, f) for i, f in demo.fns.items() if f.name == name)
    session = uuid.uuid4().hex[:10]
    body = {"data": data, "fn_index": index, "session_hash": session, "trigger_id": fn.targets[0][0]}
    assert httpx.post(srv.url + "/gradio_api/queue/join", json=body, timeout=10).status_code == 200
    out = []
    with httpx.stream("GET", f"{srv.url}/gradio_api/queue/data?session_hash={session}", timeout=60) as stream:
        for line in stream.iter_lines():
            if line.startswith("data:"):
                out.append(json.loads(line[5:]))
                if out[-1].get("msg") == "process_completed":
                    break
    return out


def test_a_page_event_cannot_open_a_file_of_the_servers(public, gpt2_dir, tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text('{"format": "logprob-explorer/session", "secret": "TOP-SECRET-42"}')
    for path in [str(secret), gpt2_dir + "/config.json", "/etc/passwd", str(tmp_path / "missing.json")]:
        file = {"path": path, "meta": {"_type": "gradio.FileData"}, "orig_name": "a.json"}
        answer = json.dumps(call_event(public, "open_file", [file, None, "logprob", "1, 10, 100, 1000", 10]))
        assert "TOP-SECRET" not in answer and "Opened" not in answer and "none of the shapes" not in answer
        assert str(tmp_path) not in answer.replace(path, "")  # no path of ours beyond what was sent
    from explorer.ui.share import uploaded

    assert not uploaded(str(secret)) and not uploaded("/etc/passwd")


def test_a_public_server_refuses_oversized_bodies_on_every_route(public):
    big = "x" * (PUBLIC_LIMITS.max_body_bytes + 10)
    r = httpx.post(public.url + "/gradio_api/queue/join", json={"data": [big], "fn_index": 0}, timeout=30)
    assert r.status_code == 413 and "EXPLORER_MAX_BODY_BYTES" in r.json()["error"]["message"]

    def chunks():
        yield b'{"data": ["'
        for _ in range(300):
            yield b"y" * 1000
        yield b'"]}'

    r = httpx.post(public.url + "/gradio_api/queue/join", content=chunks(), timeout=30)  # no Content-Length
    assert r.status_code == 413
    ok = httpx.post(public.url + "/gradio_api/queue/join", json={"data": [], "fn_index": -5}, timeout=30)
    assert ok.status_code != 413  # small bodies reach Gradio


def test_compare_and_lens_stop_at_a_page_actions_deadline(gpt2):
    from explorer.engine.analyses.compare import compare_prompt_texts, compare_text
    from explorer.engine.analyses.lens import lens_ids
    from explorer.engine.passes import bounds

    runs = {
        "compare": lambda: compare_text(gpt2, gpt2, "the quick brown fox"),
        "compare prompts": lambda: compare_prompt_texts(gpt2, "a fox", "a dog", " jumps over"),
        "lens": lambda: lens_ids(gpt2, gpt2.encode("the quick brown fox")),
    }
    for what, run in runs.items():
        run()  # unbounded: fine
        past = bounds.Bound(PUBLIC_LIMITS, deadline=time.monotonic() - 1)
        with bounds.within(past), pytest.raises(ExplorerError) as err:
            run()
        assert "EXPLORER_MAX_SECONDS" in str(err.value), what


def test_the_memory_budget_heeds_a_container_limit(monkeypatch, tmp_path):
    from explorer.engine.local import memory

    limit = tmp_path / "memory.max"
    limit.write_text(str(3 << 30))
    monkeypatch.setattr(memory, "CGROUP_LIMITS", (str(limit),))
    assert memory.device_memory_mb("cpu") == 3 << 10
    limit.write_text("max")
    assert memory.device_memory_mb("cpu") > 3 << 10
    limit.write_text(str(3 << 30))
    assert Models(["m"], device="cpu", loader=lambda spec: None).max_mb == (3 << 10) // 2
