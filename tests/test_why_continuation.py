"""A contrast of several tokens, scored as a continuation (explorer/engine/analyses/attribution.py, issue #54):
f = log p(target | x) - sum_i log p(c_i | x + c[:i]), checked against plain log_softmax + gather on the model's
logits (fresh, uncached passes), on the tiny GPT-2 and the tiny Llama; occlusion of each unit, IG's completeness and
its integral written out with torch.autograd; the contrast's text read as Answers reads a variant; the Python API,
the CLI and the Why tab's handler accept it."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import explorer
from explorer.cli import main
from explorer.engine.analyses.answers import score_answers
from explorer.engine.analyses.attribution import attribute, contrast_tokens
from explorer.engine.passes.scoring import score_text
from explorer.errors import ExplorerError
from explorer.render.why import why_summary
from explorer.results.attribution import Attribution

TEXT = "The quick brown fox jumps over the lazy dog"


@torch.no_grad()
def ref_sum(model, ids: list[int], cont: list[int]) -> float:
    """log p(cont | ids): plain log_softmax + gather on one fresh pass over ids + cont[:-1], the reads summed."""
    logits = model(torch.tensor([ids + cont[:-1]])).logits[0].double()  # (T + C - 1, V)
    lp = torch.log_softmax(logits[len(ids) - 1 :], -1)  # (C, V): row i predicts cont[i]
    return float(lp.gather(1, torch.tensor(cont)[:, None]).sum())


def ref_f(model, ids: list[int], target: int, contrast: list[int]) -> float:
    return ref_sum(model, ids, [target]) - ref_sum(model, ids, contrast)


def _case(engine, n: int):
    """(scored text, target position, a contrast of n tokens that is not the target)."""
    r = score_text(engine, TEXT, 5)
    pos = r.n - 1
    alts = [int(i) for i in r.top_ids[pos] if i >= 0 and i != r.token_ids[pos]]
    return r, pos, [alts[0], alts[1], alts[2]][:n]


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("cached", [True, False])
def test_f_and_occlusion_equal_log_softmax_sums(engine, n, cached):
    """f and every unit's value (word units: f - f of the text without the word), from fresh passes by hand."""
    r, pos, c = _case(engine, n)
    ids, target = r.token_ids.tolist(), int(r.token_ids[pos])
    a = attribute(engine, r, pos, contrast=c, units="word", cached=cached)
    f = ref_f(engine.model, ids[:pos], target, c)
    assert a.f == pytest.approx(f, abs=1e-5)
    assert a.contrast_ids.tolist() == c and a.contrast_id == c[0] and a.contrast_length == n
    for u, (lo, hi) in enumerate(a.spans.tolist()):
        rest = ids[:lo] + ids[hi:pos]
        if not rest:  # nothing left before the target: no next-token distribution
            assert np.isnan(a.values[u])
            continue
        assert a.values[u] == pytest.approx(f - ref_f(engine.model, rest, target, c), abs=1e-5), u
    assert np.nanmax(np.abs(a.values)) > 1e-3  # numbers, not zeros


def test_occlusion_of_one_word_by_hand(gpt2):
    """ " fox" left out of the text: its value is f(text) - f(text without it), both continuations summed by hand."""
    r, pos, c = _case(gpt2, 3)
    ids, target = r.token_ids.tolist(), int(r.token_ids[pos])
    a = attribute(gpt2, r, pos, contrast=c, units="word", detail=0)
    u = a.unit_text.index(" fox")
    lo, hi = a.spans[u].tolist()
    want = ref_f(gpt2.model, ids[:pos], target, c) - ref_f(gpt2.model, ids[:lo] + ids[hi:pos], target, c)
    assert a.values[u] == pytest.approx(want, abs=1e-5) and abs(want) > 1e-3


def _f_of_embeddings(engine, ids: list[int], target: int, contrast: list[int]):
    """(the text's embeddings (1, T, H), f(e) for e (B, T, H): each continuation's embeddings fixed after e)."""
    table = engine.model.get_input_embeddings()
    emb = table(torch.tensor([ids])).detach()

    def total(e, cont):
        tail = table(torch.tensor([cont[:-1]], dtype=torch.long)).detach().expand(e.shape[0], -1, -1)
        logits = engine.model(inputs_embeds=torch.cat([e, tail], 1)).logits[:, len(ids) - 1 :].float()
        lp = torch.log_softmax(logits, -1)  # (B, C, V)
        return lp.gather(2, torch.tensor(cont)[None, :, None].expand(e.shape[0], -1, 1))[..., 0].sum(-1)

    return emb, lambda e: total(e, [target]) - total(e, contrast)


