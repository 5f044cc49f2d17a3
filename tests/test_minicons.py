"""Our word surprisal against minicons 0.3.39 on the tiny GPT-2 (`make test-minicons`; minicons runs in its own venv,
tests/helpers/minicons_peer.py, on the same saved folder).

Our side is the docs' default: `lm.words(text)` scores from the document start (`<|endoftext|>` here), which is what
minicons' `bos_token=True` puts first on GPT-2. Then, all in nats:

1. token ids are the same and every token's logprob agrees to 1e-3 (measured ~1e-6);
2. a space-separated word without punctuation (one word both ways) has the same summed logprob to 1e-3;
3. minicons' `bow_correction=True` is the same formula with another set of word-starting tokens: its value is
   summed + log M_mc(after the word) - log M_mc(before it), M_mc the mass of the tokens whose text starts with `Ġ`
   (its `bow_subword_idx`), with no "before" term for the text's first word; checked to 1e-3 against masses from a
   plain transformers `log_softmax` of the same ids;
4. ours is summed + log M_ours(after) - log M_ours(before), M_ours our sets (results/words.py: after a word of
   letters, any token starting with whitespace, punctuation, a symbol, CJK, or a special token; before the first
   word, every token that can start a text), to 1e-3 from the same plain `log_softmax`. So the two corrected
   numbers differ by exactly the two sets' masses and the first word's "before" term: the documented differences
   (docs/researchers.md), stated here as numbers.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import explorer
from explorer.results.words import END_SETS, end_masks
from tests.helpers.minicons_peer import Unavailable, run_minicons, venv_python

pytestmark = pytest.mark.minicons

TEXTS = [
    "The key to the cabinets is on the table.",
    "The horse raced past the barn fell.",
    "A dog ran away",
    "She said that the old man the boats",
]
TOL = 1e-3  # nats


@pytest.fixture(scope="module")
def peer(gpt2_dir) -> dict:
    try:
        venv_python()
    except Unavailable as why:
        pytest.skip(f"minicons cannot run here ({why}): `make test-minicons` makes its venv, .minicons-venv")
    return run_minicons(str(gpt2_dir), TEXTS, bos_token=True)


@pytest.fixture(scope="module")
def ours(gpt2_dir):
    return explorer.load(str(gpt2_dir), engine="torch", device="cpu")


def plain_logprobs(gpt2_dir, ids: list[int]) -> np.ndarray:
    """(T, V) float64 log_softmax of transformers' own logits: the independent reference."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(gpt2_dir, dtype=torch.float32).eval()
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0].double()
    return torch.log_softmax(logits, -1).numpy()


def logmass(lp: np.ndarray, row: int, mask: np.ndarray) -> float:
    return float(np.logaddexp.reduce(lp[row][mask]))


def chunk_of(text: str, row: dict) -> int:
    """Which space-separated chunk of `text` (minicons' word) our word row ends in."""
    return text[: row["char_end"]].count(" ")


def alpha_words(ws) -> list[int]:
    """Our word indices of the words made of letters whose word before is one too (or the document start)."""
    w = ws.words
    keep = []
    for j in range(1, w.n):
        prev = w.text[j - 1].strip()
        if w.text[j].strip().isalpha() and (j == 1 or prev.isalpha()):
            keep.append(j)
    return keep


def test_tokens_and_summed_words_equal_minicons(ours, peer):
    worst = 0.0
    for t, text in enumerate(TEXTS):
        s = ours.score(text, k=0, context_start=True)
        assert s.token_ids.tolist() == peer["ids"][t]  # minicons' BOS is our document start: <|endoftext|>
        got, want = s.logprobs[1:], np.array(peer["token_logprobs"][t])
        worst = max(worst, float(np.abs(got - want).max()))
        np.testing.assert_allclose(got, want, atol=TOL)
        for r in ours.words(text).rows():
            chunk = chunk_of(text, r)
            if r["text"].strip() == peer["words"][t][chunk]:  # away from punctuation: one word both ways
                assert r["logprob_sum"] == pytest.approx(peer["word_logprobs"][t][chunk], abs=TOL), (text, r)
    print(f"\nminicons token logprobs: largest difference {worst:.2e} nats")


def test_corrected_words_differ_from_minicons_only_by_the_word_start_sets(ours, peer, gpt2_dir):
    engine = ours.engine
    masks = end_masks(engine.vocab[: engine.vocab_size], engine.special_ids)  # (K, V) our sets
    row = {name: i for i, name in enumerate(END_SETS)}
    bow = np.zeros(engine.vocab_size, bool)
    bow[peer["bow_ids"]] = True  # minicons' set: tokens whose text starts with Ġ
    gaps = []
    for t, text in enumerate(TEXTS):
        ws = ours.words(text)
        w = ws.words
        ids = ws.scores.token_ids.tolist()
        lp = plain_logprobs(gpt2_dir, ids)
        theirs = peer["word_logprobs_bow"][t]
        chunks = {r["word"] + ws.lead: chunk_of(text, r) for r in ws.rows()}  # keyed by index in ws.words
        for j in alpha_words(ws):
            if w.text[j].strip() != peer["words"][t][chunks[j]]:
                continue  # `table.` is one word to minicons: only words away from punctuation compare
            a, b = int(w.starts[j]), int(w.ends[j])
            first = j == 1  # the word right after the document start
            summed = float(lp[np.arange(a - 1, b - 1), ids[a:b]].sum())
            # 3. minicons: the same formula with its set, and no "before" term for the first word
            mc = summed + logmass(lp, b - 1, bow) - (0.0 if first else logmass(lp, a - 1, bow))
            assert theirs[chunks[j]] == pytest.approx(mc, abs=TOL), (text, w.text[j])
            # 4. ours: our sets, "before" the first word every token that can start a text
            before = masks[row["start"]] if first else masks[row["word"]]
            mine = summed + logmass(lp, b - 1, masks[row["word"]]) - logmass(lp, a - 1, before)
            assert w.corrected[j] == pytest.approx(mine, abs=TOL), (text, w.text[j])
            gaps.append(abs(float(w.corrected[j]) - theirs[chunks[j]]))
    print(f"\nours vs minicons' bow_correction, words of letters: {min(gaps):.3f}..{max(gaps):.3f} nats apart")
