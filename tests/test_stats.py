"""Text statistics (explorer/results/stats.py) and the varentropy behind them, against plain numpy on the full
distribution: log_softmax of the tiny models' logits from a fresh full pass (float64)."""

from __future__ import annotations

import json
from dataclasses import replace

import httpx
import numpy as np
import pytest
import torch

from explorer.engine import generate, score_ids
from explorer.engine.analyses.compare import compare_ids
from explorer.errors import ExplorerError
from explorer.export import dumps, export
from explorer.export.native import export as native_export
from explorer.results import stats
from explorer.results.scores import TokenScores
from explorer.rules.sampler import SamplerSettings
from tests.helpers.samples import scored_prompt
from tests.helpers.tiny import CORPUS

TEXT = "The quick brown fox jumps over the lazy dog. Grüße aus München! 東京 👋🙂 " + CORPUS[0]


@torch.no_grad()
def full_lp(model, ids: list[int]) -> np.ndarray:
    """(T-1, V) float64 log_softmax of the logits predicting ids[1:] (one plain full pass)."""
    return torch.log_softmax(model(torch.tensor([ids])).logits[0].double(), -1)[:-1].numpy()


def ref_moments(lp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mu, var) per row: mean and variance of log p under p, the variance written centred (not as E[x^2] - mu^2)."""
    p = np.exp(lp)
    with np.errstate(invalid="ignore"):  # 0 * -inf where an entry is filtered: dropped by the where
        plp = np.where(p > 0, p * lp, 0.0)
        mu = plp.sum(-1)
        var = np.where(p > 0, p * (lp - mu[:, None]) ** 2, 0.0).sum(-1)
    return mu, var


def ref_stats(lp: np.ndarray, ids: list[int], k: float = 20.0) -> dict:
    """Each paper's formula over the full distributions `lp` (T-1, V) of the tokens ids[1:]."""
    tgt = np.array(ids[1:])
    x = lp[np.arange(len(tgt)), tgt]  # (T-1,) log p(x_t)
    rank = (lp >= x[:, None]).sum(-1)  # 1-based, ties against the token
    mu, var = ref_moments(lp)
    n_low = max(1, int(len(x) * k / 100))
    z = (x - mu) / np.sqrt(var)
    return {
        "gltr": [
            np.mean(rank <= 10),
            np.mean((rank > 10) & (rank <= 100)),
            np.mean((rank > 100) & (rank <= 1000)),
            np.mean(rank > 1000),
        ],
        "min_k": np.sort(x)[:n_low].mean(),
        "min_k_plus": np.sort(z)[:n_low].mean(),
        "fast_detectgpt": (x.sum() - mu.sum()) / np.sqrt(var.sum()),
        "var": var,
    }


def values(r: TokenScores, k: float = 20.0) -> dict:
    g, mk, mkp, fd = stats.text_stats(r, k)
    return {"gltr": list(g.value.values()), "min_k": mk.value, "min_k_plus": mkp.value, "fast_detectgpt": fd.value}


def test_varentropy_equals_numpy_variance_of_log_p(engine):
    ids = engine.encode(TEXT)
    r = score_ids(engine, ids, k=5)
    var = ref_stats(full_lp(engine.model, ids), ids)["var"]
    assert np.isnan(r.varentropy[0])  # position 0 has no context
    np.testing.assert_allclose(r.varentropy[1:], var, rtol=1e-5, atol=1e-5)
    assert var.std() > 1e-2  # positions really differ: a constant could not pass


@pytest.mark.parametrize("k", [20.0, 5.0, 100.0])
def test_each_statistic_equals_its_formula_on_the_full_distribution(engine, k):
    ids = engine.encode(TEXT)
    got, ref = values(score_ids(engine, ids, k=3), k), ref_stats(full_lp(engine.model, ids), ids, k)
    np.testing.assert_allclose(got["gltr"], ref["gltr"], atol=1e-12)
    for name in ("min_k", "min_k_plus", "fast_detectgpt"):
        np.testing.assert_allclose(got[name], ref[name], rtol=1e-4, atol=1e-4, err_msg=name)


def test_gltr_buckets_see_ranks_beyond_k_and_sum_to_one(gpt2):
    r = score_ids(gpt2, gpt2.encode(TEXT), k=0)  # no alternatives kept: the ranks are still exact
    g = stats.gltr(r).value
    assert abs(sum(g.values()) - 1) < 1e-12 and g[">1000"] + g["101-1000"] > 0  # a random model ranks widely


