"""Invariants of the statistics, for any logits (hypothesis)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.engine import score_ids
from explorer.engine.kernels.metrics import row_stats
from explorer.engine.kernels.sampling import apply_top_k, apply_top_p

rows = st.integers(1, 6).flatmap(
    lambda c: st.integers(2, 300).flatmap(
        lambda v: st.tuples(st.just(c), st.just(v), st.integers(0, 2**31 - 1), st.floats(0.01, 50.0))
    )
)


@settings(max_examples=60, deadline=None)
@given(rows, st.integers(0, 20))
def test_row_stats_invariants(shape, k):
    c, v, seed, scale = shape
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(c, v, generator=g) * scale
    targets = torch.randint(0, v, (c,), generator=g)
    kk = min(k, v)
    whole = row_stats(logits, targets, -1, full=True)
    np.testing.assert_allclose(whole.full.exp().sum(-1).numpy(), 1.0, atol=1e-4)
    st_ = row_stats(logits, targets, kk)
    # the top-K shortcut for the rank gives exactly the full count
    assert torch.equal(st_.rank, (whole.full >= st_.logprob[:, None]).sum(-1))
    assert torch.equal(st_.rank, whole.rank)
    assert (st_.rank >= 1).all() and (st_.rank <= v).all()
    assert (st_.entropy >= -1e-5).all() and (st_.entropy <= math.log(v) + 1e-4).all()
    assert st_.top_ids.shape == (c, kk)
    assert (st_.top_logprobs[:, :-1] >= st_.top_logprobs[:, 1:]).all() if kk > 1 else True
    # the actual token is in the top-k exactly when its rank is within k (up to ties)
    for i in range(c):
        inside = int(targets[i]) in st_.top_ids[i].tolist()
        if inside:
            assert st_.rank[i] <= kk or math.isclose(st_.logprob[i], st_.top_logprobs[i, -1], abs_tol=1e-6)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 50), st.floats(0.05, 0.95))
def test_filters_keep_at_least_the_best(seed, k, p):
    logits = torch.randn(1, 100, generator=torch.Generator().manual_seed(seed)) * 3
    for out in (apply_top_k(logits, k), apply_top_p(logits, p)):
        assert torch.isfinite(out[0, logits.argmax()])
    kept = torch.isfinite(apply_top_p(logits, p)).sum()
    probs = logits.softmax(-1).sort(descending=True).values
    need = int((probs.cumsum(-1) < p).sum()) + 1  # smallest prefix whose mass reaches p
    assert kept == min(need, 100)
    st_ = row_stats(apply_top_k(logits, k), logits.argmax(-1), 3)
    assert 0 <= float(st_.entropy) <= math.log(k) + 1e-4


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(0, 399), min_size=2, max_size=40), st.sampled_from([0, 1, 7, 20]))
def test_k_or_k_plus_one_entries(gpt2, ids, k):
    from explorer.export import vllm

    r = score_ids(gpt2, ids, k=k)
    for pos in range(1, r.n):
        e = vllm.position_entry(r, pos)
        assert len(e) == (k + 1 if r.ranks[pos] > k else k) or (k == 0 and len(e) == 1)
        assert r.ranks[pos] >= 1


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(2, 60), st.integers(0, 20))
def test_rank_with_many_ties(seed, v, k):
    """Integer logits tie a lot: ties count against the token, on the shortcut and the full path alike."""
    g = torch.Generator().manual_seed(seed)
    logits = torch.randint(-3, 4, (5, v), generator=g).float()
    targets = torch.randint(0, v, (5,), generator=g)
    lp = torch.log_softmax(logits, -1)
    expected = (lp >= lp.gather(-1, targets[:, None])).sum(-1)
    for sync_free in (False, True):  # the host-decided and the accelerator (no sync) paths
        assert torch.equal(row_stats(logits, targets, min(k, v), sync_free=sync_free).rank, expected)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-1e4, 0, width=32) | st.just(-math.inf), min_size=1, max_size=50))
def test_json_numbers_round_trip_float32(values):
    """nums writes each float32 so that it reads back as the same float32; -inf as -9999.0."""
    from explorer.export.common import nums

    a = np.array(values, dtype=np.float32)
    out = nums(a)
    for x, y in zip(a.tolist(), out):
        assert y == -9999.0 if x == -math.inf else np.float32(y) == np.float32(x) and isinstance(y, float)


def test_json_numbers_refuse_nan():
    from explorer.export.common import nums

    with pytest.raises(ValueError, match="NaN"):
        nums(np.array([0.5, np.nan], np.float32))
