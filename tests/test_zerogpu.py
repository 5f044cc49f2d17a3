"""ZeroGPU as the `spaces` package runs a Space's code, on the CPU: the real package in ZeroGPU mode against a
stand-in of its device API (tests/helpers/zerogpu.py), so the fork, the durations asked and the quota's calls, the threads
in the worker and what comes back are the package's own. Its two worker steps that need a CUDA device (CUDA's
start, the weights' move) are skipped there (tests/helpers/zerogpu_serve.py); the test that needs them skips, saying so.
`pytest -m zerogpu` runs this tier alone."""

from __future__ import annotations

import gradio as gr
import httpx
import numpy as np
import pytest
import torch

from explorer.api import runner
from explorer.errors import ExplorerError
from explorer.rules.sampler import Limits
from explorer.serving import zerogpu
from explorer.ui import gpu_calls
from tests.helpers.zerogpu import DeviceApi, ZeroGpuServer

pytestmark = pytest.mark.zerogpu

SMALL = zerogpu.Rate.of(540.0)  # SmolLM2-135M in float32


# ---- the duration rule -------------------------------------------------------------------------------------
def test_a_short_score_asks_less_than_a_long_generation():
    score, generate = zerogpu.gpu_seconds(16, 0, SMALL, 60), zerogpu.gpu_seconds(16, 512, SMALL, 60)
    assert zerogpu.FLOOR_S <= score < generate <= 60


@pytest.mark.parametrize("tokens_in, tokens_out", [(0, 0), (1, 0), (0, 1), (10**6, 0), (0, 10**6), (10**7, 10**7)])
@pytest.mark.parametrize("cap", [0.0, 15.0, 60.0, 300.0])
def test_the_duration_stays_between_the_floor_and_the_cap(tokens_in, tokens_out, cap):
    seconds = zerogpu.gpu_seconds(tokens_in, tokens_out, SMALL, cap)
    ceiling = int(cap) if cap else zerogpu.NO_CAP_S
    assert isinstance(seconds, int) and zerogpu.FLOOR_S <= seconds <= max(ceiling, zerogpu.FLOOR_S)
    need = SMALL.start_s + tokens_in * SMALL.position_s + tokens_out * SMALL.step_s  # the rule, written out again
    assert seconds == max(zerogpu.FLOOR_S, min(int(np.ceil(need)), ceiling))


def test_a_bigger_model_asks_more():
    assert zerogpu.gpu_seconds(0, 512, zerogpu.Rate.of(16_000), 600) > zerogpu.gpu_seconds(0, 512, SMALL, 600)


def test_a_call_is_sized_from_its_own_arguments():
    def generate(name: str, prompt: str, max_tokens: int, k: int = 5):
        return None

    seconds = gpu_calls.asked(generate, Limits(max_seconds=300), None)  # no cap on max_tokens
    short, long = seconds("m", "the fox", 16), seconds("m", "the fox", 2000)
    assert short == zerogpu.FLOOR_S < long == zerogpu.gpu_seconds(len("mthe fox"), 2000, zerogpu.Rate.of(0), 300)
    capped = gpu_calls.asked(generate, Limits(max_tokens=100, max_seconds=300), None)
    assert capped("m", "the fox", 2000) == zerogpu.gpu_seconds(8, 100, zerogpu.Rate.of(0), 300)


def test_only_cpu_objects_come_back_keyed_by_component_ids():
    with gr.Blocks() as demo:
        box = gr.Textbox()
    sent = gpu_calls.cpu_only({box: "text", "rows": [np.zeros(3)]})
    assert sent[gpu_calls.Key(box._id)] == "text"
    assert gpu_calls.received(sent, demo.blocks)[box] == "text"
    with pytest.raises(TypeError, match="torch object"):
        gpu_calls.cpu_only({box: [torch.zeros(2)]})


