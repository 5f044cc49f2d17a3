"""Links of the tabs beside the result (Compare, What-if, Look up, Words, Branch, Logit lens): round trips, hostile
values, fuzzing, and a restore that reruns through each tab's own handler and gives the same numbers as the tab did.
Also: a link restores the document-start menu and the model's status line; the session file follows the selection."""

from __future__ import annotations

import contextlib
import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.errors import ExplorerError
from explorer.ui.links import LINKS, TABS, decode, encode, link_fields
from explorer.ui.tabs.branch import BranchLink
from explorer.ui.tabs.compare import CompareLink
from explorer.ui.tabs.lens import LensLink
from explorer.ui.tabs.lookup import LookupLink
from explorer.ui.tabs.whatif import WhatIfLink
from explorer.ui.tabs.words import WordsLink
from tests.helpers.share import (
    JSON,
    SCRIPT,
    STATES,
    built,  # noqa: F401 - `built`: fixture
    last,
    note_of,
    pack,
    page_values,
    restore,
    shown_tab,
    view,
)  # fmt: skip

TOOLS = tuple(LINKS)

TEXT = "The quick brown fox jumps over the lazy dog."
SLIDERS = {"temperature": 0.5, "top_k": 20, "top_p": 0.9, "min_p": 0.05, "repetition_penalty": 1.3, "top_n": 8}
SCORED = {"tab": "score", "model": "tiny-gpt2", "text": TEXT, "selected": 5}
TOOL_STATES = {
    "compare": view("compare", CompareLink(model_b="tiny-gpt2", colour="js"), model="tiny-gpt2", text=TEXT, selected=3),
    "compare prompts": view("compare", CompareLink(compare_mode="prompts", prompt_a="Q: fox?", prompt_b=""),
                            model="tiny-gpt2", text=" A fox.", selected=1),
    "whatif": view("whatif", WhatIfLink(SLIDERS), **SCORED),
    "lookup": view("lookup", LookupLink(query=" the\n fox\n42"), **SCORED),
    "words": view("words", WordsLink(word_metric="surprisal", word=4), **SCORED),
    "branch": view("branch", BranchLink(), **SCORED),
    "lens": view("lens", LensLink(lens_metric="entropy", layer=1, lens_pos=3), **SCORED),
    "lens text": view("lens", LensLink(lens_text="Hello there, world", layer=2, lens_pos=1), model="tiny-gpt2"),
    "whatif after chat": view("whatif", WhatIfLink(), tab="chat", messages=(("user", "Hi"),),
                              sampler=STATES["chat"].source.sampler.to_link(), selected=6),
}  # fmt: skip


@pytest.mark.parametrize("name", list(TOOL_STATES))
def test_every_tool_tab_round_trips(name):
    s = TOOL_STATES[name]
    code = encode(s)
    assert code.startswith("2.") and len(code) < 400
    assert decode(code) == s
    texts = {f: SCRIPT for f in ("query", "lens_text", "prompt_a", "prompt_b") if hasattr(s.tool, f)}  # its own texts
    assert all(getattr(decode(encode(replace(s, tool=replace(s.tool, **texts)))).tool, f) == SCRIPT for f in texts)


def test_version_1_links_still_open():
    d = {**{k: x for cls in LINKS.values() for k, x in cls().to_dict().items()}, **STATES["score"].to_dict()}
    old = {k: d[k] for k in ("tab", "model", "text", "metric", "thresholds", "k", "sampler", "score_prompt",
                             "from_start", "start", "selected", "system", "messages")}  # fmt: skip
    assert decode(pack(old)) == STATES["score"]  # pack writes `1.`


TOOL_BAD = {
    "whatif without a result": {"tab": "whatif"},
    "lookup without a result": {"tab": "lookup", "query": "x"},
    "lens without text or result": {"tab": "lens", "lens_text": "  "},
    "base type": {"tab": "words", "base": 1},
    "base value": {"tab": "words", "base": "lens"},
    "compare mode": {"tab": "compare", "compare_mode": "three"},
    "colour": {"tab": "compare", "colour": SCRIPT},
    "model b type": {"tab": "compare", "model_b": ["x"]},
    "model b long": {"tab": "compare", "model_b": "m" * 201},
    "sliders type": {"tab": "whatif", "base": "score", "sliders": [1]},
    "slider range": {"tab": "whatif", "base": "score", "sliders": {"temperature": 9}},
    "slider nan": {"tab": "whatif", "base": "score", "sliders": {"top_p": float("nan")}},
    "slider bool": {"tab": "whatif", "base": "score", "sliders": {"min_p": True}},
    "slider whole": {"tab": "whatif", "base": "score", "sliders": {"top_n": 7.5}},
    "slider text": {"tab": "whatif", "base": "score", "sliders": {"temperature": "0.5"}},
    "query long": {"tab": "lookup", "base": "score", "query": "x" * 2001},
    "word metric": {"tab": "words", "base": "score", "word_metric": "rank"},
    "word": {"tab": "words", "base": "score", "word": -1},
    "lens metric": {"tab": "lens", "base": "score", "lens_metric": "surprisal"},
    "layer": {"tab": "lens", "base": "score", "layer": 10**6},
    "lens pos type": {"tab": "lens", "base": "score", "lens_pos": "3"},
    "chat base ends with assistant": {"tab": "whatif", "base": "chat", "messages": [["user", "x"], ["assistant", "y"]]},
}


