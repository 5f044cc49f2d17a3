"""Attribution (explorer/engine/analyses/attribution.py): every method against an independent computation.

- occlusion: each value equals f(text) - f(ablated text), the ablated text scored afresh by plain log_softmax +
  gather on the model's logits; the KV-sharing path equals the naive path; torch and llama.cpp.
- integrated gradients: completeness on the tiny models, and equal to a hand-written Gauss-Legendre integral of
  torch.autograd gradients (not Captum); gradient x input equals a central finite difference.
- attention: the eager attention weights of a separate forward pass.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from explorer.engine.analyses.attribution import DETAIL, FAR_SPANS, attribute, unit_spans
from explorer.engine.passes.scoring import score_ids, score_text
from explorer.errors import ExplorerError
from explorer.results.attribution import Attribution

TEXT = "The quick brown fox jumps over the lazy dog"


@torch.no_grad()
def ref_f(model, ids: list[int], target: int, contrast: int | None = None) -> float:
    """f after `ids`: plain log_softmax of the model's last logits (a fresh, uncached pass)."""
    lp = torch.log_softmax(model(torch.tensor([ids])).logits[0, -1].double(), -1)
    return float(lp[target] - (lp[contrast] if contrast is not None else 0.0))


def _scored(engine, text: str = TEXT):
    return score_text(engine, text, 5)


def _contrast(r, pos: int) -> int:
    """A token that is not the target: the top alternative at `pos` that differs from it."""
    return next(int(i) for i in r.top_ids[pos] if i >= 0 and i != r.token_ids[pos])


@pytest.mark.parametrize("mode", ["remove", "replace"])
@pytest.mark.parametrize("with_contrast", [False, True])
def test_occlusion_equals_scoring_each_ablated_text(engine, mode, with_contrast):
    r = _scored(engine)
    pos = r.n - 1
    ids, target = r.token_ids.tolist(), int(r.token_ids[pos])
    contrast = _contrast(r, pos) if with_contrast else None
    a = attribute(engine, r, pos, contrast=contrast, mode=mode, neutral=3)
    assert a.n == pos and a.spans.tolist() == [[j, j + 1] for j in range(pos)]
    f = ref_f(engine.model, ids[:pos], target, contrast)
    assert a.f == pytest.approx(f, abs=1e-5)
    for j in range(pos):
        ablated = ids[:j] + ([3] if mode == "replace" else []) + ids[j + 1 : pos]
        if not ablated:  # the first token removed from a one-token context: no distribution
            assert math.isnan(a.values[j])
            continue
        assert a.values[j] == pytest.approx(f - ref_f(engine.model, ablated, target, contrast), abs=1e-5), j
    assert np.isfinite(a.values).sum() >= pos - 1


def test_kv_sharing_path_equals_naive_path(engine):
    r = _scored(engine, TEXT + " again and again")
    pos = r.n - 2
    for units in ("token", "word"):
        a = attribute(engine, r, pos, units=units, cached=True)
        b = attribute(engine, r, pos, units=units, cached=False)
        assert a.spans.tolist() == b.spans.tolist()
        np.testing.assert_allclose(a.values, b.values, atol=1e-5, equal_nan=True)


def test_word_units_and_detail_cover_the_context(gpt2):
    r = _scored(gpt2, TEXT + ", and then the dog barks at the fox loudly")
    pos = r.n - 1
    words = unit_spans(r, pos, "word")
    assert words[0, 0] == 0 and words[-1, 1] == pos and (words[1:, 0] == words[:-1, 1]).all()
    texts = ["".join(r.token_text[a:b]) for a, b in words.tolist()]
    assert texts[:3] == ["The", " quick", " brown"]
    near = unit_spans(r, pos, "token", detail=5)
    assert near[-5:].tolist() == [[j, j + 1] for j in range(pos - 5, pos)]
    assert len(near) == 5 + min(FAR_SPANS, pos - 5)
    assert near[0, 0] == 0 and (near[1:, 0] == near[:-1, 1]).all()
    a = attribute(gpt2, r, pos, detail=5)
    ids, target = r.token_ids.tolist(), int(r.token_ids[pos])
    a0, b0 = a.spans[0].tolist()  # a merged span: removed as one
    want = a.f - ref_f(gpt2.model, ids[:a0] + ids[b0:pos], target)
    assert a.values[0] == pytest.approx(want, abs=1e-5)
    assert DETAIL > 5


