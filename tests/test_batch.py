"""Many texts at once: reading CSV / JSONL files, every row equal to scoring its text alone (and to a plain
log_softmax + gather on the model's logits), rows that cannot be scored keep their place, a stop keeps the rows done,
quiz lines, the files it writes, the CLI and the Batch tab's handlers."""

from __future__ import annotations

import csv
import io
import json
import math

import gradio as gr
import numpy as np
import pytest

from explorer.cli import main
from explorer.engine import score_text
from explorer.engine.analyses.answers import score_answers
from explorer.engine.analyses.batch import run_batch, score_batch
from explorer.engine.passes import bounds
from explorer.errors import ExplorerError
from explorer.render.batch import batch_markdown, batch_table
from explorer.results.batch import COLUMNS, MAX_TEXTS, BatchItem, read_batch
from explorer.results.stats import text_stats
from tests.helpers.page import GPT2, make_page, path_of
from tests.helpers.reference import ref_logprobs

TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "Hi",
    "Bonjour le monde! 東京は大きい。 👋🙂",
    "def f(n):\n    return n + 1\n",
    "a " * 40,
]


def items(texts=TEXTS) -> list[BatchItem]:
    return [BatchItem(i + 1, t, f"t{i}") for i, t in enumerate(texts)]


# ---- reading files ---------------------------------------------------------------------------------------------
def test_csv_with_text_and_id_columns_quotes_and_bom():
    raw = '\ufeffID,Text,other\n1,"a, b",x\n2,"two\nlines",y\n\n3,"say ""hi""",z\n'.encode()
    got = read_batch(raw, "texts.csv")
    assert [(i.line, i.id, i.text) for i in got] == [(2, "1", "a, b"), (3, "2", "two\nlines"), (6, "3", 'say "hi"')]


def test_jsonl_strings_objects_quiz_lines_and_a_json_array():
    lines = ['"plain"', '{"text": "obj", "id": 7}', "", '{"question": "Q?", "choices": [" a| A", " b"], "answer": 1}']
    got = read_batch("\n".join(lines).encode(), "x.jsonl")
    assert [(i.text, i.id) for i in got] == [("plain", ""), ("obj", "7"), ("Q?", "")]
    assert got[2].choices == [[" a", " A"], [" b"]] and got[2].answer == 1
    arr = read_batch(json.dumps(["one", {"text": "two"}]).encode(), "x.json")
    assert [i.text for i in arr] == ["one", "two"]
    sniffed = read_batch(b'{"text": "no ending"}\n', "upload")  # no file ending: JSON recognised by its first char
    assert sniffed[0].text == "no ending"


def test_semicolons_tabs_and_plain_text_files():
    assert [i.text for i in read_batch(b"id;text\n1;a, b\n2;c\n", "t.csv")] == ["a, b", "c"]
    assert [i.text for i in read_batch(b"text\tid\nx y\t1\n", "t.tsv")] == ["x y"]
    got = read_batch(b"one text\n\n  \ntwo, with a comma\n", "notes.txt")
    assert [(i.line, i.text) for i in got] == [(1, "one text"), (4, "two, with a comma")]


@pytest.mark.parametrize(
    "raw, name, words",
    [
        (b"name,body\nx,y\n", "t.csv", "call the column of texts `text`"),
        (b"name;body\nx;y\n", "t.csv", "semicolons or tabs"),
        (b"", "t.csv", "no texts"),
        (b"text\n\n  \n", "t.csv", "no texts"),
        (b'{"text": 1}\n', "t.jsonl", 'an object with "text"'),
        (b'{"text": "a"}\n{oops\n', "t.jsonl", "Line 2 is not JSON"),
        (b'[{"text": "a"},', "t.json", "not JSON"),
        (b"text\n\xff\xfe\n", "t.csv", "not UTF-8"),
        (b'{"question": "Q", "choices": [" a", " b"]}\n', "t.jsonl", 'no "answer"'),
    ],
)
def test_bad_files_say_what_to_change(raw, name, words):
    with pytest.raises(ExplorerError, match=words):
        read_batch(raw, name)


def test_too_many_texts_refused():
    raw = ("text\n" + "x\n" * (MAX_TEXTS + 1)).encode()
    with pytest.raises(ExplorerError, match=f"At most {MAX_TEXTS}"):
        read_batch(raw, "t.csv")


