"""The Why tab's handlers on tiny models (no browser): the views agree with the engine, files, errors, Stop."""

from __future__ import annotations

import json
import pathlib
import re
import time

import gradio as gr
import numpy as np
import pytest

from explorer.engine.analyses.attribution import attribute
from explorer.engine.passes import bounds
from explorer.errors import ExplorerError
from explorer.render.why import LOWERS, RAISES, why_html
from explorer.results.attribution import Attribution
from explorer.ui.tabs.why import BASELINE_LABELS, METHOD_LABELS, MODE_LABELS, contrast_of, run_beside
from tests.helpers.page import chat, gen, make_page, path_of, score
from tests.helpers.share import built, last, note_of, pack, page_values, restore, shown_tab, view  # noqa: F401 - `built`: fixture

TEXT = "The quick brown fox jumps over the lazy dog"


@pytest.fixture(scope="module")
def ui(gpt2, llama):
    return make_page([gpt2, llama])


def why(ui, state, pos, contrast="", method="occlusion", units="Tokens", detail=128, with_special=False, steps=16):
    tab = ui.tabs["why"]
    out = list(
        tab.run(state, pos, contrast=contrast, method=METHOD_LABELS[method], units=units, detail=detail,
                mode=MODE_LABELS["remove"], steps=steps, baseline=BASELINE_LABELS["neutral"],
                with_special=with_special, progress=lambda *a, **kw: None)
    )  # fmt: skip
    return tab, out[-1]


def test_why_shows_the_engines_numbers(ui, gpt2):
    res = score(ui, TEXT)
    state = res[ui.inspector.result]
    r = state[0]
    pos = r.n - 1
    alt = next(int(i) for i in r.top_ids[pos] if i != r.token_ids[pos])
    alt_text = gpt2.vocab[alt].decode("utf-8")
    tab, out = why(ui, state, pos, contrast=alt_text)
    a = out[tab.state]
    want = attribute(gpt2, r, pos, contrast=alt, detail=128)
    np.testing.assert_allclose(a.values, want.values, atol=1e-6)
    table = out[tab.table]
    top = a.ranked(len(table))
    assert table["text"].tolist() == [a.unit_text[u].replace(" ", "·") or "▯" for u in top]
    assert table["value"].tolist() == pytest.approx([round(float(a.values[u]), 5) for u in top])
    assert "rather than" in out[tab.summary] and f"{a.f:.4f}" in out[tab.summary]
    # the strongest unit's chip carries the strongest colour of its sign, and says its sign in words
    html_text = out[tab.text]
    u = top[0]
    cls = ("r3" if a.values[u] > 0 else "l3") if not a.special[u] else "m"
    chips = re.findall(r'<span class="t ([a-z0-9]*)" title="([^"]*)"', html_text)
    assert len(chips) == a.n + 1 and chips[u][0] == cls
    assert ("raises" if a.values[u] > 0 else "lowers") in chips[u][1]
    # the downloads hold the same numbers
    path = path_of(out[tab.dl_json])
    d = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    assert Attribution.from_dict(d).values.tolist() == pytest.approx(a.values.tolist())
    rows = pathlib.Path(path_of(out[tab.dl_csv])).read_text(encoding="utf-8").strip().split("\n")
    assert len(rows) == a.n + 1


def test_gradient_methods_and_attention_run_from_the_page(ui):
    state = score(ui, TEXT)[ui.inspector.result]
    for method in ("ig", "gxi", "attention"):
        tab, out = why(ui, state, 5, method=method)
        a = out[tab.state]
        assert a.method == method and a.n == 5
    assert "Completeness" in why(ui, state, 5, method="ig")[1][tab.summary]


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ({"state": []}, "Score a text"),
        ({"pos": None}, "Pick a token"),
        ({"pos": 0}, "position 0"),
        ({"contrast": " quick brown" * 40}, "tokens"),  # over 64 tokens (a few are a continuation)
        ({"detail": -3}, "detail"),
    ],
)
def test_bad_input_is_a_message(ui, args, match):
    state = score(ui, TEXT)[ui.inspector.result]
    kw = {"state": state, "pos": 4, **args}
    with pytest.raises(gr.Error, match=match):
        why(ui, kw.pop("state"), kw.pop("pos"), **kw)


