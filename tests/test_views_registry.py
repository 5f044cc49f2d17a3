"""The registered views (explorer/notebook/registry.py): every one has its page tab, link, download, LM method and
static-site page, all made from its record; and the Surprisal view's numbers against plain log_softmax + gather."""

from __future__ import annotations

import html
import inspect
import json
import math
from dataclasses import fields

import numpy as np
import pytest
import torch

import explorer
from explorer.cli import main
from explorer.errors import ExplorerError
from explorer.notebook.lm import LM
from explorer.notebook.page import data_of
from explorer.notebook.registry import VIEWS, by_id
from explorer.notebook.surprisal import surprisal
from explorer.notebook.view import Option
from explorer.ui.layout import LAYOUT, placed
from explorer.ui.links import LINKS, Base, ViewState, decode, encode, link_fields
from explorer.ui.tab_bar import Group
from explorer.ui.tabs.registered import RegisteredTab, link_field
from tests.helpers.page import path_of
from tests.helpers.reference import ref_logprobs
from tests.helpers.share import built, last, page_values, restore, shown_tab  # noqa: F401 - built is a fixture

TEXT = "The quick brown fox jumps over the lazy dog. The quick brown fox."
IDS = [view.id for view in VIEWS]


def test_the_registry_holds_the_new_view():
    assert "surprisal" in by_id() and len(set(IDS)) == len(IDS)


def _placed() -> dict[str, str]:
    """view id -> where LAYOUT puts its tab: a group's id, or "" for the top row."""
    out = {}
    for item in LAYOUT:
        for make in item.tabs if isinstance(item, Group) else (item,):
            view = getattr(make, "keywords", {}).get("view")
            if view is not None:
                out[view.id] = item.id if isinstance(item, Group) else ""
    return out


@pytest.mark.parametrize("view_id", IDS)
def test_every_registered_view_has_a_tab_a_link_a_method_and_a_file(view_id):
    view = by_id()[view_id]
    assert _placed()[view_id] == (view.group or "")  # its tab, in its group
    link = LINKS[view_id]  # its link: one field per option
    assert [f.name for f in fields(link)] == [link_field(view, o) for o in view.options]
    assert {link_field(view, o) for o in view.options} <= set(link_fields())
    method = getattr(LM, view.method)  # its Python method, its options as keywords with their defaults
    params = inspect.signature(method).parameters
    assert [p for p in params if p not in ("self", "text", "context_start")] == [o.name for o in view.options]
    assert all(params[o.name].default == o.default for o in view.options)
    assert view.title in (method.__doc__ or "")


def test_placed_puts_a_view_in_its_group_or_the_top_row():
    from dataclasses import replace

    v = by_id()["surprisal"]
    top = placed((Group("read", "Read", ()),), (replace(v, group=None),))
    assert len(top) == 2 and top[1].keywords["view"].group is None
    grouped = placed((Group("read", "Read", ()),), (v,))
    assert len(grouped) == 1 and grouped[0].tabs[0].keywords["view"] is v


def test_a_view_record_refuses_an_unknown_group_or_a_bad_id():
    from dataclasses import replace

    v = by_id()["surprisal"]
    with pytest.raises(ValueError, match="group"):
        replace(v, group="nowhere")
    with pytest.raises(ValueError, match="identifier"):
        replace(v, id="Sur prisal")


def test_options_say_what_they_take():
    o = Option("window", "w", 1, low=1, high=64)
    assert o.check(3) == 3 and o.check(3.0) == 3
    for bad in (0, 65, 2.5, "3", True, None):
        with pytest.raises(ExplorerError, match="window"):
            o.check(bad)
    with pytest.raises(ExplorerError, match="from 0 to inf"):
        Option("alpha", "a", 0.5, low=0).check(-1.0)
    c = Option("unit", "u", "bits", choices=("bits", "nats"))
    assert c.kind == "choice" and c.check("nats") == "nats"
    with pytest.raises(ExplorerError, match="bits, nats"):
        c.check("hartleys")


