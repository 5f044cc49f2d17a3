"""The torch.compile'd statistics kernel gives the eager numbers."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.engine import Engine, score_ids

pytestmark = pytest.mark.slow  # compiles / runs the bench script: the full tier only


def test_compiled_equals_eager(gpt2_dir, gpt2):
    compiled = Engine.load(gpt2_dir, device="cpu", compile=True)
    if not compiled.compiled:
        import pytest

        pytest.skip("torch.compile is not usable on this machine (no C++ compiler?): the eager path serves")
    ids = (gpt2.encode("The quick brown fox jumps over the lazy dog. Grüße 🦊") * 3)[:100]
    a, b = score_ids(compiled, ids, k=20), score_ids(gpt2, ids, k=20)
    assert not gpt2.compiled
    np.testing.assert_allclose(a.logprobs[1:], b.logprobs[1:], atol=1e-5)
    np.testing.assert_allclose(a.entropy[1:], b.entropy[1:], atol=1e-5)
    assert (a.ranks == b.ranks).all() and (a.top_ids == b.top_ids).all()