def test_occlusion_on_llamacpp_equals_fresh_passes(tiny_gguf, tiny_gguf_dir):
    """llama.cpp's rows continue its KV sequences; each value equals llama.cpp's own logits of the ablated text
    decoded from nothing (to 1e-5), and the same weights run by torch (to 1e-2, as the engines agree)."""
    import os

    from transformers import AutoModelForCausalLM

    def fresh(ids, target, contrast):
        logits, _ = tiny_gguf.body(torch.tensor([ids]))  # past None: decoded from position 0
        lp = torch.log_softmax(logits[-1].double(), -1)
        return float(lp[target] - lp[contrast])

    torch_model = AutoModelForCausalLM.from_pretrained(os.path.join(tiny_gguf_dir, "hf")).eval()
    r = _scored(tiny_gguf)
    pos = r.n - 1
    ids, target = r.token_ids.tolist(), int(r.token_ids[pos])
    contrast = _contrast(r, pos)
    a = attribute(tiny_gguf, r, pos, contrast=contrast)
    b = attribute(tiny_gguf, r, pos, contrast=contrast, cached=False)
    np.testing.assert_allclose(a.values, b.values, atol=1e-5, equal_nan=True)
    f = fresh(ids[:pos], target, contrast)
    assert a.f == pytest.approx(f, abs=1e-5)
    assert a.f == pytest.approx(ref_f(torch_model, ids[:pos], target, contrast), abs=1e-2)
    for j in range(1, pos):
        ablated = ids[:j] + ids[j + 1 : pos]
        assert a.values[j] == pytest.approx(f - fresh(ablated, target, contrast), abs=1e-5), j
        assert a.values[j] == pytest.approx(f - ref_f(torch_model, ablated, target, contrast), abs=1e-2), j


def test_gradients_refused_where_there_are_no_weights(tiny_gguf):
    r = _scored(tiny_gguf)
    with pytest.raises(ExplorerError, match=r"hidden states.*occlusion works"):
        attribute(tiny_gguf, r, r.n - 1, method="ig")


# ---- gradients --------------------------------------------------------------------------------------
def _f_of_embeddings(engine, ids, target, contrast=None):
    emb = engine.model.get_input_embeddings()(torch.tensor([ids])).detach()

    def f(e):
        lp = torch.log_softmax(engine.model(inputs_embeds=e).logits[:, -1].float(), -1)
        return lp[:, target] - (lp[:, contrast] if contrast is not None else 0.0)

    return emb, f


def test_integrated_gradients_equal_a_hand_written_integral(engine):
    """Captum's IG equals sum_i w_i * grad f(b + a_i (x - b)) . (x - b) with numpy's Gauss-Legendre nodes."""
    r = _scored(engine)
    pos = r.n - 1
    ids, target = r.token_ids.tolist(), int(r.token_ids[pos])
    contrast = _contrast(r, pos)
    for baseline in ("neutral", "zero"):
        a = attribute(engine, r, pos, contrast=contrast, method="ig", steps=16, chunk=5, baseline=baseline)
        emb, f = _f_of_embeddings(engine, ids[:pos], target, contrast)
        base = torch.zeros_like(emb)
        if baseline == "neutral":
            base += engine.model.get_input_embeddings().weight[a.settings["neutral_id"]].detach()
        nodes, weights = np.polynomial.legendre.leggauss(16)
        total = torch.zeros_like(emb)
        for t, w in zip((nodes + 1) / 2, weights / 2):
            x = (base + float(t) * (emb - base)).requires_grad_()
            (g,) = torch.autograd.grad(f(x).sum(), x)
            total += float(w) * g
        want = (total * (emb - base)).sum(-1)[0].numpy()
        np.testing.assert_allclose(a.values, want, atol=1e-4, rtol=1e-4)
        with torch.no_grad():
            assert a.f_baseline == pytest.approx(float(f(base)[0]), abs=1e-5)