def test_the_packages_refusals_answer_in_its_words_and_a_bug_stays_a_bug():
    quota = gr.Error("You have exceeded your GPU quota (60s requested vs. 55s left).", title="ZeroGPU quota exceeded")
    why = runner.refusal(quota)
    assert why is not None and why.code == "zerogpu_unavailable" and "55s left" in why.message
    aborted = runner.refusal(gr.Error(runner.ABORTED, title=runner.WORKER_BUG))
    assert aborted is not None and aborted.code == "zerogpu_unavailable"
    assert runner.refusal(gr.Error("RuntimeError", title=runner.WORKER_BUG)) is None  # the work's own bug: a 500
    assert runner.refusal(RuntimeError("boom")) is None
    with pytest.raises(ExplorerError, match="55s left"), runner.refusals():
        raise quota


def _refuse(engine, *chunks):
    yield from chunks
    raise ExplorerError("Not this.", param="prompt", code="invalid_value")


def test_what_the_worker_raises_or_returns_crosses_as_the_api_needs(gpt2):
    """An ExplorerError in the worker comes back whole (its param and code: the same status as anywhere else), after
    the chunks before it; a torch object is refused there."""
    from explorer.serving.models import Models

    models = Models([gpt2.name], allow_hub=False)
    models.add(gpt2)
    on_gpu = runner.OnZeroGpu(models, Limits())  # in process: without the package's ZeroGPU mode, no fork
    got: list = []
    with pytest.raises(ExplorerError) as err:
        got += on_gpu.steps(gpt2, runner.Work(_refuse, (b"a", b"b")))
    assert got == [b"a", b"b"] and (err.value.param, err.value.code) == ("prompt", "invalid_value")
    with pytest.raises(ExplorerError, match="Not this"):
        on_gpu.call(gpt2, runner.Work(lambda engine: list(_refuse(engine))))
    with pytest.raises(TypeError, match="torch object"):
        on_gpu.call(gpt2, runner.Work(lambda engine: [torch.zeros(2)]))


def test_a_streams_refusal_comes_before_its_first_byte_and_the_worker_stops_inside_its_duration(gpt2):
    """The package schedules a generator's GPU at its first item: `steps` asks for that item at once, so a refusal
    (the quota) is a 503 before the stream's headers; the worker's deadline sits inside the duration asked."""
    import gradio as gr

    from explorer.serving.models import Models

    models = Models([gpt2.name], allow_hub=False)
    models.add(gpt2)
    on_gpu = runner.OnZeroGpu(models, Limits(max_seconds=300))

    def refused(name, work):
        raise gr.Error("60s requested vs. 55s left", title="ZeroGPU quota exceeded")
        yield  # a generator, as the package's wrapper of one

    on_gpu._each = refused
    with pytest.raises(ExplorerError, match="55s left"):
        on_gpu.steps(gpt2, runner.Work(_refuse, (b"a",)))  # raised by the call itself, before any iteration
    work = runner.Work(print, (), 16, 512)
    asked = on_gpu.seconds(gpt2.name, work)
    assert on_gpu._time(gpt2.name, work) == asked - runner.MARGIN_S
    assert runner.OnZeroGpu(models, Limits(max_seconds=0))._time(gpt2.name, work) == asked - runner.MARGIN_S
    assert runner.OnZeroGpu(models, Limits(max_seconds=5))._time(gpt2.name, work) == 5


def test_a_call_of_the_api_asks_for_its_tokens_at_its_models_rate(gpt2):
    from explorer.serving.models import Models

    models = Models([gpt2.name], allow_hub=False)
    models.add(gpt2)
    on_gpu = runner.OnZeroGpu(models, Limits(max_seconds=300))
    rate = zerogpu.Rate.of(gpt2.weights_mb)
    for tokens_in, tokens_out in [(0, 0), (16, 0), (16, 512), (10**6, 10**6)]:
        work = runner.Work(print, (), tokens_in, tokens_out)
        assert on_gpu.seconds(gpt2.name, work) == zerogpu.gpu_seconds(tokens_in, tokens_out, rate, 300)


def test_a_worker_forked_while_another_thread_holds_the_registrys_lock_still_uses_it(gpt2):
    """A lock held at fork time stays held in the child, where the thread that held it does not exist: the registry
    and its engines take fresh ones there (explorer/serving/models.py), or the worker's first `use` or forward would
    wait for ever."""
    import os
    import time

    from explorer.serving.models import Models

    models = Models([gpt2.name], allow_hub=False)
    models.add(gpt2)
    with models._lock, gpt2.lock:  # as other requests' threads hold them for a moment (the registry, a forward)
        pid = os.fork()
        if pid == 0:  # the child: a worker
            with models.use(gpt2.name) as engine, engine.lock:
                os._exit(0 if engine is gpt2 else 1)
    deadline, status = time.monotonic() + 30, None
    while status is None and time.monotonic() < deadline:
        done, code = os.waitpid(pid, os.WNOHANG)
        status = code if done else None
        time.sleep(0.05)
    if status is None:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    assert status == 0, "the child waited for a lock no thread of it would release"