def test_generated_tokens_carry_the_varentropy_too(gpt2):
    s = SamplerSettings(max_tokens=8, temperature=1.0, seed=3, logprobs=2, prompt_logprobs=2, ignore_eos=True)
    r = generate(gpt2, gpt2.encode("Hello there"), s)[0]
    ids = r.token_ids.tolist()
    np.testing.assert_allclose(r.varentropy[1:], ref_stats(full_lp(gpt2.model, ids), ids)["var"], rtol=1e-5, atol=1e-5)


def test_binoculars_is_observer_log_ppl_over_cross_perplexity(gpt2, gpt2_b):
    ids = gpt2.encode(TEXT)
    c = compare_ids(gpt2, gpt2_b, ids, k=3)
    lp1, lp2 = full_lp(gpt2.model, ids), full_lp(gpt2_b.model, ids)
    x1 = lp1[np.arange(len(ids) - 1), ids[1:]]
    x_ppl = -(np.exp(lp1) * lp2).sum(-1).mean()  # observer's probabilities against the performer's logprobs
    expected = -x1.mean() / x_ppl
    got = stats.binoculars(c).value
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    swapped = stats.binoculars(compare_ids(gpt2_b, gpt2, ids, k=3)).value
    assert abs(swapped - expected) > 1e-4  # which model observes matters


def test_min_k_on_hand_made_numbers():
    r = scored_prompt()  # logprobs [nan, -7.25, -0.41]
    assert stats.min_k(r, 50).value == -7.25  # int(2 * 0.5) = 1 lowest of the two scored
    assert stats.min_k(r, 100).value == pytest.approx((-7.25 - 0.41) / 2)
    assert stats.min_k_plus(r).value is None  # a hand-made result has no varentropy
    assert stats.fast_detectgpt(r).value is None and "varentropy" in stats.fast_detectgpt(r).note
    assert stats.gltr(r).value == {"1-10": 0.5, "11-100": 0.0, "101-1000": 0.5, ">1000": 0.0}


def test_nothing_scored_gives_no_values_and_no_error(gpt2):
    r = score_ids(gpt2, gpt2.encode("Hi")[:1], k=2)  # one token: nothing scored
    assert all(s.value is None for s in stats.text_stats(r))
    json.loads(dumps(stats.stats_block(r)))  # strict JSON all the same


@pytest.mark.parametrize("bad", [0, -5, 101, float("nan")])
def test_k_percent_out_of_range_says_what_to_change(bad):
    with pytest.raises(ExplorerError, match=r"\(0, 100\]"):
        stats.text_stats(scored_prompt(), bad)


def test_every_statistic_has_meaning_reference_and_caveat(gpt2):
    for s in stats.text_stats(score_ids(gpt2, gpt2.encode(TEXT), k=2)):
        assert s.meaning and "arXiv:" in s.reference and "not a verdict" in s.caveat and "Liang" in s.caveat


def test_native_json_has_stats_only_when_asked(gpt2):
    r = score_ids(gpt2, gpt2.encode(TEXT), k=2)
    plain = export("native", r)
    assert "stats" not in plain and "varentropy" not in plain  # the shape as it was
    assert TokenScores.from_dict(plain).to_dict() == plain
    body = json.loads(dumps(native_export(r, stats=True, k_percent=10)))
    assert body["stats"]["k_percent"] == 10
    names = [s["name"] for s in body["stats"]["statistics"]]
    assert names == ["GLTR rank buckets", "Min-10% Prob", "Min-10%++", "Fast-DetectGPT (analytic)"]
    back = TokenScores.from_dict(body)  # the varentropy comes back: the statistics can be recomputed
    np.testing.assert_array_equal(back.varentropy[1:], r.varentropy[1:])
    assert stats.stats_block(back, 10) == body["stats"]


def test_a_served_model_beyond_its_cap_has_no_varentropy():
    from explorer.engine.remote.stream import top_row

    row = top_row(5, -1.0, {5: -1.0, 6: -2.0}, SamplerSettings(logprobs=1))
    assert row.varentropy is None and np.isnan(row.varentropy_or_nan()).all()