def test_integrated_gradients_equal_captums_layer_method_on_token_ids(engine):
    """Captum's other entry point, LayerIntegratedGradients on the embedding layer fed token ids (baseline: the
    neutral token's id everywhere), gives the same values as ours on embeddings."""
    from captum.attr import LayerIntegratedGradients

    r = _scored(engine)
    pos = r.n - 1
    ids, target = r.token_ids.tolist(), int(r.token_ids[pos])
    a = attribute(engine, r, pos, method="ig", steps=24)

    def f(x):
        return torch.log_softmax(engine.model(input_ids=x).logits[:, -1].float(), -1)[:, target]

    x = torch.tensor([ids[:pos]])
    base = torch.full_like(x, a.settings["neutral_id"])
    lig = LayerIntegratedGradients(f, engine.model.get_input_embeddings())
    want = lig.attribute(x, baselines=base, n_steps=24, method="gausslegendre").sum(-1)[0].detach().numpy()
    np.testing.assert_allclose(a.values, want, atol=1e-4, rtol=1e-4)


def test_integrated_gradients_are_complete_at_64_steps(engine):
    """From the default baseline (the neutral token everywhere): within 1 % at 64 steps, at three targets."""
    r = _scored(engine)
    for pos in (r.n - 1, r.n - 3, 4):
        a = attribute(engine, r, pos, method="ig", steps=64)
        assert a.f_baseline is not None and a.completeness_gap is not None
        assert abs(a.completeness_gap) <= 0.01 * abs(a.f - a.f_baseline), (pos, a.completeness_gap, a.f)


def test_gradient_x_input_equals_a_finite_difference(engine):
    """value_j = d/de f(x + e * x_j) at e = 0 (x_j: token j's embedding, the other rows zero), central difference."""
    r = _scored(engine)
    pos = r.n - 1
    ids, target = r.token_ids.tolist(), int(r.token_ids[pos])
    a = attribute(engine, r, pos, method="gxi")
    emb, f = _f_of_embeddings(engine, ids[:pos], target)
    eps = 1e-2
    with torch.no_grad():
        for j in range(pos):
            d = torch.zeros_like(emb)
            d[0, j] = emb[0, j]
            fd = (float(f(emb + eps * d)[0]) - float(f(emb - eps * d)[0])) / (2 * eps)
            assert a.values[j] == pytest.approx(fd, abs=2e-3, rel=2e-2), j


def test_attention_equals_the_eager_weights(gpt2_dir):
    from transformers import AutoModelForCausalLM

    from explorer.engine import TorchEngine

    engine = TorchEngine.load(gpt2_dir, device="cpu", name="tiny-gpt2-sdpa")
    r = _scored(engine)
    pos = r.n - 1
    ids = r.token_ids.tolist()[:pos]
    a = attribute(engine, r, pos, method="attention", layers=2)
    eager = AutoModelForCausalLM.from_pretrained(gpt2_dir, attn_implementation="eager").eval()
    with torch.no_grad():
        att = eager(torch.tensor([ids]), output_attentions=True).attentions
    want = torch.stack([x[0, :, -1, :] for x in att[-2:]]).mean((0, 1)).numpy()
    np.testing.assert_allclose(a.values, want, atol=1e-5)
    assert a.values.sum() == pytest.approx(1.0, abs=1e-5)
    assert engine.model.config._attn_implementation == getattr(engine.model.config, "_attn_implementation", None)
    again = score_ids(engine, r.token_ids.tolist(), 5)  # the model still scores as before
    np.testing.assert_allclose(again.logprobs[1:], r.logprobs[1:], atol=1e-6)


