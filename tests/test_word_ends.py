"""Corrected word surprisal (Pimentel & Meister 2024): the engine's end masses and the corrected word logprobs
equal brute-force sums over the whole vocabulary from fresh full passes, on both tiny tokenizers."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.engine import score_text
from explorer.engine.capabilities import Capabilities
from explorer.engine.passes.word_ends import score_text_words, score_words
from explorer.errors import ExplorerError
from explorer.results.words import (
    END_SETS,
    corrected_logprobs,
    end_class,
    end_masks,
    with_ends,
    word_rows,
    word_starts,
    words,
)

TEXT = "The cat sat, on the mat...  Café 東京!\nEnd"
EMOJI_TEXT = "Go 🇫🇷 now a🇩🇪🇫 x 👨\u200d👩\u200d👧 ok 1️⃣ 👍🏽!"  # flags, a ZWJ sequence, a keycap, a modifier
START = {"gpt2": "eos", "llama": None}  # llama's tokenizer puts its BOS first itself


def _full_logprobs(engine, ids: list[int]) -> torch.Tensor:
    """(T, V) float64 log_softmax of one fresh full pass over `ids`: row i = the distribution after ids[:i+1]."""
    with torch.no_grad():
        logits = engine.model(torch.tensor([ids])).logits[0]
    return logits.double().log_softmax(-1)


def _starts_word(engine, before: str, v: int, after_special: bool) -> bool:
    """Brute force: does token v, put after the text `before`, start a new word (by word_starts on the real text)?"""
    b = engine.vocab[v]
    if v in engine.special_ids:
        return True
    if b and 0x80 <= b[0] < 0xC0:
        return False  # a UTF-8 continuation byte never starts a character
    try:
        first = b[:4].decode("utf-8", errors="strict")[:1] if b else ""
    except UnicodeDecodeError:
        first = b[:4].decode("utf-8", errors="ignore")[:1]
        first = first if first and b.startswith(first.encode()) else ""
    if not first:  # the first character is not whole in this token: counts after a symbol/CJK word or a start
        return after_special or end_class(before) in ("new", "flag")  # our convention (results/words.py)
    if after_special:
        return True
    return bool(word_starts(before + first)[len(before)])


def _brute_corrected(engine, r, w, lp: torch.Tensor) -> np.ndarray:
    """(w,) corrected logprobs from explicit sums over the vocabulary."""
    special = [int(i) in engine.special_ids for i in r.token_ids]
    out = np.full(w.n, np.nan)

    def end_mass(pos: int, before: str, after_special: bool) -> float:
        keep = [v for v in range(engine.vocab_size) if _starts_word(engine, before, v, after_special)]
        return float(torch.logsumexp(lp[pos, keep], 0))

    for j in range(w.n):
        a, b = int(w.starts[j]), int(w.ends[j])
        if a == 0 or any(special[a:b]):
            continue
        tokens = float(sum(lp[i - 1, int(r.token_ids[i])] for i in range(a, b)))
        text_so_far = "".join(w.text[: j + 1])
        end = end_mass(b - 1, text_so_far, False)
        prev_special = any(special[int(w.starts[j - 1]) : a])
        before = end_mass(a - 1, "".join(w.text[:j]), prev_special)
        out[j] = tokens + end - before
    return out


@pytest.mark.parametrize("text", [TEXT, EMOJI_TEXT])
@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_corrected_equals_brute_force(name, text, request):
    engine = request.getfixturevalue(name)
    r, e = score_text_words(engine, text, k=5, start=START[name])
    w = with_ends(words(r), e)
    lp = _full_logprobs(engine, r.token_ids.tolist())
    expected = _brute_corrected(engine, r, w, lp)
    assert np.isfinite(expected).sum() >= 8  # most words are checked
    np.testing.assert_allclose(w.corrected, expected, rtol=0, atol=2e-4, equal_nan=True)
    # the correction changes the numbers (this test can fail): some word's end mass is far from 1
    ok = np.isfinite(expected)
    assert np.abs(w.corrected[ok] - w.logprobs[ok]).max() > 0.05


VOCAB = ["x", "1", " ", " x", "\n", ".", ",x", "東", "👋", "🇫", "🇷", "🇫🇷", "\u200d", "\u0301", "\ufe0f", "\u20e3", "🏽"]
CONTEXT = [
    "a",
    "x1",
    ".",
    " ",
    "東",
    "👋",
    "👍🏽",
    "🇫",
    "🇫🇷",
    "a🇫🇷🇩",
    " 🇫",
    "👨\u200d",
    "1\ufe0f\u20e3",
    "\u0301",
    "e\u0301",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(CONTEXT), min_size=1, max_size=4))
def test_end_classes_follow_the_segmentation(parts):
    """Whole-character tokens: a token is in end_masks' row for end_class(text) exactly when word_starts starts a
    word at its first character after `text` (flags, ZWJ sequences, keycaps and modifiers included)."""
    text = "".join(parts)
    masks = end_masks([t.encode() for t in VOCAB], set())  # (K, V)
    row = END_SETS.index(end_class(text))
    for v, t in enumerate(VOCAB):
        assert masks[row, v] == word_starts(text + t)[len(text)], (text, t, end_class(text))


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_end_masses_equal_sums_over_the_vocabulary(name, request):
    """Each position's mass of each END_SETS class equals log sum p over that set, from a fresh pass."""
    from explorer.engine.passes.word_ends import end_ids

    engine = request.getfixturevalue(name)
    r, e = score_text_words(engine, TEXT, start=START[name])
    lp = _full_logprobs(engine, r.token_ids.tolist())  # (T, V)
    assert e.logmass.shape == (r.n, len(END_SETS))
    for c, ids in enumerate(end_ids(engine)):
        mask = torch.zeros(engine.vocab_size, dtype=torch.bool)
        mask[ids] = True
        want = torch.log(lp.exp()[:, mask].sum(-1)).numpy()
        np.testing.assert_allclose(e.logmass[:, c], want, atol=2e-5)


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_summed_equals_the_tokens_logprobs(name, request):
    engine = request.getfixturevalue(name)
    r, _ = score_text_words(engine, TEXT, start=START[name])
    ref = score_text(engine, TEXT, start=START[name])  # plain scoring: same numbers
    np.testing.assert_allclose(r.logprobs, ref.logprobs, atol=1e-5, equal_nan=True)
    w = words(r)
    lp = _full_logprobs(engine, r.token_ids.tolist())
    for j in np.flatnonzero(w.complete):
        want = sum(float(lp[i - 1, int(r.token_ids[i])]) for i in w.tokens(int(j)))
        assert w.logprobs[j] == pytest.approx(want, abs=1e-4)


