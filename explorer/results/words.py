"""Words, not subwords: consecutive tokens merged into words, each with its joint logprob.

Pure functions of TokenScores (numpy only). A word is found on the characters of the text:
- a run of whitespace starts a word and joins the word after it (as byte-level BPE and
  SentencePiece attach a space to the following token);
- letters, digits and marks run together (an apostrophe between letters stays inside: "don't");
- a run of punctuation (ASCII symbols included) is one word; each other symbol or emoji is one word (with its modifiers,
  variation selectors and zero-width-joiner sequences);
- each CJK character (Han, kana) is a word.
Tokens are then grouped: a token starts a new group when a word starts after the previous
token's first character, up to and including its own; a token holding part of a character
joins the token that completes it. A token that spans several words keeps them in one group.
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass

import numpy as np

from explorer.results.scores import TokenScores

_CJK = (
    (0x3040, 0x30FF),
    (0x31F0, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0xFF66, 0xFF9F),
    (0x20000, 0x3FFFF),
)
_JOINERS = {0x200D, 0x20E3}  # zero-width joiner, combining keycap
_APOSTROPHES = {"'", "’"}


def char_class(c: str) -> str:
    """'space', 'word', 'punct', 'symbol', 'cjk' or 'join' (attaches to the character before it)."""
    o = ord(c)
    if c.isspace():
        return "space"
    if any(lo <= o <= hi for lo, hi in _CJK):
        return "cjk"
    cat = unicodedata.category(c)
    if cat[0] == "M" or o in _JOINERS or 0xFE00 <= o <= 0xFE0F or 0x1F3FB <= o <= 0x1F3FF or 0xE0020 <= o <= 0xE007F:
        return "join"
    if cat[0] in "LN":
        return "word"
    if cat[0] == "P" or (cat[0] == "S" and o < 128):  # ASCII symbols (< > + = $ ...) group as punctuation
        return "punct"
    return "symbol"  # S*, and anything else (controls, private use, U+FFFD)


def word_starts(text: str) -> np.ndarray:
    """(len(text),) bool: True where a word begins."""
    cls = [char_class(c) for c in text]
    for i, c in enumerate(text):  # an apostrophe between two letters is part of the word
        if c in _APOSTROPHES and 0 < i < len(text) - 1 and cls[i - 1] == "word" and cls[i + 1] == "word":
            cls[i] = "word"
    out = np.zeros(len(text), bool)
    for i, c in enumerate(cls):
        p = cls[i - 1] if i else None
        if i == 0:
            out[i] = True
        elif c == "join" or text[i - 1] == "\u200d" or (_regional(text[i]) and _regional(text[i - 1]) and out[i - 1]):
            out[i] = False  # modifiers, ZWJ sequences and flag pairs stay with what they modify
        elif c == "space":
            out[i] = p != "space"
        elif p == "space":
            out[i] = False  # whitespace joins the word after it
        elif c in ("word", "punct"):
            out[i] = p != c and not (p == "join" and _base_class(cls, i) == c)
        else:  # symbol, cjk: one character each
            out[i] = True
    return out


def _regional(c: str) -> bool:
    return 0x1F1E6 <= ord(c) <= 0x1F1FF


def _base_class(cls: list[str], i: int) -> str:
    """Class of the nearest character before i that is not a modifier."""
    j = i - 1
    while j > 0 and cls[j] == "join":
        j -= 1
    return cls[j]


@dataclass(eq=False)
class Words:
    starts: np.ndarray  # (w,) int64, first token of each word
    ends: np.ndarray  # (w,) int64, one past its last token
    text: list[str]  # w strings, the characters its tokens complete
    logprobs: np.ndarray  # (w,) float64, joint logprob: the sum of its scored tokens' logprobs; NaN when none is scored
    n_scored: np.ndarray  # (w,) int64, how many of its tokens are scored

    @property
    def n(self) -> int:
        return len(self.starts)

    @property
    def n_tokens(self) -> np.ndarray:
        return self.ends - self.starts

    @property
    def complete(self) -> np.ndarray:
        """(w,) bool: every token of the word is scored (else its logprob misses some)."""
        return self.n_scored == self.n_tokens

    @property
    def probs(self) -> np.ndarray:
        return np.exp(self.logprobs)

    @property
    def surprisal_bits(self) -> np.ndarray:
        return -self.logprobs / math.log(2)

    @property
    def word_of_token(self) -> np.ndarray:
        """(n,) index of the word holding each token."""
        return np.repeat(np.arange(self.n), self.n_tokens)

    def tokens(self, j: int) -> range:
        return range(int(self.starts[j]), int(self.ends[j]))


def group_starts(token_text: list[str]) -> np.ndarray:
    """(n,) bool: token i begins a word group (see the module's rules)."""
    n = len(token_text)
    if n == 0:
        return np.zeros(0, bool)
    text = "".join(token_text)
    off = np.concatenate([[0], np.cumsum([len(t) for t in token_text])[:-1]]).astype(np.int64)  # (n,)
    count = np.concatenate([[0], np.cumsum(word_starts(text))])  # count[j]: word starts before character j
    lo = np.minimum(np.concatenate([[-1], off[:-1]]) + 1, len(text))  # after the previous token's first character
    hi = np.minimum(off + 1, len(text))  # ... up to and including this token's first character
    out = count[hi] > count[lo]
    out[0] = True
    return out


def words(r: TokenScores) -> Words:
    """The words of `r`, each with the joint logprob of its tokens."""
    starts = np.flatnonzero(group_starts(r.token_text)).astype(np.int64)
    ends = np.concatenate([starts[1:], [r.n]]).astype(np.int64) if r.n else np.zeros(0, np.int64)
    scored = r.scored
    lp = np.where(scored, r.logprobs.astype(np.float64), 0.0)
    total = np.add.reduceat(lp, starts) if r.n else np.zeros(0)
    n_scored = np.add.reduceat(scored.astype(np.int64), starts) if r.n else np.zeros(0, np.int64)
    text = ["".join(r.token_text[a:b]) for a, b in zip(starts.tolist(), ends.tolist())]
    return Words(starts, ends, text, np.where(n_scored > 0, total, np.nan), n_scored)
