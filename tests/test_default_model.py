"""The real default model (SmolLM2-135M-Instruct), offline."""

from __future__ import annotations

import pytest

from explorer.engine import generate, score_text
from explorer.rules.sampler import SamplerSettings
from tests.helpers.reference import assert_matches_reference, ref_logprobs

pytestmark = pytest.mark.slow


def test_paris(smollm):
    r = score_text(smollm, "The capital of France is Paris", k=5)
    last = r.n - 1
    assert r.token_text[last] == " Paris"
    assert smollm.vocab[int(r.top_ids[last, 0])] == b" Paris" and r.ranks[last] == 1
    assert_matches_reference(r, ref_logprobs(smollm.model, r.token_ids.tolist()), range(1, r.n))


def test_greedy_continuation_and_chat(smollm):
    r = generate(smollm, smollm.encode("The capital of France is"), SamplerSettings(max_tokens=3, temperature=0))[0]
    assert r.completion_text.startswith(" Paris")
    ids = smollm.encode_chat([{"role": "user", "content": "What is the capital of France? One word."}])
    c = generate(smollm, ids, SamplerSettings(max_tokens=16, temperature=0))[0]
    assert "Paris" in c.completion_text
    assert c.finish_reason in ("stop", "length")
