"""The page under the server's cap on top-k (--max-logprobs / EXPLORER_MAX_LOGPROBS): every tab's handler asks for
at most that many alternatives and shows at most that many; a cap of 0 still scores, with no alternatives."""

from __future__ import annotations

import html
import json
import re

import pytest

from explorer.rules.sampler import page_k
from explorer.ui.inspector import View
from explorer.ui.links import decode
from explorer.ui.sampler import RunOptions
from tests.helpers.page import make_page
from tests.helpers.share import page_values

T = "1, 10, 100, 1000"
GPT2 = "tiny-gpt2"
TEXT = "The quick brown fox jumps over the lazy dog."
CONTROLS = dict(max_tokens=6, temperature=0.9, top_p=1.0, top_k=0, seed=5, stop="", mode="processed: after",
                score_prompt=True)  # fmt: skip  # as the page sends them, by name


def opts(metric: str) -> RunOptions:
    return RunOptions.from_values({**CONTROLS, "metric": metric, "thresholds_text": T, "k": 20})


def listed(detail: str) -> list[int]:
    """Alternatives each table of a token's detail lists (its rows, less '(others)' and the actual token added
    below the list)."""
    tables = re.findall(r'<table class="alts.*?<tbody>(.*?)</tbody>', detail)
    return [t.count("<tr") - 1 - ("outside this list" in t) for t in tables]


def blob_k(heatmap: str) -> int:
    """The most alternatives the page's data blob holds for a token (what the hover card lists)."""
    blob = json.loads(html.unescape(re.search(r'<div class="lx-data" hidden>(.*?)</div>', heatmap).group(1)))
    return max(len(t or []) for t in blob["ti"])


@pytest.mark.parametrize(
    ("raw", "full", "ten"), [("", 20, 10), ("-1", 20, 10), ("30", 20, 10), ("5", 5, 5), ("1", 1, 1), ("0", 0, 0)]
)
def test_page_k_is_the_servers_cap_where_lower(monkeypatch, raw, full, ten):
    monkeypatch.setenv("EXPLORER_MAX_LOGPROBS", raw)
    assert page_k() == full and page_k(10) == ten


@pytest.fixture(params=[5, 0], ids=["cap5", "cap0"])
def capped(request, gpt2, monkeypatch):
    """(the page built under a cap, the cap)."""
    monkeypatch.setenv("EXPLORER_MAX_LOGPROBS", str(request.param))
    return make_page([gpt2]), request.param


def score(p, text=TEXT, k=20):
    return list(
        p.tabs["score"].score(GPT2, text, metric="logprob", thresholds_text=T, k=k, progress=lambda *a, **kw: None)
    )[-1]


def test_score_generate_and_chat_ask_at_most_the_cap(capped):
    p, cap = capped
    v = p.inspector
    out = score(p)
    r = out[v.result][0]
    assert r.prompt_k == cap and r.rows.top_ids.shape[1] == cap and r.scored[1:].all()
    assert listed(out[v.detail]) == [cap] and blob_k(out[v.heatmap]) == cap
    assert "<dt>rank</dt>" in out[v.detail] and "<dt>logprob</dt>" in out[v.detail]  # the token's own numbers
    gen = list(p.tabs["generate"].continue_prompt(GPT2, "Once upon", opts("rank")))[-1]
    g = gen[v.result][0]
    assert g.output_k == cap and g.prompt_k == cap and g.n > g.n_prompt
    assert blob_k(gen[v.heatmap]) == cap and listed(v.detail_of([g], 2, 20)[v.detail]) == [cap]  # a prompt token
    assert all(n <= cap + 1 for n in listed(gen[v.detail]))  # a generated one, raw beside processed (+ the actual)
    chat = list(p.tabs["chat"].reply(GPT2, [], "Be brief.", "Hi", opts("logprob")))[-1]
    c = chat[v.result][0]
    assert c.output_k == cap and c.n > c.n_prompt and blob_k(chat[v.heatmap]) == cap