# ---- every row equals its text scored alone --------------------------------------------------------------------
@pytest.mark.parametrize("fixture", ["gpt2", "llama"])
@pytest.mark.parametrize("start", [None, "eos"])
def test_every_row_equals_the_text_scored_alone(request, fixture, start):
    engine = request.getfixturevalue(fixture)
    b = run_batch(engine, items(), start)
    assert len(b.rows) == len(TEXTS) and not b.stopped
    for row, text in zip(b.rows, TEXTS):
        alone = score_text(engine, text, 5, start=start)
        assert not row.error and row.text == text
        assert row.scored == int(alone.scored.sum())
        assert row.total_logprob == pytest.approx(alone.total_logprob, abs=1e-6)
        assert row.mean_logprob == pytest.approx(alone.mean_logprob, abs=1e-6)
        assert row.perplexity == pytest.approx(alone.perplexity, rel=1e-6)
        gltr, min_k, min_k_plus, fdg = text_stats(alone)
        assert row.stats["gltr_1_10"] == pytest.approx(gltr.value["1-10"])  # type: ignore[index]
        assert row.stats["min_k"] == pytest.approx(min_k.value, abs=1e-6)
        assert row.stats["min_k_plus"] == pytest.approx(min_k_plus.value, abs=1e-6)
        assert row.stats["fast_detectgpt"] == pytest.approx(fdg.value, abs=1e-6)
        # and against a plain log_softmax + gather on the model's logits
        ids = alone.token_ids.tolist()
        lp = ref_logprobs(engine.model, ids)
        want = sum(float(lp[i - 1, ids[i]]) for i in range(1, len(ids)))
        assert row.total_logprob == pytest.approx(want, abs=1e-4)


def test_rows_that_cannot_be_scored_keep_their_place(gpt2):
    texts = ["fine text", "   ", "word " * (gpt2.context + 10), "also fine"]
    b = run_batch(gpt2, items(texts))
    assert [r.index for r in b.rows] == [0, 1, 2, 3]
    assert not b.rows[0].error and not b.rows[3].error
    assert "The text is empty" in b.rows[1].error and "(line 2 of the file)" in b.rows[1].error
    assert "(line 3 of the file)" in b.rows[2].error and "shorten it" in b.rows[2].error
    assert b.rows[3].total_logprob == pytest.approx(score_text(gpt2, "also fine", 0).total_logprob, abs=1e-6)
    s = b.summary
    assert (s["scored"], s["failed"], s["done"]) == (2, 2, 4)
    ok = [b.rows[0], b.rows[3]]
    want = math.exp(-sum(r.total_logprob for r in ok) / sum(r.scored for r in ok))
    assert s["corpus_perplexity"] == pytest.approx(want)


def test_one_token_texts_say_why_they_have_no_figures_and_a_start_token_scores_them(gpt2):
    one = next(w for w in ("Hi", "a", "the") if len(gpt2.encode(w)) == 1)
    [row] = run_batch(gpt2, items([one])).rows
    assert row.scored == 0 and "one token" in row.error and "start of a document" in row.error
    [row] = run_batch(gpt2, items([one]), "eos").rows
    assert not row.error and row.scored == 1


def test_a_run_can_start_at_any_text_and_rows_keep_their_place(gpt2):
    rows = list(score_batch(gpt2, items(), first=3))
    assert [r.index for r in rows] == [3, 4] and rows[0].text == TEXTS[3]
    assert rows[0].total_logprob == pytest.approx(score_text(gpt2, TEXTS[3], 0).total_logprob, abs=1e-6)


def test_csv_cells_a_spreadsheet_would_run_start_with_a_quote(gpt2):
    texts = ['=HYPERLINK("http://x","click")', "+1+1", "-2", "@SUM(A1)", "plain = fine"]
    b = run_batch(gpt2, items(texts))
    table = list(csv.DictReader(io.StringIO(b.to_csv())))
    assert [r["text"] for r in table] == ["'" + t for t in texts[:4]] + ["plain = fine"]
    assert float(table[0]["total_logprob"]) < 0  # numbers are written as numbers
    assert [json.loads(x)["text"] for x in b.to_jsonl().splitlines()] == texts  # the JSONL keeps them exactly


