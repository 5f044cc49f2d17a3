"""The web app's handlers called directly on tiny models (no browser), and the renderers' output."""

from __future__ import annotations

import html
import json
import pathlib
import re

import gradio as gr
import numpy as np
import pytest

from explorer.engine import generate, score_text
from explorer.errors import ExplorerError
from explorer.render.heatmap import METRICS, color_classes, heatmap_html
from explorer.render.tables import detail_table
from explorer.render.text import visible
from explorer.runtime import Models
from explorer.settings import SamplerSettings
from explorer.ui.layout import page

T = "1, 10, 100, 1000"
GPT2, LLAMA = "tiny-gpt2", "tiny-llama"
SAMPLER = dict(max_tokens=6, temperature=0.9, top_p=1.0, top_k=0, seed=5, stop="", mode="processed: after", score_prompt=True)


def no_hub(spec):
    """A loader that never reaches the network: every model not already loaded 'was not found'."""
    raise ExplorerError(f"Model {spec.source!r} was not found.", code="model_not_found")


def make_page(engines, allow_hub=False):
    models = Models([e.name for e in engines], allow_hub=allow_hub, loader=no_hub)
    for e in engines:
        models.add(e)
    return page(models)


@pytest.fixture(scope="module")
def ui(gpt2, llama):
    return make_page([gpt2, llama])


@pytest.fixture(scope="module")
def v(ui):
    return ui.inspector


def score(ui, text, thresholds=T, name=GPT2, metric="probability", k=5):
    return ui.tabs["ScoreTab"].score(name, text, metric, thresholds, k)


def gen(ui, prompt, name=GPT2, metric="rank", thresholds=T, k=5, **kw):
    s = {**SAMPLER, **kw}
    return list(ui.tabs["GenerateTab"].generate(name, prompt, *s.values(), metric, thresholds, k))


def chat(ui, system, message, name=GPT2, **kw):
    s = {**SAMPLER, **kw}
    return list(ui.tabs["ChatTab"].chat(name, system, message, *s.values(), "probability", T, 5))


def load(ui, choice):
    return ui.picker.load(choice, progress=lambda *a, **k: None)


def test_score_handler_outputs(ui, v, gpt2):
    out = score(ui, "The quick brown fox")
    assert set(out) == set(v.outputs)  # a full result fills every view
    r = out[v.result][0]
    assert r.n == len(gpt2.encode("The quick brown fox")) and r.model == GPT2
    heat, table = out[v.heatmap], out[v.table]
    assert heat.count("data-pos=") == r.n and 'class="t u"' in heat  # position 0 is unscored
    assert "perplexity" in out[v.summary] and len(table) == r.n
    np.testing.assert_allclose(table["logprob"].to_numpy()[1:], r.logprobs[1:], rtol=1e-6)
    assert out[v.selected] == 1 and len(out[v.plot].data) == 3


def test_escaping_and_visible_whitespace(ui, v):
    text = '<img src=x onerror=alert(1)> ${alert(2)} `x`\nnext  line'
    heat = score(ui, text, metric="rank")[v.heatmap]
    assert "<img" not in heat and "${" not in heat and "`" not in heat
    # the chips' text, unescaped, reads as the input with whitespace made visible
    shown = html.unescape(re.sub(r"<br>|<wbr>", "", re.sub(r"<span[^>]*>|</span>|</?div[^>]*>", "", heat)))
    assert shown == visible(text)
    assert "↵<br>" in heat


def test_html_is_small_per_token(gpt2):
    r = score_text(gpt2, "fox jumps over the lazy dog. " * 4, k=5)
    html_ = heatmap_html(r, "probability")
    assert len(html_.encode()) / r.n < 200


@pytest.mark.parametrize("metric", list(METRICS))
def test_every_metric_colours(gpt2, metric):
    r = score_text(gpt2, "The quick brown fox jumps", k=1)
    cls = color_classes(r, metric)
    assert cls[0] == "u" and all(re.fullmatch(r"[cg]\d", c) for c in cls[1:])


def test_detail_table_marks_actual_and_others(gpt2):
    r = score_text(gpt2, "The quick brown fox jumps over the lazy dog", k=20)
    pos = int(np.argmax(r.ranks))  # the least expected token: outside the top-k
    df = detail_table(r, pos, 3)
    assert df["actual"].str.contains("outside").any()
    assert df.iloc[-1]["token"] == "(others)"
    assert abs(df["probability %"].sum() - 100) < 0.01
    greedy = generate(gpt2, gpt2.encode("The"), SamplerSettings(max_tokens=2, temperature=0, logprobs=20))[0]
    df = detail_table(greedy, greedy.n_prompt, 5)  # a greedy token: rank 1
    assert df.iloc[0]["actual"] == "◀ actual" and (df["actual"] != "").sum() == 1


