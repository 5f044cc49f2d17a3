"""A stimulus list without code (explorer/results/stimuli.py, word_table.py, `lm.words_many`, `words --file`): every
value of the word table equals `lm.words` on that text alone, the input's columns and regions ride along, region rows
sum their words, the CLI writes the same tables, and each malformed input names its row."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pandas as pd
import pytest

import explorer
from explorer.cli import main
from explorer.errors import ExplorerError
from explorer.results.batch import MAX_TEXTS
from explorer.results.stimuli import MAX_BYTES, brackets, read_stimuli
from explorer.results.word_table import NUMBERS
from explorer.results.words import WORD_COLUMNS

NOUNS = ["horse", "dog", "cat", "boy", "girl", "man", "fox", "king", "queen", "bird", "cow", "duck"]
PLACES = ["barn", "house", "lake", "road", "mill", "gate"]


def items() -> list[dict]:
    """24 items x 2 conditions, garden-path style, regions in brackets (some named)."""
    out = []
    for i in range(24):
        noun, place = NOUNS[i % len(NOUNS)], PLACES[i % len(PLACES)]
        verb = "[verb: fell]" if i % 3 == 0 else "[fell]"
        out.append({"item": i + 1, "condition": "reduced",
                    "text": f"The {noun} [raced past the {place}] {verb}."})  # fmt: skip
        out.append({"item": i + 1, "condition": "full",
                    "text": f"The {noun} [that was raced past the {place}] {verb} down."})  # fmt: skip
    return out


@pytest.fixture(scope="module")
def lm(gpt2_dir):
    return explorer.load(gpt2_dir, device="cpu")


@pytest.fixture(scope="module")
def stimuli_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("stimuli") / "stimuli.csv"
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["item", "condition", "text"])
        w.writeheader()
        w.writerows(items())
    return path


@pytest.fixture(scope="module")
def tables(lm, stimuli_csv):
    return lm.words_many(stimuli_csv, context_start=True)


def assert_same_number(a: float | None, b: float | None, what: str) -> None:
    if b is None or (isinstance(b, float) and math.isnan(b)):
        assert a is None or math.isnan(float(a)), f"{what}: {a!r} where lm.words has none"
    else:
        assert a is not None and abs(float(a) - float(b)) <= 1e-6, f"{what}: {a!r} != {b!r}"


def test_every_value_equals_lm_words_alone(lm, tables):
    words, regions = tables
    assert len(set(words["row"])) == 48
    for row, src in enumerate(items(), 1):
        text, marked = brackets(src["text"], "test")
        alone = lm.words(text, context_start=True).rows()
        mine = words[words["row"] == row].to_dict("records")
        assert len(mine) == len(alone) > 0
        for i, (m, a) in enumerate(zip(mine, alone)):
            assert m["item"] == str(src["item"]) and m["condition"] == src["condition"]  # carried as read
            assert m["word_index"] == i + 1 and m["word_text"] == a["text"].lstrip()
            for c in WORD_COLUMNS:
                if c.startswith(("logprob", "surprisal")):
                    assert_same_number(m[c], a[c], f"row {row} word {i} {c}")
                else:
                    assert m[c] == a[c], f"row {row} word {i} {c}"
        # regions: each word inside its span, every region's numbers the sums of its words'
        for k, reg in enumerate(marked):
            held = [m for m in mine if m["region"] == reg.name]
            assert held and " ".join(m["word_text"] for m in held) == text[reg.start : reg.end]
            r = regions[(regions["row"] == row) & (regions["region_index"] == k + 1)].iloc[0]
            assert r["region"] == reg.name and r["region_text"] == text[reg.start : reg.end]
            assert r["item"] == str(src["item"]) and r["n_words"] == len(held)
            for c in NUMBERS:
                assert abs(r[c] - sum(m[c] for m in held)) <= 1e-9, (row, reg.name, c)
        outside = [m for m in mine if pd.isna(m["region"])]
        assert outside and outside[0]["word_text"] == "The"
    assert sorted(set(regions["region"])) == ["1", "2", "verb"]


def test_regions_as_spans_and_inputs_of_each_kind(lm, tables):
    words, regions = tables
    records = []
    for src in items()[:6]:
        text, marked = brackets(src["text"], "test")
        spans = " ".join(
            f"{r.name}={r.start}:{r.end}" if not r.name.isdigit() else f"{r.start}:{r.end}" for r in marked
        )
        records.append({"item": str(src["item"]), "condition": src["condition"], "text": text, "regions": spans})
    w2, r2 = lm.words_many(pd.DataFrame(records), context_start=True)
    pd.testing.assert_frame_equal(w2, words[words["row"] <= 6].reset_index(drop=True))
    pd.testing.assert_frame_equal(r2, regions[regions["row"] <= 6].reset_index(drop=True))
    w3, _ = lm.words_many([r["text"] for r in records], context_start=True)  # plain texts: no columns of their own
    assert list(w3.columns[:4]) == ["row", "word_index", "word_text", "region"] and w3["region"].isna().all()
    assert w3["surprisal_corrected_bits"].tolist() == w2["surprisal_corrected_bits"].tolist()


def test_cli_writes_the_python_tables(lm, tables, gpt2_dir, stimuli_csv, tmp_path):
    words, regions = tables
    out = tmp_path / "words.csv"
    args = ["words", "--model", gpt2_dir, "--device", "cpu", "--file", str(stimuli_csv), "--context-start", "eos"]
    assert main([*args, "--out", str(out)]) == 0
    got = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert list(got.columns) == list(words.columns) and len(got) == len(words)
    for c in NUMBERS:  # exact: each float written as its repr
        np.testing.assert_array_equal(got[c].replace("", "nan").astype(float), words[c].to_numpy())
    assert got["word_text"].tolist() == words["word_text"].tolist()
    assert got["region"].fillna("").tolist() == words["region"].fillna("").tolist()
    assert got["token_ids"].tolist() == [" ".join(map(str, t)) for t in words["token_ids"]]
    reg = pd.read_csv(tmp_path / "words-regions.csv", dtype={"item": str, "region": str, "region_text": str})
    np.testing.assert_array_equal(reg["surprisal_corrected_bits"], regions["surprisal_corrected_bits"])
    assert reg["region_text"].tolist() == regions["region_text"].tolist()
    jl = tmp_path / "words.jsonl"
    assert main([*args, "--out", str(jl)]) == 0
    rows = [json.loads(line) for line in jl.read_text(encoding="utf-8").splitlines()]
    assert [r["tokens"] for r in rows] == words["tokens"].tolist()
    np.testing.assert_array_equal([np.nan if r["logprob_sum"] is None else r["logprob_sum"] for r in rows],
                                  words["logprob_sum"].to_numpy())  # fmt: skip
    assert [r["condition"] for r in rows] == words["condition"].tolist()
    assert (tmp_path / "words-regions.jsonl").exists()


MALFORMED = [
    ("unclosed", "text\nThe cat.\nA dog ran.\nThe [horse raced.\n", "Row 3 (line 4", "never closed"),
    ("nested", "text\nThe cat.\nA dog.\nThe [horse [raced]] fell.\n", "Row 3 (line 4", "do not nest"),
    ("stray", "text\nThe cat.\nA dog.\nThe horse] fell.\n", "Row 3 (line 4", "closes no region"),
    ("cut", "text\nThe cat.\nA dog.\nThe hor[se fell].\n", "Row 3 (line 4", "cuts the word 'horse'"),
    ("empty region", "text\nThe cat.\nA dog.\nThe [ ] fell.\n", "Row 3 (line 4", "holds no word"),
    ("empty text", "item,text\n1,The cat.\n2,A dog.\n3,[]\n", "Row 3 (line 4", "text is empty"),
    ("no text column", "item,sentence\n1,The cat.\n", "Row 1 (line 2", "no 'text' column"),
    ("bad span", "text,regions\nThe cat.,0:3\nA dog.,0:2\nThe horse.,4:99\n", "Row 3 (line 4", "must lie in"),
    ("same name", 'text\nThe cat.\nA dog.\n"[a: The] [a: horse]"\n', "Row 3 (line 4", "two regions are named"),
    (
        "fewer fields",
        "item,condition,text\n1,a,The dog barked.\n2,The cat meowed.\n",
        "Row 2 (line 3",
        "has 2 fields where the header has 3",
    ),
    (
        "more fields",
        "item,text\n1,The dog barked.\n\n2,The cat, it meowed.\n",
        "Row 2 (line 4",
        "has 3 fields where the header has 2",
    ),
    ("jsonl", '{"text": "The cat."}\n{"text": "A dog."}\n{"text": "[The"}\n', "Row 3 (line 3", "never closed"),
]


@pytest.mark.parametrize("name,body,where,why", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_input_names_the_row(name, body, where, why):
    with pytest.raises(ExplorerError) as err:
        read_stimuli(body.encode(), "s.jsonl" if name == "jsonl" else "s.csv")
    assert where in err.value.message and why in err.value.message, err.value.message


def test_over_the_batch_limits():
    rows = "text\n" + "The cat sat.\n" * (MAX_TEXTS + 1)
    with pytest.raises(ExplorerError, match=f"At most {MAX_TEXTS} texts"):
        read_stimuli(rows.encode(), "s.csv")
    with pytest.raises(ExplorerError, match="over 2 MB"):
        read_stimuli(b"text\n" + b"x" * MAX_BYTES, "s.csv")


def test_cli_refuses_before_the_model_and_writes_nothing(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("item,text\n1,The cat.\n2,The [dog.\n", encoding="utf-8")
    out = tmp_path / "words.csv"
    assert main(["words", "--model", str(tmp_path / "no-model"), "--file", str(bad), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "Row 2 (line 3 of the file)" in err and "never closed" in err and err.count("\n") == 1
    assert not out.exists()


def test_a_tokenizer_with_a_dummy_prefix_keeps_the_regions(llama_dir):
    lm = explorer.load(llama_dir, device="cpu")
    words, regions = lm.words_many(["The horse [raced past the barn] [fell]."])
    assert regions["region_text"].tolist() == ["raced past the barn", "fell"]
    assert words.loc[words["region"] == "1", "word_text"].tolist() == ["raced", "past", "the", "barn"]
    alone = lm.words("The horse raced past the barn fell.").rows()
    assert words["surprisal_corrected_bits"].tolist() == pytest.approx(
        [np.nan if a["surprisal_corrected_bits"] is None else a["surprisal_corrected_bits"] for a in alone],
        nan_ok=True,
        abs=1e-6,
    )


def test_csv_keeps_quotes_and_semicolons():
    body = 'item;condition;text\n1;a;"The cat; it [sat]."\n'
    (s,) = read_stimuli(body.encode(), "s.csv")
    assert s.text == "The cat; it sat." and s.extra == {"item": "1", "condition": "a"}
    assert [(r.name, s.text[r.start : r.end]) for r in s.regions] == [("1", "sat")]
