"""What an independent researcher's review of the Python API found (stop 61), each checked here so it can fail:
a number where a text belongs is a message, not a TypeError; a top-k cap names no server flag; a lookup's empty
query reads as English; a branch with no alternative says so; the Surprisal view names its tokens; a word table
and hidden states draw a view in Jupyter and hidden states have `to_pandas()`."""

from __future__ import annotations

import html

import numpy as np
import pytest

import explorer
from explorer.errors import ExplorerError

TEXT = "The cat sat on the mat."


@pytest.mark.parametrize("bad", [123, 1.5, None, b"The cat", {"a": 1}])
def test_a_text_that_is_not_one_is_a_message(gpt2, bad):
    lm = explorer.LM(gpt2)
    with pytest.raises(ExplorerError, match="`text` must be a text \\(str\\)") as err:
        lm.score(bad)
    assert err.value.param == "text"


def test_token_ids_from_numpy_are_ids(gpt2):
    """Ids read from an array (numpy's int64) score as the same ids in a list."""
    lm = explorer.LM(gpt2)
    ids = gpt2.tokenize(TEXT, add_special_tokens=False)
    a, b = lm.score(np.asarray(ids, dtype=np.int64), k=0), lm.score(ids, k=0)
    np.testing.assert_array_equal(a.logprobs, b.logprobs)


def test_a_k_over_the_cap_names_no_server_flag(gpt2):
    lm = explorer.LM(gpt2)
    for call in (lambda: lm.score(TEXT, k=10**6), lambda: lm.lens(TEXT, k=10**6)):
        with pytest.raises(ExplorerError, match=r"`k` \(=1000000\) must be at most") as err:
            call()
        assert "--" not in err.value.message and "server" not in err.value.message


def test_an_empty_query_reads_as_english(gpt2):
    lm = explorer.LM(gpt2)
    with pytest.raises(ExplorerError) as err:
        lm.lookup(TEXT, [""])
    assert err.value.message.startswith("A query is empty") and err.value.param == "queries"


def test_a_branch_with_no_alternative_says_so(gpt2):
    lm = explorer.LM(gpt2)
    for empty in ([], ()):
        with pytest.raises(ExplorerError, match="`alternatives` is empty") as err:
            lm.branch(TEXT, empty, position=-2)
        assert err.value.param == "alternatives"


def test_the_surprisal_view_names_its_tokens(gpt2):
    lm = explorer.LM(gpt2)
    s = lm.surprisal(TEXT, window=3)
    drawn = s._repr_html_()
    r = lm.score(TEXT, k=0)
    for i in range(1, r.n):  # each scored dot's tooltip: its position and token
        assert f"<title>{i} " in drawn
    from explorer.render.text import visible

    assert all(html.escape(visible(t)) in drawn for t in r.token_text[1:])


def test_a_word_table_draws_its_rows(gpt2):
    lm = explorer.LM(gpt2)
    table = lm.word_table([{"item": 1, "text": TEXT}, {"item": 2, "text": "A dog ran."}])
    drawn = table._repr_html_()
    assert drawn.startswith('<div class="lx-view') and "<table" in drawn
    for row in table.words:
        assert html.escape(str(row["word_text"])) in drawn
    assert "first 500" not in drawn


def test_hidden_states_draw_and_have_a_frame(gpt2):
    lm = explorer.LM(gpt2)
    h = lm.hidden_states(TEXT, layers=[0, -1])
    frame = h.to_pandas()
    p, n, _ = h.shape
    assert len(frame) == p * n and list(frame.columns)[:4] == ["position", "token_id", "layer", "hook_name"]
    row = frame.iloc[n + 1]  # position 1, the second layer
    np.testing.assert_array_equal(row["vector"], h.values[1, 1])
    assert row["norm"] == pytest.approx(float(np.linalg.norm(h.values[1, 1].astype(np.float64))), rel=1e-12)
    drawn = h._repr_html_()
    assert f"<strong>{p:,}</strong> positions" in drawn and all(name in drawn for name in h.hook_names)


def test_word_table_and_hidden_states_write_a_file(gpt2):
    lm = explorer.LM(gpt2)
    table = lm.word_table([TEXT])
    h = lm.hidden_states(TEXT, layers=[-1])
    for page, inside in ((table.to_html(), table.words[0]["word_text"]), (h.to_html(), h.hook_names[0])):
        assert page.startswith("<!doctype html>") and html.escape(str(inside)) in page


def test_a_full_vocabulary_view_lists_the_top_twenty(gpt2):
    """`lm.score(text, k=-1)` drawn in a notebook: the view holds each position's top 20 and says so (a whole
    vocabulary a token was 0.3 MB of HTML on the default model); the result keeps every entry."""
    from explorer.notebook.page import VIEW_K, data_of

    lm = explorer.LM(gpt2)
    r = lm.score(TEXT, k=-1)
    assert r.full_logprobs is not None
    drawn = r._repr_html_()
    held = data_of(drawn)
    assert np.array(held["top_ids"]).shape == (r.n, VIEW_K)
    want = np.argsort(-np.nan_to_num(r.full_logprobs[3], nan=-np.inf), kind="stable")[:VIEW_K]
    np.testing.assert_array_equal(np.array(held["top_ids"][3]), want)  # a scored position: its true top 20
    assert held["top_ids"][0] == [] or all(i == -1 for i in held["top_ids"][0])
    assert "full_logprobs_f32_b64" not in held and f"top {VIEW_K} of the" in drawn
    assert len(drawn) < 4 * len(lm.score(TEXT, k=5)._repr_html_())
    assert r.full_logprobs.shape == (r.n, gpt2.vocab_size)  # the result itself is not cut


def test_words_out_with_an_ending_it_cannot_write_is_refused(gpt2_dir, tmp_path, capsys):
    """`words --out w.xlsx` wrote a CSV under an Excel name ("wrote w.xlsx"); now it stops before the model loads,
    naming the endings it writes, and writes nothing."""
    from explorer.cli import main

    path = tmp_path / "s.csv"
    path.write_text("item,text\n1,The dog barked.\n", encoding="utf-8")
    out = tmp_path / "w.xlsx"
    args = ["words", "--model", str(gpt2_dir), "--device", "cpu", "--file", str(path), "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "--out" in err and ".csv, .jsonl or .json" in err and "Traceback" not in err
    assert not out.exists()
    assert main([*args, "--format", "csv"]) == 0  # a format named: written under that name
    assert out.read_text(encoding="utf-8").startswith("item,")
