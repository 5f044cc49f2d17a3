"""What a lesson asks of a model: the probability of a word after a context, and the distribution of the next token.

- `continuation(engine, context, answer)`: the text `context + " " + answer` scored with its word ends (one forward
  pass, word_ends.score_words); `logprob` is the sum of the logprobs of the tokens from the end of the context on (as
  /v1/completions with `echo` scores that text), `logprob_word` the same words' corrected logprobs (results/words.py:
  the answer ends where a new word starts), in nats.
- `next_token(engine, context)`: the full next-token distribution after the context, (V,) float32 logprobs, read
  off a scoring pass over the context and one placeholder token (the placeholder's own number is not used).
"""

from __future__ import annotations

import numpy as np

from explorer.engine.interface import ModelEngine
from explorer.engine.scoring import score_ids, text_ids
from explorer.engine.word_ends import score_words
from explorer.results.words import with_ends, words


def joined(context: str, answer: str) -> str:
    """The text whose tail is the answer: one space between them, as the students see it."""
    return f"{context} {answer}"


def continuation(engine: ModelEngine, context: str, answer: str) -> tuple[float, float]:
    """(logprob, logprob_word) in nats of `answer` after `context` (see the module)."""
    text = joined(context, answer)
    ids, lead = text_ids(engine, text)
    r, ends = score_words(engine, ids, k=0, context_start=lead)
    cut = len(context)
    tail = np.asarray(r.offsets) >= cut  # (n,) tokens of the answer (its leading space with it)
    tail &= r.scored
    logprob = float(np.sum(r.logprobs[tail].astype(np.float64)))
    w = with_ends(words(r), ends)
    first = np.asarray(r.offsets)[w.starts] >= cut  # (w,) words of the answer
    corrected = w.corrected[first] if w.corrected is not None else np.array([np.nan])
    return logprob, float(np.sum(corrected))


def next_token(engine: ModelEngine, context: str) -> np.ndarray:
    """(V,) float32 logprobs of the token after `context`."""
    ids, _ = text_ids(engine, context)
    r = score_ids(engine, [*ids, 0], k=-1)
    row = r.rows.full
    assert row is not None  # k = -1 keeps every position's full row
    return np.asarray(row[-1], np.float32)[: engine.vocab_size]
