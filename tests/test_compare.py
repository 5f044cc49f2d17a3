"""Compare: two models (same tokenizer: per position, with KL and JS; different: per character span) and two prompts."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.engine import score_ids
from explorer.engine.analyses.compare import compare_ids, compare_prompts, compare_text, divergences, same_tokenizer
from explorer.errors import ExplorerError
from explorer.export import dumps
from explorer.results.compare import Comparison, aligned_spans, span_sums

TEXT = "The quick brown fox jumps over the lazy dog. Grüße aus München! 東京 👋🙂"


@torch.no_grad()
def ref_divergences(ma, mb, ids_a, ids_b=None):
    """Plain torch, float64, full vocabulary: (kl_ab, kl_ba, js) of the rows predicting positions 1.."""
    ids_b = ids_a if ids_b is None else ids_b
    lp = torch.log_softmax(ma(torch.tensor([ids_a])).logits[0].double(), -1)[:-1]
    lq = torch.log_softmax(mb(torch.tensor([ids_b])).logits[0].double(), -1)[:-1]
    p, q = lp.exp(), lq.exp()
    m = (p + q) / 2
    kl = lambda x, lx, ly: (x * (lx - ly)).sum(-1)  # noqa: E731
    return kl(p, lp, lq), kl(q, lq, lp), 0.5 * (kl(p, lp, m.log()) + kl(q, lq, m.log()))


def test_divergences_match_plain_torch(gpt2, gpt2_b):
    ids = gpt2.encode(TEXT)
    c = compare_ids(gpt2, gpt2_b, ids, k=5)
    kl_ab, kl_ba, js = ref_divergences(gpt2.model, gpt2_b.model, ids)
    assert np.isnan(c.kl_ab[0]) and np.isnan(c.js[0])  # position 0 has no context
    np.testing.assert_allclose(c.kl_ab[1:], kl_ab.numpy(), atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(c.kl_ba[1:], kl_ba.numpy(), atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(c.js[1:], js.numpy(), atol=1e-5, rtol=1e-5)
    assert (c.kl_ab[1:] > 1e-3).all() and (c.js[1:] <= np.log(2) + 1e-6).all()  # really different models; JS <= log 2
    assert not np.allclose(c.kl_ab[1:], c.kl_ba[1:])  # KL is not symmetric


def test_delta_is_the_difference_of_two_scoring_passes(gpt2, gpt2_b):
    ids = gpt2.encode(TEXT)
    c = compare_ids(gpt2, gpt2_b, ids, k=5)
    ra, rb = score_ids(gpt2, ids, k=5), score_ids(gpt2_b, ids, k=5)
    np.testing.assert_allclose(c.delta_logprob[1:], (rb.logprobs - ra.logprobs)[1:], atol=1e-6)
    assert (c.rank_a == ra.ranks).all() and (c.rank_b == rb.ranks).all()
    assert (c.a.top_ids == ra.top_ids).all() and (c.b.top_ids == rb.top_ids).all()


def test_a_model_against_itself_is_zero(gpt2):
    c = compare_ids(gpt2, gpt2, gpt2.encode(TEXT), k=3)
    assert np.nanmax(np.abs(c.kl_ab)) < 1e-6 and np.nanmax(np.abs(c.kl_ba)) < 1e-6 and np.nanmax(c.js) < 1e-6
    assert np.nanmax(np.abs(c.delta_logprob)) == 0


def test_divergences_are_chunk_independent_and_handle_minus_inf():
    torch.manual_seed(0)
    la, lb = torch.randn(40, 300) * 4, torch.randn(40, 300) * 4
    lb[:, :7] = float("-inf")  # a filtered distribution: q = 0 there
    kl_ab, kl_ba, js = divergences(la, lb)
    assert torch.isinf(kl_ab).all()  # p > 0 where q = 0: KL(p || q) is infinite
    assert torch.isfinite(kl_ba).all() and torch.isfinite(js).all()
    lp, lq = la.double().log_softmax(-1), lb.double().log_softmax(-1)
    ref = (lq.exp() * (lq - lp)).nan_to_num(0.0).sum(-1)
    np.testing.assert_allclose(kl_ba.numpy(), ref.numpy(), atol=1e-5, rtol=1e-5)


def test_a_compiler_failure_falls_back_to_eager(monkeypatch):
    import explorer.engine.analyses.compare as mod

    def boom(*args):
        raise RuntimeError("no C++ compiler")

    monkeypatch.setitem(mod._COMPILED, "fn", boom)
    la, lb = torch.randn(16, 50), torch.randn(16, 50)
    assert torch.equal(mod._compiled(la, lb), mod.div_rows(la, lb)) and mod._COMPILED["fn"] is None


def test_two_prompts_one_model(gpt2):
    pa, pb, cont = (
        gpt2.encode("The capital of France is"),
        gpt2.encode("fox"),
        gpt2.tokenizer(" Paris.", add_special_tokens=False)["input_ids"],
    )
    c = compare_prompts(gpt2, pa, pb, cont, k=4)
    assert c.kind == "prompts" and c.m == len(cont) and c.scored.all()
    assert c.token_ids.tolist() == cont and c.a.token_ids.tolist() == pa + cont and c.b.token_ids.tolist() == pb + cont
    ra, rb = score_ids(gpt2, pa + cont, k=4), score_ids(gpt2, pb + cont, k=4)
    np.testing.assert_allclose(c.a.logprobs[1:], ra.logprobs[1:], atol=1e-5)  # the prompts are scored too
    np.testing.assert_allclose(c.delta_logprob, rb.logprobs[len(pb) :] - ra.logprobs[len(pa) :], atol=1e-5)
    with torch.no_grad():
        lp = torch.log_softmax(gpt2.model(torch.tensor([pa + cont])).logits[0].double(), -1)[len(pa) - 1 : -1]
        lq = torch.log_softmax(gpt2.model(torch.tensor([pb + cont])).logits[0].double(), -1)[len(pb) - 1 : -1]
    np.testing.assert_allclose(c.kl_ab, (lp.exp() * (lp - lq)).sum(-1).numpy(), atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(c.kl_ba, (lq.exp() * (lq - lp)).sum(-1).numpy(), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("text", [TEXT, "x", "  two  spaces\nand a newline\n", "東京は大きい。", "👋🙂👨‍👩‍👧"])
def test_different_tokenizers_align_by_characters(gpt2, llama, text):
    assert not same_tokenizer(gpt2, llama)
    c = compare_text(gpt2, llama, text, k=3)
    assert c.kind == "spans" and c.kl_ab.size == 0 and c.js.size == 0
    spans = c.spans
    assert spans[0, 0] == 0 and spans[-1, 1] == len(text) and (spans[1:, 0] == spans[:-1, 1]).all()  # a tiling
    for r, chars, sums in ((c.a, c.char_a, c.span_logprob_a), (c.b, c.char_b, c.span_logprob_b)):
        assert abs(np.nansum(sums) - r.total_logprob) < 1e-4  # the spans' sums are the tokens' sum
        for (s, e), got in zip(spans.tolist(), sums.tolist()):  # each span: its tokens, found independently
            mine = [i for i, (ts, te) in enumerate(chars.tolist()) if s <= ts < e or (ts == te == 0 and s == 0)]
            assert all(s <= chars[i, 0] and chars[i, 1] <= e for i in mine)  # no token straddles a cut
            vals = [float(r.logprobs[i]) for i in mine if r.scored[i]]
            assert (np.isnan(got) and not vals) or abs(got - sum(vals)) < 1e-4
    # the tokens are the engine's own, scored as usual
    assert c.a.token_ids.tolist() == gpt2.encode(text) and c.b.token_ids.tolist() == llama.encode(text)
    np.testing.assert_allclose(c.b.logprobs, score_ids(llama, llama.encode(text), k=3).logprobs, atol=1e-6)


def test_aligned_spans_table():
    # a: "ab|cd|e"; b: "a|bc|de": the only shared cuts are 0 and 5
    assert aligned_spans([[0, 2], [2, 4], [4, 5]], [[0, 1], [1, 3], [3, 5]], 5).tolist() == [[0, 5]]
    # shared cut at 2; a special token (0, 0) and a character split over two tokens (2, 3), (2, 3)
    assert aligned_spans([[0, 0], [0, 2], [2, 3], [2, 3]], [[0, 1], [1, 2], [2, 3]], 3).tolist() == [[0, 2], [2, 3]]
    assert aligned_spans(np.zeros((0, 2)), np.zeros((0, 2)), 0).tolist() == []
    sums = span_sums(
        np.array([[0, 2], [2, 3]]), np.array([[0, 0], [0, 2], [2, 3], [2, 3]]), np.array([np.nan, -1.0, -2.0, -0.5])
    )
    assert sums.tolist() == [-1.0, -2.5]


@settings(max_examples=100, deadline=None)
@given(
    st.integers(1, 40).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.sets(st.integers(1, n - 1) if n > 1 else st.nothing()),
            st.sets(st.integers(1, n - 1) if n > 1 else st.nothing()),
            st.integers(0, 2**31 - 1),
        )
    )
)
def test_aligned_spans_property(case):
    """Any two tokenizations of n characters: the spans tile the text, cut only at shared boundaries, and keep the sums."""
    n, cuts_a, cuts_b, seed = case
    rng = np.random.default_rng(seed)
    chars = [np.array(list(zip([0, *sorted(c)], [*sorted(c), n])), np.int64) for c in (cuts_a, cuts_b)]
    spans = aligned_spans(chars[0], chars[1], n)
    assert spans[0, 0] == 0 and spans[-1, 1] == n and (spans[1:, 0] == spans[:-1, 1]).all()
    assert set(spans[1:, 0].tolist()) == cuts_a & cuts_b
    for c in chars:
        lp = rng.normal(size=len(c))
        lp[0] = np.nan  # the first token is unscored
        sums = span_sums(spans, c, lp)
        assert abs(np.nansum(sums) - np.nansum(lp)) < 1e-9


def test_json_shape_and_round_trip(gpt2, gpt2_b, llama):
    c = compare_ids(gpt2, gpt2_b, gpt2.encode("The quick brown fox"), k=2)
    d = json.loads(dumps(c.to_dict()))
    assert d["model_a"] == "tiny-gpt2" and d["model_b"] == "tiny-gpt2-b" and d["token_ids"] == c.a.token_ids.tolist()
    assert d["positions"][0] is None and len(d["positions"]) == c.a.n
    p = d["positions"][2]
    assert set(p) == {"logprob_a", "logprob_b", "delta_logprob", "rank_a", "rank_b", "kl_ab", "kl_ba", "js"}
    assert p["delta_logprob"] == pytest.approx(p["logprob_b"] - p["logprob_a"], abs=1e-6)
    assert d["a"]["format"] == "logprob-explorer/token-scores" and "spans" not in d
    back = Comparison.from_dict(d)
    assert back.to_dict() == d
    s = compare_text(gpt2, llama, "Grüße, fox!", k=2)
    d = json.loads(dumps(s.to_dict()))
    assert "positions" not in d and "token_ids" not in d and "kl_ab" not in json.dumps(d)
    assert set(d["spans"][0]) == {"start", "end", "logprob_a", "logprob_b"} and "shared vocabulary" in d["note"]
    assert Comparison.from_dict(d).to_dict() == d


def test_bad_input_is_a_clear_message(gpt2, llama):
    with pytest.raises(ExplorerError, match="different tokenizers"):
        compare_ids(gpt2, llama, [1, 2, 3])
    with pytest.raises(ExplorerError, match="logprobs"):
        compare_ids(gpt2, gpt2, [1, 2, 3], k=-1)  # never two full [positions, V] matrices
    with pytest.raises(ExplorerError, match="empty"):
        compare_text(gpt2, gpt2, "")
    with pytest.raises(ExplorerError, match="reads at most"):
        compare_text(gpt2, gpt2, "fox jumps " * 200)
    with pytest.raises(ExplorerError, match="continuation is empty"):
        compare_prompts(gpt2, [1], [2], [])
    with pytest.raises(ExplorerError, match="at least one token"):
        compare_prompts(gpt2, [], [2], [3])


def test_one_token_text(gpt2, gpt2_b):
    c = compare_ids(gpt2, gpt2_b, gpt2.encode("T"), k=2)
    assert c.m == 1 and not c.scored.any() and c.positions() == [None]


@pytest.mark.slow  # compiles
def test_compiled_divergences_equal_eager(gpt2_dir, gpt2, gpt2_b):
    from explorer.engine import TorchEngine
    from explorer.engine.analyses.compare import _kernel, div_rows

    compiled = TorchEngine.load(gpt2_dir, device="cpu", compile=True, name="tiny-gpt2-compiled")
    if not compiled.compiled:
        pytest.skip("torch.compile is not usable on this machine (no C++ compiler?): the eager path serves")
    assert _kernel(compiled) is not div_rows and _kernel(gpt2) is div_rows
    ids = (gpt2.encode(TEXT) * 2)[:100]  # 99 rows: six full 16-row slices and a padded one
    a, b = compare_ids(compiled, gpt2_b, ids, k=5), compare_ids(gpt2, gpt2_b, ids, k=5)
    for x, y in ((a.kl_ab, b.kl_ab), (a.kl_ba, b.kl_ba), (a.js, b.js)):
        np.testing.assert_allclose(x[1:], y[1:], atol=1e-5, rtol=1e-5)


# ---- golden JSON of the compare shape, from hand-made samples (no model) -------------------------
def _samples():
    from dataclasses import replace as dc_replace

    from tests.helpers.samples import scored_prompt

    a = scored_prompt()  # 'The sky is' (a GPT-2-like tokenization)
    b = dc_replace(
        scored_prompt(),
        model="demo-b",
        logprobs=np.array([np.nan, -6.5, -0.5], np.float32),
        ranks=np.array([0, 198, 1]),
    )
    models = Comparison(
        a,
        b,
        "models",
        0,
        0,
        np.array([np.nan, 0.352, 0.02], np.float32),
        np.array([np.nan, 0.298, 0.021], np.float32),
        np.array([np.nan, 0.071, 0.005], np.float32),
    )
    sp = dc_replace(
        scored_prompt(),
        model="demo-sp",
        token_ids=np.array([1, 450, 14744, 338]),
        n_prompt=4,
        token_bytes=[b"<s>", b" The", b" sky", b" is"],
        logprobs=np.array([np.nan, -3.0, -6.0, -0.25], np.float32),
        ranks=np.array([0, 4, 150, 1]),
        entropy=np.array([np.nan, 4.0, 5.0, 1.0], np.float32),
        top_ids=np.full((4, 2), -1),
        top_logprobs=np.full((4, 2), -np.inf, np.float32),
        pieces={1: b"<s>", 450: b" The", 14744: b" sky", 338: b" is"},
    )
    spans = Comparison(
        a,
        sp,
        "spans",
        text="The sky is",
        char_a=np.array([[0, 3], [3, 7], [7, 10]]),
        char_b=np.array([[0, 0], [0, 3], [3, 7], [7, 10]]),
    )
    return {"models": models, "spans": spans}


@pytest.mark.parametrize("case", ["models", "spans"])
def test_golden_compare_shape(case):
    import os
    from pathlib import Path

    c = _samples()[case]
    body = json.loads(dumps(c.to_dict()))
    assert Comparison.from_dict(body).to_dict() == body
    body["a"], body["b"] = (
        {"model": body["a"]["model"]},
        {"model": body["b"]["model"]},
    )  # the native shape has its own golden
    path = Path(__file__).parent / "golden" / f"compare.{case}.json"
    text = json.dumps(body, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{path.name} changed (UPDATE_GOLDEN=1 rewrites it after review)"
