"""Many texts a forward pass (explorer/engine/passes/many.py): every number equal to a plain log_softmax + gather on
the model's logits and to the text scored alone, whatever else is in the call (texts of very different lengths, the
same text twice, one-token texts); the sums alone equal the full run's sums; stimulus lists equal `lm.words`; the
CLI writes rows as they come, past the in-memory cap."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
import torch

from explorer.cli import main
from explorer.engine import score_text
from explorer.engine.analyses import batch as batch_mod
from explorer.engine.analyses.batch import fill_word_table, run_batch
from explorer.engine.passes import many
from explorer.notebook.lm import LM
from explorer.results.batch import MAX_TEXTS, BatchItem
from explorer.results.stimuli import from_records
from explorer.results.word_table import WordTable
from tests.helpers.reference import ref_logprobs

TEXTS = [
    "Hi",
    "The quick brown fox jumps over the lazy dog.",
    "a " * 40,
    "The quick brown fox jumps over the lazy dog.",  # the same text twice: one group
    "Bonjour le monde! 東京は大きい。 👋🙂",
    "def f(n):\n    return n + 1\n",
    "The cat sat.",
    "The dog ran.",
]


def items(texts=TEXTS) -> list[BatchItem]:
    return [BatchItem(i + 1, t, str(i)) for i, t in enumerate(texts)]


def test_groups_keep_one_length_a_pass_within_the_caps():
    lengths = [5, 3, 5, 9, 3, 5, 5, 5]
    got = list(many.groups(lengths, tokens=15, rows=4))
    assert sorted(i for g in got for i in g) == list(range(len(lengths)))
    for g in got:
        assert len({lengths[i] for i in g}) == 1 and len(g) <= 4 and len(g) * lengths[g[0]] <= 15
    assert [lengths[g[0]] for g in got] == sorted(lengths[g[0]] for g in got)  # shortest first
    assert list(many.groups([])) == [] and list(many.groups([7])) == [[0]]


@pytest.mark.parametrize("fixture", ["gpt2", "llama"])
@pytest.mark.parametrize("full", [False, True])
def test_a_padded_pass_equals_log_softmax_and_gather(request, fixture, full):
    """Texts of very different lengths right-padded into one pass: each text's numbers are its own (the reference's
    to float rounding), the last position's word-end masses too."""
    engine = request.getfixturevalue(fixture)
    seqs = [engine.encode(t) for t in TEXTS]
    nums = many.score_group(engine, seqs, full=full, ends=True)
    for ids, num in zip(seqs, nums):
        lp = ref_logprobs(engine.model, ids)  # (T-1, V)
        want = lp.gather(1, torch.tensor(ids[1:])[:, None])[:, 0].numpy()
        np.testing.assert_allclose(num.logprobs, want, atol=1e-5)
        assert num.ends is not None and num.ends.shape[0] == len(ids)
        if full:
            assert num.ranks is not None and num.entropy is not None
            np.testing.assert_array_equal(num.ranks, (lp >= torch.from_numpy(want)[:, None]).sum(1).numpy())
            np.testing.assert_allclose(num.entropy, -(lp.exp() * lp).nan_to_num(0.0).sum(1).numpy(), atol=1e-4)
        else:
            assert num.ranks is None and num.entropy is None


@pytest.mark.parametrize("fixture", ["gpt2", "llama"])
@pytest.mark.parametrize("start", [None, "eos"])
def test_every_row_equals_the_text_alone_whatever_shares_its_call(request, fixture, start):
    """The batch puts texts of one length in a pass (no padding), so what shares a text's pass changes its numbers by
    float32 rounding only: a pass of several rows may block its matrix products otherwise than a pass of one (seen
    on the tiny Llama: 2e-6 nats on a total of -118; a padding leak would move them by far more)."""
    engine = request.getfixturevalue(fixture)
    full = run_batch(engine, items(), start)
    sums = run_batch(engine, items(), start, stats=False)
    for row, quick, text in zip(full.rows, sums.rows, TEXTS):
        alone = score_text(engine, text, 0, start=start)
        if not alone.scored.any():  # "Hi" without a start token on a tokenizer that makes it one token
            assert "one token" in row.error and "one token" in quick.error
            continue
        assert not row.error and row.scored == int(alone.scored.sum())
        assert row.total_logprob == pytest.approx(alone.total_logprob, rel=1e-6, abs=1e-5)
        assert (quick.total_logprob, quick.mean_logprob, quick.perplexity, quick.tokens) == (
            row.total_logprob,
            row.mean_logprob,
            row.perplexity,
            row.tokens,
        )
        assert row.stats["min_k_plus"] is not None and quick.stats == {}
        assert all(quick.to_dict()[c] is None for c in ("min_k", "gltr_1_10", "fast_detectgpt"))


