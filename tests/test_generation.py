"""Generation: raw logprobs equal a scoring pass and HF's compute_transition_scores; sampler checks."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from explorer.engine import Done, generate, score_ids, stream
from explorer.errors import ExplorerError
from explorer.rules.sampler import SamplerSettings
from tests.helpers.reference import assert_matches_reference, ref_logprobs, ref_processed


def _gen(engine, prompt="The capital of", **kw):
    kw.setdefault("max_tokens", 12)
    return generate(engine, engine.encode(prompt), SamplerSettings(**kw))


@pytest.mark.parametrize("temperature", [0.0, 0.8])
def test_raw_generation_equals_scoring(engine, temperature):
    r = _gen(engine, temperature=temperature, seed=3, logprobs=5, top_k=50, top_p=0.9)[0]
    assert r.n > r.n_prompt
    lp = ref_logprobs(engine.model, r.token_ids.tolist())
    assert_matches_reference(r, lp, range(r.n_prompt, r.n))
    rescored = score_ids(engine, r.token_ids.tolist(), k=5)
    np.testing.assert_allclose(r.logprobs[r.n_prompt :], rescored.logprobs[r.n_prompt :], atol=1e-4)


def test_matches_compute_transition_scores(gpt2):
    ids = gpt2.encode("The quick brown")
    r = generate(gpt2, ids, SamplerSettings(max_tokens=10, temperature=0, logprobs=1))[0]
    x = torch.tensor([ids])
    out = gpt2.model.generate(
        x,
        max_new_tokens=r.n - r.n_prompt,
        do_sample=False,
        output_logits=True,
        return_dict_in_generate=True,
        eos_token_id=None,
        pad_token_id=0,
    )
    hf = gpt2.model.compute_transition_scores(out.sequences, out.logits, normalize_logits=True)[0]
    assert out.sequences[0].tolist() == r.token_ids.tolist()
    np.testing.assert_allclose(r.logprobs[r.n_prompt :], hf.numpy(), atol=1e-4)


def test_processed_mode_matches_hf_scores(gpt2):
    s = SamplerSettings(max_tokens=8, temperature=0.7, top_k=20, top_p=0.8, seed=5, logprobs=3, mode="processed")
    r = generate(gpt2, gpt2.encode("The lazy"), s)[0]
    assert r.mode == "processed"
    # processed numbers: temperature/top-k/top-p applied by the same steps transformers uses
    from transformers import LogitsProcessorList, TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

    warp = LogitsProcessorList([TemperatureLogitsWarper(0.7), TopKLogitsWarper(20), TopPLogitsWarper(0.8)])
    for pos, lp in ref_processed(gpt2.model, r, warp).items():
        assert abs(float(lp[r.token_ids[pos]]) - r.logprobs[pos]) < 1e-4
        assert int((lp >= lp[r.token_ids[pos]]).sum()) == r.ranks[pos]
        assert r.ranks[pos] <= 20  # a sampled token survived the filters


def test_penalties_and_min_p_match_hf_processors(gpt2):
    """Repetition penalty, then temperature, top-k, top-p, min-p: transformers' own processors give the same numbers."""
    s = SamplerSettings(
        max_tokens=10,
        temperature=0.8,
        top_k=50,
        top_p=0.95,
        min_p=0.05,
        repetition_penalty=1.4,
        seed=3,
        logprobs=3,
        mode="processed",
    )
    r = generate(gpt2, gpt2.encode("The lazy dog"), s)[0]
    from transformers import (
        LogitsProcessorList,
        MinPLogitsWarper,
        RepetitionPenaltyLogitsProcessor,
        TemperatureLogitsWarper,
        TopKLogitsWarper,
        TopPLogitsWarper,
    )

    warp = LogitsProcessorList(
        [
            RepetitionPenaltyLogitsProcessor(1.4),
            TemperatureLogitsWarper(0.8),
            TopKLogitsWarper(50),
            TopPLogitsWarper(0.95),
            MinPLogitsWarper(0.05),
        ]
    )
    for pos, lp in ref_processed(gpt2.model, r, warp).items():
        assert abs(float(lp[r.token_ids[pos]]) - r.logprobs[pos]) < 1e-4


