"""ZeroGPU as the `spaces` package runs a Space's code, on the CPU: the real package in ZeroGPU mode against a
stand-in of its device API (tests/zerogpu.py), so the fork, the durations asked and the quota's calls, the threads
in the worker and what comes back are the package's own. Its two worker steps that need a CUDA device (CUDA's
start, the weights' move) are skipped there (tests/zerogpu_serve.py); the test that needs them skips, saying so.
`pytest -m zerogpu` runs this tier alone."""

from __future__ import annotations

import gradio as gr
import httpx
import numpy as np
import pytest
import torch

from explorer import zerogpu
from explorer.settings import Limits
from explorer.ui import gpu_calls
from tests.zerogpu import DeviceApi, ZeroGpuServer

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
        # 1. a generation ran in the server's own process at start-up (tests/zerogpu_serve.py): its batch thread runs
        # there, not in a worker; the API, which would run the model there too, says why it is not on ZeroGPU
        r = httpx.post(srv.url + "/v1/completions", json={"prompt": "the fox", "max_tokens": 3},
                       headers={"Authorization": "Bearer key"}, timeout=60)  # fmt: skip
        assert r.status_code == 503 and r.json()["error"]["code"] == "not_on_zerogpu", r.text
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

    srv = ZeroGpuServer(device_api, [gpt2_dir], tmp_path)
    try:
        scored = Client(srv.url + "/", verbose=False).predict(
            "the fox " * 8, "probability", "1, 10, 100, 1000", 5, api_name="/score"
        )
        assert "data-pos=" in scored[0]
    finally:
        srv.stop()


def test_on_zerogpu_the_api_and_the_lessons_say_why_they_are_not_there(gpt2):
    """/v1 and the rooms run the model in the server's process, which on ZeroGPU has no GPU: each of their routes
    answers 503 with the reason (JSON, or a page for /lesson), never a failure mid-request; the page stays."""
    from fastapi.testclient import TestClient

    from explorer.models import Models
    from explorer.server import ZERO_GPU_MESSAGE, build_app

    models = Models([gpt2.name], allow_hub=False)
    models.add(gpt2)
    with TestClient(build_app(models, zero=True)) as client:
        for method, path in [("GET", "/v1/models"), ("POST", "/v1/completions"), ("POST", "/rooms"),
                             ("GET", "/lessons"), ("GET", "/rooms/ABCDE")]:  # fmt: skip
            r = client.request(method, path, json={"model": gpt2.name, "prompt": "Hi"})
            assert r.status_code == 503 and r.json()["error"]["message"] == ZERO_GPU_MESSAGE, (path, r.text)
        page = client.get("/lesson")
        assert page.status_code == 503 and "not available on this Space" in page.text and "make run" in page.text
        assert client.get("/").status_code == 200
    with TestClient(build_app(models, zero=False)) as client:  # elsewhere both are there
        assert client.get("/v1/models").status_code == 200 and client.get("/lessons").status_code == 200
