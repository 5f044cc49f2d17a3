"""The llama.cpp engine on a tiny GGUF built in a fixture (tests/conftest.py `tiny_gguf_dir`: a 2-layer Llama and
the tiny byte-level BPE tokenizer, written with gguf.GGUFWriter), beside the torch engine on the same weights; then
a slice of the HTTP API's tests (the real `openai` client) run again with llama.cpp serving.

Not run against it, and why:
- test_load_loses_nothing_and_mixes_nothing wants bit-for-bit equality, but the engine's one KV sequence is
  re-decoded when requests interleave, in other batches than alone: a concurrent answer equals the solo one to
  ~1e-3 here (this tiny model's logits are large, flash attention sums in float16).
  test_concurrent_answers_equal_solo_ones below is that test with a tolerance.
- test_chat_logprobs_true_without_top_logprobs: its byte check assumes the reply is valid UTF-8; this tiny model's
  seeded reply is not.
- tests comparing with `engine.model` (transformers) directly; the logit lens (no hidden states: test_llamacpp.py
  checks the message); the browser tier (it drives the same handlers)."""

from __future__ import annotations

import os

import numpy as np
import openai
import pytest
import torch

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install llama-cpp-python)")

from explorer.engine import TorchEngine, generate, score_ids
from explorer.export import FORMATS, export
from explorer.rules.sampler import SamplerSettings
from tests.helpers.api import (  # noqa: F401 - the fixtures, and the API tests every engine passes, run here
    client,
    model,
    seeded_answers,
    test_bad_chat_and_unknown_model,
    test_completion_logprobs,
    test_streaming_chat_equals_non_stream,
    test_streaming_completion,
    test_token_id_prompt_is_scored_as_sent,
)
from tests.helpers.exports import assert_generated_read_back
from tests.helpers.servers import LiveServer
from tests.helpers.tiny import CORPUS


@pytest.fixture(scope="module")
def live(tiny_gguf):
    """The app serving the tiny GGUF through llama.cpp: the API tests imported above run against it."""
    srv = LiveServer(tiny_gguf)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def tiny_torch(tiny_gguf_dir):
    return TorchEngine.load(os.path.join(tiny_gguf_dir, "hf"), device="cpu", name="tiny-gguf-torch")


def test_same_tokens_bytes_and_template_as_the_torch_engine(tiny_gguf, tiny_torch):
    assert list(tiny_gguf.vocab) == list(tiny_torch.vocab) and tiny_gguf.vocab_size == tiny_torch.vocab_size
    for text in [*CORPUS[:6], "<|user|>hi<|assistant|>", " two  spaces"]:
        assert tiny_gguf.encode(text) == tiny_gguf.llama_tokenize(text) == tiny_torch.encode(text), text
    msgs = [{"role": "user", "content": "Hi there"}]
    assert tiny_gguf.encode_chat(msgs) == tiny_torch.encode_chat(msgs)
    assert tiny_gguf.eos_ids == tiny_torch.eos_ids and tiny_gguf.context == 256


def test_numbers_equal_the_torch_engine_on_the_same_weights(tiny_gguf, tiny_torch):
    """float32 weights both sides (llama.cpp keeps the KV cache in float16): equal to 1e-2, the same greedy text."""
    ids = tiny_torch.encode(CORPUS[1] + " " + CORPUS[0])
    a, b = score_ids(tiny_torch, ids, k=5), score_ids(tiny_gguf, ids, k=5)
    np.testing.assert_allclose(b.logprobs[1:], a.logprobs[1:], atol=1e-2)
    np.testing.assert_allclose(b.entropy[1:], a.entropy[1:], atol=1e-2)
    s = SamplerSettings(max_tokens=6, temperature=0.0, logprobs=3, ignore_eos=True)
    ga, gb = generate(tiny_torch, ids[:5], s)[0], generate(tiny_gguf, ids[:5], s)[0]
    assert ga.token_ids.tolist() == gb.token_ids.tolist()


