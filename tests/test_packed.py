"""The torch engine's linear layers on oneDNN's packed weights (explorer/engine/local/packed.py): the same numbers as
PyTorch's own F.linear to float rounding, each row alone whatever else is in the matmul, gradients as before."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForCausalLM

from explorer.engine import TorchEngine
from explorer.engine.local.packed import PackedLinear, available, pack
from tests.helpers.reference import ref_logprobs

pytestmark = pytest.mark.skipif(not available(), reason="this torch build has no oneDNN packed linear")
TEXT = "the quick brown fox jumps over the lazy dog and the cat sat on the mat"


def test_a_packed_layer_gives_each_row_alone_what_f_linear_gives():
    torch.manual_seed(0)
    plain = torch.nn.Linear(96, 200)
    packed = PackedLinear(plain)
    x = torch.randn(187, 96)
    with torch.inference_mode():
        whole = packed(x)
        assert torch.allclose(whole, plain(x), atol=1e-5, rtol=1e-5)
        for m in (1, 3, 8, 16, 100):  # a row's numbers do not depend on the rows beside it
            assert torch.allclose(packed(x[:m]), whole[:m], atol=1e-6, rtol=0), m  # equal on this project's CPU
        assert packed(x.reshape(11, 17, 96)).shape == (11, 17, 200)


def test_gradients_run_on_the_original_weights():
    torch.manual_seed(1)
    plain = torch.nn.Linear(8, 5)
    packed = PackedLinear(plain)
    x = torch.randn(4, 8, requires_grad=True)
    packed(x).sum().backward()
    assert plain.weight.grad is not None and torch.allclose(
        x.grad, plain.weight.sum(0).expand(4, 8).detach(), atol=1e-6
    )


def test_the_llama_engine_is_packed_and_scores_as_the_unpacked_model(llama, llama_dir):
    assert llama.packed_mb > 0  # every projection of every layer, and the output layer
    assert isinstance(llama.model.get_output_embeddings(), PackedLinear)
    plain = AutoModelForCausalLM.from_pretrained(llama_dir, dtype=torch.float32).eval()  # F.linear, as stored
    assert pack(torch.nn.Sequential(), 1e9) == 0 and not any(isinstance(m, PackedLinear) for m in plain.modules())
    ids = llama.encode(TEXT)
    r = llama.score(ids, 5)
    lp = ref_logprobs(plain, ids)
    want = lp.gather(1, torch.tensor(ids[1:])[:, None])[:, 0]
    got = torch.tensor([float(v) for v in r.rows.logprobs[1:]])  # position 0: unscored
    assert torch.allclose(got, want, atol=1e-5), (got - want).abs().max()


def test_explorer_onednn_0_keeps_f_linear(llama_dir, monkeypatch):
    monkeypatch.setenv("EXPLORER_ONEDNN", "0")
    e = TorchEngine.load(llama_dir, device="cpu", name="tiny-llama-plain")
    assert e.packed_mb == 0 and not any(isinstance(m, PackedLinear) for m in e.model.modules())


def test_nothing_is_packed_where_the_copy_does_not_fit(llama_dir):
    model = AutoModelForCausalLM.from_pretrained(llama_dir, dtype=torch.float32)
    assert pack(model, room_mb=0.0001) == 0
    mb = sum(m.weight.numel() * 4 for m in model.modules() if isinstance(m, torch.nn.Linear)) / 2**20
    assert pack(model, room_mb=1e6) == pytest.approx(mb)  # what the copies take: counted with the weights
