"""Compare as a user meets it: the `compare` command, the Compare tab's handlers, and gradio_client."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys

import numpy as np
import pytest

from explorer.engine.analyses.compare import compare_ids
from explorer.render.text import visible


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "explorer", "compare", *args], capture_output=True, text=True, timeout=120
    )


def test_cli_two_models(gpt2_dir, gpt2_b_dir, gpt2, gpt2_b):
    text = "The quick brown fox"
    p = run_cli("--model", gpt2_dir, "--model-b", gpt2_b_dir, "--text", text, "--logprobs", "3")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    ids = gpt2.encode(text)
    assert d["token_ids"] == ids and d["a"]["prompt_k"] == 3 and d["positions"][0] is None
    ref = compare_ids(gpt2, gpt2_b, ids, k=3)
    np.testing.assert_allclose([x["js"] for x in d["positions"][1:]], ref.js[1:], atol=1e-6)
    np.testing.assert_allclose([x["delta_logprob"] for x in d["positions"][1:]], ref.delta_logprob[1:], atol=1e-6)
    p = run_cli("--model", gpt2_dir, "--model-b", gpt2_b_dir, "--ids", ",".join(map(str, ids)))
    assert p.returncode == 0, p.stderr
    np.testing.assert_allclose([x["kl_ab"] for x in json.loads(p.stdout)["positions"][1:]], ref.kl_ab[1:], atol=1e-6)


def test_cli_different_tokenizers_and_two_prompts(gpt2_dir, llama_dir, gpt2):
    p = run_cli("--model", gpt2_dir, "--model-b", llama_dir, "--text", "Grüße aus München!")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert (
        "spans" in d
        and "positions" not in d
        and "token_ids" not in d
        and d["spans"][-1]["end"] == len("Grüße aus München!")
    )
    p = run_cli("--model", gpt2_dir, "--model-b", llama_dir, "--ids", "1,2,3")
    assert p.returncode == 2 and "different tokenizers" in p.stderr.strip().splitlines()[-1]
    p = run_cli("--model", gpt2_dir, "--prompt-a", "The capital of France is", "--prompt-b", "fox", "--text", " Paris.")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    cont = gpt2.tokenizer(" Paris.", add_special_tokens=False)["input_ids"]
    assert (
        d["kind"] == "prompts" and d["token_ids"] == cont and len(d["positions"]) == len(cont) and all(d["positions"])
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--text", "hi"], "--model-b"),
        (["--model-b", "x", "--text", "hi", "--logprobs", "-1"], "logprobs"),
        (["--prompt-a", "x", "--text", "hi"], "both --prompt-a and --prompt-b"),
        (["--prompt-a", "x", "--prompt-b", "", "--model-b", "y", "--text", "hi"], "drop --model-b"),
        (["--prompt-a", "x", "--prompt-b", "", "--ids", "1,2"], "not --ids"),
        (["--model-b", "x", "--text", ""], "empty"),
        (["--model-b", "x", "--text", "hi", "--out", "/no/such/dir/o.json"], "does not exist"),
        (["--model-b", "x", "--text", "hi", "--backend", "http://127.0.0.1:9/v1"], "drop --backend"),
    ],
)
def test_cli_bad_input_is_one_line_before_loading(gpt2_dir, args, needle):
    p = run_cli("--model", gpt2_dir, *args)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("error:") and needle in last


# ---- the Compare tab's handlers -----------------------------------------------------------------
@pytest.fixture(scope="module")
def tab(gpt2, gpt2_b, llama):
    from explorer.ui.tabs.compare import CompareTab
    from tests.helpers.page import build_tab

    return build_tab(CompareTab, gpt2, gpt2_b, llama)


def test_compare_tab_shows_the_engine_numbers(tab, gpt2, gpt2_b):
    text = "The quick <b>brown</b> fox ${x}"
    out = tab.compare(
        mode="Two models, one text",
        name_a="tiny-gpt2",
        name_b="tiny-gpt2-b",
        text=text,
        prompt_a="",
        prompt_b="",
        colour="Jensen-Shannon",
    )
    assert set(out) == set(tab.outputs)
    c, ref = out[tab.state], compare_ids(gpt2, gpt2_b, gpt2.encode(text), k=10)
    np.testing.assert_allclose(c.js[1:], ref.js[1:], atol=1e-7)
    heat = out[tab.heatmap]
    assert heat.count("data-pos=") == c.m and "<b>" not in heat and "${" not in heat
    shown = html.unescape(re.sub(r"<br>|<wbr>", "", re.sub(r"<span[^>]*>|</span>|</?div[^>]*>", "", heat)))
    assert shown == visible(text)  # markup in the text is shown as text
    assert 'class="t u' in heat and " j" in heat  # position 0 unscored; JS colours
    assert out[tab.pos] == 1 and "KL(A‖B)" in out[tab.detail] and len(out[tab.table_a]) >= 10
    d = tab.select(c, 3)
    assert f"{ref.kl_ab[3]:.4f}" in d[tab.detail] and d[tab.pos] == 3
    assert d[tab.table_a]["logprob"].iloc[0] == pytest.approx(float(ref.a.top_logprobs[3, 0]), abs=1e-4)
    assert d[tab.table_b]["logprob"].iloc[0] == pytest.approx(float(ref.b.top_logprobs[3, 0]), abs=1e-4)
    assert " d" in tab.restyle(c, "Δ logprob (B − A)", 3)[tab.heatmap]


def test_compare_tab_spans_and_prompts(tab, gpt2, llama):
    out = tab.compare(
        mode="Two models, one text",
        name_a="tiny-gpt2",
        name_b="tiny-llama",
        text="Grüße 東京",
        prompt_a="",
        prompt_b="",
        colour="Jensen-Shannon",
    )
    c = out[tab.state]
    assert c.kind == "spans" and out[tab.heatmap].count("data-pos=") == len(c.spans)
    assert "shared vocabulary" in out[tab.summary] and " d" in out[tab.heatmap]  # JS needs one: coloured by Δ
    assert "Span 0" in tab.select(c, 0)[tab.detail]
    out = tab.compare(
        mode="One model, two prompts",
        name_a="tiny-gpt2",
        name_b="ignored",
        text=" Paris.",
        prompt_a="The capital of France is",
        prompt_b="fox",
        colour="Δ logprob (B − A)",
    )
    c = out[tab.state]
    assert (
        c.kind == "prompts" and c.token_ids.tolist() == gpt2.tokenizer(" Paris.", add_special_tokens=False)["input_ids"]
    )


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (
            lambda t: t.compare(
                mode="Two models, one text",
                name_a="tiny-gpt2",
                name_b="tiny-gpt2-b",
                text="  ",
                prompt_a="",
                prompt_b="",
                colour="Jensen-Shannon",
            ),
            "empty",
        ),
        (
            lambda t: t.compare(
                mode="Two models, one text",
                name_a="tiny-gpt2",
                name_b="<img src=x>",
                text="hi",
                prompt_a="",
                prompt_b="",
                colour="Jensen-Shannon",
            ),
            "not available",
        ),
        (
            lambda t: t.compare(
                mode="One model, two prompts",
                name_a="tiny-gpt2",
                name_b="",
                text="hi",
                prompt_a="",
                prompt_b="x",
                colour="Jensen-Shannon",
            ),
            "at least one token",
        ),
        (lambda t: t.select(None, 0), "Compare first"),
    ],
)
def test_compare_tab_errors(tab, call, needle):
    import gradio as gr

    with pytest.raises(gr.Error, match=needle) as err:
        call(tab)
    assert "<img" not in err.value.message


def test_views_are_callable_through_gradio_client(live, gpt2):
    from gradio_client import Client

    client = Client(live.url + "/", verbose=False)
    names = set(client.view_api(return_format="dict", print_info=False)["named_endpoints"])
    assert {"/compare", "/compare_detail", "/whatif", "/lookup", "/words", "/word_tokens"} <= names
    out = client.predict(
        "Two models, one text",
        "tiny-gpt2",
        "tiny-gpt2",
        "The quick brown fox",
        "",
        "",
        "Jensen-Shannon",
        api_name="/compare",
    )
    heat = next(o for o in out if isinstance(o, str) and 'id="' not in o and "data-pos=" in o)
    assert (
        heat.count("data-pos=") == len(gpt2.encode("The quick brown fox")) and "JS 0.0000" in heat
    )  # a model against itself


def test_the_curves_step_by_whole_positions(gpt2, gpt2_b):
    """Two tokens compared: the axis reads positions 0, 1 (plotly alone chose steps of 0.2)."""
    from explorer.render.compare import compare_curves

    for text in ("Hi", "The quick brown fox jumps over the lazy dog and the cat runs far away from it"):
        fig = compare_curves(compare_ids(gpt2, gpt2_b, gpt2.encode(text), k=5))
        assert fig.layout.xaxis.dtick >= 1 and float(fig.layout.xaxis.dtick).is_integer()