def test_contrast_forms(ui, gpt2):
    """'' = none, #7 = that id, a text is the engine's to read: one token as before, several as a continuation."""
    assert contrast_of("") is None
    assert contrast_of("#7") == 7
    assert contrast_of(" the") == " the"
    state = score(ui, TEXT)[ui.inspector.result]
    r, pos = state[0], state[0].n - 1
    one = gpt2.tokenize(" the", add_special_tokens=False)
    tab, out = why(ui, state, pos, contrast=" the")
    assert len(one) == 1 and out[tab.state].contrast_ids.tolist() == one
    tab, out = why(ui, state, pos, contrast=" the lazy cat")  # several tokens: a continuation
    a = out[tab.state]
    want = attribute(gpt2, r, pos, contrast=" the lazy cat", detail=128)
    assert a.contrast_length > 1 and a.contrast_ids.tolist() == want.contrast_ids.tolist()
    np.testing.assert_allclose(a.values, want.values, atol=1e-6)
    assert "scored as a continuation" in out[tab.summary] and a.f == pytest.approx(want.f, abs=1e-6)


def test_stop_ends_the_work_at_its_next_batch():
    """Closing the iterator (what Stop does) makes `check` raise inside the work."""
    seen = {"checks": 0, "stopped": False}

    def slow(progress):
        for i in range(200):
            try:
                bounds.check()
            except ExplorerError:
                seen["stopped"] = True
                raise
            seen["checks"] += 1
            progress(i, 200)
            time.sleep(0.02)
        return "done"

    it = run_beside(slow)
    assert next(it) != "done"
    it.close()
    time.sleep(0.2)
    assert seen["stopped"] and seen["checks"] < 200