def test_corrected_words_chain_to_the_text(gpt2):
    """Telescoping: the corrected logprobs of the words after a document start sum to the tokens' logprob plus the
    last word's end mass minus the start mass."""
    r, e = score_text_words(gpt2, "a b, c d.", start="eos")
    w = with_ends(words(r), e)
    assert w.corrected is not None
    ok = np.isfinite(w.corrected)
    assert ok[1:].all() and not ok[0]  # word 0 is the document start
    lead = END_SETS.index("start")
    want = float(np.nansum(r.logprobs)) + e.logmass[-1, END_SETS.index("punct")] - e.logmass[0, lead]
    assert w.corrected.sum(where=ok) == pytest.approx(want, abs=1e-4)


def test_blocks_and_chunks_give_the_same_masses(gpt2):
    ids = gpt2.encode(TEXT)
    r1, e1 = score_words(gpt2, ids)
    r2, e2 = score_words(gpt2, ids, chunk=3, prefill=4)
    np.testing.assert_allclose(e1.logmass, e2.logmass, atol=1e-5)
    np.testing.assert_allclose(r1.logprobs, r2.logprobs, atol=1e-5, equal_nan=True)


def test_edges(gpt2):
    r, e = score_words(gpt2, gpt2.encode("x")[:1])  # one token: one row of masses, nothing scored
    assert e.logmass.shape == (1, len(END_SETS)) and np.isnan(corrected_logprobs(words(r), e)).all()
    with pytest.raises(ExplorerError, match="empty"):
        score_text_words(gpt2, "", start="eos")


def test_rows_spans_and_units(gpt2):
    r, e = score_text_words(gpt2, TEXT, start="eos")
    w = with_ends(words(r), e)
    rows = word_rows(r, w, 1)
    assert [TEXT[x["char_start"] : x["char_end"]] for x in rows] == w.text[1:]
    assert "".join(x["text"] for x in rows) == TEXT
    x = rows[1]
    assert x["surprisal_corrected_bits"] == pytest.approx(x["surprisal_corrected_nats"] / math.log(2))
    assert x["surprisal_sum_nats"] == pytest.approx(-x["logprob_sum"])
    assert rows[0]["word"] == 0 and rows[0]["logprob_corrected"] is not None  # the document start has no row


@pytest.mark.parametrize("name", ["gpt2", "llama"])
def test_a_document_start_is_not_a_word_row(name, request):
    """No row for the leading special tokens (BOS, --context-start), and no negative span, in rows, CSV and JSON."""
    import csv
    import io

    from explorer.export.words import to_csv, to_dict
    from explorer.results.words import leading

    engine = request.getfixturevalue(name)
    r, e = score_text_words(engine, TEXT, start=START[name] or "bos")
    w, lead = with_ends(words(r), e), leading(e.special)
    assert lead >= 1
    for rows in (to_dict(r, w, lead)["words"], list(csv.DictReader(io.StringIO(to_csv(r, w, lead))))):
        assert all(int(x["char_start"]) >= 0 for x in rows)
        assert int(rows[0]["char_start"]) == 0 and int(rows[0]["word"]) == 0
        assert "".join(x["text"] for x in rows).lstrip() == TEXT.lstrip()  # SentencePiece adds one leading space


def test_a_served_model_is_refused():
    class Served:  # a served model as the refusal reads it: its name and capabilities (every engine has them)
        name = "remote-model"
        capabilities = Capabilities.remote(max_logprobs=20, full_vocab_max_prompt_tokens=0)

    with pytest.raises(ExplorerError, match="drop --backend"):
        score_text_words(Served(), "x")  # type: ignore[arg-type]