# ---- the Surprisal view's numbers ---------------------------------------------------------------------------------
def _moving_mean(values: list[float], window: int) -> list[float]:
    """A plain loop: the mean of the last `window` known values up to each one (NaN stays NaN)."""
    out, seen = [], []
    for x in values:
        if math.isnan(x):
            out.append(math.nan)
            continue
        seen.append(x)
        last_w = seen[-window:]
        out.append(sum(last_w) / len(last_w))
    return out


@pytest.mark.parametrize("window", [1, 4])
def test_surprisal_matches_log_softmax_and_gather(gpt2, window):
    lm = LM(gpt2)
    s = lm.surprisal(TEXT, window=window)
    ids = gpt2.encode(TEXT)
    lp = ref_logprobs(gpt2.model, ids)  # (T-1, V)
    ref_nats = lp.gather(-1, torch.tensor(ids[1:])[:, None])[:, 0].double().numpy()
    ref_bits = -ref_nats / math.log(2)
    assert math.isnan(s.bits[0]) and len(s.bits) == len(ids)
    np.testing.assert_allclose(s.bits[1:], ref_bits, atol=2e-4)
    np.testing.assert_allclose(s.smoothed, _moving_mean([math.nan, *ref_bits], window), atol=2e-4)
    assert s.mean_bits == pytest.approx(float(np.mean(ref_bits)), abs=1e-4)
    assert s.peak == 1 + int(np.argmax(ref_bits))


def test_the_method_takes_a_result_and_checks_its_options_before_the_model_runs(gpt2):
    lm = LM(gpt2)
    r = lm.score(TEXT, k=0)
    np.testing.assert_array_equal(lm.surprisal(r, window=3).smoothed, surprisal(r, 3).smoothed)
    with pytest.raises(ExplorerError, match=r"`window` \(=0\) must be from 1 to 64"):
        lm.surprisal(TEXT, window=0)
    with pytest.raises(ExplorerError, match="no option 'widow'"):
        lm.surprisal(TEXT, widow=3)
    with pytest.raises(ExplorerError, match="text"):
        lm.surprisal("")


def test_a_token_of_infinite_surprisal_stays_in_its_windows_and_writes_as_json_writes_it(gpt2):
    """A logprob of -inf (a session file's -9999.0): its own windows are infinite, the others keep their means,
    and the view's JSON and file follow the float rule (explorer/floats.py) instead of failing."""
    r = LM(gpt2).score(TEXT, k=0)
    r.logprobs[2] = -np.inf
    s = surprisal(r, 2)
    assert np.isinf(s.smoothed[2]) and np.isinf(s.smoothed[3])  # the windows that hold it
    assert np.isfinite(s.smoothed[1]) and np.isfinite(s.smoothed[4:]).all()  # the others do not
    view = by_id()["surprisal"]
    body = json.loads(view.json(s))
    assert body["tokens"][2]["logprob"] == -9999.0 and body["tokens"][2]["bits"] is None
    assert "surprisal" in view.page(s)


def test_the_file_holds_the_body_the_table_and_the_json(gpt2):
    s = LM(gpt2).surprisal(TEXT, window=2)
    page = s.to_html()
    data = data_of(page)
    assert data == json.loads(by_id()["surprisal"].json(s)) == json.loads(json.dumps(s.to_dict()))
    assert data["object"] == "surprisal" and data["window"] == 2 and data["tokens"][0]["bits"] is None
    assert data["tokens"][3]["bits"] == pytest.approx(float(s.bits[3]))
    assert "Content-Security-Policy" in page and "<svg" in page and "Moving mean over 2 tokens" in page
    assert f"{s.bits[3]:.4f}" in page  # the table, as text
    assert "<script>" not in page.replace('<script type="application/json" id="logprob-data">', "")


