"""Branches: the continuation's numbers equal scoring from scratch, the prefix is never recomputed, seeds replay, the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from explorer.engine import generate, score_ids
from explorer.engine.analyses.branch import KEEP, Prefixes, branch, generate_then_branch, grow, plant, regrow
from explorer.errors import ExplorerError
from explorer.results.branch import BranchTree
from explorer.rules.sampler import SamplerSettings
from tests.helpers.cli import run
from tests.helpers.page import make_page
from tests.helpers.reference import assert_matches_reference, ref_logprobs

TEXT = "The quick brown fox jumps over the lazy dog. The capital of France is Paris. The capital of Italy is Rome."


@pytest.fixture
def counted(monkeypatch):
    """Count the positions every engine.body call computes (wraps the engine's own method)."""

    def wrap(engine):
        seen = []
        real = engine.body

        def body(ids, past=None, cache=False, last=False):
            seen.append(ids.shape[1])
            return real(ids, past, cache, last)

        monkeypatch.setattr(engine, "body", body)
        return seen

    return wrap


@pytest.mark.parametrize("temperature", [0.0, 0.9])
def test_branch_equals_scoring_from_scratch(engine, temperature):
    s = SamplerSettings(max_tokens=10, temperature=temperature, seed=4, logprobs=5)
    ids = engine.encode("The capital of France")
    at, token = len(ids) + 2, int(engine.encode(" Rome")[-1])
    r, br = generate_then_branch(engine, ids, s, at, token)
    assert br.token_ids[:at].tolist() == r.token_ids[:at].tolist() and br.token_ids[at] == token
    assert br.n > at + 1 and br.n_prompt == r.n_prompt and br.output_k == 5
    assert_matches_reference(br, ref_logprobs(engine.model, br.token_ids.tolist()), range(br.n_prompt, br.n))
    # the continuation is what generating from the branched text gives, with the same settings and seed
    fresh = generate(engine, br.token_ids[: at + 1].tolist(), s)[0]
    assert fresh.token_ids.tolist() == br.token_ids.tolist()


def test_processed_branch_equals_generating_from_the_branched_text(gpt2):
    s = SamplerSettings(max_tokens=8, temperature=0.7, top_k=20, top_p=0.9, seed=6, logprobs=4, mode="processed")
    ids = gpt2.encode("The capital of France")
    _, br = generate_then_branch(gpt2, ids, s, len(ids) + 1, 60)
    assert br.mode == "processed" and br.token_ids[len(ids) + 1] == 60
    fresh = generate(gpt2, br.token_ids[: len(ids) + 2].tolist(), s)[0]
    assert fresh.token_ids.tolist() == br.token_ids.tolist()
    tail = slice(len(ids) + 2, br.n)
    np.testing.assert_allclose(br.logprobs[tail], fresh.logprobs[tail], atol=1e-5)
    assert (br.ranks[tail] == fresh.ranks[tail]).all() and (br.top_ids[tail] == fresh.top_ids[tail]).all()


def test_prefix_is_not_recomputed(gpt2, counted):
    ids = gpt2.encode(TEXT)
    assert len(ids) > 30
    prefixes = Prefixes(gpt2.name)
    seen = counted(gpt2)
    tree = plant(gpt2, prefixes, ids)
    assert seen == [len(ids)]  # the seed: one pass over the text
    s = SamplerSettings(max_tokens=5, temperature=0.8, seed=1)
    seen.clear()
    tree, leaf = grow(gpt2, prefixes, tree, 29, 50, s)
    assert seen[0] == 2 and sum(seen) <= 2 + 4, seen  # [last prefix token, new token], then one per drawn token
    seen.clear()
    tree, _ = grow(gpt2, prefixes, tree, leaf - 2, 60, s)  # inside the first branch's continuation: its cache is kept
    assert seen[0] == 2 and sum(seen) <= 6, seen
    # the branch's numbers still equal scoring its whole text from scratch
    for node in tree.leaves():
        r = score_ids(gpt2, tree.ids_to(node), k=tree.k)
        np.testing.assert_allclose(tree.logprobs[tree.path(node)][1:], r.logprobs[1:], atol=1e-4)


def test_only_missing_positions_are_computed(gpt2, counted):
    ids = gpt2.encode(TEXT)
    prefixes = Prefixes(gpt2.name)
    seen = counted(gpt2)
    b = branch(gpt2, prefixes, ids[:20], 77, SamplerSettings(max_tokens=1, temperature=0))
    assert seen == [19, 2]  # nothing kept yet: the 19 positions before the last prefix token, then 2
    seen.clear()
    branch(gpt2, prefixes, ids[:25], 78, SamplerSettings(max_tokens=1, temperature=0))
    assert seen == [4, 2], seen  # ids[:20] is kept (the branch diverges after it): only ids[20:24] is computed, then 2
    assert b.at == 20 and b.ids[:21] == ids[:20] + [77]


def test_kept_caches_are_bounded_and_never_changed(gpt2):
    ids = gpt2.encode(TEXT)
    prefixes = Prefixes(gpt2.name)
    tree = plant(gpt2, prefixes, ids)
    seed_cache = prefixes.kept[0][1]
    for tok in range(40, 40 + KEEP + 3):
        tree, _ = grow(gpt2, prefixes, tree, 10, tok, SamplerSettings(max_tokens=2, temperature=0))
    assert len(prefixes.kept) == KEEP
    assert all(c.get_seq_length() >= covered for _, c, covered in prefixes.kept)
    assert seed_cache.get_seq_length() == len(ids)  # branches cut copies, never the kept cache itself


def test_tree_paths_and_json(llama):
    ids = llama.encode(TEXT)
    prefixes = Prefixes(llama.name)
    tree = plant(llama, prefixes, ids, n_prompt=5, sampler={"temperature": 0.7})
    s = SamplerSettings(max_tokens=6, temperature=1.0, seed=11)
    tree, a = grow(llama, prefixes, tree, 7, int(tree.top_ids[9, 1]), s)
    tree, b = grow(llama, prefixes, tree, a - 3, 40, s)
    assert len(tree.leaves()) == 3 and tree.leaves()[-1] == b
    assert tree.parent[tree.branches[1]["first_node"]] == 7 and tree.branches[1]["at"] == 8
    for leaf in tree.leaves():
        r = score_ids(llama, tree.ids_to(leaf), k=tree.k)
        assert abs(tree.cumulative_logprob(leaf) - r.total_logprob) < 1e-3
        assert abs(tree.perplexity(leaf) - r.perplexity) < 1e-3 * r.perplexity
        np.testing.assert_array_equal(tree.ranks[tree.path(leaf)], r.ranks)
        assert tree.text(leaf) == r.text
    d = json.loads(json.dumps(tree.to_dict(), allow_nan=False))
    node = d["nodes"][b]
    assert set(node) >= {"id", "parent", "token_id", "bytes", "logprob", "rank", "top_ids", "top_logprobs"}
    assert node["parent"] == int(tree.parent[b]) and bytes.fromhex(node["bytes"]) == llama.vocab[node["token_id"]]
    assert [x["node"] for x in d["leaves"]] == tree.leaves()
    back = BranchTree.from_dict(d)
    assert back.to_dict() == d


def test_seeded_tree_regrows_identically(gpt2):
    prefixes = Prefixes(gpt2.name)
    tree = plant(gpt2, prefixes, gpt2.encode(TEXT))
    tree, a = grow(gpt2, prefixes, tree, 12, 44, SamplerSettings(max_tokens=8, temperature=1.2, seed=21))
    tree, _ = grow(gpt2, prefixes, tree, a - 2, 45, SamplerSettings(max_tokens=8, temperature=1.2, top_k=30, seed=22))
    tree, _ = grow(
        gpt2, prefixes, tree, 5, 46, SamplerSettings(max_tokens=8, temperature=0.9)
    )  # a random seed, recorded
    d = json.loads(json.dumps(tree.to_dict()))
    again = regrow(gpt2, BranchTree.from_dict(d))
    assert again.to_dict() == d
    other = json.loads(json.dumps(d))
    other["branches"][1]["sampler"]["seed"] = 99
    assert regrow(gpt2, BranchTree.from_dict(other)).token_ids.tolist() != tree.token_ids.tolist()


def test_edges_and_messages(gpt2):
    ids = gpt2.encode(TEXT)
    prefixes = Prefixes(gpt2.name)
    one = branch(
        gpt2, prefixes, ids[:1], 50, SamplerSettings(max_tokens=3, temperature=0)
    )  # position 1: no cache to cut
    assert one.ids[:2] == [ids[0], 50] and len(one.steps) == 3
    full = (ids * 5)[: gpt2.context - 1]
    last = branch(gpt2, prefixes, full, 51, SamplerSettings(max_tokens=3, temperature=0))  # at the context limit
    assert last.steps == [] and len(last.ids) == gpt2.context
    with pytest.raises(ExplorerError, match="reads at most"):
        branch(gpt2, prefixes, full + [1], 51, SamplerSettings(max_tokens=3, temperature=0))
    with pytest.raises(ExplorerError, match="outside the vocabulary"):
        branch(gpt2, prefixes, ids[:4], 10**6, SamplerSettings(max_tokens=3))
    with pytest.raises(ExplorerError, match="position 0 has no context"):
        branch(gpt2, prefixes, [], 5, SamplerSettings(max_tokens=3))
    with pytest.raises(ExplorerError, match="outside the result"):
        generate_then_branch(gpt2, ids[:4], SamplerSettings(max_tokens=2, temperature=0), 40, 5)
    tree = plant(gpt2, prefixes, ids[:6])
    with pytest.raises(ExplorerError, match="not in this tree"):
        grow(gpt2, prefixes, tree, 99, 5, SamplerSettings(max_tokens=2))


def test_cli_branch(gpt2, gpt2_dir):
    base = [
        "generate",
        "--model",
        gpt2_dir,
        "--prompt",
        "The capital of",
        "--max-tokens",
        "6",
        "--seed",
        "5",
        "--temperature",
        "0.9",
        "--format",
        "native",
        "--logprobs",
        "3",
    ]
    plain = json.loads(run(*base).stdout)
    p = run(*base, "--branch-at", "5", "--branch-token", "77")
    assert p.returncode == 0, p.stderr
    body = json.loads(p.stdout)
    ids = body["token_ids"]
    assert ids[:5] == plain["token_ids"][:5] and ids[5] == 77 and len(ids) > 6
    r = score_ids(gpt2, ids, k=3)
    n_prompt = body["n_prompt"]
    np.testing.assert_allclose([x for x in body["logprobs"][n_prompt:]], r.logprobs[n_prompt:], atol=1e-4)
    assert body["top_ids"][5] == r.top_ids[5].tolist()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--branch-at", "3"], "go together"),
        (["--branch-token", "3"], "go together"),
        (["--branch-at", "0", "--branch-token", "3"], "position >= 1"),
        (["--branch-at", "2", "--branch-token", "3", "--n", "2"], "--n 1"),
        (["--branch-at", "99", "--branch-token", "3"], "outside the result"),
        (["--branch-at", "2", "--branch-token", "1000000"], "outside the vocabulary"),
    ],
)
def test_cli_branch_bad_input(gpt2_dir, args, needle):
    p = run("generate", "--model", gpt2_dir, "--prompt", "The capital of", "--max-tokens", "3", *args)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("error:") and needle in last, last