def test_the_k_slider_tops_out_at_the_cap(capped):
    p, cap = capped
    k = p.inspector.k
    if cap:
        assert (k.minimum, k.maximum, k.value) == (1, cap, cap) and k.interactive is not False
    else:  # fixed at 0, saying why
        assert k.value == 0 and k.interactive is False and "--max-logprobs 0" in k.info
    r = score(p)[p.inspector.result][0]
    for asked in (1, 3, 20, 500):  # whatever the slider (or an API call) sends
        assert listed(p.inspector.detail_of([r], 2, asked)[p.inspector.detail]) == [min(asked, cap)]
    if not cap:
        assert "No alternatives recorded" in p.inspector.detail_of([r], 2, 10)[p.inspector.detail]


def test_the_view_tabs_run_under_the_cap(capped):
    p, cap = capped
    r = score(p)[p.inspector.result][0]
    lens = p.tabs["lens"]
    g = lens.run(GPT2, TEXT, [], "rank")[lens.state]
    assert g.top_ids.shape[-1] == min(10, cap)
    cmp = p.tabs["compare"]
    for mode, a, b in [("Two models, one text", "", ""), ("One model, two prompts", "Say:", "Write:")]:
        c = cmp.compare(
            mode=mode, name_a=GPT2, name_b=GPT2, text=TEXT, prompt_a=a, prompt_b=b, colour="Jensen-Shannon"
        )[cmp.state]
        assert c.a.rows.top_ids.shape[1] == c.b.rows.top_ids.shape[1] == min(10, cap)
    assert "fox" in p.tabs["lookup"].run([r], " fox")[p.tabs["lookup"].notes]
    assert p.tabs["words"].show([r], "probability")[p.tabs["words"].word] == 0
    w = p.tabs["whatif"]
    assert w.run([r], 3, temperature=0.7, top_k=5, top_p=0.9, min_p=0.0, repetition_penalty=1.0, top_n=15, cache=None)[
        w.summary
    ]


def test_branch_under_the_cap(capped):
    p, cap = capped
    b = p.tabs["branch"]
    r = list(p.tabs["generate"].continue_prompt(GPT2, "Once upon", opts("rank")))[-1][p.inspector.result][0]
    at = r.n_prompt + 1
    picked = b.pick_position([r], at)
    alts = [x for _, x in picked[b.alts].choices]
    assert len(alts) == cap
    if not cap:
        assert "--max-logprobs 0" in picked[b.node_md]
        return
    tree = b.branch(
        GPT2,
        [r],
        tree=None,
        prefixes=None,
        node=-1,
        at=at,
        alts=alts[1:2],
        source="the settings that made the text",
        **CONTROLS,
    )[b.tree]
    assert tree.k == cap and len(tree.leaves()) == 2


def test_a_link_made_under_a_cap_of_zero_opens(monkeypatch, gpt2):
    monkeypatch.setenv("EXPLORER_MAX_LOGPROBS", "0")
    p = make_page([gpt2])
    r = score(p)[p.inspector.result][0]
    k = p.inspector.k.value  # 0: the fixed slider
    code = p.share.copy_link(page_values(p, [[r], View(), 1, "logprob", T, k, TEXT, False, "eos", "", "", []]))[
        p.share.code
    ]
    assert code and decode(code).base.k == 1


def test_the_cap_is_read_when_a_request_runs(monkeypatch, gpt2):
    """A page built before the cap was set (its modules imported before --max-logprobs is parsed) still obeys it."""
    monkeypatch.delenv("EXPLORER_MAX_LOGPROBS", raising=False)
    p = make_page([gpt2])
    assert p.inspector.k.maximum == 20
    monkeypatch.setenv("EXPLORER_MAX_LOGPROBS", "3")
    out = score(p, k=20)
    assert out[p.inspector.result][0].prompt_k == 3 and listed(out[p.inspector.detail]) == [3]
