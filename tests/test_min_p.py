"""min_p end to end (#56): a sampler transform written as its kernel and its SamplerSettings field, and found by
everything else: the HTTP API, the page's control and link, the remote engine's request and LM.generate."""

from __future__ import annotations

import math

import numpy as np
import openai
import pytest
import torch

from explorer.engine.kernels.sampling import apply_min_p
from explorer.engine.remote.stream import generation_body
from explorer.notebook.lm import LM
from explorer.rules.sampler import SamplerSettings, knobs
from explorer.ui.sampler import Sampler
from tests.helpers.api import client, model  # noqa: F401 - the fixtures

CUTS = [0.0, 1e-3, 0.05, 0.3, 0.9, 1.0]


def kept_by_hand(logits: np.ndarray, p: float) -> tuple[np.ndarray, np.ndarray]:
    """(kept, clear): p_i >= p * p_max read in log space (l_i - l_max >= log p, float64), and the entries far
    enough from the line (1e-4 nats) for float32 to agree."""
    gap = logits.astype(np.float64) - logits.max(-1, keepdims=True)
    line = math.log(p) if p > 0 else -math.inf
    with np.errstate(invalid="ignore"):  # -inf - -inf: NaN, not clear (a cut entry, checked on its own)
        return gap >= line, np.abs(gap - line) > 1e-4


@pytest.mark.parametrize("p", CUTS)
def test_the_kernel_keeps_what_the_rule_says(p):
    g = torch.Generator().manual_seed(7)
    logits = torch.randn(4, 300, generator=g) * 3  # (b, V)
    logits[1, :5] = logits[1].max()  # tied tops: all kept, at any p
    logits[2] = 0.0  # a flat row: everything is the top
    logits[3, 10] = -math.inf  # an entry already cut stays cut
    out = apply_min_p(logits, p)
    kept, clear = kept_by_hand(logits.numpy(), p)
    assert np.array_equal(np.isfinite(out.numpy())[clear], kept[clear])
    survivors = torch.isfinite(out)
    assert torch.equal(out[survivors], logits[survivors])  # kept entries keep their value
    assert bool(survivors[1, :5].all()) and bool(survivors[2].all()) and not bool(survivors[3, 10])
    if p == 0.0:
        assert out is logits  # off
    if p == 1.0:
        assert torch.equal(survivors, logits == logits.max(-1, keepdim=True).values)


def test_min_p_is_a_field_with_its_range():
    assert SamplerSettings(min_p=0.25).min_p == 0.25
    with pytest.raises(Exception, match=r"`min_p` \(=1.5\) must be in \[0.0, 1.0\]"):
        SamplerSettings(min_p=1.5)


def test_min_p_is_a_page_control_a_link_and_a_remote_field():
    assert "min_p" in Sampler.names()
    r, k = Sampler.sliders()["min_p"], knobs()["min_p"]
    assert (r.lo, r.hi, r.step, r.default) == (k.lo, k.hi, k.step, k.default) == (0.0, 1.0, 0.01, 0.0)
    assert "min_p" not in Sampler().to_link()  # unset: a link is written as before the control existed
    s = Sampler(min_p=0.2)
    assert s.to_link()["min_p"] == 0.2 and Sampler.read(s.to_link()) == s
    assert Sampler.from_controls(s.controls()) == s
    assert s.settings(score_prompt=False).min_p == 0.2
    assert generation_body("m", [1, 2], SamplerSettings(min_p=0.2), 0)["min_p"] == 0.2


def test_min_p_through_v1(client, model):
    """min_p 1 keeps only the top token: sampling at temperature 1 gives the greedy tokens; out of range is a 400."""
    ask = dict(model=model, prompt="The quick brown", max_tokens=6, logprobs=1)
    greedy = client.completions.create(**ask, temperature=0.0)
    for seed in (1, 2):
        cut = client.completions.create(**ask, temperature=1.0, seed=seed, extra_body={"min_p": 1.0})
        assert cut.choices[0].logprobs.tokens == greedy.choices[0].logprobs.tokens
    free = [client.completions.create(**ask, temperature=5.0, seed=s).choices[0].text for s in range(4)]
    assert any(t != greedy.choices[0].text for t in free)  # without min_p the draws do differ
    with pytest.raises(openai.BadRequestError, match="min_p"):
        client.completions.create(**ask, extra_body={"min_p": 1.5})


def test_min_p_through_lm_generate(gpt2):
    lm = LM(gpt2)
    greedy = lm.generate("The lazy dog", 6, 0.0)
    assert lm.generate("The lazy dog", 6, 1.0, min_p=1.0, seed=4).token_ids.tolist() == greedy.token_ids.tolist()
    r = lm.generate("The lazy dog", 6, 1.0, min_p=0.2, seed=4, mode="processed", logprobs=10)
    top = r.top_logprobs[r.n_prompt :]  # (new, k) processed: what the sampler drew from, descending
    assert len(top) and np.isfinite(top[:, 0]).all()
    line = np.broadcast_to(top[:, :1] + math.log(0.2) - 1e-5, top.shape)  # p >= 0.2 * p(top), in logprobs
    assert (top[np.isfinite(top)] >= line[np.isfinite(top)]).all()
    assert r.sampler["min_p"] == 0.2
