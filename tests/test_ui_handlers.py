"""The web app's handlers called directly on a tiny model, and the renderers' output."""

from __future__ import annotations

import html
import json
import re

import gradio as gr
import numpy as np
import pytest

from explorer.engine import generate, score_text
from explorer.render.heatmap import METRICS, color_classes, heatmap_html
from explorer.render.tables import detail_table
from explorer.render.text import visible
from explorer.runtime import ModelHolder
from explorer.settings import SamplerSettings
from explorer.ui.handlers import Handlers


@pytest.fixture(scope="module")
def h(gpt2):
    holder = ModelHolder(gpt2.name)
    holder.set(gpt2)
    return Handlers(holder)


def test_score_handler_outputs(h, gpt2):
    out = h.score("The quick brown fox", "probability", "1, 10, 100, 1000", 5)
    state, heat, legend, summary, fig, hist, table, md, df, pos = out
    r = state[0]
    assert r.n == len(gpt2.encode("The quick brown fox"))
    assert heat.count("data-pos=") == r.n and 'class="t u"' in heat  # position 0 is unscored
    assert "perplexity" in summary and len(table) == r.n
    np.testing.assert_allclose(table["logprob"].to_numpy()[1:], r.logprobs[1:], rtol=1e-6)
    assert pos == 1 and len(fig.data) == 3


def test_escaping_and_visible_whitespace(h):
    text = '<img src=x onerror=alert(1)> ${alert(2)} `x`\nnext  line'
    state, heat, *_ = h.score(text, "rank", "1, 10, 100, 1000", 5)
    assert "<img" not in heat and "${" not in heat and "`" not in heat
    # the chips' text, unescaped, reads as the input with whitespace made visible
    shown = html.unescape(re.sub(r"<br>|<wbr>", "", re.sub(r"<span[^>]*>|</span>|</?div[^>]*>", "", heat)))
    assert shown == visible(text)
    assert "↵<br>" in heat


def test_html_is_small_per_token(gpt2):
    r = score_text(gpt2, "fox jumps over the lazy dog. " * 4, k=5)
    html = heatmap_html(r, "probability")
    assert len(html.encode()) / r.n < 200


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


def test_generate_streams_then_finishes(h):
    outs = list(h.generate("The lazy", 6, 0.9, 1.0, 0, 5, "", "processed: after", True, "rank", "1, 10, 100, 1000", 5))
    final = outs[-1]
    r = final[0][0]
    assert r.mode == "processed" and r.sampler["seed"] == 5 and r.prompt_k == 20
    assert r.scored[1:].all()  # the prompt was scored too
    again = list(h.generate("The lazy", 6, 0.9, 1.0, 0, 5, "", "processed", True, "rank", "1, 10, 100, 1000", 5))[-1][0][0]
    assert again.token_ids.tolist() == r.token_ids.tolist()


def test_chat_handler(h):
    r = list(h.chat("Be brief.", "Hi", 5, 0, 1.0, 0, None, "", "raw", False, "probability", "1, 10, 100, 1000", 5))[-1][0][0]
    assert "<|assistant|>" in r.prompt_text and r.output_k == 20


@pytest.mark.parametrize(("call", "needle"), [
    (lambda h: h.score("", "probability", "1, 10", 5), "empty"),
    (lambda h: h.score("hi there", "probability", "10, 1", 5), "increasing"),
    (lambda h: h.score("fox jumps " * 200, "probability", "1, 10", 5), "reads at most"),
    (lambda h: list(h.generate("x", 5, -1, 1, 0, None, "", "raw", False, "probability", "1", 5)), "temperature"),
    (lambda h: list(h.generate("x", 5, 1, 0, 0, None, "", "raw", False, "probability", "1", 5)), "top_p"),
    (lambda h: h.detail([], 0, 5), "Score a text"),
    (lambda h: h.download([], "vllm"), "Nothing to download"),
])
def test_bad_input_is_a_gr_error(h, call, needle):
    with pytest.raises(gr.Error, match=needle):
        call(h)


def test_unknown_model_keeps_the_old_one(h, gpt2):
    with pytest.raises(gr.Error, match="not found"):
        h.load_model("/nonexistent/model", progress=lambda *a, **k: None)
    assert h.holder.get() is gpt2


def test_download_is_the_exporter_output(h):
    from explorer.export import dumps, export

    state = h.score("The quick brown fox", "probability", "1, 10", 5)[0]
    for fmt in ("vllm", "openai-completion", "vllm-offline", "native"):
        text = open(h.download(state, fmt), encoding="utf-8").read()
        body = json.loads(text)
        assert text == dumps(body)  # written by the exporter's own serialiser, nothing added
        fresh = export(fmt, state)
        for key in ("id", "created"):  # fresh per response
            body.pop(key, None), fresh.pop(key, None)
        assert body == json.loads(dumps(fresh))
    assert open(h.download(state, "csv")).read().startswith("pos,part,token")
    with pytest.raises(gr.Error, match="generated tokens"):
        h.download(state, "openai-chat")