def test_llamacpp_varentropy_equals_numpy_on_its_logits(tiny_gguf):
    ids = tiny_gguf.encode(" ".join(CORPUS[:4]))
    r = score_ids(tiny_gguf, ids, k=3)
    logits, _ = tiny_gguf.body(torch.tensor([ids]))  # (T, V): llama.cpp's own rows
    lp = torch.log_softmax(logits.double(), -1)[:-1].numpy()
    ref = ref_stats(lp, ids)
    np.testing.assert_allclose(r.varentropy[1:], ref["var"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(values(r)["fast_detectgpt"], ref["fast_detectgpt"], rtol=1e-4)


def test_the_api_sends_text_stats_only_when_asked(live, gpt2):
    prompt = {"prompt": TEXT, "max_tokens": 0, "echo": True, "logprobs": 2}
    plain = httpx.post(live.url + "/v1/completions", json=prompt).json()
    assert "text_stats" not in plain["choices"][0]
    body = httpx.post(live.url + "/v1/completions", json={**prompt, "text_stats": True}).json()
    expected = json.loads(dumps(stats.stats_block(score_ids(gpt2, gpt2.encode(TEXT), k=2))))
    assert body["choices"][0]["text_stats"] == expected


def test_the_completions_exporter_writes_text_stats_only_when_its_options_ask():
    from explorer.export import openai_completion

    r = scored_prompt()
    asked = openai_completion.Options(echo=True, logprobs=2, text_stats=True)
    body = openai_completion.export([r, r], options=replace(asked, n=2))
    assert [c["text_stats"] for c in body["choices"]] == [stats.stats_block(r)] * 2
    assert list(body["choices"][0])[-1] == "text_stats"  # after every vLLM key
    plain = openai_completion.export(r, options=openai_completion.Options(echo=True, logprobs=2))
    assert "text_stats" not in plain["choices"][0]


def test_the_api_refuses_text_stats_without_a_scored_prompt(live):
    r = httpx.post(live.url + "/v1/completions", json={"prompt": "Hi", "max_tokens": 2, "text_stats": True})
    assert r.status_code == 400 and r.json()["error"]["param"] == "text_stats"
    assert "echo" in r.json()["error"]["message"]


def test_the_api_refuses_text_stats_in_a_stream_instead_of_dropping_them(live):
    asked = {"prompt": TEXT, "max_tokens": 0, "echo": True, "logprobs": 2, "text_stats": True, "stream": True}
    r = httpx.post(live.url + "/v1/completions", json=asked)
    assert r.status_code == 400 and r.json()["error"]["param"] == "text_stats"
    assert "stream" in r.json()["error"]["message"]


def test_the_page_panels_show_value_meaning_reference_and_caveat(gpt2, gpt2_b):
    from explorer.ui.inspector import Inspector
    from explorer.ui.tabs.compare import CompareTab

    r = score_ids(gpt2, gpt2.encode(TEXT), k=2)
    md = Inspector.text_stats_of([r])
    assert f"{stats.min_k_plus(r).value:.4f}" in md and "arXiv:2404.02936" in md and "not a verdict" in md
    assert Inspector.text_stats_of([]) == ""
    c = compare_ids(gpt2, gpt2_b, gpt2.encode(TEXT), k=2)
    md = CompareTab.binoculars_of(c)
    assert f"{stats.binoculars(c).value:.4f}" in md and "Hans et al." in md and "not a verdict" in md
    assert CompareTab.binoculars_of(None) == ""


def test_the_panel_says_a_generated_result_counts_the_prompt_too(gpt2):
    """A generated result's statistics run over prompt and generation together: the panel's title says so."""
    from explorer.ui.inspector import Inspector

    r = generate(gpt2, gpt2.encode("the fox"), SamplerSettings(max_tokens=4, temperature=0.0, logprobs=2))[0]
    n_gen = r.n - r.n_prompt
    assert n_gen > 0
    md = Inspector.text_stats_of([r])
    assert f"all {int(r.scored.sum())} scored tokens" in md and f"the {n_gen} generated together" in md
    scored = Inspector.text_stats_of([score_ids(gpt2, gpt2.encode(TEXT), k=2)])
    assert "generated" not in scored.split("|")[0]


@pytest.fixture(scope="module")
def remote(gpt2_dir):
    """The remote engine on our own server in a second process (the tiny GPT-2)."""
    from explorer.engine.remote.engine import RemoteEngine
    from tests.helpers.servers import ServerProcess

    server = ServerProcess(gpt2_dir)
    yield RemoteEngine(server.url + "/v1", tokenizer=gpt2_dir)
    server.stop()


def test_a_served_model_has_the_varentropy_within_its_cap_and_nan_beyond(remote, gpt2, monkeypatch):
    ids = gpt2.encode("fox jumps over the lazy dog")
    np.testing.assert_allclose(
        score_ids(remote, ids, k=3).varentropy[1:], score_ids(gpt2, ids, k=3).varentropy[1:], rtol=1e-4, atol=1e-4
    )
    monkeypatch.setattr("explorer.engine.remote.engine.FULL_VOCAB_BUDGET", 10)
    r = score_ids(remote, ids, k=3)
    assert np.isnan(r.varentropy).all() and r.scored[1:].all()
    assert stats.fast_detectgpt(r).value is None and stats.min_k_plus(r).value is None  # not guessed
    assert stats.min_k(r).value is not None  # the logprobs alone still give Min-K%


def test_cli_score_stats_writes_the_block_and_refuses_other_formats(gpt2_dir, gpt2):
    from explorer.engine import score_text
    from tests.helpers.cli import run

    p = run(
        "score",
        "--model",
        gpt2_dir,
        "--device",
        "cpu",
        "--text",
        TEXT,
        "--format",
        "native",
        "--stats",
        "--min-k",
        "10",
    )
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout)["stats"]
    want = stats.stats_block(score_text(gpt2, TEXT, 5), 10)
    assert got["k_percent"] == 10 and [s["name"] for s in got["statistics"]] == [s["name"] for s in want["statistics"]]
    for a, b in zip(got["statistics"][1:], want["statistics"][1:]):
        assert a["value"] == pytest.approx(b["value"], rel=1e-4)
    assert got["statistics"][0]["value"] == want["statistics"][0]["value"]  # GLTR: the same ranks
    p = run("score", "--model", gpt2_dir, "--text", "Hi", "--stats")  # the default format is vllm
    assert p.returncode != 0 and "--format native" in p.stderr and "Traceback" not in p.stderr
    p = run("score", "--model", gpt2_dir, "--text", "Hi", "--format", "native", "--stats", "--min-k", "0")
    assert p.returncode != 0 and "(0, 100]" in p.stderr and "Traceback" not in p.stderr


def test_varentropy_of_filtered_rows_and_edge_rows():
    """Processed rows (-inf entries), a one-point row (varentropy 0) and a uniform one (0): numpy's variance."""
    from explorer.engine.kernels.metrics import row_stats

    g = torch.Generator().manual_seed(0)
    logits = torch.randn(5, 300, generator=g) * 4
    logits[0, 10:] = -torch.inf  # top-k filtered: ten entries left
    logits[1, 1:] = -torch.inf  # one entry: no spread
    logits[2] = 0.5  # uniform
    got = row_stats(logits, torch.zeros(5, dtype=torch.long), 3).varentropy.numpy()
    lp = torch.log_softmax(logits.double(), -1).numpy()
    np.testing.assert_allclose(got, ref_moments(lp)[1], rtol=1e-5, atol=1e-5)
    assert np.isfinite(got).all() and got[1] == 0 and got[0] > 0.1


def test_binoculars_says_when_one_model_plays_both_parts_and_refuses_two_prompts(gpt2):
    from explorer.engine.analyses.compare import compare_prompt_texts

    ids = gpt2.encode(TEXT)
    same = stats.binoculars(compare_ids(gpt2, gpt2, ids, k=3))
    assert same.value is not None and "one model as both observer and performer" in same.note
    prompts = stats.binoculars(compare_prompt_texts(gpt2, "Hello", "Bye", " there", 3))
    assert prompts.value is None and "two prompts" in prompts.note


def test_cli_compare_stats_gives_binoculars(gpt2_dir, gpt2_b_dir, gpt2, gpt2_b):
    import contextlib
    import io

    from explorer.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["compare", "--model", str(gpt2_dir), "--model-b", str(gpt2_b_dir), "--text", TEXT,
                     "--stats", "--device", "cpu"]) == 0  # fmt: skip
    [b] = json.loads(out.getvalue())["stats"]["statistics"]
    want = stats.binoculars(compare_ids(gpt2, gpt2_b, gpt2.encode(TEXT), k=5)).value
    assert b["name"] == "Binoculars" and b["value"] == pytest.approx(want, rel=1e-5)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["compare", "--model", str(gpt2_dir), "--prompt-a", "A", "--prompt-b", "B", "--text", "x",
                     "--stats"])  # fmt: skip
    assert code == 2 and "--stats (Binoculars) compares two models" in err.getvalue()
