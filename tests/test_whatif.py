"""Sampler what-if: the same sampler code as generation, checked against generated steps (hypothesis) and plain torch."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.engine import generate, score_ids
from explorer.engine.analyses.whatif import logits_row, whatif
from explorer.errors import ExplorerError
from explorer.results.whatif import context_of
from explorer.rules.sampler import SamplerSettings
from tests.helpers.reference import ref_logprobs

samplers = st.builds(
    dict,
    temperature=st.one_of(st.just(0.0), st.floats(0.3, 2.0)),
    top_k=st.one_of(st.just(0), st.integers(1, 60)),
    top_p=st.one_of(st.just(1.0), st.floats(0.05, 1.0)),
    min_p=st.one_of(st.just(0.0), st.floats(0.0, 0.4)),
    repetition_penalty=st.one_of(st.just(1.0), st.floats(0.7, 2.5)),
    frequency_penalty=st.one_of(st.just(0.0), st.floats(-1.0, 1.5)),
    presence_penalty=st.one_of(st.just(0.0), st.floats(-1.0, 1.5)),
    seed=st.integers(0, 2**31 - 1),
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(samplers, st.sampled_from(["The lazy dog", "fox jumps over the", "東京 👋"]))
def test_whatif_equals_the_generated_step(gpt2, kw, prompt):
    """What-if at a generated step, with that generation's settings, gives that step's processed numbers."""
    s = SamplerSettings(max_tokens=5, logprobs=5, mode="processed", **kw)
    r = generate(gpt2, gpt2.encode(prompt), s)[0]
    ids = r.token_ids.tolist()
    for pos in range(r.n_prompt, r.n):
        prompt_ids, output_ids = context_of(r, pos)
        assert prompt_ids + output_ids == ids[:pos]
        w = whatif(logits_row(gpt2, ids, pos), s, prompt_ids, output_ids, ids[pos], top_n=5, pos=pos)
        assert w.processed.logprob == pytest.approx(float(r.logprobs[pos]), abs=1e-4)
        assert w.processed.rank == r.ranks[pos]
        assert w.processed.entropy == pytest.approx(float(r.entropy[pos]), abs=1e-4)
        finite = np.isfinite(r.top_logprobs[pos])
        np.testing.assert_allclose(w.processed_logprobs[finite], r.top_logprobs[pos][finite], atol=1e-4)
        assert w.processed.logprob > -math.inf  # a drawn token survived every filter
        assert all(c == "" for i, c in zip(w.raw_ids.tolist(), w.cut_by) if i == ids[pos])


def test_raw_side_is_the_scoring_distribution(engine):
    ids = engine.encode("The quick brown fox jumps")
    r = score_ids(engine, ids, k=5)
    ref = ref_logprobs(engine.model, ids)
    s = SamplerSettings(temperature=0.7, top_k=5, top_p=0.9)
    for pos in range(1, len(ids)):
        row = logits_row(engine, ids, pos)
        w = whatif(row, s, ids[:pos], [], ids[pos], top_n=8, pos=pos)
        assert w.raw.logprob == pytest.approx(float(r.logprobs[pos]), abs=1e-5) and w.raw.rank == r.ranks[pos]
        np.testing.assert_allclose(
            w.raw_logprobs, torch.sort(ref[pos - 1], descending=True).values[:8].numpy(), atol=1e-5
        )
        # processed, independently: temperature, top-k 5, top-p 0.9 on the reference distribution
        lp = torch.log_softmax(ref[pos - 1] / 0.7, -1)
        order = lp.argsort(descending=True)
        keep = order[:5]
        p = lp[keep].exp() / lp[keep].exp().sum()
        keep = keep[(p.cumsum(0) - p) < 0.9]
        want = torch.full_like(lp, -math.inf)
        want[keep] = torch.log_softmax(lp[keep], -1)
        np.testing.assert_allclose(w.processed_of_raw, want[torch.from_numpy(w.raw_ids)].numpy(), atol=1e-4)
        assert w.kept == len(keep)
        assert set(w.cut_by[:5]) <= {"", "top-p"} and set(w.cut_by[5:]) == {"top-k"}  # 6th and later: top-k
        assert w.cut_counts["top-k"] == engine.vocab_size - 5 and w.cut_counts["top-p"] == 5 - len(keep)
        ent = -(want.exp() * want).nan_to_num(0.0).sum()
        assert w.processed.entropy == pytest.approx(float(ent), abs=1e-4)


def test_each_filter_is_named(gpt2):
    ids = gpt2.encode("The quick brown fox jumps")
    row = logits_row(gpt2, ids, 3)
    w = whatif(row, SamplerSettings(top_k=10, top_p=1.0, min_p=0.2), ids[:3], [], ids[3], top_n=12)
    assert w.cut_by[10:] == ["top-k", "top-k"] and "min-p" in w.cut_by[:10] and "top-p" not in w.cut_by
    off = whatif(row, SamplerSettings(), ids[:3], [], ids[3], top_n=12)  # nothing on: the raw distribution
    np.testing.assert_allclose(off.processed_of_raw, off.raw_logprobs, atol=1e-6)
    assert off.kept == gpt2.vocab_size and off.vocab_cut == 0 and off.processed == off.raw
    greedy = whatif(row, SamplerSettings(temperature=0), ids[:3], [], ids[3], top_n=3)
    assert greedy.greedy and greedy.vocab_cut == 0
    pen = whatif(row, SamplerSettings(repetition_penalty=3.0), ids[:3], [], ids[3], top_n=3)
    assert pen.processed.logprob != pytest.approx(pen.raw.logprob)  # the prompt's tokens are penalised


def test_bad_positions(gpt2):
    ids = gpt2.encode("The quick brown")
    for pos in (0, len(ids), -1, True):
        with pytest.raises(ExplorerError, match="position"):
            logits_row(gpt2, ids, pos)


# ---- the What-if tab's handlers -----------------------------------------------------------------
def slid(temperature, top_k, top_p, min_p, repetition_penalty, top_n) -> dict:
    """The What-if sliders by name (the handler takes them as Gradio passes `inputs_kwargs`)."""
    return dict(temperature=temperature, top_k=top_k, top_p=top_p, min_p=min_p,
                repetition_penalty=repetition_penalty, top_n=top_n)  # fmt: skip


@pytest.fixture(scope="module")
def tab(gpt2, llama):
    from explorer.ui.tabs.whatif import WhatIfTab
    from tests.helpers.page import build_tab

    return build_tab(WhatIfTab, gpt2, llama)


def test_whatif_tab_numbers_and_cache(tab, gpt2, llama, monkeypatch):
    import explorer.ui.tabs.whatif as mod

    real = mod.logits_row
    for engine in (gpt2, llama):  # the result's own model, whatever the session's
        ids = engine.encode("The quick brown fox")
        state = [score_ids(engine, ids, k=5)]
        calls = []
        monkeypatch.setattr(mod, "logits_row", lambda *a, seen=calls: seen.append(a[2]) or real(*a))
        out = tab.run(state, 2, **slid(0.7, 5, 0.9, 0.0, 1.0, 10), cache=None)
        ref = whatif(
            real(engine, ids, 2), SamplerSettings(temperature=0.7, top_k=5, top_p=0.9), ids[:2], [], ids[2], 10
        )
        table = out[tab.table]
        assert len(table) == 10 and table["cut by"].tolist() == ref.cut_by
        np.testing.assert_allclose(
            table["processed %"], np.round(100 * np.exp(ref.processed_of_raw.astype(np.float64)), 3)
        )
        assert f"{ref.processed.entropy:.3f}" in out[tab.summary] and len(out[tab.plot].data) == 2
        again = tab.run(
            state, 2, **slid(1.5, 0, 1.0, 0.1, 1.3, 10), cache=out[tab.cache]
        )  # a slider moved: the row is reused
        assert calls == [2] and again[tab.cache] is out[tab.cache]
        tab.run(state, 3, **slid(1.5, 0, 1.0, 0.1, 1.3, 10), cache=again[tab.cache])  # another token: recomputed once
        assert calls == [2, 3]


def test_whatif_tab_generation_settings(tab, gpt2):
    r = generate(
        gpt2,
        gpt2.encode("The lazy"),
        SamplerSettings(
            max_tokens=3,
            temperature=0.8,
            top_k=7,
            top_p=0.95,
            min_p=0.01,
            repetition_penalty=1.2,
            seed=1,
            logprobs=5,
            mode="processed",
        ),
    )[0]
    values = tab.settings_of_result([r])
    assert [values[c] for c in tab.sliders] == [0.8, 7, 0.95, 0.01, 1.2]
    out = tab.run([r], r.n_prompt + 1, **slid(*(values[c] for c in tab.sliders), 5), cache=None)
    assert (
        f"{math.exp(r.logprobs[r.n_prompt + 1]):.3%}" in out[tab.summary]
    )  # the generated step's own processed probability


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda t, r: t.run([], 1, **slid(1, 0, 1, 0, 1, 5), cache=None), "Score a text"),
        (lambda t, r: t.run([r], 0, **slid(1, 0, 1, 0, 1, 5), cache=None), "after the first"),
        (lambda t, r: t.run([r], 99, **slid(1, 0, 1, 0, 1, 5), cache=None), "after the first"),
        (lambda t, r: t.run([r], 1, **slid(-1, 0, 1, 0, 1, 5), cache=None), "temperature"),
        (lambda t, r: t.settings_of_result([r]), "scored, not generated"),
    ],
)
def test_whatif_tab_errors(tab, gpt2, call, needle):
    import gradio as gr

    with pytest.raises(gr.Error, match=needle):
        call(tab, score_ids(gpt2, gpt2.encode("The quick brown"), k=2))


def test_the_draws_are_what_the_sampler_would_take(gpt2):
    """Ten draws from the processed row: only tokens the sampler keeps (top-k 3 here: the three likeliest raw ones,
    by plain torch), the same again with the same seed, the top each time at temperature 0, named in the summary."""
    from explorer.render.whatif import whatif_markdown

    ids = gpt2.encode("The quick brown fox jumps over the lazy dog")
    row = logits_row(gpt2, ids, 5)
    top3 = set(torch.from_numpy(row).topk(3).indices.tolist())
    w = whatif(row, SamplerSettings(top_k=3, seed=11), ids[:5], [], ids[5], 10, 5, gpt2.vocab)
    assert len(w.draws) == 10 and set(w.draws.tolist()) <= top3
    again = whatif(row, SamplerSettings(top_k=3, seed=11), ids[:5], [], ids[5], 10, 5, gpt2.vocab)
    assert again.draws.tolist() == w.draws.tolist()
    many = [whatif(row, SamplerSettings(temperature=2.0), ids[:5], [], ids[5]).draws for _ in range(5)]
    assert len({tuple(d.tolist()) for d in many}) > 1  # no seed: new draws each time
    greedy = whatif(row, SamplerSettings(temperature=0.0), ids[:5], [], ids[5])
    assert set(greedy.draws.tolist()) == {int(np.argmax(row))}
    assert "Drawn 10 times" in whatif_markdown(w) and w.to_dict()["draws"] == w.draws.tolist()
