"""The torch.compile'd statistics kernel gives the eager numbers."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.engine import TorchEngine, score_ids

pytestmark = pytest.mark.slow  # compiles / runs the bench script: the full tier only


def test_compiled_equals_eager(gpt2_dir, gpt2):
    compiled = TorchEngine.load(gpt2_dir, device="cpu", compile=True)
    if not compiled.compiled:
        import pytest

        pytest.skip("torch.compile is not usable on this machine (no C++ compiler?): the eager path serves")
    ids = (gpt2.encode("The quick brown fox jumps over the lazy dog. Grüße 🦊") * 3)[:100]
    a, b = score_ids(compiled, ids, k=20), score_ids(gpt2, ids, k=20)
    assert not gpt2.compiled
    np.testing.assert_allclose(a.logprobs[1:], b.logprobs[1:], atol=1e-5)
    np.testing.assert_allclose(a.entropy[1:], b.entropy[1:], atol=1e-5)
    assert (a.ranks == b.ranks).all() and (a.top_ids == b.top_ids).all()


def test_one_row_kernel_equals_eager_and_log_softmax(gpt2_dir, gpt2):
    """A decode step's row through the compiled one-row kernel: row_stats' eager numbers and plain log_softmax's,
    for a target at the top, one far below the top-20 (its rank needs every entry), one tied with others, and a
    processed row with filtered (-inf) entries; every k, no top-k at all included."""
    import torch

    from explorer.engine.kernels.metrics import row_stats, sums
    from tests.helpers.reference import assert_rank_close

    compiled = TorchEngine.load(gpt2_dir, device="cpu", compile=True)
    if not compiled.compiled:
        pytest.skip("torch.compile is not usable on this machine (no C++ compiler?): the eager path serves")
    assert compiled._row_kernel is not None and gpt2._row_kernel is None
    v = compiled.vocab_size
    gen = torch.Generator().manual_seed(3)
    plain = torch.randn((1, v), generator=gen) * 4
    tied = plain.clone()
    tied[0, :7] = tied[0, 11]  # seven entries tied with entry 11
    filtered = plain.clone()
    filtered[0, plain[0] < plain[0].median()] = float("-inf")
    order = plain[0].argsort(descending=True)
    cases = [(plain, int(order[0])), (plain, int(order[v // 2])), (tied, 11), (filtered, int(order[3]))]
    for row, target in cases:
        t = torch.tensor([target])
        lp = torch.log_softmax(row[0], -1)
        p = lp.exp()
        plp = torch.where(p > 0, p * lp, 0.0)
        for k in (0, 5, 20, 50):
            a, b = compiled.stats(row, t, k), row_stats(row, t, k, sums_fn=sums)
            assert a.rank.tolist() == b.rank.tolist() and a.top_ids.tolist() == b.top_ids.tolist()
            assert a.top_ids.shape == (1, k)
            for x, y in ((a.logprob, b.logprob), (a.entropy, b.entropy), (a.varentropy, b.varentropy)):
                assert torch.allclose(x, y, atol=1e-6), (x, y)
            assert torch.allclose(a.top_logprobs, b.top_logprobs, atol=1e-6)
            assert abs(float(a.logprob[0]) - float(lp[target])) < 1e-5
            assert abs(float(a.entropy[0]) + float(plp.sum())) < 1e-4
            var = float((torch.where(p > 0, p * lp * lp, 0.0)).sum() - plp.sum() ** 2)
            assert abs(float(a.varentropy[0]) - var) < 1e-3
            assert_rank_close(int(a.rank[0]), lp, target)
            if k:
                assert torch.allclose(a.top_logprobs[0], lp.sort(descending=True).values[:k], atol=1e-5)
    assert int(compiled.stats(plain, torch.tensor([int(order[v // 2])]), 5).rank[0]) > 20


def test_compiled_generation_equals_eager(gpt2_dir, gpt2):
    """A generation's numbers are the same with the compiled one-row kernel as eager."""
    from explorer.engine import generate
    from explorer.rules.sampler import SamplerSettings

    compiled = TorchEngine.load(gpt2_dir, device="cpu", compile=True)
    if not compiled.compiled:
        pytest.skip("torch.compile is not usable on this machine (no C++ compiler?): the eager path serves")
    ids = gpt2.encode("The quick brown fox")
    for s in (
        SamplerSettings(max_tokens=12, temperature=0.0, logprobs=5),
        SamplerSettings(max_tokens=12, seed=7, logprobs=3, top_p=0.9, mode="processed"),
    ):
        a, b = generate(compiled, ids, s)[0], generate(gpt2, ids, s)[0]
        assert list(a.token_ids) == list(b.token_ids)
        n = a.n_prompt
        np.testing.assert_allclose(a.logprobs[n:], b.logprobs[n:], atol=1e-5)
        np.testing.assert_allclose(a.entropy[n:], b.entropy[n:], atol=1e-5)
        assert (a.ranks[n:] == b.ranks[n:]).all() and (a.top_ids[n:] == b.top_ids[n:]).all()


def test_compiled_equals_eager_on_the_default_model(smollm):
    """The app compiles its statistics by default (the tests' engines are eager): on the default model, 49,152
    entries a row, the compiled kernels' sums round differently from eager torch's (1.9e-5 in a logprob at most,
    measured) but stay within the contract's 1e-4 of them, scoring and generating."""
    from explorer.engine import generate
    from explorer.rules.sampler import SamplerSettings

    compiled = TorchEngine.load(None, device="cpu", compile=True)
    if not compiled.compiled:
        pytest.skip("torch.compile is not usable on this machine (no C++ compiler?): the eager path serves")
    text = "The capital of France is Paris. Logprobs tell you what the model expected. Grüße 🦊 def f(x): return x"
    ids = smollm.encode(text * 4)[:200]
    a, b = score_ids(compiled, ids, k=20), score_ids(smollm, ids, k=20)
    np.testing.assert_allclose(a.logprobs[1:], b.logprobs[1:], atol=5e-5)
    np.testing.assert_allclose(a.entropy[1:], b.entropy[1:], atol=5e-5)
    np.testing.assert_allclose(a.top_logprobs[1:], b.top_logprobs[1:], atol=5e-5)
    assert (a.ranks == b.ranks).all() and (a.top_ids == b.top_ids).all()
    s = SamplerSettings(max_tokens=24, temperature=0.0, logprobs=20)
    ga, gb = generate(compiled, ids[:40], s)[0], generate(smollm, ids[:40], s)[0]
    assert list(ga.token_ids) == list(gb.token_ids)
    np.testing.assert_allclose(ga.logprobs[ga.n_prompt :], gb.logprobs[gb.n_prompt :], atol=5e-5)