def test_cli_words_json_and_csv(gpt2, gpt2_dir, capsys, tmp_path):
    import csv
    import io
    import json

    from explorer.cli import main

    out = tmp_path / "w.json"
    assert main(["words", "--model", str(gpt2_dir), "--device", "cpu", "--text", TEXT, "--context-start", "eos",
                 "--out", str(out)]) == 0  # fmt: skip
    body = json.loads(out.read_text())
    r, e = score_text_words(gpt2, TEXT, start="eos")
    w = with_ends(words(r), e)
    assert body["text"] == TEXT and [x["text"] for x in body["words"]] == w.text[1:]  # no document-start row
    got = [x["logprob_corrected"] for x in body["words"]]
    np.testing.assert_allclose(np.array(got, float), w.corrected[1:], atol=1e-5, equal_nan=True)
    assert main(["words", "--model", str(gpt2_dir), "--device", "cpu", "--text", TEXT, "--format", "csv",
                 "--context-start", "none"]) == 0  # fmt: skip
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [x["text"] for x in rows] == words(score_text(gpt2, TEXT)).text and rows[0]["logprob_corrected"] == ""


def test_cli_words_refuses_a_served_model(capsys):
    from explorer.cli import main

    code = main(["words", "--backend", "http://127.0.0.1:9/v1", "--model", "m", "--text", "a b"])
    assert code != 0 and "drop --backend" in capsys.readouterr().err


def test_csv_tokens_as_the_page_shows_them(gpt2):
    """The CSV's tokens: `·` for a space, `<0xNN>` for a token that completes no character, single spaces between;
    the same text as the page's words table."""
    import csv
    import io

    from explorer.export.words import to_csv
    from explorer.render.words import words_table

    r, e = score_text_words(gpt2, "I ate 🍕 at noon", start="eos")
    w = with_ends(words(r), e)
    rows = list(csv.DictReader(io.StringIO(to_csv(r, w, 1))))
    want = []
    for j in range(1, w.n):
        shown = [
            r.token_text[p].replace(" ", "·") or "".join(f"<0x{x:02X}>" for x in r.token_bytes[p]) for p in w.tokens(j)
        ]
        want.append(" ".join(shown))
    assert [x["tokens"] for x in rows] == want
    assert any("<0x" in t for t in want) and any(t.startswith("·") for t in want)  # the test meets both cases
    assert '"' not in "".join(want)
    assert words_table(r, w, 1)["tokens"].tolist() == want


def _chunk_ids(engine, text: str) -> list[list[int]]:
    """Each space-separated chunk of `text` tokenized alone, with its leading space after the first (how minicons'
    word_score_tokenized counts a word's tokens)."""
    return [engine.tokenize(c if i == 0 else " " + c, False) for i, c in enumerate(text.split(" "))]


def test_space_separated_words_as_minicons_sums_them(gpt2, llama):
    """Like for like with minicons 0.3.39 / surprisal 0.1.7 (docs/researchers.md, Word surprisal): their word is a space-separated
    chunk, its summed logprob the tokens' of the whole text's tokenization (a BOS before it). With a byte-level BPE
    tokenizer the chunks tokenized alone are the text's tokens, and a chunk's sum is the sum of our words in it (we
    split `mat.` into ` mat` and `.`); its corrected logprobs telescope within the chunk as minicons' do (only the
    set of word-starting tokens differs). A SentencePiece tokenizer gives a chunk tokenized alone after its space
    one `▁` more than in the text (the dummy prefix), so counting tokens per chunk (minicons) drifts there."""
    text = "The cat sat, on the mat."
    r, e = score_text_words(gpt2, text, start="eos")
    w = with_ends(words(r), e)
    assert w.corrected is not None
    chunks = _chunk_ids(gpt2, text)
    same = [i for c in chunks for i in c] == r.token_ids[1:].tolist()
    assert same  # the text's own tokens: tokenization is not where the numbers differ
    cut = np.cumsum([1] + [len(c) for c in chunks]).tolist()  # chunk k: tokens cut[k]..cut[k+1]-1 (0: the start)
    for a, b in itertools.pairwise(cut):
        inside = [j for j in range(w.n) if a <= w.starts[j] < b]
        assert w.ends[inside[-1]] == b  # our words nest in the chunk
        assert w.logprobs[inside].sum() == pytest.approx(float(r.logprobs[a:b].sum()), abs=1e-4)
        text_to = "".join(r.token_text[1:b])
        end = e.logmass[b - 1, END_SETS.index(end_class(text_to))]
        before = e.logmass[a - 1, END_SETS.index("start" if a == 1 else end_class("".join(r.token_text[1:a])))]
        assert w.corrected[inside].sum() == pytest.approx(float(r.logprobs[a:b].sum()) + end - before, abs=1e-4)
    ids = llama.encode(text)[1:]  # after its BOS
    assert sum(len(c) for c in _chunk_ids(llama, text)) == len(ids) + len(text.split(" ")) - 1
