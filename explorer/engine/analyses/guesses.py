"""What a lesson asks of a model: the probability of a word after a context, and the distribution of the next token.

- `continuation(engine, context, answer)`: the text `context + " " + answer` scored with its word ends (one forward
  pass, word_ends.score_words); `logprob` is the sum of the logprobs of the tokens from the end of the context on (as
  /v1/completions with `echo` scores that text), `logprob_word` the same words' corrected logprobs (results/words.py:
  the answer ends where a new word starts), in nats.
- `next_token(engine, context)`: the full next-token distribution after the context (a NextToken): one
  pass over the context, the output layer on its last position only (whatif.logits_row), a row of its own.
"""

from __future__ import annotations

import numpy as np

from explorer.engine.analyses.whatif import logits_row
from explorer.engine.interface import ModelEngine
from explorer.engine.passes.scoring import text_ids
from explorer.engine.passes.word_ends import score_words
from explorer.results.next_token import NextToken
from explorer.results.words import with_ends, words


def joined(context: str, answer: str, sep: str = " ") -> str:
    """The text whose tail is the answer: one space between them as the students see it (`sep`: "" for a token that
    attaches to the word before it, a comma)."""
    return f"{context}{sep}{answer}"


def continuation(engine: ModelEngine, context: str, answer: str, sep: str = " ") -> tuple[float, float]:
    """(logprob, logprob_word) in nats of `answer` after `context` and `sep` (see the module)."""
    text = joined(context, answer, sep)
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


def next_token(engine: ModelEngine, context: str) -> NextToken:
    """The token after `context`: its (V,) float32 logprobs (an array of its own: nothing else is kept with it)."""
    ids, _ = text_ids(engine, context)
    logits = logits_row(engine, [*ids, 0], len(ids)).astype(np.float64)[: engine.vocab_size]  # (V,)
    top = np.max(logits)
    lp = (logits - top - np.log(np.sum(np.exp(logits - top)))).astype(np.float32)
    return NextToken(engine.name, context, lp, engine.vocab)