def test_colours_have_contrast_with_the_text():
    """Every chip colour against the dark chip text: WCAG contrast >= 4.5."""

    def lum(hex_):
        c = [int(hex_[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        c = [x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4 for x in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]

    for colour in RAISES + LOWERS:
        assert (lum(colour) + 0.05) / (lum("#111111") + 0.05) >= 4.5, colour


def test_template_tokens_are_markers_not_ranked(gpt2):
    ids = [gpt2.tokenizer.eos_token_id, *gpt2.encode(TEXT)]
    from explorer.engine.passes.scoring import score_ids

    r = score_ids(gpt2, ids, 5)
    a = attribute(gpt2, r, r.n - 1)
    assert a.special[0] and 0 not in a.ranked(a.n)
    assert 0 in a.ranked(a.n, with_special=True)
    assert why_html(a).count('class="t m"') == 1


# ---- links ----------------------------------------------------------------------------------------------
LINK = {"base": "score", "model": "tiny-gpt2", "text": TEXT, "selected": 5}


def test_a_why_link_round_trips_and_refuses_bad_fields():
    from explorer.ui.links import decode, encode
    from explorer.ui.tabs.why import WhyLink

    own = WhyLink(
        why_contrast=" the", why_method="ig", why_units="word", why_detail=5, why_steps=8, why_baseline="zero"
    )
    s = view("why", own, **{k: v for k, v in LINK.items() if k != "base"}, tab=LINK["base"])
    assert decode(encode(s)) == s
    for bad, match in [
        ({"tab": "why"}, "must carry the result"),
        ({**LINK, "tab": "why", "why_method": "shap"}, "why_method"),
        ({**LINK, "tab": "why", "why_detail": 5000}, "why_detail"),
        ({**LINK, "tab": "why", "why_steps": 1}, "why_steps"),
        ({**LINK, "tab": "why", "why_contrast": "x" * 500}, "why_contrast"),
    ]:
        with pytest.raises(ExplorerError, match=match):
            decode(pack(bad))


def test_a_why_link_restores_what_the_tab_showed(built):
    from explorer.ui.links import decode, encode

    p = built[0]
    t = p.tabs["why"]
    result = list(p.tabs["score"].score("tiny-gpt2", TEXT, metric="logprob", thresholds_text="1, 10, 100, 1000", k=10))[
        -1
    ][p.inspector.result]
    controls = [" the", METHOD_LABELS["occlusion"], "Words", 3, MODE_LABELS["replace"], 8, BASELINE_LABELS["zero"]]
    own = list(t.run(result, 5, progress=lambda *a, **kw: None, **dict(zip(t.options, controls))))[-1]
    values = [result, None, 5, "logprob", "1, 10, 100, 1000", 10, TEXT, False, "eos", "", "", []]
    tools = {c: None for c in p.share.copy_inputs}
    tools.update({p.share.current: "why", p.share.picker.name: "tiny-gpt2", **dict(zip(t.controls, controls))})
    v = decode(p.share.copy_link({**tools, **page_values(p, values)})[p.share.code])
    w = v.tool
    assert (v.tab, w.why_contrast, w.why_method, w.why_units, w.why_detail, w.why_mode) == (
        "why",
        " the",
        "occlusion",
        "word",
        3,
        "replace",
    )
    outs = restore(built, encode(v))
    assert "lx-note" not in note_of(p, outs[1:])
    assert shown_tab(p, outs) == "why" and last(outs, p.inspector.selected) == 5
    for c in (t.summary, t.text, t.legend):
        assert last(outs, c) == own[c], c
    assert last(outs, t.table).equals(own[t.table])
    np.testing.assert_allclose(last(outs, t.state).values, own[t.state].values)


def test_why_on_a_generation_and_a_chat(ui, gpt2):
    """A generated token (raw numbers) and a chat reply's token: the template's markers are not ranked."""
    g = gen(ui, "The quick brown")[-1][ui.inspector.result]
    r = g[0]
    tab, out = why(ui, g, r.n - 1)
    a = out[tab.state]
    np.testing.assert_allclose(a.values, attribute(gpt2, r, r.n - 1, detail=128).values, atol=1e-6)
    c = chat(ui, "Be brief.", "Hi there")[-1][ui.inspector.result]
    r = c[0]
    tab, out = why(ui, c, r.n - 1)
    a = out[tab.state]
    specials = [u for u in range(a.n) if a.special[u]]
    assert specials, "the chat template's markers are units of their own"
    assert not set(specials) & set(a.ranked(a.n)) and set(specials) <= set(a.ranked(a.n, with_special=True))
    assert out[tab.text].count('class="t m"') == len(specials)
    both = tab.rerank(a, True)[tab.table]
    assert len(both) >= len(out[tab.table])


def test_stop_says_so_and_progress_starts_with_the_total(gpt2):
    from explorer.ui.inspector import progress_html
    from explorer.ui.tabs.why import stopped

    assert stopped(progress_html(3, 9, "Attributing", "units")).startswith("Stopped")
    assert stopped("**Why “x”** ...") == "**Why “x”** ..."  # a finished result stays
    from explorer.engine.passes.scoring import score_text

    r = score_text(gpt2, TEXT, 5)
    for method, cached in (("occlusion", True), ("occlusion", False), ("ig", True)):
        calls: list[tuple[int, int]] = []
        attribute(
            gpt2, r, r.n - 1, method=method, cached=cached, steps=8, progress=lambda d, t, c=calls: c.append((d, t))
        )
        assert calls[0][0] == 0 and calls[0][1] == calls[-1][0] == calls[-1][1] > 1, calls


def test_whitespace_is_no_contrast_and_long_input_is_cut(ui, gpt2):
    assert contrast_of("   ") is None
    state = score(ui, TEXT)[ui.inspector.result]
    with pytest.raises(gr.Error) as err:
        why(ui, state, state[0].n - 1, contrast=" lazy dog" * 500)
    assert len(err.value.message) < 400 and "shorten it" in err.value.message
