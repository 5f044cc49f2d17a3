"""Words, not subwords: consecutive tokens merged into words, each with its joint logprob.

Pure functions of TokenScores (numpy only). A word is found on the characters of the text:
- a run of whitespace starts a word and joins the word after it (as byte-level BPE and
  SentencePiece attach a space to the following token);
- letters, digits and marks run together (an apostrophe between letters stays inside: "don't");
- a run of punctuation (ASCII symbols included) is one word; each other symbol or emoji is one word (with its modifiers,
  variation selectors and zero-width-joiner sequences; a flag, two regional indicators, paired from the start of
  their run wherever it stands: after a space, a letter or at the start);
- each CJK character (Han, kana) is a word.
Tokens are then grouped: a token starts a new group when a word starts after the previous
token's first character, up to and including its own; a token holding part of a character
joins the token that completes it. A token that spans several words keeps them in one group.

Corrected word surprisal (Pimentel & Meister 2024, "How to compute the probability of a word"; Oh & Schuler 2024):
with tokenizers that mark a word's start on its first token (`Ġ`, `▁`), the tokens' summed logprob of a word
leaves out that the word ends there, i.e. that the next token starts a new word. For word w = tokens a..b-1,
    log p(w | before) = sum_i log p(t_i | ...) + log P(next starts a word | ..t_{b-1}) - log P(next starts a word | ..t_{a-1})
the last term being the previous word's end mass (so the words' logprobs chain to the text's). Which next tokens
start a new word follows this module's own segmentation (`end_masks`): after a word of letters, a token that
starts with whitespace, punctuation, a symbol or a CJK character; after punctuation, one that starts with
whitespace, a letter, a symbol or CJK; after a symbol or CJK character, any but a modifier; after an unpaired
regional indicator, any but a modifier or a regional indicator (that completes the flag); after a zero-width joiner,
only a special token; special tokens (EOS) always. Choices of ours, said in docs/researchers.md: tokens whose first byte does not start a UTF-8 character alone
(byte-fallback / byte-level pieces of a non-ASCII character) count as a word start only after a symbol/CJK word
and after a document start; an apostrophe-initial token ("'t") counts as a word start after a letter.
The first word of a text has no "before" mass: after a document start (a special token: BOS, `--context-start`)
it is the mass of every token that can start a text (`start`); a word holding a special token has none.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explorer.results.scores import TokenScores
from explorer.results.text import token_label

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
    run = 0  # regional indicators just before i
    for i, c in enumerate(cls):
        p = cls[i - 1] if i else None
        paired = _regional(text[i]) and run % 2 == 1  # the second letter of a flag (a pair), wherever the pair stands
        run = run + 1 if _regional(text[i]) else 0
        if i == 0:
            out[i] = True
        elif c == "join" or text[i - 1] == "\u200d" or paired:
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
    corrected: np.ndarray | None = (
        None  # (w,) float64, corrected word logprob (see the module); NaN: none; None: not asked
    )

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

    @property
    def corrected_bits(self) -> np.ndarray | None:
        """(w,) corrected surprisal in bits, or None when no end masses were given."""
        return None if self.corrected is None else -self.corrected / math.log(2)


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


# --- corrected word logprobs: which next tokens end a word, and the masses the engine gives for them ---------------

END_SETS = ("word", "punct", "new", "space", "start", "flag", "zwj")  # row c of end_masks: after a word ending in c
# ("flag": a regional indicator waiting for the second letter of its flag; "zwj": a zero-width joiner)
_FOLLOWS = {  # class of a token's first character -> the END_SETS after which it starts a new word
    "space": ("word", "punct", "new", "start", "flag"),
    "word": ("punct", "new", "start", "flag"),
    "punct": ("word", "new", "start", "flag"),
    "new": ("word", "punct", "new", "start", "flag"),  # a symbol or CJK character is a word of its own
    "regional": ("word", "punct", "new", "start"),  # a flag's letter: after an unpaired one it completes that flag
    "lead": ("new", "start", "flag"),  # the first byte of a character its token does not complete (see the module)
    "join": ("start",),  # a modifier continues whatever is before it
    "inner": (),  # a UTF-8 continuation byte
    "special": END_SETS,  # EOS, BOS and other special tokens
}


def first_class(b: bytes) -> str:
    """Class of a token by its first character: a key of _FOLLOWS ('special' for an empty token)."""
    if not b:
        return "special"
    if 0x80 <= b[0] < 0xC0:
        return "inner"
    c = b[:4].decode("utf-8", errors="ignore")[:1]
    if not c or len(c.encode()) > len(b) or b[: len(c.encode())] != c.encode():
        return "lead"  # its first character is not whole in this token
    if _regional(c):
        return "regional"
    cls = char_class(c)
    return "new" if cls in ("symbol", "cjk") else cls


def token_classes(vocab: Sequence[bytes], special_ids: set[int]) -> tuple[list[str], np.ndarray]:
    """(the classes, _FOLLOWS' keys; each token's class as an index into them (V,) int64): a token's class is its
    first character's (first_class), 'special' for a special token."""
    names = list(_FOLLOWS)
    index = {name: i for i, name in enumerate(names)}
    cls = [index["special" if i in special_ids else first_class(b)] for i, b in enumerate(vocab)]
    return names, np.array(cls, np.int64)