def test_greedy_with_a_penalty_takes_the_penalised_argmax(gpt2):
    plain = generate(gpt2, gpt2.encode("fox"), SamplerSettings(max_tokens=12, temperature=0, logprobs=1))[0]
    pen = generate(
        gpt2, gpt2.encode("fox"), SamplerSettings(max_tokens=12, temperature=0, logprobs=1, frequency_penalty=2.0)
    )[0]
    out = pen.token_ids[pen.n_prompt :].tolist()
    assert len(set(out)) >= len(set(plain.token_ids[plain.n_prompt :].tolist()))
    with torch.no_grad():
        logits = gpt2.model(torch.tensor([pen.token_ids.tolist()])).logits[0].float()
    for j, pos in enumerate(range(pen.n_prompt, pen.n)):
        counts = torch.bincount(torch.tensor(out[:j], dtype=torch.long), minlength=logits.shape[-1]).float()
        assert int((logits[pos - 1] - 2.0 * counts).argmax()) == out[j]


def test_same_seed_same_tokens(engine):
    a = _gen(engine, temperature=1.0, seed=42, n=2)
    b = _gen(engine, temperature=1.0, seed=42, n=2)
    assert [r.token_ids.tolist() for r in a] == [r.token_ids.tolist() for r in b]
    assert all(r.n > r.n_prompt for r in a)  # both samples drew tokens, so the next check can fail
    assert a[0].token_ids.tolist() != a[1].token_ids.tolist()  # independent samples


def test_prompt_logprobs_in_the_same_call(gpt2):
    r = _gen(gpt2, temperature=0, prompt_logprobs=4, logprobs=2)[0]
    lp = ref_logprobs(gpt2.model, r.token_ids.tolist())
    assert r.prompt_k == 4 and r.output_k == 2
    assert_matches_reference(r, lp, range(1, r.n))


def test_stop_string_cuts_text_and_tokens(gpt2):
    free = _gen(gpt2, temperature=0, max_tokens=20)[0]
    text = free.completion_text
    assert len(text) > 4
    stop = text[2:4]
    r = _gen(gpt2, temperature=0, max_tokens=20, stop=(stop,))[0]
    assert r.finish_reason == "stop"
    assert r.completion_text == text[: text.find(stop)]
    kept = r.n - r.n_prompt
    assert kept <= free.n - free.n_prompt
    assert r.token_ids.tolist() == free.token_ids[: r.n].tolist()


def test_eos_finishes_with_stop_and_counts(gpt2, monkeypatch):
    """As vLLM: the EOS token is the last generated token (ids, logprobs), its text is not in the completion."""
    free = _gen(gpt2, temperature=1.5, seed=7, max_tokens=6)[0]
    gen = free.token_ids[free.n_prompt :].tolist()
    j = next(i for i in range(1, len(gen)) if gen[i] not in gen[:i])  # a token new at step j
    eos = gen[j]
    monkeypatch.setattr(gpt2, "eos_ids", {eos})
    monkeypatch.setattr(gpt2, "special_ids", gpt2.special_ids | {eos})
    r = _gen(gpt2, temperature=1.5, seed=7, max_tokens=6, logprobs=2)[0]
    out = r.token_ids[r.n_prompt :].tolist()
    assert (
        r.finish_reason == "stop" and out[-1] == eos and eos not in out[:-1] and r.stop_token and r.stop_reason is None
    )
    assert out == gen[: j + 1]
    assert r.completion_text == "".join(free.token_text[free.n_prompt : free.n_prompt + j])
    lp = ref_logprobs(gpt2.model, r.token_ids.tolist())
    assert abs(float(lp[r.n - 2, eos]) - r.logprobs[-1]) < 1e-4
    assert free.finish_reason == "length"
    ignored = _gen(gpt2, temperature=0, max_tokens=6, ignore_eos=True)[0]
    assert ignored.finish_reason == "length" and ignored.n - ignored.n_prompt == 6