def test_an_engine_that_does_not_batch_gives_the_same_rows(gpt2, monkeypatch):
    batched = run_batch(gpt2, items())
    monkeypatch.setattr(type(gpt2), "batches_texts", False)
    alone = run_batch(gpt2, items())
    assert [r.to_dict() for r in batched.rows] == [r.to_dict() for r in alone.rows]


@pytest.mark.parametrize("start", [None, "eos"])
def test_stimulus_lists_equal_lm_words_text_by_text(gpt2, monkeypatch, start):
    texts = [t for t in TEXTS if t.strip()]
    stimuli = from_records([{"text": t, "item": i} for i, t in enumerate(texts)], "text")
    batched = WordTable(gpt2.name)
    assert list(fill_word_table(gpt2, stimuli, start, batched)) == list(range(1, len(texts) + 1))
    monkeypatch.setattr(type(gpt2), "batches_texts", False)
    alone = WordTable(gpt2.name)
    list(fill_word_table(gpt2, stimuli, start, alone))
    assert batched.to_csv() == alone.to_csv()
    lm = LM(gpt2)
    w = lm.words(texts[1], context_start=start or False)
    frame = batched.to_pandas()
    mine = frame[frame["item"] == 1]
    np.testing.assert_allclose(mine["surprisal_corrected_bits"].to_numpy(), w.to_pandas()["surprisal_corrected_bits"])


def test_a_window_scores_its_groups_as_rows_are_asked_for(gpt2, monkeypatch):
    """Rows come in the file's order, each group scored when its first text's row is due: a stop or Ctrl-C between
    rows leaves no group scored for nothing beyond the one in hand."""
    calls = []
    real = many.score_group
    monkeypatch.setattr(many, "score_group", lambda e, seqs, **kw: calls.append(len(seqs)) or real(e, seqs, **kw))
    rows = batch_mod.score_batch(gpt2, items(["The cat sat.", "The cat sat.", "a " * 30]), stats=False)
    next(rows)
    assert calls == [2]  # the two texts of one length, together
    list(rows)
    assert calls == [2, 1]