def test_a_text_at_the_context_limit_and_hostile_text_are_scored_as_alone(gpt2):
    ids = gpt2.encode(" the" * (gpt2.context + 4))[: gpt2.context]
    full = gpt2.detokenize(ids)
    assert len(gpt2.encode(full)) == gpt2.context  # exactly at the limit
    hostile = '<img src=x onerror=alert(1)> {{7*7}} `$x` \x00\x1b[31m \u202e"; DROP TABLE --'
    b = run_batch(gpt2, items([full, hostile]))
    for row, text in zip(b.rows, [full, hostile]):
        assert not row.error and row.text == text
        assert row.total_logprob == pytest.approx(score_text(gpt2, text, 0).total_logprob, abs=1e-6)
    assert batch_table(b)["text"].tolist()[1] == " ".join(hostile.split())  # plain text: the page escapes it


def test_a_stop_keeps_the_rows_done(gpt2):
    asked = {"n": 0}

    def stop():
        asked["n"] += 1
        if asked["n"] > 3:  # the fourth text's check, or a check inside its scoring
            raise ExplorerError("Stopped.", code="cancelled")

    with bounds.within(bounds.Bound()), bounds.stopping(stop):
        b = run_batch(gpt2, items(TEXTS * 4))
    assert b.stopped == "Stopped." and 0 < len(b.rows) < len(TEXTS) * 4 and b.total == len(TEXTS) * 4
    for row in b.rows:
        assert row.total_logprob == pytest.approx(score_text(gpt2, row.text, 0).total_logprob, abs=1e-6)
    assert f"Stopped after {len(b.rows)} of {b.total}" in batch_markdown(b)


def test_a_mistake_that_is_not_a_stop_is_raised(gpt2):
    with pytest.raises(ExplorerError, match="k of Min-K%"):
        list(score_batch(gpt2, items(), k_percent=0))
    with pytest.raises(ExplorerError):
        list(score_batch(gpt2, items(), start="<no such token>"))


def test_quiz_lines_get_the_answer_set(gpt2):
    raw = "\n".join(
        json.dumps({"question": f"Is {i} even? Answer:", "choices": [" yes| Yes", " no"], "answer": i % 2})
        for i in range(4)
    ).encode()
    b = run_batch(gpt2, read_batch(raw, "q.jsonl"))
    for i, row in enumerate(b.rows):
        res = score_answers(gpt2, f"Is {i} even? Answer:", [[" yes", " Yes"], [" no"]], [" yes", " no"])
        assert row.quiz is not None
        assert row.quiz["predicted"] == [" yes", " no"][res.best]
        assert row.quiz["confidence"] == pytest.approx(float(res.normalised[res.best]))
        assert row.quiz["correct"] == (res.best == i % 2)
    assert b.summary["accuracy"] == pytest.approx(np.mean([r.quiz["correct"] for r in b.rows]))


def test_files_carry_every_row(gpt2):
    b = run_batch(gpt2, items(["one text", "", "two texts"]))
    table = list(csv.DictReader(io.StringIO(b.to_csv())))
    assert list(table[0]) == list(COLUMNS) and len(table) == 3
    assert float(table[0]["total_logprob"]) == pytest.approx(b.rows[0].total_logprob)
    assert table[1]["total_logprob"] == "" and table[1]["error"]
    lines = [json.loads(x) for x in b.to_jsonl().splitlines()]
    assert [x["text"] for x in lines] == ["one text", "", "two texts"] and lines[1]["perplexity"] is None
    d = json.loads(json.dumps(b.to_dict(), allow_nan=False))
    assert d["format"] == "logprob-explorer/batch" and d["summary"]["failed"] == 1 and len(d["rows"]) == 3