def test_stop_token_ids_min_tokens_and_include_stop_str(gpt2):
    kw = dict(temperature=1.5, seed=7, max_tokens=8)
    free = _gen(gpt2, **kw)[0]
    out = free.token_ids[free.n_prompt :].tolist()
    j = next(i for i in range(1, len(out)) if out[i] not in out[:i])
    stop_id = out[j]
    r = _gen(gpt2, **kw, stop_token_ids=(stop_id,))[0]
    assert r.token_ids[r.n_prompt :].tolist() == out[: j + 1] and r.stop_reason == stop_id and r.finish_reason == "stop"
    late = _gen(gpt2, **kw, stop_token_ids=(stop_id,), min_tokens=j + 2, mode="processed", logprobs=1)[0]
    late_out = late.token_ids[late.n_prompt :].tolist()
    assert stop_id not in late_out[: j + 2] and late.n - late.n_prompt >= j + 2
    stop = free.completion_text[2:5]
    kept = _gen(gpt2, **kw, stop=(stop,), include_stop_str_in_output=True)[0]
    cut = free.completion_text.find(stop)
    assert kept.completion_text == free.completion_text[: cut + len(stop)] and kept.stop_reason == stop


def test_stream_yields_steps_then_done_and_stops_early(gpt2):
    it = stream(gpt2, gpt2.encode("The"), SamplerSettings(max_tokens=50, temperature=0, logprobs=2))
    first = next(it)
    assert first.rows.top_ids.shape == (1, 2) and len(first.rows) == 1
    it.close()  # a closed connection: the generator ends, no more work
    evs = list(stream(gpt2, gpt2.encode("The"), SamplerSettings(max_tokens=3, temperature=0)))
    assert isinstance(evs[-1], Done) and evs[-1].finish_reason == "length" and len(evs) == 4


def test_chat_template(gpt2, llama):
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    ids = gpt2.encode_chat(msgs)
    assert gpt2.tokenizer.decode(ids).endswith("<|assistant|>")
    with pytest.raises(ExplorerError, match="no chat template"):
        llama.encode_chat(msgs)
    with pytest.raises(ExplorerError, match="role"):
        gpt2.encode_chat([{"role": "wizard", "content": "x"}])


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"temperature": -0.1}, r"`temperature` \(=-0.1\) must be in \[0.0, 100.0\]"),
        ({"top_p": 0.0}, r"`top_p` \(=0.0\) must be in \(0.0, 1.0\]"),
        ({"top_p": 1.5}, r"top_p"),
        ({"logprobs": 21}, r"`logprobs` \(=21\) must be at most 20"),
        ({"logprobs": -1}, r"from 0 to 20"),
        ({"prompt_logprobs": 30}, r"at most 20"),
        ({"max_tokens": -1}, r"max_tokens"),
        ({"n": 0}, r"`n`"),
        ({"stop": ("",)}, r"non-empty"),
        ({"mode": "cooked"}, r"raw' or 'processed"),
    ],
)
def test_bad_settings(kw, match):
    with pytest.raises(ExplorerError, match=match):
        SamplerSettings(**kw)


def test_prompt_over_context(gpt2):
    with pytest.raises(ExplorerError, match="reads at most"):
        generate(gpt2, gpt2.encode("fox jumps " * 200), SamplerSettings(max_tokens=2))


def test_generation_stops_at_context(gpt2):
    ids = gpt2.encode("fox jumps over " * 40)[:120]
    r = generate(gpt2, ids, SamplerSettings(max_tokens=50, temperature=0))[0]
    assert r.n == gpt2.context and r.finish_reason == "length"