@pytest.mark.parametrize("name", list(TOOL_BAD))
def test_hostile_tool_fields_are_one_clear_message(name):
    with pytest.raises(ExplorerError, match=r"^This link is damaged or cut short: "):
        decode(pack(TOOL_BAD[name]))


FIELDS = [k for k in link_fields() if k not in ("tab", "base")] + ["x"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(TOOLS), st.sampled_from(("", *TABS)), st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=8))
def test_fuzz_tool_links(built, tab, base, d):
    _p, models, calls = built
    code = pack({**d, "tab": tab, "base": base})
    with contextlib.suppress(ExplorerError):
        decode(code)
    restore(built, code)
    assert set(calls) <= set(models.names)


def test_a_compare_link_naming_a_model_not_served_is_refused_before_anything_loads(built):
    p, _models, calls = built
    calls.clear()
    outs = restore(built, encode(view("compare", CompareLink(model_b="/etc/passwd"), model="tiny-gpt2", text="hi")))
    assert "is not available here" in note_of(p, outs) and calls == [] and len(outs) == 1


# ---- a restore gives what the tab itself gave -------------------------------------------------------------------
def _base(p, gpt2):
    """The inspector's result after scoring TEXT, as the page would have it."""
    out = p.tabs["score"].score("tiny-gpt2", TEXT, metric="logprob", thresholds_text="1, 10, 100, 1000", k=10)
    return list(out)[-1][p.inspector.result]


def test_compare_restores_the_same_numbers_and_token(built):
    p, _, calls = built
    c = p.tabs["compare"]
    own = c.compare(
        mode="Two models, one text",
        name_a="tiny-gpt2",
        name_b="tiny-gpt2",
        text=TEXT,
        prompt_a="",
        prompt_b="",
        colour="Jensen-Shannon",
    )
    own = {**own, **c.select(own[c.state], 3)}
    values = [[], None, 0, "logprob", "1, 10, 100, 1000", 10, "", False, "eos", "", "", []]
    tool = _tool_values(p, compare=(own[c.state], own[c.made_from], "Jensen-Shannon", 3))
    v = decode(
        p.share.copy_link(page_values(p, values, current="compare", model="tiny-gpt2", components=tool))[p.share.code]
    )
    assert (
        v.tab == "compare"
        and v.tool.colour == "js"
        and v.base.selected == 3
        and v.base.tab == ""
        and v.tool.model_b == "tiny-gpt2"
    )
    outs = restore(built, encode(v))
    assert last(outs, c.detail) == own[c.detail] and last(outs, c.pos) == 3 and calls == []
    assert last(outs, c.summary) == own[c.summary] and 'data-pos="3"' in last(outs, c.heatmap)
    assert shown_tab(p, outs) == "compare" and last(outs, p.share.current) == "compare"


def test_a_compare_link_carries_what_the_shown_comparison_was_computed_from(built):
    """Boxes edited after comparing (text, prompts, even the mode) change neither the link nor what it restores."""
    p, _, calls = built
    c = p.tabs["compare"]
    own = c.compare(
        mode="One model, two prompts",
        name_a="tiny-gpt2",
        name_b="",
        text=" A fox.",
        prompt_a="Q: fox?",
        prompt_b="Q: dog?",
        colour="Jensen-Shannon",
    )
    own = {**own, **c.select(own[c.state], 1)}
    page = {comp: None for comp in p.share.copy_inputs}  # the page's values at *Copy link* time, boxes edited
    page.update({p.share.current: "compare", p.share.picker.name: "tiny-gpt2", c.state: own[c.state],
                 c.made_from: own[c.made_from], c.colour: "Jensen-Shannon", c.pos: 1, c.mode: "Two models, one text",
                 c.text: " A cat, edited.", c.prompt_a: "edited A", c.prompt_b: "edited B"})  # fmt: skip
    values = [[], None, 0, "logprob", "1, 10, 100, 1000", 10, "", False, "eos", "", "", []]
    v = decode(p.share.copy_link({**page, **page_values(p, values)})[p.share.code])
    assert (v.tool.compare_mode, v.tool.text, v.tool.prompt_a, v.tool.prompt_b, v.tool.model_b) == (
        "prompts",
        " A fox.",
        "Q: fox?",
        "Q: dog?",
        "",
    )
    outs = restore(built, encode(v))
    assert last(outs, c.summary) == own[c.summary] and last(outs, c.detail) == own[c.detail] and calls == []
    assert last(outs, c.heatmap) == c.restyle(own[c.state], "Jensen-Shannon", 1)[c.heatmap]
    assert last(outs, c.text) == " A fox." and last(outs, c.prompt_b) == "Q: dog?"