# ---- the package's own fork, quota calls and worker --------------------------------------------------------
@pytest.fixture
def device_api():
    api = DeviceApi()
    yield api
    api.stop()


def test_every_listed_model_is_moved_to_cuda_and_packed_at_start_up(gpt2_dir, long_gpt2_dir, device_api, tmp_path):
    srv = ZeroGpuServer(device_api, [gpt2_dir, long_gpt2_dir], tmp_path)  # no --device: `cuda`, as on a Space
    try:
        packed = srv.report()["packed_bytes"]
        weights = sum(p.numel() * 2 for d in (gpt2_dir, long_gpt2_dir) for p in _params(d))  # bfloat16 on cuda
        assert packed >= weights > 0  # both models' weights, packed once, before the first call
        assert ("/startup-report", {}) in device_api.calls
        assert "on cuda" in srv.log_path.read_text()
    finally:
        srv.stop()


def _params(folder: str) -> list[torch.nn.Parameter]:
    from transformers import AutoModelForCausalLM

    return list(AutoModelForCausalLM.from_pretrained(folder).parameters())


def test_page_actions_run_in_the_forked_worker(gpt2_dir, device_api, tmp_path):
    from gradio_client import Client

    env = {"ZEROGPU_TEST_NO_DEVICE": "1", "EXPLORER_API_KEY": "key", "EXPLORER_MAX_SECONDS": "40",
           "ZEROGPU_TEST_WARM_THREAD": "1"}  # fmt: skip
    srv = ZeroGpuServer(device_api, [gpt2_dir], tmp_path, env=env, args=("--device", "cpu"))
    try:
        # 1. a generation ran in the server's own process at start-up (tests/helpers/zerogpu_serve.py): its batch thread runs
        # there, not in a worker
        client = Client(srv.url + "/", verbose=False)
        # 2. a short score, then a long generation, each under spaces.GPU in a forked worker
        scored = client.predict("the fox " * 8, "probability", "1, 10, 100, 1000", 5, api_name="/score")
        assert "data-pos=" in scored[0]
        generated = _generate(client, "the fox", 256)  # past the context: the tiny model stops at 128 positions
        assert "data-pos=" in str(generated)
        short, long = device_api.durations()[-2:]
        assert zerogpu.FLOOR_S <= short < long <= 40  # each sized to its tokens, under the time cap
        assert srv.report()["pid"] not in device_api.allowed_pids()  # the GPU was allowed to a worker, not the server
        assert [p for p, _ in device_api.calls].count("/release") >= 2
    finally:
        srv.stop()