# ---- the page: its tab's handler, its download, its link ---------------------------------------------------------
def _result(p):
    out = p.tabs["score"].score("tiny-gpt2", TEXT, metric="logprob", thresholds_text="1, 10, 100, 1000", k=10)
    return list(out)[-1][p.inspector.result]


def test_the_tab_draws_the_view_and_its_download(built, gpt2):
    p = built[0]
    tab = p.tabs["surprisal"]
    assert isinstance(tab, RegisteredTab) and p.share.bar.home["surprisal"] == "read"
    result = _result(p)
    out = tab.run(result, window=3)
    s = surprisal(result[0], 3)
    assert out[tab.table].equals(by_id()["surprisal"].shown_table(s))
    assert out[tab.table]["bits"].tolist()[1:] == pytest.approx(s.bits[1:].tolist(), abs=1e-4)
    info = p.demo.get_api_info()["named_endpoints"]["/surprisal"]["parameters"]
    assert [x["parameter_name"] for x in info] == ["window"]  # the option by its name, for gradio_client
    assert "<svg" in out[tab.body] and "Moving mean over 3 tokens" in out[tab.body]
    path = path_of(out[tab.dl_html])
    assert path.endswith("-surprisal.view.html")
    with open(path, encoding="utf-8") as f:
        assert data_of(f.read()) == s.to_dict()
    with pytest.raises(Exception, match="Score a text or generate first"):
        tab.run([], window=3)
    with pytest.raises(Exception, match="must be from 1 to 64"):
        tab.run(result, window=99)


def test_its_link_round_trips_and_restores_the_view(built, gpt2):
    p, _, calls = built
    tab = p.tabs["surprisal"]
    result = _result(p)
    values = [result, None, 5, "logprob", "1, 10, 100, 1000", 10, TEXT, False, "eos", "", "", []]
    got = p.share.copy_link(page_values(p, values, current="surprisal", model="tiny-gpt2", components={
        tab.controls["window"]: 6.0}))  # fmt: skip
    v = decode(got[p.share.code])
    assert v.tab == "surprisal" and v.tool.surprisal_window == 6 and v.base.tab == "score" and v.source.text == TEXT
    outs = restore(built, encode(v))
    assert shown_tab(p, outs) == "surprisal" and calls == []
    assert last(outs, tab.controls["window"]) == 6
    assert last(outs, tab.table).equals(by_id()["surprisal"].shown_table(surprisal(result[0], 6)))


def test_a_bad_window_in_a_link_is_a_damaged_link():
    link = LINKS["surprisal"]
    good = ViewState(tab="surprisal", base=Base(tab="score"), tool=link(surprisal_window=9))
    assert decode(encode(good)).tool == link(surprisal_window=9)
    for bad in (0, 100, 2.5, "3"):
        state = {**good.to_dict(), "surprisal_window": bad}
        with pytest.raises(ExplorerError, match="surprisal_window"):
            ViewState.from_dict(state)
    assert ViewState.from_dict({"tab": "surprisal", "base": "score"}).tool == link()


# ---- the static site ----------------------------------------------------------------------------------------------
def test_the_site_writes_each_asked_view_beside_each_input(gpt2, tmp_path, capsys):
    r = LM(gpt2).score(TEXT, k=3)
    src = tmp_path / "fox.json"
    src.write_text(r.to_json(), encoding="utf-8")
    out = tmp_path / "site"
    assert main(["site", str(out), str(src), "--view", "all"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "fox.html", "fox.surprisal.html", "index.html"]
    page = (out / "fox.surprisal.html").read_text(encoding="utf-8")
    assert data_of(page) == surprisal(explorer.open(src)).to_dict()
    index = (out / "index.html").read_text(encoding="utf-8")
    assert f'<a href="{html.escape("fox.surprisal.html")}">Surprisal</a>' in index
    assert main(["site", str(tmp_path / "other"), str(src), "--view", "nope"]) == 2
    assert "no view 'nope'" in capsys.readouterr().err and not (tmp_path / "other").exists()
