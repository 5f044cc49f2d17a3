"""The web app's handlers called directly on tiny models (no browser), and the renderers' output."""

from __future__ import annotations

import html
import math
import pathlib
import re

import gradio as gr
import numpy as np
import pytest

from explorer.engine import generate, score_text
from explorer.render.heatmap import METRICS, bins, color_classes, heatmap_html
from explorer.render.text import visible
from explorer.rules.sampler import SamplerSettings
from tests.helpers.page import (  # noqa: F401 - ui and v are fixtures
    GPT2,
    LLAMA,
    T,
    blob_of,
    chat,
    gen,
    heat,
    load,
    make_page,
    score,
    ui,
    v,
)
from tests.helpers.reference import ref_logprobs

LOOK = {"metric": "logprob", "thresholds_text": T, "k": 5}  # the inspector's look, by name as the page passes it


def test_score_handler_outputs(ui, v, gpt2):
    out = score(ui, "The quick brown fox")
    assert set(out) == set(v.outputs) - set(v.downloads.outputs)  # a full result fills every view
    r = out[v.result][0]
    assert r.n == len(gpt2.encode("The quick brown fox")) and r.model == GPT2
    h = heat(out, v)
    assert h.count("data-pos=") == r.n and 'class="t u' in h  # position 0 is unscored
    data = blob_of(h)  # the page's one data blob: every token's numbers for the hover card and span sums
    assert data["n"] == r.n and data["lp"][0] is None and data["rid"]
    np.testing.assert_allclose(data["lp"][1:], r.logprobs[1:], atol=1e-6)
    assert data["rk"] == r.ranks.tolist() and all(len(t) <= 5 for t in data["ti"])
    assert "perplexity" in out[v.summary] and len(out[v.table]["data"]) == r.n
    np.testing.assert_allclose([row[4] for row in out[v.table]["data"][1:]], r.logprobs[1:], rtol=1e-6)
    assert out[v.selected] == 1 and len(out[v.plot].data) == 3
    assert 'data-pos="1"' in out[v.detail] and "data-jump=" in out[v.surprising]


def test_long_text_streams_block_by_block(ui, v, long_gpt2):
    """A text of several blocks: the heatmap (with a progress bar) after each block, then every view."""
    from explorer.ui.tabs.score import UI_PREFILL

    big = make_page([long_gpt2])
    text = "fox jumps over the lazy dog. " * 120
    n = len(long_gpt2.encode(text))
    outs = list(big.tabs["score"].score(long_gpt2.name, text, **LOOK, progress=lambda *a, **kw: None))
    assert len(outs) == math.ceil((n - 1) / UI_PREFILL)  # one update per block, the last one complete
    first, bv = outs[0], big.inspector
    assert set(first) == {bv.heatmap, *bv.downloads.outputs}  # the heatmap, and the old downloads cleared
    assert "<progress" in first[bv.heatmap] and first[bv.heatmap].count("data-pos=") == n
    assert outs[-1][bv.result][0].scored[1:].all()


def test_stop_closes_the_scoring_at_the_next_block(long_gpt2, monkeypatch):
    """Stop (Gradio cancels the generator): no block is computed once the handler is not resumed."""
    big = make_page([long_gpt2])
    calls = []
    body = long_gpt2.body
    monkeypatch.setattr(long_gpt2, "body", lambda *a, **kw: calls.append(1) or body(*a, **kw))
    run = big.tabs["score"].score(
        long_gpt2.name, "fox jumps over the lazy dog. " * 200, **LOOK, progress=lambda *a, **kw: None
    )
    next(run)
    seen = len(calls)
    run.close()  # what a Stop click does
    assert len(calls) == seen == 1


def test_escaping_and_visible_whitespace(ui, v):
    text = "<img src=x onerror=alert(1)> ${alert(2)} `x`\nnext  line"
    h = heat(score(ui, text, metric="rank"), v)
    assert "<img" not in h and "${" not in h and "`" not in h
    raw = h[h.index('<div class="lx-data" hidden>') :]
    assert re.fullmatch(
        r'<div class="lx-data" hidden>[^<>&$`]*</div>', raw
    )  # no token text can open markup in the blob
    chips = h[h.index('<div class="lx"') : h.index('<div class="lx-data"')]
    shown = html.unescape(re.sub(r"<br>|<wbr>", "", re.sub(r"<span[^>]*>|</span>|</?div[^>]*>", "", chips)))
    assert shown == visible(text)
    assert "↵<br>" in h


def test_html_is_small_per_token(ui, v, gpt2):
    """Chips carry only their position and colour; with the page's data blob (top-5 a token) still < 200 bytes a token."""
    r = score_text(gpt2, "fox jumps over the lazy dog. " * 4, k=5)
    assert len(heatmap_html(r, "logprob").encode()) / r.n < 60
    whole = heat(score(ui, "fox jumps over the lazy dog. " * 4), v)
    assert len(whole.encode()) / r.n < 200