def test_the_api_runs_in_the_forked_worker(gpt2, gpt2_dir, live, device_api, tmp_path):
    """/v1 with its key on ZeroGPU: an echo score and a streamed chat through the real `openai` client, each one
    `spaces.GPU` call in a forked worker asking the rule's duration for its tokens, with the numbers of an independent
    log_softmax + gather and of the same request on a server off ZeroGPU."""
    import openai
    from transformers import AutoModelForCausalLM

    from tests.helpers.reference import ref_logprobs

    env = {"ZEROGPU_TEST_NO_DEVICE": "1", "EXPLORER_API_KEY": "key", "EXPLORER_MAX_SECONDS": "40",
           "ZEROGPU_TEST_WARM_THREAD": "1"}  # fmt: skip
    srv = ZeroGpuServer(device_api, [gpt2_dir], tmp_path, env=env, args=("--device", "cpu"))
    try:
        zero = openai.OpenAI(base_url=srv.url + "/v1", api_key="key", max_retries=0)
        here = openai.OpenAI(base_url=live.url + "/v1", api_key="unused", max_retries=0)
        (name,) = [m.id for m in zero.models.list().data]
        with pytest.raises(openai.AuthenticationError):  # a public server's API still needs its key
            openai.OpenAI(base_url=srv.url + "/v1", api_key="wrong", max_retries=0).models.list()
        rate = zerogpu.Rate.of(gpt2.weights_mb)

        # 1. an echo score with logprobs: an independent log_softmax + gather, and the server off ZeroGPU
        text = "The quick brown fox jumps over the lazy dog."
        ask = {"prompt": text, "max_tokens": 0, "echo": True, "logprobs": 5}
        scored = zero.completions.create(model=name, **ask).choices[0].logprobs
        ids = gpt2.encode(text)
        lp = ref_logprobs(AutoModelForCausalLM.from_pretrained(gpt2_dir).eval(), ids)  # (T-1, V)
        np.testing.assert_allclose(scored.token_logprobs[1:], lp[torch.arange(len(ids) - 1), ids[1:]], atol=1e-5)
        for pos, top in enumerate(scored.top_logprobs[1:]):  # the actual token, then the top 5
            want = torch.sort(lp[pos], descending=True).values[:5].numpy()
            np.testing.assert_allclose(sorted(top.values(), reverse=True)[: len(want)], want, atol=1e-5)
        assert _same_numbers([{"text": text, "logprobs": scored.model_dump()}],
                             [here.completions.create(model=gpt2.name, **ask).choices[0].model_dump()])  # fmt: skip
        assert device_api.durations()[-1] == zerogpu.gpu_seconds(len(ids), 0, rate, 40)

        # 2. a streamed chat, greedy, to the context's end: chunk by chunk the server off ZeroGPU's
        chat = {"messages": [{"role": "user", "content": "the fox"}], "temperature": 0, "logprobs": True,
                "top_logprobs": 3, "stream": True, "stream_options": {"include_usage": True}}  # fmt: skip
        streamed, usage = _streamed(zero.chat.completions.create(model=name, **chat))
        assert len(streamed) > 8, streamed  # the tiny model rarely ends early
        off_zero, _ = _streamed(here.chat.completions.create(model=gpt2.name, **chat))
        assert [t for t, _ in streamed] == [t for t, _ in off_zero]
        np.testing.assert_allclose([lp for _, lp in streamed], [lp for _, lp in off_zero], atol=1e-5)
        room = 128 - usage.prompt_tokens  # max_tokens unset: the room left in the tiny model's context
        assert device_api.durations()[-1] == zerogpu.gpu_seconds(usage.prompt_tokens, room, rate, 40)

        # 3. two prompts of 120 new tokens: the duration grows with the tokens asked, past the floor
        two = zero.completions.create(model=name, prompt=["the fox", "a dog"], max_tokens=120, temperature=0)
        assert len(two.choices) == 2
        asked = zerogpu.gpu_seconds(two.usage.prompt_tokens, 240, rate, 40)
        assert device_api.durations()[-1] == asked > zerogpu.FLOOR_S

        # 4. each in a forked worker holding the GPU, never the server's process; every GPU released
        assert len(device_api.durations()) == 3
        assert device_api.allowed_pids() and srv.report()["pid"] not in device_api.allowed_pids()
        assert [p for p, _ in device_api.calls].count("/release") == 3
    finally:
        srv.stop()


def _streamed(chunks) -> tuple[list[tuple[str, float]], object]:
    """(token, logprob) of each content token of a streamed chat, and its usage."""
    out, usage = [], None
    for c in chunks:
        usage = c.usage or usage
        for choice in c.choices:
            out += [(e.token, e.logprob) for e in (choice.logprobs.content if choice.logprobs else None) or []]
    return out, usage


def _generate(client, prompt: str, max_tokens: int) -> list:
    names = client.view_api(return_format="dict", print_info=False)["named_endpoints"]["/generate"]["parameters"]
    values = {"prompt": prompt, "max_tokens": max_tokens, "temperature": 0}
    args = [values.get(p["parameter_name"], p["parameter_default"]) for p in names]
    return client.predict(*args, api_name="/generate")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a real CUDA device: the package's worker starts CUDA "
                    "and moves the packed weights onto the GPU (spaces.zero.torch.init and move)")  # fmt: skip
