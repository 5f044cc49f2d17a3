"""Batched decoding (explorer/engine/batching/slots.py): every request of a mixed batch gives the ids of `generate` run
alone and numbers within 1e-5 of them: different prompt lengths, greedy and seeded sampling, n > 1, listed ids,
stop ids and strings, one request removed mid-way and one joining later."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pytest

from explorer.engine import generate
from explorer.engine.batching.slots import DecodeBatch, Slot
from explorer.engine.passes.generation import DrawnToken, TextLayer
from explorer.results.scores import Rows
from explorer.rules.sampler import SamplerSettings

ATOL = 1e-5


@dataclass
class Request:
    prompt: str
    s: SamplerSettings
    join_at: int = 0  # the batch step before which it joins
    remove_at: int | None = None  # the batch step before which it is removed
    text_layer: bool = False  # stop strings: the text layer's `more`
    slots: list[Slot] = field(default_factory=list)
    tokens: dict[int, list[DrawnToken]] = field(default_factory=dict)  # sample -> its tokens


def _solo_tokens(engine, prompt: str, **kw) -> list[int]:
    r = generate(engine, engine.encode(prompt), SamplerSettings(**kw))[0]
    return r.token_ids[r.n_prompt :].tolist()


def _requests(engine) -> list[Request]:
    greedy = _solo_tokens(engine, "Logprobs tell you", temperature=0, max_tokens=8, logprobs=1)
    text = engine.detokenize(_solo_tokens(engine, "The lazy", temperature=0.9, seed=4, max_tokens=12, logprobs=1))
    listed = tuple(engine.encode("fox dog")[-3:])
    return [
        Request("The capital of", SamplerSettings(max_tokens=12, temperature=0, logprobs=5)),
        Request("Hi", SamplerSettings(max_tokens=9, temperature=0.8, top_p=0.9, seed=7, n=3, logprobs=3)),
        Request(
            "The quick brown fox jumps over the lazy dog. The capital of France is",
            SamplerSettings(max_tokens=15, temperature=0, logprob_ids=listed, prompt_logprobs=2),
        ),
        Request(
            "def add(a, b):",
            SamplerSettings(max_tokens=6, temperature=1.2, top_k=40, seed=11, logprobs=2, mode="processed"),
        ),
        Request("Logprobs tell you", SamplerSettings(max_tokens=20, temperature=0, stop_token_ids=(greedy[3],))),
        Request(
            "The lazy",
            SamplerSettings(max_tokens=12, temperature=0.9, seed=4, stop=(text[len(text) // 2 :][:2],), logprobs=4),
            text_layer=True,
        ),
        Request(
            "Grüße aus",
            SamplerSettings(max_tokens=10, temperature=0.7, seed=5, repetition_penalty=1.3, min_tokens=2, n=2),
            join_at=3,
        ),
        Request("Emoji", SamplerSettings(max_tokens=20, temperature=0, logprobs=5), remove_at=4),
    ]


def _add(batch: DecodeBatch, engine, req: Request) -> None:
    for i in range(req.s.n):
        more = TextLayer(engine, req.s).more if req.text_layer else None
        req.slots.append(batch.add(engine.encode(req.prompt), req.s, sample=i, want_prompt=i == 0, more=more))
        req.tokens[i] = []


def _run(engine, reqs: list[Request]) -> int:
    """The batch driven to the end; the most rows it held at once."""
    batch, step, widest = DecodeBatch(engine), 0, 0
    while True:
        for req in reqs:
            if req.join_at == step:
                _add(batch, engine, req)
            if req.remove_at == step:
                for sl in req.slots:
                    batch.remove(sl)
        if not len(batch) and all(r.join_at <= step for r in reqs):
            return widest
        widest = max(widest, len(batch))
        for sl, tok in batch.step():
            req = next(r for r in reqs if sl in r.slots)
            req.tokens[req.slots.index(sl)].append(tok)
        step += 1


def _assert_rows_match(got: Rows, want, n_prompt: int, m: int, k: int) -> None:
    sl = slice(n_prompt, n_prompt + m)
    np.testing.assert_allclose(got.logprobs, want.logprobs[sl], atol=ATOL, rtol=0)
    np.testing.assert_allclose(got.entropy, want.entropy[sl], atol=ATOL, rtol=0)
    np.testing.assert_allclose(got.varentropy, want.varentropy[sl], atol=ATOL, rtol=0)
    np.testing.assert_array_equal(got.ranks, want.ranks[sl])
    np.testing.assert_array_equal(got.top_ids, want.top_ids[sl, :k])
    np.testing.assert_allclose(got.top_logprobs, want.top_logprobs[sl, :k], atol=ATOL, rtol=0)
    if want.top_ranks is not None:
        np.testing.assert_array_equal(got.top_ranks, want.top_ranks[sl, :k])


def _assert_like_alone(engine, req: Request) -> None:
    alone = generate(engine, engine.encode(req.prompt), req.s)
    for i, want in enumerate(alone):
        toks = req.tokens[i]
        ids = [t.id for t in toks]
        solo = want.token_ids[want.n_prompt :].tolist()
        if req.remove_at is None:
            assert ids == solo, (req.prompt, i)
        else:  # removed mid-way: what it had is the start of the request alone
            assert 0 < len(ids) < len(solo) and ids == solo[: len(ids)], (req.prompt, i)
        _assert_rows_match(Rows.concat([t.rows for t in toks]), want, want.n_prompt, len(ids), req.s.output_k)
        if i == 0 and req.s.prompt_logprobs is not None:
            prompt = req.slots[0].prompt_rows
            assert prompt is not None
            np.testing.assert_allclose(prompt.logprobs, want.logprobs[1 : want.n_prompt], atol=ATOL, rtol=0)


def test_mixed_batch_equals_each_request_alone(engine):
    reqs = _requests(engine)
    widest = _run(engine, reqs)
    assert widest >= 9  # many rows in one forward pass, not one after another
    for req in reqs:
        _assert_like_alone(engine, req)
    ended = {req.prompt: generate(engine, engine.encode(req.prompt), req.s)[0] for req in reqs[4:6]}
    assert [r.finish_reason for r in ended.values()] == ["stop", "stop"]  # the stop id and the stop string ended them
    assert isinstance(ended["The lazy"].stop_reason, str)


def test_a_row_alone_in_its_batch_and_with_others_agree(gpt2):
    """The same seeded request alone in a batch and beside a longer one: the same ids, the same numbers."""
    s = SamplerSettings(max_tokens=10, temperature=1.0, seed=3, logprobs=5)
    alone = [Request("Hi", s)]
    _run(gpt2, alone)
    mixed = [Request("Hi", s), Request("The capital of France is Paris. The capital", replace(s, seed=9))]
    _run(gpt2, mixed)
    a, b = alone[0].tokens[0], mixed[0].tokens[0]
    assert [t.id for t in a] == [t.id for t in b]
    np.testing.assert_allclose(
        np.concatenate([t.rows.logprobs for t in a]), np.concatenate([t.rows.logprobs for t in b]), atol=ATOL
    )


def test_a_prompt_at_the_context_limit_gets_no_slot(gpt2):
    batch = DecodeBatch(gpt2)
    slot = batch.add([1] * gpt2.context, SamplerSettings(max_tokens=4, temperature=0))
    assert slot.finished and len(batch) == 0 and batch.step() == []


@pytest.mark.parametrize("which", [0, 1, 2])
def test_removing_any_row_leaves_the_others_unchanged(llama, which):
    s = SamplerSettings(max_tokens=8, temperature=0, logprobs=3)
    prompts = ["Hi", "The capital of France is", "def add(a, b):\n    return"]
    reqs = [Request(p, s, remove_at=2 if i == which else None) for i, p in enumerate(prompts)]
    _run(llama, reqs)
    for req in reqs:
        _assert_like_alone(llama, req)