def test_tree_html_compare_and_node_detail(gpt2):
    from explorer.render.branch import compare_html, leaf_choices, node_markdown, node_table, tree_html

    prefixes = Prefixes(gpt2.name)
    tree = plant(gpt2, prefixes, gpt2.encode("<script>alert(1)</script> & <b>bold</b> fox"))
    s = SamplerSettings(max_tokens=4, temperature=0.9, seed=2)
    tree, a = grow(gpt2, prefixes, tree, 5, 40, s)
    tree, b = grow(gpt2, prefixes, tree, 5, 41, s)
    tree, c = grow(gpt2, prefixes, tree, a - 1, 42, s)
    page = tree_html(tree, selected=c)
    assert "<script>" not in page and "<b>" not in page and "&lt;" in page
    assert page.count("data-node=") == tree.n and page.count('class="leaf"') == len(tree.leaves()) == 4
    assert page.count(" fork") == 3 and page.count(" sel") == 1
    assert page.count("<ul") == page.count("</ul>")
    for leaf in tree.leaves():
        assert f"Σ logprob {tree.cumulative_logprob(leaf):.2f}" in page
    assert [v for _, v in leaf_choices(tree)] == tree.leaves()
    cmp = compare_html(tree, a, b)
    assert cmp.count("data-node=") == (tree.depth(a) - 5) + (tree.depth(b) - 5)  # each side's own tokens after the fork
    assert "<script>" not in cmp
    md = node_markdown(tree, b)
    assert "branch 2" in md and "seed 2" in md and "rank **" in md
    df = node_table(tree, tree.branches[1]["first_node"])
    assert df["id"].tolist()[: tree.k] == tree.top_ids[tree.branches[1]["first_node"]].tolist()