def test_the_worker_computes_on_the_gpu(gpt2_dir, device_api, tmp_path):
    import subprocess

    uuid = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"], capture_output=True,
                          text=True, check=True).stdout.split()[0]  # fmt: skip
    device_api.gpu_uuid = uuid
    from gradio_client import Client

    srv = ZeroGpuServer(device_api, [gpt2_dir], tmp_path, env={"EXPLORER_API_KEY": "key"})
    try:
        scored = Client(srv.url + "/", verbose=False).predict(
            "the fox " * 8, "probability", "1, 10, 100, 1000", 5, api_name="/score"
        )
        assert "data-pos=" in scored[0]
        ask = {"prompt": "the fox " * 8, "max_tokens": 4, "echo": True, "logprobs": 2}  # scored, then generated
        r = httpx.post(srv.url + "/v1/completions", json=ask, headers={"Authorization": "Bearer key"}, timeout=120)
        assert r.status_code == 200, r.text
        lps = r.json()["choices"][0]["logprobs"]["token_logprobs"]
        assert lps[0] is None and np.isfinite(lps[1:]).all() and len(device_api.durations()) >= 2
    finally:
        srv.stop()


def test_on_zerogpu_the_api_and_the_lessons_serve(gpt2):
    """/v1 runs its model work through the ZeroGPU runner (here, without the package's ZeroGPU mode, `spaces.GPU` is
    the function itself: the runner's own steps, in process) and answers as anywhere else; so do the lessons' rooms."""
    from fastapi.testclient import TestClient

    from explorer.server import build_app
    from explorer.serving.models import Models

    models = Models([gpt2.name], allow_hub=False)
    models.add(gpt2)
    ask = {"model": gpt2.name, "prompt": "the fox jumps", "max_tokens": 0, "echo": True, "logprobs": 3}
    with TestClient(build_app(models, zero=True)) as client:
        assert client.get("/v1/models").status_code == 200
        on_zero = client.post("/v1/completions", json=ask)
        assert on_zero.status_code == 200, on_zero.text
        vocab = {"model": gpt2.name, "prompt": "the fox", "max_tokens": 0, "echo": True, "prompt_logprobs": -1}
        npy_on_zero = client.post("/v1/completions", json=vocab, headers={"Accept": "application/x-npy"}).content
        refused = client.post("/v1/completions", json={**ask, "max_tokens": 10_000})  # checked before any GPU call
        assert refused.status_code == 400 and refused.json()["error"]["param"] == "max_tokens"
        assert client.get("/lessons").status_code == 200 and client.get("/lesson").status_code == 200
        made = client.post("/rooms", json={"lesson": LESSON})
        assert made.status_code == 200, made.text
        assert client.get("/rooms/" + made.json()["room"]).json()["context"] == "the quick brown"
        assert client.get("/").status_code == 200
    with TestClient(build_app(models, zero=False)) as client:  # elsewhere the same numbers
        here = client.post("/v1/completions", json=ask).json()["choices"]
        npy_here = client.post("/v1/completions", json=vocab, headers={"Accept": "application/x-npy"}).content
    assert _same_numbers(on_zero.json()["choices"], here)
    assert npy_on_zero[:6] == b"\x93NUMPY" and npy_on_zero == npy_here


# ---- a class's lesson on ZeroGPU: GPU calls per step, not per student -----------------------------------------
LESSON = {
    "title": "Tiny",
    "reveal": "at-once",  # each student's result as it is sent: what waits on ZeroGPU shows in it
    "steps": [
        {"kind": "guess", "text": "the quick brown fox jumps over the lazy dog", "start": 3, "blanks": 2},
        {"kind": "choose", "prompt": "the lazy", "choices": ["dog", "fox", "cat"]},
    ],
}
GUESSES = ["fox", "dog", "zebra", "fox", "quick", "the", "lamp", "fox", "cat", "brown", "zebra", "jumps"]


def _post(url: str, path: str, body: dict, **kw) -> dict:
    r = httpx.post(url + path, json=body, timeout=120, **kw)
    assert r.status_code == 200, r.text
    return r.json()


def _get(url: str, path: str, **headers: str) -> dict:
    r = httpx.get(url + path, headers=headers, timeout=120)
    assert r.status_code == 200, r.text
    return r.json()


