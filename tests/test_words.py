"""Word view: subword tokens merged into words (whitespace, punctuation, CJK, emoji), joint logprobs."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.engine import generate, score_text
from explorer.results.scores import TokenScores
from explorer.results.words import char_class, group_starts, word_starts, words
from explorer.rules.sampler import SamplerSettings


def split(text: str) -> list[str]:
    starts = np.flatnonzero(word_starts(text)).tolist() + [len(text)]
    return [text[a:b] for a, b in pairwise(starts)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("x", ["x"]),
        ("The quick brown fox.", ["The", " quick", " brown", " fox", "."]),
        ("don't stop", ["don't", " stop"]),
        ("'quoted'", ["'", "quoted", "'"]),
        ("Wait... what?!", ["Wait", "...", " what", "?!"]),
        ("  two  spaces\nnew", ["  two", "  spaces", "\nnew"]),
        ("trailing ", ["trailing", " "]),
        ("Grüße aus München!", ["Grüße", " aus", " München", "!"]),
        ("café naïve", ["café", " naïve"]),  # precomposed
        ("cafe\u0301 x", ["cafe\u0301", " x"]),  # combining accent stays in the word
        ("東京は大きい。", ["東", "京", "は", "大", "き", "い", "。"]),
        ("我爱 NLP", ["我", "爱", " NLP"]),
        ("한국어 텍스트", ["한국어", " 텍스트"]),  # Hangul: spaces separate words
        ("Привет, мир", ["Привет", ",", " мир"]),
        ("مرحبا بالعالم", ["مرحبا", " بالعالم"]),
        ("Emoji: 👋🙂", ["Emoji", ":", " 👋", "🙂"]),
        ("👍🏽 ok", ["👍🏽", " ok"]),  # skin tone modifier
        ("👨‍👩‍👧 family", ["👨‍👩‍👧", " family"]),  # zero-width-joiner sequence
        ("🇫🇷🇩🇪", ["🇫🇷", "🇩🇪"]),  # flags: regional indicator pairs
        (" 🇫🇷 x", [" 🇫🇷", " x"]),  # a flag after a space stays one word
        ("a🇫🇷🇩🇪🇫", ["a", "🇫🇷", "🇩🇪", "🇫"]),  # paired from the start of the run; an unpaired one alone
        ("❤️x", ["❤️", "x"]),  # variation selector
        ("3.14 + x_1", ["3", ".", "14", " +", " x", "_", "1"]),
        ("<b>bold</b>", ["<", "b", ">", "bold", "</", "b", ">"]),
    ],
)
def test_word_split_table(text, expected):
    assert split(text) == expected
    assert "".join(split(text)) == text


EMOJI = ["🇫🇷", "🇯🇵", "👨\u200d👩\u200d👧", "🏳️\u200d🌈", "1️⃣", "#️⃣", "👍🏽", "❤️"]  # flags, ZWJ sequences, keycaps


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(EMOJI),
    st.sampled_from(["", " ", "  ", "\n", "x ", "a", "東", ".", "🇩🇪", "🇩", " 🇩"]),
    st.sampled_from(["", " x", "x", "🇩🇪", ".", "\u0301"]),
)
def test_an_emoji_sequence_is_one_word(emoji, before, after):
    """No word starts inside a flag, a ZWJ sequence or a keycap, wherever it stands; one starts at it (or at the
    whitespace before it) except where a keycap's base runs on from its own class (`x1️⃣` as `x1`, `.#️⃣` as `.#`)."""
    text = before + emoji + after
    s = word_starts(text)
    a = len(before)
    inside = s[a + 1 : a + len(emoji)]
    paired = before.endswith("🇩") and not before.endswith("🇩🇪") and emoji[0] in "🇫🇯"  # a pair across: 🇩🇫
    if paired:
        return  # the run pairs from its start (🇩🇫, 🇷): not this emoji's own pair
    assert not inside.any(), split(text)
    keycap_runs_on = emoji.endswith("\u20e3") and char_class(emoji[0]) == char_class(before[-1:] or " ")
    own = a == 0 or before[-1].isspace() or s[a]
    assert own or keycap_runs_on, split(text)


@pytest.mark.parametrize(
    ("tokens", "groups"),
    [
        (["The", " qu", "ick", " fox", "."], [["The"], [" qu", "ick"], [" fox"], ["."]]),
        ([". ", "The"], [[". "], ["The"]]),  # the word ' The' starts inside '. ': a new group at 'The'
        (["東京", "は"], [["東京"], ["は"]]),  # one token, two words: kept together
        (
            ["x", "", "👋", "🙂"],
            [["x"], ["", "👋"], ["🙂"]],
        ),  # a token holding part of a character joins its completion
        ([" ", "Hello"], [[" ", "Hello"]]),  # SentencePiece's lone '▁' then the word
        (["<s>", " Hi"], [["<s>"], [" Hi"]]),
        (["a", ""], [["a", ""]]),  # an unfinished character at the end
    ],
)
def test_token_groups_table(tokens, groups):
    starts = np.flatnonzero(group_starts(tokens)).tolist() + [len(tokens)]
    assert [tokens[a:b] for a, b in pairwise(starts)] == groups


TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "Grüße aus München! 東京 is big. Emoji: 👋🙂",
    "def add(a, b):\n    return a + b\n",
    "<script>alert(1)</script> & <b>bold</b>",
    "x",
]


@pytest.mark.parametrize("text", TEXTS)
def test_word_sums_are_token_sums(engine, text):
    r = score_text(engine, text, k=1)
    w = words(r)
    assert "".join(w.text) == "".join(r.token_text)
    assert w.starts[0] == 0 and w.ends[-1] == r.n and (w.starts[1:] == w.ends[:-1]).all()
    assert abs(np.nansum(w.logprobs) - r.total_logprob) < 1e-6  # the sum of word logprobs is the sum of token logprobs
    for j in range(w.n):  # each word: its own tokens, summed independently
        toks = [p for p in w.tokens(j) if r.scored[p]]
        assert (np.isnan(w.logprobs[j]) and not toks) or abs(
            w.logprobs[j] - sum(float(r.logprobs[p]) for p in toks)
        ) < 1e-6
        assert w.complete[j] == all(r.scored[p] for p in w.tokens(j))
    assert (w.word_of_token[w.starts] == np.arange(w.n)).all() and len(w.word_of_token) == r.n
    np.testing.assert_allclose(w.surprisal_bits, -w.logprobs / np.log(2))


def test_words_follow_the_text_not_the_tokenizer(gpt2, llama):
    text = "The quick brown fox jumps."
    for engine in (gpt2, llama):
        w = words(score_text(engine, text, k=1))
        shown = [t for t in w.text if t != "<s>"]
        assert [t.strip() for t in shown] == ["The", "quick", "brown", "fox", "jumps", "."], shown


def test_generated_and_empty_results(gpt2):
    r = generate(gpt2, gpt2.encode("The lazy"), SamplerSettings(max_tokens=6, temperature=0, logprobs=1))[0]
    w = words(r)
    assert w.ends[-1] == r.n and abs(np.nansum(w.logprobs) - r.total_logprob) < 1e-6
    empty = TokenScores(
        "m",
        np.zeros(0, np.int64),
        [],
        0,
        np.zeros(0, np.float32),
        np.zeros(0, np.int64),
        np.zeros(0, np.float32),
        np.zeros((0, 0), np.int64),
        np.zeros((0, 0), np.float32),
        {},
    )
    assert words(empty).n == 0


# ---- the Words tab's handlers -------------------------------------------------------------------
@pytest.fixture(scope="module")
def tab(gpt2):
    from explorer.ui.tabs.words import WordsTab
    from tests.helpers.page import build_tab

    return build_tab(WordsTab, gpt2)


def test_words_tab(tab, gpt2):
    import html
    import re

    import gradio as gr

    from explorer.render.text import visible

    text = "Grüße <img src=x onerror=alert(1)> 東京 👋"
    r = score_text(gpt2, text, k=1)
    w = words(r)
    seen: list = []
    out = tab.show([r], "surprisal", progress=lambda *a, **kw: seen.append((a, kw)))
    assert seen and seen[-1][0] == ((r.n, r.n),) and "second pass" in seen[-1][1]["desc"]  # the pass's progress
    assert "second full pass" in out[tab.note]
    heat = out[tab.heatmap]
    assert heat.count("data-pos=") == w.n and "<img" not in heat
    shown = html.unescape(re.sub(r"<br>|<wbr>", "", re.sub(r"<span[^>]*>|</span>|</?div[^>]*>", "", heat)))
    assert shown == visible(text)
    assert f"{np.nansum(w.logprobs):.3f}" in out[tab.summary] and len(out[tab.plot].data[0].y) == int(
        (~np.isnan(w.logprobs)).sum()
    )
    j = int(np.argmax(w.n_tokens))  # a word of several tokens
    got = tab.select([r], j)
    assert got[tab.table]["pos"].tolist() == list(w.tokens(j)) and got[tab.word] == j
    np.testing.assert_allclose(got[tab.table]["logprob"].dropna().sum(), w.logprobs[j], atol=1e-3)
    assert "c" in tab.restyle([r], "probability", j)[tab.heatmap]
    for call, needle in (
        (lambda: tab.show([], "probability"), "Score a text"),
        (lambda: tab.select([r], 999), "outside"),
    ):
        with pytest.raises(gr.Error, match=needle):
            call()