@pytest.mark.parametrize("metric", list(METRICS))
def test_every_metric_colours(gpt2, metric):
    r = score_text(gpt2, "The quick brown fox jumps", k=1)
    cls = color_classes(r, metric)
    assert cls[0] == "u" and all(re.fullmatch(r"c[0-7]", c) for c in cls[1:])


def fake(probs, ranks):
    """A hand-made result: tokens with these probabilities and ranks (position 0 unscored)."""
    from explorer.results.scores import TokenScores

    n = len(probs) + 1
    lp = np.array([np.nan, *np.log(probs)], np.float32)
    return TokenScores(
        model="m",
        token_ids=np.arange(n),
        token_bytes=[b"a"] * n,
        n_prompt=n,
        logprobs=lp,
        ranks=np.array([0, *ranks]),
        entropy=np.ones(n, np.float32),
        top_ids=np.zeros((n, 0), np.int64),
        top_logprobs=np.zeros((n, 0), np.float32),
        pieces={},
        vocab_size=49152,
    )


def test_default_scale_puts_a_top_guess_in_the_good_half():
    """The model's own top guess, even at 15%, is in the good (blue) half; only unlikely tokens are warm."""
    r = fake([0.9, 0.3, 0.15, 0.04, 0.005, 1e-6], [1, 1, 1, 1, 30, 9000])
    b = bins(r, "logprob")
    assert (b[1:5] >= 4).all() and (b[5:] < 4).all()
    assert bins(r, "logprob")[1] > bins(r, "logprob")[3] > bins(r, "logprob")[6]  # ordered
    assert bins(r, "probability")[3] < 4  # the linear scale would have painted that top guess warm
    assert (bins(r, "rank")[1:5] == 7).all()


def test_legend_says_what_colours_mean_in_words():
    from explorer.render.heatmap import legend_html

    text = html.unescape(re.sub(r"<[^>]+>", " ", legend_html("logprob")))
    assert "expected" in text and "surprising" in text and "≥ 50%" in text and "< 0.001%" in text
    assert "top 1" in html.unescape(legend_html("rank", (1, 10, 100, 1000)))


def test_numbers_for_people():
    from explorer.render.numbers import logprob, pct

    assert [pct(x) for x in (0.421, 0.0314, 0.0042, 0.00013, 1.3e-6, 0.0, float("nan"))] == [
        "42.1%",
        "3.14%",
        "0.42%",
        "0.013%",
        "1.3e-6",
        "0%",
        "—",
    ]
    assert logprob(-0.012345) == "-0.0123" and logprob(-math.inf) == "-inf"


def test_detail_marks_actual_and_others(gpt2):
    from explorer.render.detail import detail_html

    r = score_text(gpt2, "The quick brown fox jumps over the lazy dog", k=20)
    pos = int(np.argmax(r.ranks))  # the least expected token: outside the top-k
    d = detail_html(r, pos, 3)
    assert "◀ actual (outside this list)" in d and "(others)" in d and d.count('class="act"') == 1
    rest = 1 - sum(math.exp(x) for x in r.top_logprobs[pos, :3]) - float(r.probs[pos])
    assert (
        re.search(r"\(others\)</td><td class=\"pb\"><span class=\"bar\" style=\"width:([0-9.]+)%", d).group(1)
        == f"{100 * rest:.1f}"
    )
    assert "bytes " in d and "raw</b> numbers" in d


def test_processed_detail_never_lists_a_filtered_token(ui, v):
    """top-k 2 in processed mode: only the two kept tokens are listed; (others) is nothing, not 0% at -17."""
    out = gen(ui, "The lazy", top_k=2, temperature=0.8, k=10)[-1]
    r = out[v.result][0]
    for pos in range(r.n_prompt, r.n):
        d = v.detail_of([r], pos, 10, out[v.view])[v.detail]
        after = d[d.index("After the sampler") :]
        assert after.count("<tr class") + after.count("<tr><td>") <= 2 + 1 and "-inf" not in d
        assert "no other token was kept" in after and "✂ cut" in d
    prompt = v.detail_of([r], 1, 5, out[v.view])[v.detail]
    assert "<b>raw</b> numbers" in prompt  # prompt numbers are raw, whatever the mode
    assert "processed numbers" in out[v.summary] and "prompt: raw" in out[v.summary]


def test_generate_streams_then_finishes(ui, v):
    outs = gen(ui, "The lazy")
    assert len(outs) >= 1 and all(v.heatmap in o and v.result not in o for o in outs[:-1])
    r = outs[-1][v.result][0]
    assert r.mode == "processed" and r.sampler["seed"] == 5 and r.prompt_k == 20
    assert r.scored[1:].all()
    again = gen(ui, "The lazy", mode="processed")[-1][v.result][0]
    assert again.token_ids.tolist() == r.token_ids.tolist()