@pytest.mark.slow
def test_200_texts_on_the_default_model_with_progress_and_stop(smollm, tmp_path):
    subjects = ["The cat", "A teacher", "My neighbour", "The river", "This model", "Our team", "The old man", "A bird"]
    verbs = ["sat on", "looked at", "wrote about", "ran past", "thought of"]
    objects = ["the mat.", "a long letter.", "the city of Paris.", "its own reflection.", "the quiet morning."]
    texts = [f"{subjects[i % 8]} {verbs[i % 5]} {objects[(i // 5) % 5]} ({i})" for i in range(200)]
    path = tmp_path / "texts.csv"
    with open(path, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([["text"], *([t] for t in texts)])
    read = read_batch(path.read_bytes(), path.name)
    assert [i.text for i in read] == texts
    seen: list[tuple[int, int]] = []
    b = run_batch(smollm, read, "eos", progress=lambda d, n: seen.append((d, n)))
    assert seen == [(d, 200) for d in range(201)] and len(b.rows) == 200 and not b.stopped
    for row, text in zip(b.rows, texts):  # every row equal to scoring it alone
        alone = score_text(smollm, text, 0, start="eos")
        assert not row.error and row.scored == int(alone.scored.sum())
        assert row.total_logprob == pytest.approx(alone.total_logprob, abs=1e-5)
        assert row.stats["fast_detectgpt"] == pytest.approx(text_stats(alone)[3].value, abs=1e-5)
    # cancellable: a stop after 50 texts keeps those 50, equal to the full run's
    checks = {"n": 0}

    def stop():
        checks["n"] += 1
        if seen_stop[-1][0] >= 50:
            raise ExplorerError("Stopped.", code="cancelled")

    seen_stop: list[tuple[int, int]] = [(0, 200)]
    with bounds.within(bounds.Bound()), bounds.stopping(stop):
        part = run_batch(smollm, read, "eos", progress=lambda d, n: seen_stop.append((d, n)))
    assert len(part.rows) == 50 and part.stopped == "Stopped." and part.total == 200
    assert [r.total_logprob for r in part.rows] == [r.total_logprob for r in b.rows[:50]]


# ---- the CLI -----------------------------------------------------------------------------------------------------
def test_cli_batch(gpt2_dir, tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("id,text\na,Hello there\nb,General Kenobi\n", encoding="utf-8")
    assert main(["batch", str(path), "--model", str(gpt2_dir), "--device", "cpu"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in body["rows"]] == ["a", "b"]
    assert main(["batch", str(path), "--model", str(gpt2_dir), "--device", "cpu", "--format", "csv"]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("row,line,id,text,") and "batch: 2/2 texts" in out.err
    assert main(["batch", str(tmp_path / "missing.csv"), "--model", str(gpt2_dir)]) == 2
    assert "give a CSV or JSONL file that exists" in capsys.readouterr().err
    bad = tmp_path / "bad.csv"
    bad.write_text("body\nx\n", encoding="utf-8")
    assert main(["batch", str(bad), "--model", str(gpt2_dir)]) == 2
    assert "`text`" in capsys.readouterr().err


def test_cli_ctrl_c_writes_the_rows_done_and_exits_130(gpt2_dir, tmp_path, capsys, monkeypatch):
    import explorer.cli.batch as cli_batch

    path = tmp_path / "t.txt"
    path.write_text("\n".join(f"text number {i}" for i in range(6)), encoding="utf-8")
    real = cli_batch._Progress.__call__

    def interrupted(self, done, total):
        real(self, done, total)
        if done == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(cli_batch._Progress, "__call__", interrupted)
    out = tmp_path / "out.jsonl"
    assert main(["batch", str(path), "--model", str(gpt2_dir), "--format", "jsonl", "--out", str(out)]) == 130
    assert [json.loads(x)["row"] for x in out.read_text(encoding="utf-8").splitlines()] == [1, 2]
    err = capsys.readouterr().err
    assert "Interrupted after 2 of 6 texts" in err and "exit status 130" in err


# ---- the Batch tab's handlers ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ui(gpt2, llama):
    return make_page([gpt2, llama])


def _last(gen) -> dict:
    return list(gen)[-1]


def test_tab_scores_the_file_and_offers_both_files(ui, gpt2, tmp_path):
    tab = ui.tabs["batch"]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps({"text": t}) for t in TEXTS), encoding="utf-8")
    out = _last(tab.run(GPT2, str(path), False, progress=lambda *a, **k: None))
    table, b = out[tab.table], out[tab.state]
    assert len(table) == len(TEXTS) and table["#"].tolist() == list(range(1, len(TEXTS) + 1))
    want = [round(score_text(gpt2, t, 0).mean_logprob, 4) for t in TEXTS]
    assert table["mean logprob"].tolist() == pytest.approx(want, abs=1e-4)
    assert f"{len(TEXTS)} of {len(TEXTS)} texts scored" in out[tab.summary]
    csv_path = path_of(out[tab.dl_csv])
    with open(csv_path, encoding="utf-8") as f:
        assert f.read() == b.to_csv()
    from explorer.notebook.views import batch_page

    with open(path_of(out[tab.dl_html]), encoding="utf-8") as f:  # the view as one HTML file
        assert f.read() == batch_page(b)
    # a row opens its text in the Score tab
    evt = gr.SelectData(None, {"index": [2, 1], "value": "x", "row_value": table.iloc[2].tolist()})
    text, from_start, _, _, current = tab.pick(b, evt)
    assert text == TEXTS[2] and not from_start and current == "score"


def test_tab_bad_input_and_stop(ui, tmp_path):
    tab = ui.tabs["batch"]
    with pytest.raises(gr.Error, match="Upload a file first"):
        _last(tab.run(GPT2, None, False, progress=lambda *a, **k: None))
    bad = tmp_path / "t.csv"
    bad.write_text("body\nx\n", encoding="utf-8")
    with pytest.raises(gr.Error, match="`text`"):
        _last(tab.run(GPT2, str(bad), False, progress=lambda *a, **k: None))
    # Stop: the state after the texts done is shown, with both files, and says it stopped
    good = tmp_path / "g.csv"
    good.write_text("text\n" + "\n".join(f"text number {i}" for i in range(6)), encoding="utf-8")
    gen = tab.run(GPT2, str(good), False, 1, progress=lambda *a, **k: None)
    state = [next(gen)[tab.state] for _ in range(2)][-1]
    gen.close()
    out = tab.stopped(state)
    assert "Stopped after 2 of 6 texts" in out[tab.summary] and len(out[tab.table]) == 2 and out[tab.first] == 3
    assert "go on from text 3" in out[tab.summary]
    assert path_of(out[tab.dl_jsonl]) and tab.stopped(None) == {}
    with pytest.raises(gr.Error, match="Score a file first"):
        tab.pick(None, gr.SelectData(None, {"index": [0, 0], "value": 1, "row_value": [1]}))


def test_out_that_is_a_folder_is_refused_before_any_work(tmp_path):
    """`--out DIR` is refused at once, not after the whole batch has been scored."""
    from explorer.cli.args import check_out

    with pytest.raises(ExplorerError, match="is a folder"):
        check_out(str(tmp_path), "--out")
    check_out(str(tmp_path / "out.json"), "--out")  # a file in it is fine


def test_tab_time_cap_keeps_the_rows_and_the_next_run_goes_on(ui, gpt2, tmp_path):
    from explorer.rules.sampler import Limits

    tab = ui.tabs["batch"]
    path = tmp_path / "t.txt"
    texts = [f"sentence number {i} is here" for i in range(7)]
    path.write_text("\n".join(texts), encoding="utf-8")
    checks = {"n": 0}

    def cap():
        checks["n"] += 1
        if checks["n"] > 3:
            raise ExplorerError("This took longer than this server allows.", code="timeout")

    with bounds.within(bounds.Bound(Limits(max_seconds=60), stop=cap)):
        out = _last(tab.run(GPT2, str(path), False, 1, progress=lambda *a, **k: None))
    done = len(out[tab.state].rows)
    assert 0 < done < len(texts) and out[tab.first] == done + 1
    summary = out[tab.summary]
    assert "allows 60 s for one action" in summary and f"go on from text {done + 1}" in summary
    rest = _last(tab.run(GPT2, str(path), False, out[tab.first], progress=lambda *a, **k: None))
    b = rest[tab.state]
    assert [r.index for r in b.rows] == list(range(done, len(texts))) and rest[tab.first] == 1
    assert f"from text {done + 1} of the file" in rest[tab.summary]
    assert rest[tab.table]["#"].tolist() == list(range(done + 1, len(texts) + 1))
    with pytest.raises(gr.Error, match="Start at text: the file has 7 texts"):
        _last(tab.run(GPT2, str(path), False, 8, progress=lambda *a, **k: None))


STIMULI = [  # item, condition, text with regions
    ("1", "reduced", "The horse [raced past the barn] [verb: fell]."),
    ("1", "full", "The horse [that was raced past the barn] [verb: fell] down."),
    ("2", "reduced", "The dog [walked by the lake] [verb: sank]."),
]


def test_tab_word_table_equals_lm_words_and_the_cli(ui, gpt2, gpt2_dir, tmp_path):
    """The Batch tab's word table: the CSV `words --file` writes for the same file, each value that of `lm.words`
    on its text alone, the file's own columns on every row; the region table beside it; progress after each text."""
    import pandas as pd

    from explorer.notebook.lm import LM
    from explorer.results.stimuli import brackets

    tab = ui.tabs["batch"]
    path = tmp_path / "stimuli.csv"
    with open(path, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows([("item", "condition", "text"), *STIMULI])
    seen: list = []
    outs = list(tab.word_table(GPT2, str(path), True, progress=lambda p, **k: seen.append(p)))
    assert seen == [(i, len(STIMULI)) for i in range(1, len(STIMULI) + 1)]
    assert [o[tab.words_state][1] for o in outs[:-1]] == [1, 2, 3]
    out = outs[-1]
    assert "3 texts" in out[tab.words_note] and "6 regions" in out[tab.words_note]
    with open(path_of(out[tab.dl_words]), encoding="utf-8") as f:
        got = f.read()
    cli = tmp_path / "cli.csv"
    args = ["words", "--model", gpt2_dir, "--device", "cpu", "--file", str(path), "--context-start", "eos"]
    assert main([*args, "--out", str(cli)]) == 0
    assert got == cli.read_text(encoding="utf-8")  # the same bytes as the CLI
    with open(path_of(out[tab.dl_regions]), encoding="utf-8") as f:
        assert f.read() == (tmp_path / "cli-regions.csv").read_text(encoding="utf-8")
    table = pd.read_csv(io.StringIO(got), dtype={"item": str}, keep_default_na=False)
    lm = LM(gpt2)
    for row, (item, condition, marked) in enumerate(STIMULI, 1):
        alone = lm.words(brackets(marked, "test")[0], context_start=True).rows()
        mine = table[table["row"] == row]
        assert len(mine) == len(alone) and set(mine["item"]) == {item} and set(mine["condition"]) == {condition}
        for c in ("logprob_sum", "surprisal_corrected_bits", "surprisal_sum_nats"):
            want = [math.nan if a[c] is None else a[c] for a in alone]
            got_c = mine[c].replace("", "nan").astype(float).tolist()
            assert got_c == pytest.approx(want, abs=1e-6, nan_ok=True), (row, c)
        assert mine["word_text"].tolist() == [a["text"].lstrip() for a in alone]


def test_tab_word_table_without_regions_bad_files_and_stop(ui, tmp_path):
    tab = ui.tabs["batch"]
    txt = tmp_path / "t.txt"
    txt.write_text("The cat sat.\n\nA dog ran away.\n", encoding="utf-8")
    out = list(tab.word_table(GPT2, str(txt), False, progress=lambda *a, **k: None))[-1]
    assert path_of(out[tab.dl_words]) and out[tab.dl_regions].visible is False
    with open(path_of(out[tab.dl_words]), encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [r["word_text"] for r in rows if r["row"] == "2"] == ["A", "dog", "ran", "away", "."]
    with pytest.raises(gr.Error, match="Upload a file first"):
        list(tab.word_table(GPT2, None, False, progress=lambda *a, **k: None))
    bad = tmp_path / "bad.csv"
    bad.write_text("text\nThe cat.\nThe [horse raced.\n", encoding="utf-8")
    with pytest.raises(gr.Error, match=r"Row 2 \(line 3 of the file\).*never closed"):
        list(tab.word_table(GPT2, str(bad), False, progress=lambda *a, **k: None))
    # Stop part-way: the files of the texts done, saying so
    many = tmp_path / "many.txt"
    many.write_text("\n".join(f"text number {i}" for i in range(5)), encoding="utf-8")
    gen = tab.word_table(GPT2, str(many), False, progress=lambda *a, **k: None)
    state = [next(gen)[tab.words_state] for _ in range(2)][-1]
    gen.close()
    out = tab.words_stopped(state)
    assert "Stopped after 2 of 5 texts" in out[tab.words_note] and tab.words_stopped(None) == {}
    with open(path_of(out[tab.dl_words]), encoding="utf-8") as f:
        assert {r["row"] for r in csv.DictReader(f)} == {"1", "2"}
    assert tab.words_stopped((state[0], 5, 5)) == {}