def play_class(url: str, students: int) -> dict:
    """LESSON played by `students` students on the server at `url`, as a class plays it: per guess step every
    student answers, the teacher shows the next word (`reveal`), one student answers late, the teacher moves on
    (with `Back` and `Next` once: a step already prepared); then the choice step and the results. Returns each
    answer's result as first sent and as the student's poll has it after, and the results."""
    room = _post(url, "/rooms", {"lesson": LESSON})
    code, key = room["room"], room["teacher_key"]
    secret = {
        name: _post(url, f"/rooms/{code}/join", {})["student"] for name in [*map("s{}".format, range(students)), "late"]
    }
    sent, polled = {}, {}
    for step, guesses in enumerate([GUESSES[:students], GUESSES[::-1][:students]]):
        for i, guess in enumerate(guesses):
            sent[(f"s{i}", step)] = _post(
                url, f"/rooms/{code}/answers", {"student": secret[f"s{i}"], "step": step, "answer": guess}
            )
        if step == 0:
            _post(url, f"/rooms/{code}/reveal", {"teacher_key": key})
            for i in range(students):
                polled[(f"s{i}", step)] = _get(url, f"/rooms/{code}", **{"X-Student": secret[f"s{i}"]})["mine"]
        late = {"student": secret["late"], "step": step, "answer": f"late{step}"}
        sent[("late", step)] = _post(url, f"/rooms/{code}/answers", late)
        _post(url, f"/rooms/{code}/step", {"teacher_key": key, "to": step + 1})
    _post(url, f"/rooms/{code}/step", {"teacher_key": key, "to": 1})  # Back and Next: nothing to compute
    _post(url, f"/rooms/{code}/step", {"teacher_key": key, "to": 2})
    for i in range(students):
        body = {"student": secret[f"s{i}"], "step": 2, "answer": "fox"}
        sent[(f"s{i}", 2)] = _post(url, f"/rooms/{code}/answers", body)
    view = _get(url, f"/rooms/{code}", **{"X-Teacher-Key": key})
    results = _get(url, f"/rooms/{code}/results", **{"X-Teacher-Key": key})
    return {"sent": sent, "polled": polled, "view": view, "steps": results["steps"]}


def test_a_class_on_zerogpu_costs_gpu_calls_per_step_not_per_student(gpt2, gpt2_dir, live, device_api, tmp_path):
    """A room played on ZeroGPU (the real package, forked workers) and the same room played off it: the same numbers
    everywhere (each guess's also against an independent log_softmax + gather); on ZeroGPU a class of 3 and a class
    of 12 cost the same GPU calls: one per step prepared and one per reveal, none per student's answer (4 here)."""
    from transformers import AutoModelForCausalLM

    from tests.helpers.reference import ref_logprobs

    env = {"ZEROGPU_TEST_NO_DEVICE": "1", "EXPLORER_MAX_SECONDS": "40"}
    srv = ZeroGpuServer(device_api, [gpt2_dir], tmp_path, env=env, args=("--device", "cpu"))
    try:
        calls = {}
        for students in (3, 12):
            before = len(device_api.durations())
            played = play_class(srv.url, students)
            calls[students] = len(device_api.durations()) - before
            live.app.state.rooms.joined.clear()  # the session's server: this class joins within a fresh minute
            here = play_class(live.url, students)
            # 1. the same numbers: the results, the model's side, each student's own result once scored
            assert played["steps"] == here["steps"] and played["view"]["model_top"] == here["view"]["model_top"]
            assert played["polled"] == {k: here["sent"][k] for k in played["polled"]}
            for k, result in played["sent"].items():  # sent at once: the same, or waiting for its numbers
                want = here["sent"][k]
                assert result == want or (result["pending"] and result == {**want, "logprob": None,
                                                                          "logprob_word": None, "pending": True})  # fmt: skip
            assert any(r["pending"] for r in played["sent"].values()) and not any(
                r["pending"] for r in here["sent"].values()
            )
        assert calls == {3: 4, 12: 4}, calls  # open, reveal, Next (the late guess and the next step), Next
        assert all(zerogpu.FLOOR_S <= d <= 40 for d in device_api.durations())
        assert srv.report()["pid"] not in device_api.allowed_pids()  # computed in the package's forked workers
        assert [p for p, _ in device_api.calls].count("/release") == len(device_api.durations())
    finally:
        srv.stop()
    # 2. each guess's numbers against an independent log_softmax + gather over its tokens after the context
    model = AutoModelForCausalLM.from_pretrained(gpt2_dir).eval()
    context = played["steps"][0]["context"]
    for entry in played["steps"][0]["answers"]:
        ctx, ids = gpt2.encode(context), gpt2.encode(f"{context} {entry['answer']}")
        assert ids[: len(ctx)] == ctx
        with torch.no_grad():
            lp = ref_logprobs(model, ids)  # (T-1, V)
        want = float(lp[torch.arange(len(ctx) - 1, len(ids) - 1), ids[len(ctx) :]].double().sum())
        assert abs(entry["logprob"] - want) <= 1e-4, entry