@pytest.mark.parametrize("n", [2, 3])
def test_integrated_gradients_complete_and_equal_a_hand_written_integral(engine, n):
    """IG over the text's embeddings only: sum of values ~ f(text) - f(baseline) within 1 % at 64 steps (the existing
    IG test's tolerance), and at 16 steps equal to sum_i w_i grad f(b + a_i (x - b)) . (x - b) by torch.autograd."""
    r, pos, c = _case(engine, n)
    ids, target = r.token_ids.tolist(), int(r.token_ids[pos])
    a = attribute(engine, r, pos, contrast=c, method="ig", steps=64)
    assert a.f == pytest.approx(ref_f(engine.model, ids[:pos], target, c), abs=1e-4)
    assert a.completeness_gap is not None and a.f_baseline is not None
    assert abs(a.completeness_gap) <= 0.01 * abs(a.f - a.f_baseline), (a.completeness_gap, a.f, a.f_baseline)
    b = attribute(engine, r, pos, contrast=c, method="ig", steps=16, chunk=5)
    emb, f = _f_of_embeddings(engine, ids[:pos], target, c)
    base = torch.zeros_like(emb) + engine.model.get_input_embeddings().weight[b.settings["neutral_id"]].detach()
    nodes, weights = np.polynomial.legendre.leggauss(16)
    total = torch.zeros_like(emb)
    for t, w in zip((nodes + 1) / 2, weights / 2):
        x = (base + float(t) * (emb - base)).requires_grad_()
        (g,) = torch.autograd.grad(f(x).sum(), x)
        total += float(w) * g
    np.testing.assert_allclose(b.values, (total * (emb - base)).sum(-1)[0].numpy(), atol=1e-4, rtol=1e-4)
    with torch.no_grad():
        assert b.f_baseline == pytest.approx(float(f(base)[0]), abs=1e-5)


def test_gradient_x_input_and_attention(gpt2):
    """gxi: the gradient of the continuation f at the text, times the text's embeddings; attention: the same weights as
    without a contrast (the next token's only), f the continuation's."""
    r, pos, c = _case(gpt2, 2)
    ids, target = r.token_ids.tolist(), int(r.token_ids[pos])
    a = attribute(gpt2, r, pos, contrast=c, method="gxi")
    emb, f = _f_of_embeddings(gpt2, ids[:pos], target, c)
    x = emb.clone().requires_grad_()
    (g,) = torch.autograd.grad(f(x).sum(), x)
    np.testing.assert_allclose(a.values, (g * emb).sum(-1)[0].numpy(), atol=1e-5, rtol=1e-4)
    att = attribute(gpt2, r, pos, contrast=c, method="attention")
    np.testing.assert_array_equal(att.values, attribute(gpt2, r, pos, method="attention").values)
    assert att.f == pytest.approx(ref_f(gpt2.model, ids[:pos], target, c), abs=1e-5)
    assert "next token only" in why_summary(att)


def test_a_one_token_contrast_keeps_its_numbers(gpt2):
    """id, [id], an array of it, numpy's int and its text give the same numbers, to the bit (the next-token path)."""
    r, pos, c = _case(gpt2, 1)
    text = gpt2.vocab[c[0]].decode("utf-8")
    want = attribute(gpt2, r, pos, contrast=c[0], units="word")
    for same in (c, np.array(c), np.int64(c[0]), text):
        got = attribute(gpt2, r, pos, contrast=same, units="word")
        np.testing.assert_array_equal(got.values, want.values)
        assert got.f == want.f and got.to_dict()["contrast"] == {"token_id": c[0], "text": text}


@pytest.mark.parametrize("words", [" lazy cat", "dogs", " dogs"])
def test_the_contrast_text_is_read_as_answers_reads_a_variant(engine, words):
    """The text's ids are those Answers gives the same words after the text before the target (a leading space is
    part of them); the result says how it was read, and the summary says the leading space matters."""
    r = score_text(engine, TEXT, 5)
    pos = r.n - 1
    prompt = TEXT[: TEXT.rindex(" dog")]
    ans = score_answers(engine, prompt, [[words]]).answers[0].variants[0]
    ids, how = contrast_tokens(engine, r, pos, words)
    assert ids == ans.token_ids.tolist() and how == ans.tokenized
    if len(ids) > 1:
        a = attribute(engine, r, pos, contrast=words, units="word")
        assert a.contrast_ids.tolist() == ids and a.contrast_tokenized == how and a.contrast_text == words
        d = a.to_dict()
        assert (
            d["contrast"]["token_ids"] == ids and d["contrast"]["tokenized"] == how and "token_id" not in d["contrast"]
        )
        assert Attribution.from_dict(d).to_dict() == d  # round trip
        s = why_summary(a)
        assert "scored as a continuation" in s and "leading space is part of it" in s
    assert contrast_tokens(engine, r, pos, " dogs")[0] != contrast_tokens(engine, r, pos, "dogs")[0]