# ---- the result and its checks ----------------------------------------------------------------------
def test_round_trip_csv_and_ranking(gpt2):
    r = _scored(gpt2)
    pos = r.n - 1
    a = attribute(gpt2, r, pos, contrast=_contrast(r, pos), units="word")
    d = a.to_dict()
    assert d["format"] == "logprob-explorer/attribution" and d["target"]["position"] == pos
    assert d["contrast"]["token_id"] == a.contrast_id and len(d["sources"]) == a.n
    b = Attribution.from_dict(d)
    assert b.to_dict() == d
    rows = a.to_csv().strip().split("\n")
    assert rows[0].startswith("unit,start,end,text,value,rank") and len(rows) == a.n + 1
    top = a.ranked(3)
    assert abs(a.values[top[0]]) == np.nanmax(np.abs(a.values[~a.special]))


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"pos": 0}, "position 0"),
        ({"pos": 99}, "position 99"),
        ({"method": "shap"}, "`method`"),
        ({"units": "sentence"}, "`units`"),
        ({"steps": 1, "method": "ig"}, "`steps`"),
        ({"detail": -1}, "`detail`"),
        ({"contrast": 10**9}, "outside the vocabulary"),
        ({"mode": "blank"}, "`mode`"),
        ({"baseline": "noise"}, "`baseline`"),
    ],
)
def test_bad_requests_say_what_to_change(gpt2, kw, match):
    r = _scored(gpt2)
    pos = kw.pop("pos", r.n - 1)
    with pytest.raises(ExplorerError, match=match):
        attribute(gpt2, r, pos, **kw)


def test_the_target_is_no_contrast(gpt2):
    r = _scored(gpt2)
    with pytest.raises(ExplorerError, match="target itself"):
        attribute(gpt2, r, r.n - 1, contrast=int(r.token_ids[-1]))


# ---- a remote server ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def remote(gpt2_dir):
    """Our own server on the tiny GPT-2 in a second process, through the remote engine (a real /v1)."""
    from explorer.engine.remote.engine import RemoteEngine
    from tests.helpers.servers import ServerProcess

    server = ServerProcess(gpt2_dir)
    yield RemoteEngine(server.url + "/v1", tokenizer=gpt2_dir)
    server.stop()


def test_occlusion_through_a_remote_server_equals_the_local_engine(remote, gpt2):
    """A served model scores each ablated text (listed ids: the target and the contrast) within its caps."""
    r = _scored(gpt2)
    pos = r.n - 1
    contrast = _contrast(r, pos)
    here = attribute(gpt2, r, pos, contrast=contrast, units="word")
    there = attribute(remote, r, pos, contrast=contrast, units="word")
    assert there.spans.tolist() == here.spans.tolist()
    np.testing.assert_allclose(there.values, here.values, atol=1e-4, equal_nan=True)
    assert there.f == pytest.approx(here.f, abs=1e-4)
    with pytest.raises(ExplorerError, match="occlusion works"):
        attribute(remote, r, pos, method="gxi")


def test_attribution_runs_under_a_cap_of_zero(monkeypatch, gpt2):
    """--max-logprobs 0 caps what a request may ask, not the attribution's own bookkeeping."""
    r = _scored(gpt2)
    before = attribute(gpt2, r, r.n - 1, contrast=_contrast(r, r.n - 1))
    monkeypatch.setenv("EXPLORER_MAX_LOGPROBS", "0")
    for cached in (True, False):
        a = attribute(gpt2, r, r.n - 1, contrast=_contrast(r, r.n - 1), cached=cached)
        np.testing.assert_allclose(a.values, before.values, atol=1e-5, equal_nan=True)