def _same_numbers(a: list[dict], b: list[dict], atol: float = 1e-5) -> bool:
    """Two completions' choices with the same text, tokens and logprobs (within `atol`)."""
    for x, y in zip(a, b, strict=True):
        assert x["text"] == y["text"] and x["logprobs"]["tokens"] == y["logprobs"]["tokens"]
        lx, ly = x["logprobs"]["token_logprobs"], y["logprobs"]["token_logprobs"]
        assert [v is None for v in lx] == [v is None for v in ly]
        np.testing.assert_allclose([v for v in lx if v is not None], [v for v in ly if v is not None], atol=atol)
    return True


def test_a_visitors_token_on_the_api_and_the_rooms_reaches_the_device_api(device_api, gpt2_dir, tmp_path):
    """The package counts a call on the quota of the visitor whose X-IP-Token it finds in Gradio's request; /v1 and
    the rooms are not Gradio's, so the server hands it the token their request carries (none: none is sent)."""
    import base64
    import json

    claims = base64.urlsafe_b64encode(json.dumps({"sub": "a-visitor"}).encode()).decode().rstrip("=")
    token = f"e30.{claims}.signature"  # a JWT's shape: the package reads its claims

    def tokens() -> list[str | None]:
        return [p.get("token") for path, p in device_api.calls if path == "/schedule"]

    env = {"ZEROGPU_TEST_NO_DEVICE": "1", "EXPLORER_API_KEY": "key", "EXPLORER_MAX_SECONDS": "40"}
    srv = ZeroGpuServer(device_api, [gpt2_dir], tmp_path, env=env, args=("--device", "cpu"))
    try:
        ask = {"prompt": "the fox", "max_tokens": 0, "echo": True, "logprobs": 1}
        key = {"Authorization": "Bearer key"}
        _post(srv.url, "/v1/completions", ask, headers={**key, "X-IP-Token": token})
        _post(srv.url, "/rooms", {"lesson": LESSON}, headers={"X-IP-Token": token})
        _post(srv.url, "/v1/completions", ask, headers=key)
        assert tokens() == [token, token, None]
    finally:
        srv.stop()


def test_students_answering_a_step_not_yet_prepared_on_zerogpu_cost_one_call(gpt2):
    """A step whose preparation failed (the teacher's quota, say) is prepared by the first request that needs it:
    students answering it at once wait for that one call, and none of them makes another."""
    from concurrent.futures import ThreadPoolExecutor

    from explorer.api.rooms import Classroom
    from explorer.lessons import schema
    from explorer.lessons.rooms import Rooms
    from explorer.serving.models import Models

    class Counted(runner.Here):
        calls = 0

        def call(self, engine, work):
            Counted.calls += 1
            return super().call(engine, work)

    models = Models([gpt2.name], allow_hub=False)
    models.add(gpt2)
    rooms = Rooms()
    room = rooms.open(schema.from_value(LESSON, ""), gpt2.name)
    classroom = Classroom(models, Limits(), rooms, gate=None, run=Counted(), per_step=True)
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: classroom.fill_now(room, {0: (f"word{i}",)}, alone=False), range(8)))
    st = room.steps[0]
    assert Counted.calls == 1 and st.model_top is not None
    assert sum(f"word{i}" in st.numbers for i in range(8)) == 1  # the first one's, computed with the step's side