@pytest.mark.parametrize(
    ("contrast", "needle"),
    [
        ("", "The contrast is empty"),
        ([], "must be a token id, a list of them or a text"),
        ([1, 10**9], "outside the vocabulary"),
        (" lazy dog" * 200, "at most 64: shorten it"),
    ],
)
def test_bad_contrasts_say_what_to_change(gpt2, contrast, needle):
    r = score_text(gpt2, TEXT, 5)
    with pytest.raises(ExplorerError, match=needle) as err:
        attribute(gpt2, r, r.n - 1, contrast=contrast)
    assert err.value.param == "contrast" and len(err.value.message) < 400


def test_on_llamacpp(tiny_gguf, tiny_gguf_dir):
    """llama.cpp's rows (one at a time, each on its KV sequence) against its own fresh passes."""
    r, pos, c = _case(tiny_gguf, 2)
    ids, target = r.token_ids.tolist(), int(r.token_ids[pos])

    def fresh(ctx: list[int], cont: list[int]) -> float:
        logits, _ = tiny_gguf.body(torch.tensor([ctx + cont[:-1]]))  # past None: decoded from position 0
        lp = torch.log_softmax(logits[len(ctx) - 1 :].double(), -1)
        return float(lp.gather(1, torch.tensor(cont)[:, None]).sum())

    a = attribute(tiny_gguf, r, pos, contrast=c)
    f = fresh(ids[:pos], [target]) - fresh(ids[:pos], c)
    assert a.f == pytest.approx(f, abs=1e-4)
    for j in range(pos):
        rest = ids[:j] + ids[j + 1 : pos]
        assert a.values[j] == pytest.approx(f - (fresh(rest, [target]) - fresh(rest, c)), abs=1e-4), j


def test_through_a_remote_server(gpt2_dir, gpt2):
    """A served model (a real /v1 in a second process) scores each ablated text with each continuation: the local
    engine's numbers, and the contrast's text read the same way."""
    from explorer.engine.remote.engine import RemoteEngine
    from tests.helpers.servers import ServerProcess

    server = ServerProcess(gpt2_dir)
    try:
        remote = RemoteEngine(server.url + "/v1", tokenizer=gpt2_dir)
        r = score_text(gpt2, TEXT, 5)
        here = attribute(gpt2, r, r.n - 1, contrast=" lazy cat", units="word")
        there = attribute(remote, r, r.n - 1, contrast=" lazy cat", units="word")
    finally:
        server.stop()
    assert there.contrast_ids.tolist() == here.contrast_ids.tolist() and here.contrast_length > 1
    np.testing.assert_allclose(there.values, here.values, atol=1e-4, equal_nan=True)
    assert there.f == pytest.approx(here.f, abs=1e-4)


# ---- the faces -------------------------------------------------------------------------------------------------
def test_python_api(gpt2_dir, gpt2):
    lm = explorer.load(gpt2_dir, device="cpu")
    a = lm.why(TEXT, contrast=" lazy cat", units="word")
    r = score_text(gpt2, TEXT, 5)
    want = attribute(gpt2, r, r.n - 1, contrast=" lazy cat", units="word", detail=128)
    np.testing.assert_allclose(a.values, want.values, atol=1e-6, equal_nan=True)
    assert a.contrast_length > 1 and a.to_pandas()["value"].tolist() == pytest.approx(list(a.values), nan_ok=True)
    for bad, needle in (("", "`contrast` is empty"), ([], "The contrast must be")):
        with pytest.raises(ExplorerError, match=needle) as err:
            lm.why(TEXT, contrast=bad)
        assert "--" not in err.value.message  # Python arguments, not flags


def test_cli(gpt2_dir, gpt2, capsys):
    args = ["why", "--model", gpt2_dir, "--device", "cpu", "--text", TEXT, "--position", "-1"]
    assert main([*args, "--contrast", " lazy cat", "--units", "word"]) == 0, capsys.readouterr().err
    body = json.loads(capsys.readouterr().out)
    r = score_text(gpt2, TEXT, 5)
    want = attribute(gpt2, r, r.n - 1, contrast=" lazy cat", units="word", detail=128)
    assert body["contrast"] == want.to_dict()["contrast"] and len(body["contrast"]["token_ids"]) > 1
    assert body["f"] == pytest.approx(want.f, abs=1e-6)
    assert main([*args, "--contrast", " lazy dog" * 200]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]  # after the weights' loading bar
    assert err.startswith("error: --contrast is 600 tokens") and "at most 64: shorten it" in err and len(err) < 400