def class_sets(names: list[str]) -> np.ndarray:
    """(len(END_SETS), len(names)) bool: row c marks the classes whose tokens start a new word after a word ending
    in class c (every END_SETS row is a union of token classes)."""
    return np.array([[c in _FOLLOWS[name] for name in names] for c in END_SETS], bool)


def end_masks(vocab: Sequence[bytes], special_ids: set[int]) -> np.ndarray:
    """(len(END_SETS), V) bool: row c marks the tokens that start a new word after a word ending in class c."""
    names, cls = token_classes(vocab, special_ids)
    return class_sets(names)[:, cls]


def end_class(text: str, end: int | None = None) -> str:
    """The END_SETS row after text[:end] (word_starts' rules): 'zwj' after a zero-width joiner, 'flag' after an
    unpaired regional indicator, else the class of the last character that is not a modifier."""
    end = len(text) if end is None else end
    if end == 0:
        return "space"
    if text[end - 1] == "\u200d":
        return "zwj"
    run = 0  # regional indicators that end text[:end]
    while run < end and _regional(text[end - 1 - run]):
        run += 1
    if run % 2:
        return "flag"
    j = end - 1
    while j >= 0 and char_class(text[j]) == "join":
        j -= 1
    last = char_class(text[j]) if j >= 0 else "symbol"  # only modifiers: what follows starts a word, as word_starts
    if last == "space" and j < end - 1:
        return "new"  # a modifier after whitespace: word_starts starts a word after it
    return "new" if last in ("symbol", "cjk") else last


@dataclass(eq=False)
class WordEnds:
    """What the engine gives for corrected word logprobs, per token position of a TokenScores."""

    logmass: np.ndarray  # (n, len(END_SETS)) float64: row i = log P(the next token is in END_SETS[c] | tokens[:i+1])
    special: np.ndarray  # (n,) bool: the token is a special token (a document start, EOS)


def corrected_logprobs(w: Words, e: WordEnds) -> np.ndarray:
    """(w,) float64: each word's logprob with its end (see the module); NaN for a word with an unscored or a
    special token."""
    out = np.full(w.n, np.nan)
    col = {name: i for i, name in enumerate(END_SETS)}
    text = "".join(w.text)  # a flag's pairs can run across words: classes are read on the whole text
    cut = np.cumsum([0] + [len(t) for t in w.text]).tolist()  # cut[j]: where word j starts in text
    for j in range(w.n):
        a, b = int(w.starts[j]), int(w.ends[j])
        if not w.complete[j] or e.special[a:b].any():
            continue
        end = e.logmass[b - 1, col[end_class(text, cut[j + 1])]]
        if j == 0:
            before = 0.0  # nothing before the text: P(a word starts) = 1
        elif e.special[int(w.starts[j - 1]) : a].any():
            before = e.logmass[a - 1, col["start"]]  # after a document start
        else:
            before = e.logmass[a - 1, col[end_class(text, cut[j])]]  # the previous word's end mass
        out[j] = w.logprobs[j] + end - before
    return out