def test_an_empty_seed_is_random_and_shown(ui, v):
    reuse = ui.tabs["generate"].reuse
    runs = [gen(ui, "The lazy", seed="", max_tokens=12, temperature=1.5)[-1] for _ in range(2)]
    seeds = [o[v.result][0].sampler["seed"] for o in runs]
    assert seeds[0] != seeds[1] and all(isinstance(s, int) for s in seeds)
    for o, s in zip(runs, seeds):
        assert f"seed {s}" in o[v.summary] and o[reuse].value == f"Reuse seed {s}"
    assert runs[0][v.result][0].token_ids.tolist() != runs[1][v.result][0].token_ids.tolist()
    replay = gen(ui, "The lazy", seed=str(seeds[0]), max_tokens=12, temperature=1.5)[-1][v.result][0]
    assert replay.token_ids.tolist() == runs[0][v.result][0].token_ids.tolist()


def test_chat_keeps_the_conversation_and_labels_roles(ui, v):
    tab = ui.tabs["chat"]
    first = chat(ui, "Be brief.", "Hi", max_tokens=4, temperature=0)[-1]
    history = first[tab.history]
    assert [m["role"] for m in history] == ["user", "assistant"] and first[tab.message] == ""
    second = chat(ui, "Be brief.", "Bye", history=history, max_tokens=4, temperature=0)[-1]
    r = second[v.result][0]
    assert r.prompt_text.count("<|user|>") == 2 and "<|assistant|>" + history[1]["content"] in r.prompt_text
    assert r.scored[1:].all()  # every turn is scored
    h = second[v.heatmap]
    assert [html.unescape(x) for x in re.findall(r'<span class="role[^"]*">([^<]+)<', h)] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "generated",
    ]
    assert h.count(' s"') + h.count(" s ") >= 5  # template markers drawn as markers


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda ui: score(ui, ""), "empty"),
        (lambda ui: score(ui, "hi there", thresholds="10, 1"), "increasing"),
        (lambda ui: score(ui, "fox jumps " * 200), "reads at most"),
        (lambda ui: score(ui, "hi there", from_start=True, start="<nope>"), "Unknown context start"),
        (lambda ui: gen(ui, "x", thresholds="1", temperature=-1), "temperature"),
        (lambda ui: gen(ui, "x", thresholds="1", top_p=0), "top_p"),
        (lambda ui: gen(ui, "x", seed="abc"), "seed must be a whole number"),
        (lambda ui: chat(ui, "", " "), "message is empty"),
        (lambda ui: ui.inspector.detail_of([], 0, 5), "Score a text"),
    ],
)
def test_bad_input_is_a_gr_error(ui, call, needle):
    with pytest.raises(gr.Error, match=needle):
        call(ui)


@pytest.mark.parametrize("bad", ["<img src=x onerror=alert(1)>", "1, <a href=//evil>x</a>"])
def test_error_messages_escape_what_was_typed(ui, bad):
    with pytest.raises(gr.Error) as err:
        score(ui, "hi there", thresholds=bad)
    msg = err.value.message
    assert "&lt;" in msg and "<" not in msg and html.unescape(msg).count(bad) == 1
    with pytest.raises(gr.Error) as err:  # restyle (thresholds submitted) goes through the same helper
        ui.inspector.restyle([], "rank", bad, 0)
    assert "&lt;" in err.value.message and "<" not in err.value.message


def test_model_ids_in_errors_are_escaped(gpt2):
    ui = make_page([gpt2], allow_hub=True)
    with pytest.raises(gr.Error) as err:
        load(ui, '<a href="//evil">x</a>')
    assert "not available" in err.value.message and "&lt;a href=" in err.value.message and "<a" not in err.value.message


def test_every_pop_up_goes_through_the_escaping_helper():
    ui_dir = pathlib.Path(__file__).parent.parent / "explorer" / "ui"
    raw = [
        str(p)
        for p in ui_dir.rglob("*.py")
        if re.search(r"gr\.(Error|Warning|Info)\(", p.read_text()) and p.name != "errors.py"
    ]
    assert raw == []


def test_loading_changes_only_that_session(ui, v, gpt2, llama):
    a = ui.picker.name.value  # every new session starts on the default
    b = load(ui, LLAMA)[ui.picker.name]  # session B loads the other model
    assert (a, b) == (GPT2, LLAMA)
    assert LLAMA in load(ui, LLAMA)[ui.picker.status]
    ra, rb = (
        score(ui, "The quick brown fox", name=a)[v.result][0],
        score(ui, "The quick brown fox", name=b)[v.result][0],
    )
    assert (ra.model, rb.model) == (GPT2, LLAMA) and ra.token_ids.tolist() != rb.token_ids.tolist()
    assert ui.picker.models.get() is gpt2 and ui.picker.models.get(LLAMA) is llama  # the default (/v1) is unchanged
    assert gen(ui, "The lazy", name=b)[-1][v.result][0].model == LLAMA


