"""Look up any token: its logprob and rank at every position, checked against scoring and plain torch."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from explorer.engine import score_ids
from explorer.engine.analyses.lookup import FEW_QUERIES, logprobs_of_ids, lookup
from explorer.errors import ExplorerError
from explorer.export import dumps
from explorer.results.lookup import Lookup, joint_logprobs, parse_query
from tests.helpers.reference import assert_rank_close, ref_logprobs

TEXT = "The capital of France is Paris. The capital of Italy is Rome. 東京 👋"


@pytest.mark.parametrize("many", [False, True], ids=["compare-per-query", "sorted-row"])
def test_actual_token_ids_give_scoring_numbers(engine, many):
    ids = engine.encode(TEXT)
    r = score_ids(engine, ids, k=5)
    queries = sorted(set(ids))
    queries = queries if many else queries[:FEW_QUERIES]
    assert (len(queries) > FEW_QUERIES) == many
    lp, rank = logprobs_of_ids(engine, ids, queries)
    assert lp.shape == rank.shape == (len(ids), len(queries)) and np.isnan(lp[0]).all() and (rank[0] == 0).all()
    col = {q: j for j, q in enumerate(queries)}
    hits = [(p, col[t]) for p, t in enumerate(ids) if p > 0 and t in col]
    assert len(hits) >= 3
    for p, j in hits:  # the actual token's lookup is exactly what scoring reports
        # the same number by another reduction order: equal to 1e-6, or to two float32 ulps where |logprob| > 4
        assert lp[p, j] == pytest.approx(r.logprobs[p], rel=2.5e-7, abs=1e-6)
        assert rank[p, j] == r.ranks[p]


def test_any_id_matches_plain_torch(engine):
    ids = engine.encode(TEXT)
    ref = ref_logprobs(engine.model, ids)  # (T-1, V)
    queries = [0, 5, engine.vocab_size - 1, *range(100, 110)]
    lp, rank = logprobs_of_ids(engine, ids, queries)
    np.testing.assert_allclose(lp[1:], ref[:, queries].numpy(), atol=1e-5)
    for p in range(1, len(ids)):
        for j, q in enumerate(queries):
            assert_rank_close(int(rank[p, j]), ref[p - 1], q)
    assert (rank[1:] > 5).any()  # beyond any top-k


def test_top1_id_has_rank_one(engine):
    ids = engine.encode(TEXT)
    r = score_ids(engine, ids, k=2)
    for p in range(1, len(ids)):
        top = int(r.top_ids[p, 0])
        lp, rank = logprobs_of_ids(engine, ids[: p + 1], [top, int(r.top_ids[p, 1])])
        if r.top_logprobs[p, 0] > r.top_logprobs[p, 1]:  # a strict argmax
            assert rank[p, 0] == 1 and rank[p, 1] == 2
        assert lp[p, 0] == pytest.approx(r.top_logprobs[p, 0], abs=1e-5)


def test_strings_first_token_and_joint(gpt2):
    ids = gpt2.encode(TEXT)
    r = score_ids(gpt2, ids, k=1)
    capital = gpt2.tokenizer(" capital of", add_special_tokens=False)["input_ids"]
    assert len(capital) > 1
    got = lookup(gpt2, ids, [" capital of", str(capital[0]), "id:7"])
    s, one, seven = got
    assert s.multi_token and s.token_id == capital[0] and not one.multi_token
    np.testing.assert_array_equal(s.logprobs, one.logprobs)  # the first token's curve
    starts = [p for p in range(len(ids)) if ids[p : p + len(capital)] == capital]
    assert len(starts) == 2 and set(np.flatnonzero(~np.isnan(s.joint_logprobs))) == set(starts)
    for p in starts:  # joint = the sum of the actual tokens' logprobs, as scoring gives them
        assert s.joint_logprobs[p] == pytest.approx(
            float(r.logprobs[p : p + len(capital)].astype(np.float64).sum()), abs=1e-5
        )
    assert seven.token_ids.tolist() == [7]


def test_joint_logprobs_table():
    actual = np.array([np.nan, -1.0, -2.0, -0.5, -1.0], np.float32)
    ids = [3, 4, 5, 4, 5]
    np.testing.assert_allclose(joint_logprobs(actual, ids, [4, 5]), [np.nan, -3.0, np.nan, -1.5, np.nan])
    assert np.isnan(joint_logprobs(actual, ids, [3, 4])).all()  # starts at the unscored position 0
    assert np.isnan(joint_logprobs(actual, ids, [1] * 9)).all()  # longer than the text
    np.testing.assert_allclose(joint_logprobs(actual, ids, [5]), [np.nan, np.nan, -2.0, np.nan, -1.0])


@pytest.mark.parametrize(
    ("query", "parsed"),
    [
        ("42", ("id", 42)),
        ("id:42", ("id", 42)),
        ("text:42", ("text", "42")),
        (" yes", ("text", " yes")),
        ("4 2", ("text", "4 2")),
        ("٤٢", ("text", "٤٢")),
        ("-1", ("text", "-1")),
        ("👋", ("text", "👋")),
    ],
)
def test_parse_query(query, parsed):
    assert parse_query(query) == parsed


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda e: lookup(e, [1, 2], []), "at least one"),
        (lambda e: lookup(e, [1, 2], [""]), "empty"),
        (lambda e: lookup(e, [1, 2], ["id:x"]), "whole number"),
        (lambda e: lookup(e, [1, 2], ["99999"]), "outside the vocabulary"),
        (lambda e: lookup(e, [1, 2], ["x"] * 17), "At most 16"),
        (lambda e: lookup(e, [1, 2], ["x" * 201]), "at most 200"),
        (lambda e: logprobs_of_ids(e, [1, 2], []), "at least one"),
        (lambda e: logprobs_of_ids(e, [1, 2], [True]), "outside the vocabulary"),
        (lambda e: logprobs_of_ids(e, [], [1]), "no tokens"),
    ],
)
def test_bad_lookups_are_clear_messages(gpt2, call, needle):
    with pytest.raises(ExplorerError, match=needle):
        call(gpt2)


def test_one_token_text_and_round_trip(gpt2):
    (one,) = lookup(gpt2, [5], ["7"])
    assert np.isnan(one.logprobs).all() and one.to_dict()["ranks"] == [None]
    (x,) = lookup(gpt2, gpt2.encode("fox jumps over"), [" over"])
    d = json.loads(dumps(x.to_dict()))
    assert d["logprobs"][0] is None and d["ranks"][0] is None and d["token_id"] == x.token_id
    assert Lookup.from_dict(d).to_dict() == d


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True, timeout=120)


def test_cli_score_lookup(gpt2_dir, gpt2):
    text = "The capital of France is Paris"
    p = run_cli(
        "score",
        "--model",
        gpt2_dir,
        "--text",
        text,
        "--format",
        "native",
        "--logprobs",
        "2",
        "--lookup",
        " Paris",
        "--lookup",
        "17",
    )
    assert p.returncode == 0, p.stderr
    body = json.loads(p.stdout)
    ids = gpt2.encode(text)
    assert body["token_ids"] == ids and [x["query"] for x in body["lookup"]] == [" Paris", "17"]
    lp, rank = logprobs_of_ids(gpt2, ids, [body["lookup"][0]["token_id"], 17])
    for j, x in enumerate(body["lookup"]):
        assert len(x["logprobs"]) == len(ids) and x["logprobs"][0] is None and x["ranks"][0] is None
        np.testing.assert_allclose(x["logprobs"][1:], lp[1:, j], atol=1e-6)
        assert x["ranks"][1:] == rank[1:, j].tolist()
    p = run_cli("score", "--model", gpt2_dir, "--text", text, "--lookup", " Paris")
    assert (
        p.returncode == 2
        and p.stderr.strip().splitlines()[-1].startswith("error: --lookup")
        and "--format native" in p.stderr
    )
    p = run_cli(
        "score",
        "--model",
        gpt2_dir,
        "--text",
        text,
        "--lookup",
        "7",
        "--format",
        "native",
        "--backend",
        "http://127.0.0.1:9/v1",
    )
    assert p.returncode == 2 and "drop --backend" in p.stderr.strip().splitlines()[-1]


# ---- the Look up tab's handlers -----------------------------------------------------------------
@pytest.fixture(scope="module")
def tab(gpt2, llama):
    from explorer.ui.tabs.lookup import LookupTab
    from tests.helpers.page import build_tab

    return build_tab(LookupTab, gpt2, llama)


def test_lookup_tab(tab, engine):
    from explorer.ui.tabs.lookup import queries_of

    assert queries_of(" yes\n no\r\n\n42") == [" yes", " no", "42"]
    ids = engine.encode(TEXT)
    r = score_ids(engine, ids, k=5)
    out = tab.run([r], " capital\n17")
    table = out[tab.table]
    lp, rank = logprobs_of_ids(engine, ids, [lookup(engine, ids, [" capital"])[0].token_id, 17])
    np.testing.assert_allclose(
        table["p(17)"].to_numpy()[1:], np.exp(lp[1:, 1].astype(np.float64)), rtol=1e-3
    )  # 4 significant digits
    assert table["rank(17)"].tolist()[1:] == rank[1:, 1].tolist() and np.isnan(table["rank(17)"][0])
    assert len(out[tab.plot].data) == 4 and "·capital" in out[tab.notes]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (([], " yes"), "Score a text"),
        ((None, "\n\n"), "Type a token"),
        ((None, "<b>99999</b>\n99999"), "outside the vocabulary"),
    ],
)
def test_lookup_tab_errors(tab, gpt2, args, needle):
    import gradio as gr

    state = [score_ids(gpt2, gpt2.encode("fox jumps"), k=1)] if args[0] is None else args[0]
    with pytest.raises(gr.Error, match=needle) as err:
        tab.run(state, args[1])
    assert "<b>" not in err.value.message