def test_cli_streams_more_texts_than_the_in_memory_cap(gpt2_dir, tmp_path, capsys):
    n = MAX_TEXTS + 3
    path = tmp_path / "t.txt"
    path.write_text("\n".join(f"The cat number {i % 50} sat." for i in range(n)), encoding="utf-8")
    out = tmp_path / "rows.csv"
    argv = ["batch", str(path), "--model", str(gpt2_dir), "--device", "cpu", "--sums-only", "--format", "csv"]
    assert main([*argv, "--out", str(out)]) == 0
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert [int(r["row"]) for r in rows] == list(range(1, n + 1)) and rows[0]["min_k"] == ""
    err = capsys.readouterr().err
    assert f"batch: {n}/{n} texts [" in err and "texts/s" in err
    # the same ten texts as JSON: a whole batch, equal to the streamed rows
    small = tmp_path / "small.txt"
    small.write_text("\n".join(f"The cat number {i % 50} sat." for i in range(10)), encoding="utf-8")
    assert main(["batch", str(small), "--model", str(gpt2_dir), "--device", "cpu", "--sums-only"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert [r["total_logprob"] for r in body["rows"]] == [pytest.approx(float(r["total_logprob"])) for r in rows[:10]]
    # JSON keeps the cap, and says how to go past it
    assert main(["batch", str(path), "--model", str(gpt2_dir), "--device", "cpu"]) == 2
    assert "--format csv or jsonl" in capsys.readouterr().err


def test_cli_stream_refuses_an_unknown_start_before_it_opens_the_output(gpt2_dir, tmp_path, capsys):
    """A start token the model lacks is refused with a message, and the file --out names is kept as it was."""
    path = tmp_path / "t.txt"
    path.write_text("The cat sat.\nThe dog ran.\n", encoding="utf-8")
    out = tmp_path / "rows.csv"
    out.write_text("yesterday's rows\n", encoding="utf-8")
    argv = ["batch", str(path), "--model", str(gpt2_dir), "--device", "cpu", "--format", "csv", "--out", str(out)]
    assert main([*argv, "--context-start", "<|nope|>"]) == 2
    assert "Unknown context start" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == "yesterday's rows\n"


WORDS_CSV = (
    "item,condition,text\n"
    "1,a,The [key] to the [cabinets] is on the table.\n"
    "1,b,The [keys] to the [cabinet] are on the table.\n"
    "2,a,[The cat] sat.\n"
    "2,b,[The cats] sat.\n"
)


def _words_argv(gpt2_dir, path) -> list[str]:
    return ["words", "--model", str(gpt2_dir), "--device", "cpu", "--file", str(path), "--context-start", "eos"]


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_words_file_streams_the_in_memory_tables(gpt2, gpt2_dir, tmp_path, capsys, fmt):
    """`words --file` writes each text's rows as it is scored: the same bytes as the whole table made in memory by
    the Python API (word rows and region rows), to a file or to stdout, with a progress bar on stderr."""
    path = tmp_path / "stimuli.csv"
    path.write_text(WORDS_CSV, encoding="utf-8")
    table = LM(gpt2).word_table(str(path), "eos")
    want = table.to_csv() if fmt == "csv" else table.to_jsonl()
    want_regions = table.to_csv(regions=True) if fmt == "csv" else table.to_jsonl(regions=True)
    out = tmp_path / f"words.{fmt}"
    assert main([*_words_argv(gpt2_dir, path), "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == want
    assert (tmp_path / f"words-regions.{fmt}").read_text(encoding="utf-8") == want_regions
    err = capsys.readouterr().err
    assert "words: 4/4 texts [" in err and f"wrote {out}" in err
    assert main([*_words_argv(gpt2_dir, path), "--format", fmt]) == 0
    assert capsys.readouterr().out == want


def test_words_file_keeps_the_rows_before_a_text_it_cannot_score(gpt2, gpt2_dir, tmp_path, capsys):
    """A text over the model's context in the middle of the list: an error naming its row, and the rows of the
    texts before it written (equal to those texts' table alone)."""
    long = "word " * (gpt2.context + 10)
    path = tmp_path / "stimuli.csv"
    path.write_text(f"item,text\n1,The cat sat.\n2,The dog ran home.\n3,{long}\n4,The end.\n", encoding="utf-8")
    out = tmp_path / "words.csv"
    assert main([*_words_argv(gpt2_dir, path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "Row 3" in err and "The rows of the 2 texts before it are written." in err
    before = LM(gpt2).word_table([{"item": "1", "text": "The cat sat."}, {"item": "2", "text": "The dog ran home."}],
                                 "eos")  # fmt: skip
    assert out.read_text(encoding="utf-8") == before.to_csv()


def test_words_file_interrupted_keeps_the_rows_done(gpt2, gpt2_dir, tmp_path, capsys, monkeypatch):
    """Ctrl-C after the second text: exit status 130, the rows of the first two texts written."""
    from explorer.cli import progress as cli_progress

    path = tmp_path / "stimuli.csv"
    path.write_text(WORDS_CSV, encoding="utf-8")
    real = cli_progress.Progress.__call__

    def interrupted(self, done, total):
        real(self, done, total)
        if done == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(cli_progress.Progress, "__call__", interrupted)
    out = tmp_path / "words.jsonl"
    assert main([*_words_argv(gpt2_dir, path), "--out", str(out)]) == 130
    assert "Interrupted after 2 of 4 texts" in capsys.readouterr().err
    table = LM(gpt2).word_table(str(path), "eos")
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows == [json.loads(line) for line in table.to_jsonl().splitlines() if json.loads(line)["row"] <= 2]
    regions = (tmp_path / "words-regions.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(regions) == 4 and {json.loads(r)["row"] for r in regions} == {1, 2}


def test_words_file_to_csv_takes_more_texts_than_the_cap(gpt2, gpt2_dir, tmp_path, capsys, monkeypatch):
    """csv and jsonl are written row by row, so the Batch tab's cap (MAX_TEXTS, here lowered to 3) holds for json
    only, whose message says how to go past it."""
    from explorer.results import stimuli as stimuli_mod

    monkeypatch.setattr(stimuli_mod, "MAX_TEXTS", 3)
    path = tmp_path / "stimuli.csv"
    path.write_text(WORDS_CSV, encoding="utf-8")  # 4 texts
    out = tmp_path / "words.csv"
    assert main([*_words_argv(gpt2_dir, path), "--out", str(out)]) == 0
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert sorted({int(r["row"]) for r in rows}) == [1, 2, 3, 4]
    capsys.readouterr()
    assert main([*_words_argv(gpt2_dir, path), "--format", "json"]) == 2
    err = capsys.readouterr().err
    assert "At most 3 texts" in err and "--format csv or jsonl" in err


def test_many_texts_of_one_length_equal_each_alone_to_the_bit(gpt2, monkeypatch):
    """Groups of many texts of one length: every column, the text statistics computed for the whole group at once
    (results/stats.text_stats_rows) and the sums, equals the text scored alone (TokenScores + text_stats)."""
    texts = [f"The cat number {i} sat on mat {i % 7}." for i in range(40)] + ["The dog ran.", "The dog ran away."]
    batched = run_batch(gpt2, items(texts), "eos")
    assert not any(r.error for r in batched.rows)
    monkeypatch.setattr(type(gpt2), "batches_texts", False)
    alone = run_batch(gpt2, items(texts), "eos")
    assert [r.to_dict() for r in batched.rows] == [r.to_dict() for r in alone.rows]


def test_stats_rows_equal_text_stats_to_the_bit():
    """text_stats_rows on (texts, positions) arrays: each row's values equal text_stats of that text alone (every
    length around numpy's pairwise-summation blocks); a row with a position text_stats would leave out (a
    varentropy of 0, an entropy not finite) is left to text_stats."""
    from explorer.results.scores import Rows, assemble
    from explorer.results.stats import ROW_VALUES, text_stats, text_stats_rows

    rng = np.random.default_rng(0)
    vocab = [bytes([i]) for i in range(256)]
    for m in [1, 2, 7, 8, 9, 15, 16, 17, 127, 128, 129, 300]:
        lp = (-rng.exponential(3.0, (5, m))).astype(np.float32)
        rank = rng.integers(1, 5000, (5, m))
        ent = rng.uniform(0.1, 6.0, (5, m)).astype(np.float32)
        var = rng.uniform(0.01, 9.0, (5, m)).astype(np.float32)
        var[3, 0], ent[4, -1] = 0.0, np.inf
        values, done = text_stats_rows(lp, rank, ent, var, 20.0)
        assert done.tolist() == [True, True, True, False, False]
        assert np.isnan(values[~done]).all()
        for b in np.flatnonzero(done):
            rows = Rows(
                lp[b], rank[b], ent[b], np.zeros((m, 0), np.int64), np.zeros((m, 0), np.float32), varentropy=var[b]
            )
            r = assemble("m", vocab, [i % 256 for i in range(m + 1)], m + 1, rows, first=1)
            gltr, mk, mkp, fdg = text_stats(r, 20.0)
            assert isinstance(gltr.value, dict)
            assert values[b].tolist() == [gltr.value[v] for v in ROW_VALUES[:4]] + [mk.value, mkp.value, fdg.value]


def test_end_masses_stay_finite_where_every_token_of_a_set_underflows():
    """A set whose every token is far below the row's best (exp underflows to 0 in float32) keeps its log mass:
    log sum exp over the set, as a plain float64 log_softmax gives it; the logprob from the same pass too."""
    from explorer.engine.passes.word_ends import EndSets, end_mass, logprob_ends

    v = 400
    logits = torch.randn(3, v)
    logits[:, 100:] -= 300.0  # tokens 100.. are 300 nats below the rest
    order = torch.arange(v)
    sets = EndSets([order[:100], order[100:], order[:0]], order, [(0, 100), (100, v)], [[0], [1], []])
    got = end_mass(logits, sets)
    ref = logits.double().log_softmax(-1)
    want = torch.stack([ref[:, :100].logsumexp(-1), ref[:, 100:].logsumexp(-1)], 1)
    np.testing.assert_allclose(got[:, :2].numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
    assert torch.isinf(got[:, 2]).all() and bool((got[:, 1] < -250).all())
    t = torch.tensor([0, 5, 150])
    lp, mass = logprob_ends(logits, t, sets)
    np.testing.assert_allclose(lp.numpy(), ref.gather(1, t[:, None])[:, 0].numpy(), rtol=1e-5, atol=1e-6)
    assert torch.equal(mass, got)