def test_generate_streams_then_finishes(ui, v):
    outs = gen(ui, "The lazy")
    assert len(outs) >= 2 and all(set(o) == {v.heatmap} for o in outs[:-1])  # partial updates: the heatmap only
    assert set(outs[-1]) == set(v.outputs)
    r = outs[-1][v.result][0]
    assert r.mode == "processed" and r.sampler["seed"] == 5 and r.prompt_k == 20
    assert r.scored[1:].all()  # the prompt was scored too
    again = gen(ui, "The lazy", mode="processed")[-1][v.result][0]
    assert again.token_ids.tolist() == r.token_ids.tolist()


def test_chat_handler(ui, v):
    r = chat(ui, "Be brief.", "Hi", max_tokens=5, temperature=0, seed=None, mode="raw", score_prompt=False)[-1][v.result][0]
    assert "<|assistant|>" in r.prompt_text and r.output_k == 20


@pytest.mark.parametrize(("call", "needle"), [
    (lambda ui: score(ui, ""), "empty"),
    (lambda ui: score(ui, "hi there", "10, 1"), "increasing"),
    (lambda ui: score(ui, "fox jumps " * 200, "1, 10"), "reads at most"),
    (lambda ui: gen(ui, "x", thresholds="1", temperature=-1), "temperature"),
    (lambda ui: gen(ui, "x", thresholds="1", top_p=0), "top_p"),
    (lambda ui: chat(ui, "", " "), "message is empty"),
    (lambda ui: ui.inspector.detail([], 0, 5), "Score a text"),
    (lambda ui: ui.inspector.download([], "vllm"), "Nothing to download"),
])
def test_bad_input_is_a_gr_error(ui, call, needle):
    with pytest.raises(gr.Error, match=needle):
        call(ui)


@pytest.mark.parametrize("bad", ["<img src=x onerror=alert(1)>", "1, <a href=//evil>x</a>"])
def test_error_messages_escape_what_was_typed(ui, bad):
    with pytest.raises(gr.Error) as err:
        score(ui, "hi there", bad)
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
    raw = [str(p) for p in ui_dir.rglob("*.py") if "gr.Error(" in p.read_text() and p.name != "errors.py"]
    assert raw == []


def test_loading_changes_only_that_session(ui, v, gpt2, llama):
    a = ui.picker.name.value  # every new session starts on the default
    b = load(ui, LLAMA)[ui.picker.name]  # session B loads the other model
    assert (a, b) == (GPT2, LLAMA)
    assert LLAMA in load(ui, LLAMA)[ui.picker.status]
    ra, rb = score(ui, "The quick brown fox", name=a)[v.result][0], score(ui, "The quick brown fox", name=b)[v.result][0]
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


def test_download_is_the_exporter_output(ui, v):
    from explorer.export import FORMATS, dumps, export, names

    assert v.fmt.choices and [c[0] for c in v.fmt.choices] == [*names(), "csv"]
    state = score(ui, "The quick brown fox")[v.result]
    for fmt in names():
        if FORMATS[fmt].needs_generation:
            continue
        text = open(ui.inspector.download(state, fmt)[v.dl_file], encoding="utf-8").read()
        body = json.loads(text)
        assert text == dumps(body)  # written by the exporter's own serialiser, nothing added
        fresh = export(fmt, state)
        for key in ("id", "created"):  # fresh per response
            body.pop(key, None), fresh.pop(key, None)
        assert body == json.loads(dumps(fresh))
    assert open(ui.inspector.download(state, "csv")[v.dl_file]).read().startswith("pos,part,token")
    with pytest.raises(gr.Error, match="openai-chat needs generated tokens"):
        ui.inspector.download(state, "openai-chat")
    generated = gen(ui, "The lazy")[-1][v.result]
    assert json.loads(open(ui.inspector.download(generated, "openai-chat")[v.dl_file]).read())["choices"]


def test_one_token_texts_and_prompts(ui, v, gpt2):
    """A one-token text has one unscored position; a one-token prompt still generates with prompt scoring on."""
    assert len(gpt2.encode("T")) == 1
    out = score(ui, "T")
    r = out[v.result][0]
    assert r.n == 1 and not r.scored.any()
    final = gen(ui, "T", score_prompt=True)[-1][v.result][0]
    assert final.n_prompt == 1 and final.n > 1 and not final.scored[0] and final.scored[1:].all()