def test_scoring_equals_log_softmax_of_llamacpp_logits(tiny_gguf):
    """The engine's numbers are TorchEngine.stats of llama.cpp's rows: checked against a plain log_softmax of them."""
    ids = tiny_gguf.encode(" ".join(CORPUS[:6]))
    logits, _ = tiny_gguf.body(torch.tensor([ids]))  # (T, V)
    lp = torch.log_softmax(logits.double(), -1)[:-1]
    r = score_ids(tiny_gguf, ids, k=4)
    own = lp[torch.arange(len(ids) - 1), torch.tensor(ids[1:])]
    np.testing.assert_allclose(r.logprobs[1:], own.numpy(), atol=1e-5)
    assert (r.ranks[1:] == (lp >= own[:, None]).sum(-1).numpy()).all()
    np.testing.assert_allclose(r.entropy[1:], (-(lp.exp() * lp).sum(-1)).numpy(), atol=1e-5)


def test_a_short_texts_logits_are_not_padded(tiny_gguf):
    """The body gives logits (the head is the identity): a block of fewer than HEAD_MIN_ROWS positions is scored as
    it is, not copied beside rows of zeros (a padding that only a matmul's kernel choice needs)."""
    from explorer.engine.interface import HEAD_MIN_ROWS
    from tests.helpers.shapes import recorded

    ids = tiny_gguf.encode(" ".join(CORPUS[:2]))
    assert 2 < len(ids) < HEAD_MIN_ROWS
    r, rec = recorded(score_ids, tiny_gguf, ids, k=4)
    v = tiny_gguf.vocab_size
    assert (len(ids) - 1, v) in rec.shapes  # the recorder saw the block
    assert not any(len(sh) == 2 and sh[0] >= HEAD_MIN_ROWS and sh[1] == v for sh in rec.shapes)
    logits, _ = tiny_gguf.body(torch.tensor([ids]))
    own = torch.log_softmax(logits.double(), -1)[torch.arange(len(ids) - 1), torch.tensor(ids[1:])]
    np.testing.assert_allclose(r.logprobs[1:], own.numpy(), atol=1e-5)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_export_shape(tiny_gguf, fmt):
    s = SamplerSettings(max_tokens=6, temperature=0.7, seed=2, logprobs=3, prompt_logprobs=2)
    r = generate(tiny_gguf, tiny_gguf.encode("The capital of"), s)[0]
    assert_generated_read_back(export(fmt, [r]), r)  # strict JSON (no NaN, no Infinity) holding the generated numbers


def test_prompt_logprobs_through_the_openai_client(client, model, tiny_gguf):
    prompt = "The capital of France is Paris."
    r = client.completions.create(
        model=model, prompt=prompt, max_tokens=0, echo=True, logprobs=3, extra_body={"prompt_logprobs": 4}
    )
    pl = r.model_dump()["choices"][0]["prompt_logprobs"]
    ref = score_ids(tiny_gguf, tiny_gguf.encode(prompt), k=4)
    assert pl[0] is None and len(pl) == ref.n
    for pos in range(1, ref.n):
        actual = pl[pos][str(int(ref.token_ids[pos]))]
        assert abs(actual["logprob"] - float(ref.logprobs[pos])) < 1e-5 and actual["rank"] == ref.ranks[pos]
    cards = openai.OpenAI(base_url=str(client.base_url), api_key="x").models.list().model_dump()["data"]
    assert cards[0]["engine"] == "llama.cpp"


def test_concurrent_answers_equal_solo_ones(client, model):
    """8 concurrent clients, 80 seeded requests: the same tokens as each request made alone, logprobs to 1e-2."""
    results, alone = seeded_answers(client, model, 80)
    for i, text, lps in results:
        want_text, want_lps = alone[(i % 5, i % 7)]
        assert text == want_text
        np.testing.assert_allclose(lps, want_lps, atol=1e-2)


def test_statistics_thread_leaves_the_cores_to_llamacpp(tiny_gguf):
    """The per-step statistics run on one torch thread (llama.cpp's threads own the cores); nothing else changes."""
    import threading

    n = torch.get_num_threads()
    assert tiny_gguf.background(torch.get_num_threads).result() == 1
    seen = []
    t = threading.Thread(target=lambda: seen.append(torch.get_num_threads()))
    t.start()
    t.join()
    assert seen == [n] and torch.get_num_threads() == n