def with_ends(w: Words, e: WordEnds) -> Words:
    """`w` with its corrected logprobs."""
    return Words(w.starts, w.ends, w.text, w.logprobs, w.n_scored, corrected_logprobs(w, e))


WORD_COLUMNS = (
    "word",
    "text",
    "char_start",
    "char_end",
    "tokens",
    "token_ids",
    "n_scored",
    "logprob_sum",
    "surprisal_sum_bits",
    "surprisal_sum_nats",
    "logprob_corrected",
    "surprisal_corrected_bits",
    "surprisal_corrected_nats",
    "document_start",  # the token(s) the text was scored after (`<|endoftext|>`, a Llama's `<s>`); None: none
)


def leading(special: np.ndarray) -> int:
    """How many tokens lead as special tokens (a document start, a BOS) before the text."""
    return int(np.argmin(special)) if not special.all() else len(special)


def first_word(r: TokenScores, w: Words, lead: int | None = None) -> int:
    """The index in `w` of the text's first word: how many words are made of the `lead` leading tokens alone (a
    document start; default r.context_start). A row's `word` is its index in `w` less this."""
    lead = r.context_start if lead is None else lead
    return int(np.count_nonzero(w.ends <= lead))


def word_rows(r: TokenScores, w: Words, lead: int | None = None) -> list[dict]:
    """One dict per word of the text (WORD_COLUMNS): its text, character span in the text after the `lead` leading
    tokens (default r.context_start), tokens, its summed and corrected numbers in nats and bits (None where NaN,
    not computed, or not every token scored), and the document start the text was scored after (None: none).
    The leading tokens (a document start: BOS, `--context-start`) are not words of the text: a word made of them
    alone gets no row, and `word` counts the text's own words from 0 whatever was put before it (its index in `w`
    less first_word); a word that begins inside them, were there one, starts at character 0."""
    lead = r.context_start if lead is None else lead
    first = first_word(r, w, lead)
    start = "".join(r.token_text[:lead]) or None  # the document start the text was scored after
    base = int(r.offsets[lead]) if lead < r.n else len(r.text)
    off = np.maximum(r.offsets - base, 0)  # (n,) character offsets in the text after the leading tokens
    total = len(r.text) - base

    def num(x: float) -> float | None:
        return float(x) if math.isfinite(x) else None  # NaN: unknown; -inf: written as unknown too

    rows = []
    for j in range(w.n):
        a, b = int(w.starts[j]), int(w.ends[j])
        if b <= lead:
            continue  # the document start, not a word of the text
        lp = num(float(w.logprobs[j])) if w.complete[j] else None
        cl = num(float(w.corrected[j])) if w.corrected is not None else None
        rows.append(
            {
                "word": j - first,
                "text": w.text[j],
                "char_start": int(off[a]),
                "char_end": int(off[b]) if b < r.n else total,
                "tokens": r.token_text[a:b],
                "token_ids": [int(i) for i in r.token_ids[a:b]],
                "n_scored": int(w.n_scored[j]),
                "logprob_sum": lp,
                "surprisal_sum_bits": None if lp is None else -lp / math.log(2),
                "surprisal_sum_nats": None if lp is None else -lp,
                "logprob_corrected": cl,
                "surprisal_corrected_bits": None if cl is None else -cl / math.log(2),
                "surprisal_corrected_nats": None if cl is None else -cl,
                "document_start": start,
            }
        )
    return rows


def shown_tokens(r: TokenScores, w: Words, j: int) -> str:
    """Word j's tokens as the page shows them (results.text.token_label), joined by single spaces."""
    return " ".join(token_label(r.token_text[p], r.token_bytes[p]) for p in w.tokens(j))
