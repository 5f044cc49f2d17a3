"""The Python API (explorer.load -> LM): its numbers equal the CLI's and a plain-torch computation; its tables,
JSON shapes and self-contained HTML; and its refusals of bad input."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
import torch

import explorer
from explorer.cli import main
from explorer.errors import ExplorerError
from explorer.export import FORMATS, dumps, export
from explorer.notebook.page import data_of
from explorer.static import read as static
from tests.helpers.reference import ref_logprobs

TEXT = "The quick brown fox jumps over the lazy dog."
ATOL = 1e-6


@pytest.fixture(scope="module")
def lm(gpt2_dir):
    return explorer.load(gpt2_dir, device="cpu")


@pytest.fixture(scope="module")
def ref_model(gpt2_dir):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(gpt2_dir).eval()


def cli(capsys, *args: str) -> dict | str:
    """`logprob-explorer ARGS` in process: its body (JSON parsed, or text)."""
    assert main(list(args)) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    try:
        return json.loads(out)
    except json.JSONDecodeError:
        return out


def reference(ref_model, ids: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, torch.Tensor]:
    """(logprob, rank, entropy) of ids[1:] from log_softmax + gather on the full logits, and the rows (T-1, V)."""
    lp = ref_logprobs(ref_model, ids)  # (T-1, V)
    actual = lp.gather(1, torch.tensor(ids[1:])[:, None])[:, 0]  # (T-1,)
    rank = (lp >= actual[:, None]).sum(-1)
    entropy = -(lp.exp() * lp).nan_to_num(0.0).sum(-1)
    return actual.numpy(), rank.numpy(), entropy.numpy(), lp


# ---- the numbers: the CLI's, and an independent computation ------------------------------------------------------
def test_score_equals_cli_and_reference(lm, ref_model, gpt2_dir, capsys):
    s = lm.score(TEXT, k=5, context_start=True)
    body = cli(capsys, "score", "--model", gpt2_dir, "--device", "cpu", "--text", TEXT, "--logprobs", "5",
               "--context-start", "<|endoftext|>", "--format", "native")  # fmt: skip
    c = explorer.TokenScores.from_dict(body)
    assert s.context_start == 1 and s.token_ids.tolist() == c.token_ids.tolist()
    np.testing.assert_allclose(s.logprobs, c.logprobs, atol=ATOL, equal_nan=True)
    np.testing.assert_allclose(s.entropy, c.entropy, atol=ATOL, equal_nan=True)
    assert s.ranks.tolist() == c.ranks.tolist() and s.top_ids.tolist() == c.top_ids.tolist()
    lp, rank, ent, rows = reference(ref_model, s.token_ids.tolist())
    np.testing.assert_allclose(s.logprobs[1:], lp, atol=ATOL)
    np.testing.assert_allclose(s.entropy[1:], ent, atol=1e-5)  # a sum over the vocabulary, float32
    assert s.ranks[1:].tolist() == rank.tolist()
    top = torch.topk(rows, 5, dim=-1)
    assert s.top_ids[1:].tolist() == top.indices.tolist()
    np.testing.assert_allclose(s.top_logprobs[1:], top.values.numpy(), atol=ATOL)


def test_score_of_ids_and_the_full_vocabulary(lm, ref_model):
    ids = lm.engine.encode(TEXT)
    s = lm.score(ids, k=-1)
    assert s.token_ids.tolist() == ids and np.isnan(s.logprobs[0])
    _, _, _, rows = reference(ref_model, ids)
    np.testing.assert_allclose(s.full_logprobs[1:], rows.numpy(), atol=ATOL)


def test_greedy_generate_equals_cli_and_reference(lm, ref_model, gpt2_dir, capsys):
    g = lm.generate("The capital of France", max_tokens=8, temperature=0, logprobs=3)
    body = cli(capsys, "generate", "--model", gpt2_dir, "--device", "cpu", "--prompt", "The capital of France",
               "--max-tokens", "8", "--temperature", "0", "--logprobs", "3", "--format", "native")  # fmt: skip
    c = explorer.TokenScores.from_dict(body)
    assert g.token_ids.tolist() == c.token_ids.tolist() and g.n > g.n_prompt
    np.testing.assert_allclose(g.logprobs, c.logprobs, atol=ATOL, equal_nan=True)
    lp, rank, _, rows = reference(ref_model, g.token_ids.tolist())
    out = slice(g.n_prompt, g.n)
    ref_out = slice(g.n_prompt - 1, g.n - 1)
    np.testing.assert_allclose(g.logprobs[out], lp[ref_out], atol=ATOL)
    assert rank[ref_out].tolist() == [1] * (g.n - g.n_prompt)  # greedy: each token the argmax
    assert g.token_ids[out].tolist() == rows[ref_out].argmax(-1).tolist()


def test_words_equal_cli_and_reference(lm, ref_model, gpt2_dir, capsys):
    text = "The horse raced past the barn fell."
    w = lm.words(text, context_start=True)
    body = cli(capsys, "words", "--model", gpt2_dir, "--device", "cpu", "--text", text,
               "--context-start", "<|endoftext|>")  # fmt: skip
    assert w.to_dict().keys() == body.keys()
    rows_close(w.to_dict()["words"], body["words"])
    lp, *_ = reference(ref_model, w.scores.token_ids.tolist())
    for row in w.rows():
        tokens = w.words.tokens(row["word"] + w.lead)  # `word` counts the text's words; the document start is one
        assert row["token_ids"] == w.scores.token_ids[tokens.start : tokens.stop].tolist()
        assert row["logprob_sum"] == pytest.approx(float(lp[tokens.start - 1 : tokens.stop - 1].sum()), abs=1e-5)
    frame = w.to_pandas()
    assert frame["text"].tolist() == [r["text"] for r in body["words"]]
    np.testing.assert_allclose(frame["logprob_corrected"], [r["logprob_corrected"] for r in body["words"]], atol=ATOL)


def rows_close(a: list[dict], b: list[dict]) -> None:
    """Rows with the same keys and values, floats within ATOL."""
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.keys() == y.keys()
        for k in x:
            assert x[k] == (pytest.approx(y[k], abs=ATOL) if isinstance(y[k], float) else y[k]), k


def test_score_many_equals_cli_and_reference(lm, ref_model, gpt2_dir, capsys, tmp_path):
    texts = ["The quick brown fox.", "def add(a, b):", "", "Paris is big."]
    b = lm.score_many(texts)
    f = tmp_path / "texts.jsonl"
    f.write_text("".join(json.dumps(t) + "\n" for t in texts), encoding="utf-8")
    body = cli(capsys, "batch", "--model", gpt2_dir, "--device", "cpu", str(f))
    rows = [r.to_dict() for r in b.rows]
    assert [r["text"] for r in rows] == texts and bool(rows[2]["error"]) and not rows[0]["error"]
    for mine, theirs in zip(rows, body["rows"]):
        assert mine["tokens"] == theirs["tokens"] and bool(mine["error"]) == bool(theirs["error"])
        for k in ("total_logprob", "mean_logprob", "perplexity", "min_k"):
            assert mine[k] == pytest.approx(theirs[k], abs=ATOL)
    for t, row in zip(texts, rows):
        if t:
            lp, *_ = reference(ref_model, lm.engine.encode(t))
            assert row["total_logprob"] == pytest.approx(float(lp.astype(np.float64).sum()), abs=1e-5)
    frame = b.to_pandas()
    assert len(frame) == 4 and frame["total_logprob"].tolist()[0] == pytest.approx(rows[0]["total_logprob"])


# ---- the result's faces ---------------------------------------------------------------------------------------------
def test_to_pandas_has_one_row_per_token(lm):
    s = lm.score("The capital of France is Paris.", k=3, context_start=True)
    df = s.to_pandas()
    assert list(df.columns) == ["token", "token_id", "logprob", "prob", "rank", "entropy", "surprisal_bits", "part",
                                "top_k"]  # fmt: skip
    assert len(df) == s.n and "".join(df["token"]) == s.text and df["token_id"].tolist() == s.token_ids.tolist()
    np.testing.assert_array_equal(df["logprob"].to_numpy(), s.logprobs.astype(np.float64))
    np.testing.assert_allclose(df["prob"], np.exp(s.logprobs.astype(np.float64)), rtol=1e-6)
    assert df["rank"].isna().tolist() == (~s.scored).tolist() and df["rank"][1:].tolist() == s.ranks[1:].tolist()
    assert df["part"].tolist()[:2] == ["document start", "prompt"]
    assert df["top_k"][0] == [] and [e["token_id"] for e in df["top_k"][1]] == s.top_ids[1].tolist()
    assert [e["logprob"] for e in df["top_k"][2]] == pytest.approx(s.top_logprobs[2].tolist())


def test_to_json_is_each_export_shape(lm):
    s = lm.score("Hello there", k=2)
    g = lm.generate("Hello", max_tokens=3, temperature=0, logprobs=2)
    for fmt, f in FORMATS.items():
        if not f.needs_generation:
            assert stable(s.to_json(fmt)) == stable(dumps(export(fmt, s)))
        assert stable(g.to_json(fmt)) == stable(dumps(export(fmt, g)))
    assert stable(s.to_json("vllm"))["choices"][0]["prompt_logprobs"][1]  # the check compares real bodies
    with pytest.raises(ExplorerError, match="use one of vllm, openai-completion, openai-chat"):
        s.to_json("csv")
    with pytest.raises(ExplorerError, match="describes generated tokens"):
        s.to_json("openai-chat")
    assert s.to_csv().splitlines()[0].startswith("pos,part,token,id,probability,logprob")


def stable(text: str) -> dict:
    """A JSON body without the fields that differ between two calls (a fresh id, the time)."""
    body = json.loads(text)
    for key in ("id", "created", "request_id"):
        body.pop(key, None)
    return body


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text of each <script>."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.scripts: list[tuple[dict, str]] = []
        self._in: dict | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in = dict(attrs)

    def handle_data(self, data):
        if self._in is not None:
            self.scripts.append((self._in, data))

    def handle_endtag(self, tag):
        if tag == "script":
            self._in = None


def external(tags: list[tuple[str, dict]]) -> list[str]:
    """Attributes that would fetch something: src / href / srcset / action / data / poster off this page."""
    out = []
    for tag, attrs in tags:
        for k in ("src", "href", "srcset", "action", "data", "poster"):
            v = (attrs.get(k) or "").strip().lower()
            if v and not v.startswith(("#", "data:")):
                out.append(f"<{tag} {k}={v!r}>")
        if tag == "link" or (tag == "meta" and attrs.get("http-equiv", "").lower() == "refresh"):
            out.append(f"<{tag}>")
    return out


def test_html_is_self_contained_and_holds_the_data(lm, tmp_path):
    s = lm.score("<b>bold</b> & the fox", k=3, context_start=True)
    page = s.to_html()
    p = Tags()
    p.feed(page)
    assert external(p.tags) == []
    assert external([("img", {"src": "https://cdn.example/x.png"}), ("link", {})]), "the check must see these"
    assert not any(x in page.lower() for x in ("@import", "url(http", "//cdn", "fetch(", "xmlhttprequest"))
    data = [(attrs, body) for attrs, body in p.scripts if attrs.get("id") == "logprob-data"]
    assert len(data) == 1 and data[0][0]["type"] == "application/json"
    assert json.loads(data[0][1]) == export("native", s) == data_of(page)
    assert "<b>bold</b>" not in page  # the text is escaped, in the chips and in the JSON
    chips = [a for t, a in p.tags if t == "span" and "data-pos" in a]
    assert len(chips) == s.n
    assert static("heatmap.js") in page and static("page.css") in page  # the page's own script and CSS, read now
    assert "Content-Security-Policy" in page and page.startswith("<!doctype html>")
    out = s.save_html(tmp_path / "s.html")
    assert Path(out).read_text(encoding="utf-8").count('id="logprob-data"') == 1
    view = s._repr_html_()
    assert 'id="logprob-data"' in view and "<html" not in view and "data-pos" in view
    assert s.to_html(metric="rank") != page
    with pytest.raises(ExplorerError, match="use one of logprob, rank"):
        s.to_html(metric="colour")


def test_compare_answers_and_why(lm):
    c = lm.compare(lm, "The quick brown fox.", k=2)
    df = c.to_pandas()
    assert len(df) == c.m and np.nanmax(np.abs(df["delta_logprob"])) == 0.0 and np.nanmax(df["js"]) < 1e-6
    a = lm.answers("The capital of France is", [" Paris", [" Rome", " rome"]])
    fa = a.to_pandas()
    assert fa["answer"].tolist() == [" Paris", " Rome"] and fa["normalised"].sum() == pytest.approx(1.0)
    np.testing.assert_allclose(fa["logprob"], a.logprobs)
    w = lm.why("The quick brown fox jumps", position=-1)
    fw = w.to_pandas()
    np.testing.assert_array_equal(fw["value"], w.values)
    assert len(fw) == w.n and w.pos == lm.score("The quick brown fox jumps", k=0).n - 1


# ---- bad input: one clear message --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda lm: lm.score(""), "`text` is empty"),
        (lambda lm: lm.score("x", k=21), "must be at most 20"),
        (lambda lm: lm.score("x", k=-2), "must be from 0 to 20"),
        (lambda lm: lm.score("x", context_start="<|nope|>"), "Unknown context start"),
        (lambda lm: lm.score("x", context_start="\u00b2"), "Unknown context start"),  # a digit, not ASCII
        (lambda lm: lm.score([5, 10**9]), "not an id of"),
        (lambda lm: lm.score([5, 6], context_start=True), "put the start token's id first"),
        (lambda lm: lm.generate("Hi", temperature=-1), "temperature"),
        (lambda lm: lm.generate("Hi", colour=1), "Unknown sampler setting 'colour'"),
        (lambda lm: lm.generate(""), "`prompt` is empty"),
        (lambda lm: lm.score_many("one text"), "pass a list of texts"),
        (lambda lm: lm.score_many([]), "`texts` is empty"),
        (lambda lm: lm.why("The fox", position=0), "`position` 0 is outside the text"),
    ],
)
def test_bad_input_says_what_to_change(lm, call, needle):
    with pytest.raises(ExplorerError, match=needle.replace("(", r"\(").replace("|", r"\|")):
        call(lm)


def test_bad_load_says_what_to_change(tmp_path):
    with pytest.raises(ExplorerError, match=r"Unknown engine 'onnx': use auto, torch or llama\.cpp"):
        explorer.load("gpt2", engine="onnx")
    with pytest.raises(ExplorerError, match="There is no model at"):
        explorer.load(str(tmp_path / "missing"))
    with pytest.raises(ExplorerError, match=r"has no config\.json"):
        explorer.load(str(tmp_path))  # a folder, but no model in it
    with pytest.raises(ExplorerError, match="`model` must be"):
        explorer.load("  ")


def test_import_explorer_loads_neither_torch_nor_gradio():
    code = "import sys, explorer; print(explorer.load.__module__, 'torch' in sys.modules, 'gradio' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["explorer.notebook.lm", "False", "False"]


# ---- hidden states: the API's code path, as an array and as the CLI's .npz --------------------------------------
@torch.inference_mode()
def test_hidden_states_equal_transformers_output_hidden_states(lm, ref_model):
    h = lm.hidden_states(TEXT, layers=[0, 1, -1, "final_norm"])
    ids = lm.engine.encode(TEXT)
    hf = ref_model(torch.tensor([ids]), output_hidden_states=True).hidden_states  # L + 1 = 3 entries, (1, T, H)
    assert h.values.shape == (len(ids), 4, 32) and h.values.dtype == np.float32
    assert h.layers == [0, 1, 2, "final_norm"] and h.token_ids.tolist() == ids
    assert h.hook_names == ["blocks.0.hook_resid_pre", "blocks.0.hook_resid_post", "blocks.1.hook_resid_post",
                            "ln_final.hook_normalized"]  # fmt: skip
    np.testing.assert_allclose(h.values[:, 0], hf[0][0].numpy(), atol=1e-5, rtol=0)
    np.testing.assert_allclose(h.values[:, 1], hf[1][0].numpy(), atol=1e-5, rtol=0)
    np.testing.assert_allclose(h.values[:, 3], hf[2][0].numpy(), atol=1e-5, rtol=0)  # HF's last: after the norm
    normed = ref_model.transformer.ln_f(torch.from_numpy(h.values[:, 2].copy())).numpy()
    np.testing.assert_allclose(normed, hf[2][0].numpy(), atol=1e-5, rtol=0)  # layer L: the norm's input
    every = lm.hidden_states(ids, positions=(1, 3))
    assert every.layers == [0, 1, 2, "final_norm"] and every.positions.tolist() == [1, 2]
    np.testing.assert_array_equal(every.values, h.values[1:3])
    started = lm.hidden_states(TEXT, layers=[0], context_start=True)
    assert started.token_ids.tolist()[1:] == ids and len(started.token_ids) == len(ids) + 1


def test_hidden_states_cli_npz_equals_the_api(lm, gpt2_dir, tmp_path, capsys):
    from explorer.api.handlers import completion_body
    from explorer.api.schemas import CompletionRequest, parse
    from explorer.rules.sampler import Limits

    out = tmp_path / "states.npz"
    assert main(["score", "--model", gpt2_dir, "--device", "cpu", "--text", TEXT,
                 "--hidden-states", "0,1,-1,final_norm", "--out", str(out)]) == 0, capsys.readouterr().err  # fmt: skip
    got = np.load(out)
    ids = lm.engine.encode(TEXT)
    req = parse(CompletionRequest, {"prompt": ids, "max_tokens": 0, "echo": True,
                                    "return_hidden_states": {"layers": [0, 1, -1, "final_norm"]}})  # fmt: skip
    api = completion_body(lm.engine, req, Limits())["choices"][0]["hidden_states"]
    want = np.frombuffer(base64.b64decode(api["data"]), "<f4").reshape(api["shape"])
    np.testing.assert_array_equal(got["states"], want)
    assert got["layers"].tolist() == ["0", "1", "2", "final_norm"] and got["hook_names"].tolist() == api["hook_names"]
    assert got["token_ids"].tolist() == ids == api["token_ids"] and got["positions"].tolist() == api["positions"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--hidden-states", "0,x"], "like 0,6,-1,final_norm"),
        (["--hidden-states", "0", "--out", "s.json"], "add --out states.npz"),
        (["--hidden-states", "0"], "add --out states.npz"),
        (["--hidden-states", "7", "--out", "s.npz"], "this model has layers 0..2"),
    ],
)
def test_hidden_states_cli_refusals(gpt2_dir, tmp_path, capsys, monkeypatch, args, needle):
    monkeypatch.chdir(tmp_path)
    assert main(["score", "--model", gpt2_dir, "--device", "cpu", "--text", "fox", *args]) == 2
    assert needle in capsys.readouterr().err and not (tmp_path / "s.npz").exists()


def test_hidden_states_refusals(lm, tiny_gguf):
    with pytest.raises(ExplorerError, match=r"has 5: this model has layers 0\.\.2"):
        lm.hidden_states("fox", layers=[5])
    with pytest.raises(ExplorerError, match=r"`positions` must be"):
        lm.hidden_states("fox", positions=(3, 1))
    with pytest.raises(ExplorerError, match=r"llama\.cpp.*--engine torch"):
        explorer.LM(tiny_gguf).hidden_states("fox")
