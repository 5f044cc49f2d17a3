"""Scoring against an independent plain-torch computation, on both tokenizer families."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from explorer.engine import score_ids, score_text
from explorer.errors import ExplorerError
from explorer.rules.sampler import check_k
from tests.helpers.reference import assert_matches_reference, ref_logprobs
from tests.helpers.shapes import recorded

TEXT = "The quick brown fox jumps over the lazy dog. Grüße aus München! 東京 👋 🦊 Ωmega"


@pytest.mark.parametrize("k", [0, 1, 5, 20])
def test_score_matches_reference(engine, k):
    r = score_text(engine, TEXT, k=k)
    ids = r.token_ids.tolist()
    lp = ref_logprobs(engine.model, ids)
    assert np.isnan(r.logprobs[0]) and r.ranks[0] == 0
    assert r.scored[1:].all()
    assert_matches_reference(r, lp, range(1, r.n))


def test_full_vocabulary(engine):
    r = score_text(engine, "Paris is big.", k=-1)
    lp = ref_logprobs(engine.model, r.token_ids.tolist())
    assert r.full_logprobs.shape == (r.n, engine.vocab_size)
    np.testing.assert_allclose(r.full_logprobs[1:], lp.numpy(), atol=1e-4)
    assert len(r.pieces) == engine.vocab_size


@pytest.mark.parametrize("chunk", [1, 3, 64])
def test_chunked_equals_unchunked(engine, chunk):
    ids = engine.encode(TEXT)
    whole = score_ids(engine, ids, k=5, chunk=10_000)
    part = score_ids(engine, ids, k=5, chunk=chunk)
    np.testing.assert_allclose(part.logprobs[1:], whole.logprobs[1:], atol=1e-5)
    np.testing.assert_allclose(part.entropy[1:], whole.entropy[1:], atol=1e-5)
    assert (part.ranks == whole.ranks).all()
    assert (part.top_ids == whole.top_ids).all()


def test_bos_added_where_expected(llama):
    ids = llama.encode("fox")
    assert ids[0] == llama.tokenizer.bos_token_id


def test_ids_scored_exactly_as_given(gpt2):
    ids = gpt2.encode("The capital of France")
    r = score_ids(gpt2, ids[1:], k=2)  # no BOS: nothing is added
    assert r.token_ids.tolist() == ids[1:]


def test_bad_input_messages(gpt2):
    with pytest.raises(ExplorerError, match="empty"):
        score_text(gpt2, "", k=5)
    with pytest.raises(ExplorerError, match="at most 20"):
        check_k(21, "logprobs", allow_full=True)  # the faces check k (the engine takes a valid one)
    with pytest.raises(ExplorerError, match="from 0 to 20"):
        check_k(-2, "logprobs", allow_full=True)
    with pytest.raises(ExplorerError, match=r"reads at most 128"):
        score_text(gpt2, "fox jumps " * 200, k=1)
    with pytest.raises(ExplorerError, match="outside the vocabulary"):
        score_ids(gpt2, [1, 2, 10**6], k=1)


def test_2048_tokens_allocate_no_full_matrix(long_gpt2):
    """Scoring 2,048 tokens with k=20 allocates no [positions, vocabulary] tensor beyond one chunk."""
    ids = (long_gpt2.encode("fox jumps over the lazy dog. ") * 300)[:2048]
    r, rec = recorded(score_ids, long_gpt2, ids, k=20)
    assert r.n == 2048
    v = long_gpt2.vocab_size
    rows = [s[-2] for s in rec.shapes if len(s) >= 2 and s[-1] == v]
    assert rows, "no vocabulary-wide tensor seen: the recorder is not working"
    assert max(rows) <= long_gpt2.chunk_size(2047) <= 320
    assert not any(len(s) >= 2 and s[-1] == v and s[-2] >= 2047 for s in rec.shapes)


def test_hidden_path_equals_full_forward(gpt2):
    """The engine's body+head split reproduces the model's own logits."""
    assert gpt2.split_head
    ids = torch.tensor([gpt2.encode("The lazy dog")])
    with torch.no_grad():
        h, _ = gpt2.body(ids)
    np.testing.assert_allclose(gpt2.head(h).detach().numpy(), gpt2.model(ids).logits[0].detach().numpy(), atol=1e-5)


def test_an_unusual_head_reads_a_prompt_for_its_last_row_only(gpt2_dir):
    """A model whose logits are not output_layer(body) (soft-capping: `split_head` False) gives logits from its
    body; a prompt read for its next token only (`last=True`) asks the model for that row alone
    (`logits_to_keep`), with the same numbers as the last row of the whole prompt's logits."""
    from explorer.engine import TorchEngine

    eng = TorchEngine.load(gpt2_dir, device="cpu", name="unusual-head")
    eng.split_head = False  # as _head_is_separable finds for a soft-capped head
    seen: list[dict] = []
    eng.model.register_forward_pre_hook(lambda _m, _a, kw: seen.append(kw), with_kwargs=True)
    ids = torch.tensor([eng.encode("The lazy dog sleeps")])
    with torch.no_grad():
        last, past = eng.body(ids, cache=True, last=True)
        whole, _ = eng.body(ids, cache=True)
    assert last.shape == (1, eng.vocab_size) and past.get_seq_length() == ids.shape[1]
    assert [kw.get("logits_to_keep") for kw in seen] == [1, None]
    np.testing.assert_allclose(last.numpy(), whole[-1:].numpy(), atol=1e-5)
    np.testing.assert_allclose(whole.numpy(), eng.model(ids).logits[0].detach().numpy(), atol=1e-5)