@pytest.mark.parametrize("allow_hub", [False, True])
def test_local_paths_are_not_available_and_say_nothing_about_them(gpt2, allow_hub, tmp_path):
    ui = make_page([gpt2], allow_hub=allow_hub)
    messages = set()
    for path in ["/etc", "../x", "/no/such/folder", str(tmp_path), "~/.cache", "./" + gpt2.name, "no-such/model"]:
        with pytest.raises(gr.Error) as err:
            load(ui, path)
        msg = html.unescape(err.value.message).replace(repr(path[:80]), "X")
        assert "not available" in msg and not re.search(r"exist|found|folder|directory|config\.json", msg)
        messages.add(msg)
    assert len(messages) == 1  # the same words whether or not the path is there
    assert ui.picker.models.get() is gpt2


def test_score_with_an_unavailable_model_name_is_a_message(ui):
    with pytest.raises(gr.Error, match="not available"):
        score(ui, "hi there", name="/etc")


def test_score_from_the_start_of_a_document(ui, v, gpt2, llama):
    out = score(ui, "The quick brown fox", from_start=True, start="<|endoftext|>")
    r = out[v.result][0]
    assert r.context_start == 1 and r.scored[1] and "<|endoftext|>" in html.unescape(out[v.summary])
    lp = ref_logprobs(gpt2.model, r.token_ids.tolist())
    assert abs(float(lp[0, r.token_ids[1]]) - r.logprobs[1]) < 1e-4  # the text's first token, now scored
    assert 'class="t u s' in out[v.heatmap]  # the start token is drawn as a marker
    assert score(ui, "The quick brown fox", name=LLAMA, from_start=True, start="eos")[v.result][0].context_start == 0


def test_start_menu_offers_the_models_special_tokens(gpt2, llama):
    from explorer.ui.tabs.score import start_menu

    m = start_menu(gpt2)
    assert m["value"] == "<|endoftext|>" and m["interactive"] and ("<|user|>", "<|user|>") in m["choices"]
    m = start_menu(llama)
    assert not m["interactive"] and "already scored" in m["info"]


def test_loading_a_model_updates_the_start_menu(gpt2, llama):
    ui = make_page([gpt2, llama])
    assert ui.tabs["score"].menu(LLAMA).interactive is False  # a BOS-adding tokenizer: nothing to choose
    assert ui.tabs["score"].menu(GPT2).value == "<|endoftext|>"


def test_one_token_texts_and_prompts(ui, v, gpt2):
    """A one-token text has one unscored position; a one-token prompt still generates with prompt scoring on."""
    assert len(gpt2.encode("T")) == 1
    r = score(ui, "T")[v.result][0]
    assert r.n == 1 and not r.scored.any()
    final = gen(ui, "T", score_prompt=True)[-1][v.result][0]
    assert final.n_prompt == 1 and final.n > 1 and not final.scored[0] and final.scored[1:].all()


def test_greedy_detail_says_nothing_is_drawn(ui, v, gpt2):
    greedy = generate(gpt2, gpt2.encode("The"), SamplerSettings(max_tokens=2, temperature=0, logprobs=20))[0]
    d = v.detail_of([greedy], greedy.n_prompt, 5)[v.detail]
    assert "Greedy decoding" in d and "◀ actual" in d
    assert "Raw: the model" not in d and d.count("<table") == 1  # nothing changed: one table, not two alike


def test_a_token_clicked_while_a_run_comes_in_is_a_note_not_an_error(ui, v):
    """Tokens stream in before the result exists: a click then says to wait, never "score a text first"."""
    click = next(f.fn for f in ui.demo.fns.values() if getattr(f.fn, "__name__", "") == "on_click")
    infos: list = []
    gr_info, gr.Info = gr.Info, lambda message, *a, **kw: infos.append(message)  # type: ignore[assignment]
    try:
        out = click([], 5, None, gr.EventData(None, {"pos": 2}))
    finally:
        gr.Info = gr_info  # type: ignore[assignment,misc]
    assert set(out) == {v.detail, v.selected} and all(isinstance(x, type(gr.skip())) for x in out.values())
    assert infos and "when the run finishes" in infos[0]
    r = score(ui, "The quick brown fox")[v.result][0]  # with a result, the click shows the token as before
    shown = click([r], 5, None, gr.EventData(None, {"pos": 2}))
    assert shown[v.selected] == 2 and 'data-pos="2"' in shown[v.detail]