def _tool_values(p, compare=(None, None, "Δ logprob (B − A)", 0), sliders=None,
                 query="", words=("probability", 0), lens=(None, "", "rank", 0, 1), at=1) -> dict:  # fmt: skip
    """The tabs' controls' values by component."""
    s = sliders or {"temperature": 1.0, "top_k": 0, "top_p": 1.0, "min_p": 0.0, "repetition_penalty": 1.0, "top_n": 15}
    c, w, lu, wo, le, br = (p.tabs[t] for t in ("compare", "whatif", "lookup", "words", "lens", "branch"))
    comps = [c.state, c.made_from, c.colour, c.pos, *w.sliders, w.top_n, lu.queries, wo.metric, wo.word, le.state,
             le.text, le.metric, le.layer, le.pos, br.at]  # fmt: skip
    return dict(zip(comps, [*compare, *s.values(), query, *words, *lens, at]))


@pytest.mark.parametrize("tab", ["whatif", "lookup", "words", "branch", "lens"])
def test_a_tool_link_over_a_scored_text_restores_what_the_tab_showed(built, gpt2, tab):
    p, _, calls = built
    t = {"whatif": p.tabs["whatif"], "lookup": p.tabs["lookup"], "words": p.tabs["words"],
         "branch": p.tabs["branch"], "lens": p.tabs["lens"]}[tab]  # fmt: skip
    result = _base(p, gpt2)
    own, tool = {}, _tool_values(p)
    if tab == "whatif":
        own, tool = t.run(result, 5, **SLIDERS, cache=None), _tool_values(p, sliders=SLIDERS)
    elif tab == "lookup":
        own, tool = t.run(result, " the\n fox"), _tool_values(p, query=" the\n fox")
    elif tab == "words":
        own = {**t.show(result, "surprisal"), **t.select(result, 4), **t.restyle(result, "surprisal", 4)}
        tool = _tool_values(p, words=("surprisal", 4))
    elif tab == "branch":
        own, tool = t.pick_position(result, 5), _tool_values(p, at=5)
    else:
        g = t.run("tiny-gpt2", "", result, "entropy")[t.state]
        own, tool = t.show_cell(g, "entropy", 1, 3), _tool_values(p, lens=(g, "", "entropy", 1, 3))
    values = [result, None, 5, "logprob", "1, 10, 100, 1000", 10, TEXT, False, "eos", "", "", []]
    v = decode(p.share.copy_link(page_values(p, values, current=tab, model="tiny-gpt2", components=tool))[p.share.code])
    assert v.tab == tab and v.base.tab == "score" and v.source.text == TEXT and v.base.selected == 5
    outs = restore(built, encode(v))
    assert "lx-note" not in note_of(p, outs[1:]) and calls == []
    assert last(outs, p.inspector.selected) == 5 and shown_tab(p, outs) == tab
    for component, value in own.items():
        if component not in (getattr(t, "cache", None), getattr(t, "state", None)):
            assert _same(last(outs, component), value), component


def _same(a, b) -> bool:
    """Equal views: frames cell by cell, figures by their data, component updates by their choices and value."""
    if hasattr(a, "equals"):
        return bool(a.equals(b))
    if hasattr(a, "to_dict"):
        return a.to_dict() == b.to_dict()
    if hasattr(a, "choices"):
        return (a.choices, a.value) == (b.choices, b.value)
    return a == b


def test_a_link_restores_the_start_menu_and_the_model_status_line(built, gpt2):
    p = built[0]
    start = gpt2.special_tokens()[0]
    outs = restore(built, encode(view(model="tiny-gpt2", text="Hi there", from_start=True, start=start)))
    menu = last(outs, p.tabs["score"].start)
    assert menu.value == start and "tiny-gpt2" in last(outs, p.picker.status)
    assert last(outs, p.tabs["score"].from_start) is True


def test_the_session_file_carries_the_selection_now(built, gpt2):
    from explorer.ui.inspector import View

    p = built[0]
    result = _base(p, gpt2)
    view = View(rid="abc123")
    values = [result, view, 2, "logprob", "1, 10, 100, 1000", 10, TEXT, False, "eos", "", "", []]
    first = json.loads(Path(p.share.prepare_session(page_values(p, values)).value["path"]).read_text())
    values[2] = 6  # a new selection: the file is written again, its results taken from the run's kept JSON
    again = json.loads(Path(p.share.prepare_session(page_values(p, values)).value["path"]).read_text())
    assert first["view"]["selected"] == 2 and again["view"]["selected"] == 6
    assert again["results"] == first["results"] == json.loads(json.dumps([r.to_dict() for r in result]))