def where(at, alts, source, tree=None, prefixes=None, node=-1) -> dict:
    """Where the Branch tab's handler branches, by name (as Gradio passes its `inputs_kwargs`): a fresh tree."""
    return dict(tree=tree, prefixes=prefixes, node=node, at=at, alts=alts, source=source)


def test_branch_tab_handlers(gpt2, llama, tmp_path):
    import gradio as gr

    from explorer.ui.tabs.branch import SOURCES

    tab = make_page([gpt2, llama]).tabs["branch"]
    controls = dict(max_tokens=5, temperature=0.9, top_p=1.0, top_k=0, seed=3, stop="",
                    mode="raw: the model's own distribution", score_prompt=True)  # fmt: skip
    r = generate(
        gpt2,
        gpt2.encode("The capital of"),
        SamplerSettings(max_tokens=8, temperature=0.8, seed=9, logprobs=20, prompt_logprobs=20),
    )[0]
    at = r.n_prompt + 2
    picked = tab.pick_position([r], at)
    alts = [v for _, v in picked[tab.alts].choices]
    assert picked[tab.at] == at and picked[tab.node] == -1 and len(alts) == 20
    out = tab.branch("tiny-gpt2", [r], **where(at, alts[1:3], SOURCES[0]), **controls)
    tree, prefixes = out[tab.tree], out[tab.prefixes]
    assert tree.seed_ids() == r.token_ids.tolist() and len(tree.leaves()) == 3
    assert (
        tree.branches[1]["sampler"]["seed"] == 9 and tree.branches[1]["sampler"]["max_tokens"] == 8
    )  # the result's own
    assert [b["token_id"] for b in tree.branches[1:]] == [int(a) for a in alts[1:3]]
    assert out[tab.tree_view].count('class="leaf"') == 3 and "Node" in out[tab.node_md]
    node = tree.branches[2]["first_node"] + 2
    picked = tab.pick_node(tree, node)
    assert picked[tab.node] == node and picked[tab.at] == tree.depth(node) and " sel" in picked[tab.tree_view]
    new = where(picked[tab.at], [picked[tab.alts].choices[3][1]], SOURCES[1], tree=tree, prefixes=prefixes, node=node)
    again = tab.branch("tiny-gpt2", [r], **new, **controls)
    grown = again[tab.tree]
    assert len(grown.leaves()) == 4 and grown.branches[3]["from"] == node - 1
    assert grown.branches[3]["sampler"]["seed"] == 3 and grown.branches[3]["sampler"]["max_tokens"] == 5  # the controls
    a, b = grown.leaves()[0], grown.leaves()[-1]
    assert "Σ logprob" in tab.compare(grown, a, b)[tab.compare_view]
    path = tab.download(grown)[tab.dl_file]
    with open(path, encoding="utf-8") as f:
        assert BranchTree.from_dict(json.load(f)).to_dict() == grown.to_dict()
    for call, needle in [
        (lambda: tab.branch("tiny-gpt2", [r], **where(at, [], SOURCES[0]), **controls), "Tick at least"),
        (lambda: tab.branch("tiny-gpt2", [], **where(at, ["5"], SOURCES[0]), **controls), "first"),
        (lambda: tab.branch("tiny-gpt2", [r], **where(0, ["5"], SOURCES[0]), **controls), "from 1"),
        (lambda: tab.branch("tiny-llama", [r], **where(at, ["5"], SOURCES[0]), **controls), "comes from"),
        (lambda: tab.pick_position([r], r.n + 3), "outside the current result"),
        (lambda: tab.pick_node(grown, 10**4), "not in this tree"),
        (lambda: tab.compare(grown, a, 0), "Pick two leaves"),
        (lambda: tab.download(None), "No tree yet"),
    ]:
        with pytest.raises(gr.Error, match=needle):
            call()
    assert "no context" in tab.pick_position([r], 0)[tab.node_md]
