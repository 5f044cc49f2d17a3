"""What a step shows once revealed: one chart of the class against the model, and the scoreboard of the steps so far.

The chart is data (the pages draw it): one row per word, the class's count and share of the answers beside the
model's probability of that word as a whole word, both on one absolute 0-1 scale; the word that came is marked, every
word the class gave is listed, then the model's likeliest words nobody said. Where the model's entry is not a word a
student could type (punctuation, a piece that continues the word before, the start of a longer word) the row says so
in plain words (`plain`). Pure functions of a step's state: no model runs here.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from explorer.lessons.schema import Step, bare

MODEL_ROWS = 5  # the model's likeliest words nobody said, at most
PIECE = 2.0  # a token this many times likelier than the same text as a whole word mostly starts a longer word

MARKS = {  # punctuation the model may predict, in words
    ",": "a comma",
    ".": "a full stop",
    "!": "an exclamation mark",
    "?": "a question mark",
    ";": "a semicolon",
    ":": "a colon",
    "'": "an apostrophe",
    '"': "a quotation mark",
    "(": "an opening bracket",
    ")": "a closing bracket",
    "-": "a dash",
    "—": "a dash",
    "...": "an ellipsis",
    "…": "an ellipsis",
}


def probability(logprob: float | None, logprob_word: float | None) -> float | None:
    """A word's probability as the chart shows it: as a whole word where known, else its tokens'."""
    x = logprob_word if logprob_word is not None and math.isfinite(logprob_word) else logprob
    return None if x is None else math.exp(x)


def kind_of(word: str, attached: bool = False, logprob: float | None = None, logprob_word: float | None = None) -> str:
    """What a model's entry is: "word", "mark" (punctuation), "piece" (it continues the word before the blank) or
    "start" (a word, but mostly the start of a longer one: its token is PIECE times likelier than the whole word)."""
    if not re.search(r"\w", word):
        return "mark"
    if attached:
        return "piece"
    known = logprob is not None and logprob_word is not None and math.isfinite(logprob_word)
    return "start" if known and logprob - logprob_word > math.log(PIECE) else "word"  # type: ignore[operator]


def plain(word: str, kind: str) -> str:
    """An entry that is not simply a word, in plain words ("" for a word)."""
    if kind == "mark":
        return MARKS.get(word) or ("a new line" if "\n" in word else "a symbol, or a piece of one")
    return {"piece": "a piece that continues the word before the blank", "start": "the start of a longer word"}.get(
        kind, ""
    )


def chart(step: Step, counts: Counter, numbers: dict, model_top: Sequence[dict] | None) -> list[dict]:
    """The rows: {"word", "count", "share", "p", "actual", "said", "kind", "plain"}; the class's words by count (the word
    that came first among equals), then the model's likeliest words nobody said, by probability. `p` is None where an
    answer waits for its numbers (on ZeroGPU)."""
    total = sum(counts.values())
    truth = bare(step.actual) if step.actual else None
    rows = []
    for word, c in sorted(counts.items(), key=lambda wc: (-wc[1], bare(wc[0]) != truth)):
        n = numbers.get(word)
        rows.append(
            {
                "word": word,
                "count": c,
                "share": c / total,
                "p": probability(n.logprob, n.logprob_word) if n is not None else None,
                "actual": truth is not None and bare(word) == truth,
                "said": True,
                "kind": "word",
                "plain": "",
            }
        )
    said = {bare(w) for w in counts} | {w for w in counts}
    unsaid = [e for e in model_top or [] if e["answer"] not in said and (bare(e["answer"]) or e["answer"]) not in said]
    model = [_model_row(e, truth) for e in unsaid[:MODEL_ROWS]]
    came = any(r["actual"] for r in rows + model)
    if truth and not came and step.actual in numbers:  # the word that came, said by nobody: first of the model's
        n = numbers[step.actual]
        model.insert(
            0, _model_row({"answer": step.actual, "logprob": n.logprob, "logprob_word": n.logprob_word}, truth)
        )
    return rows + model


def _model_row(e: dict, truth: str | None) -> dict:
    """A row for a model's entry nobody said."""
    attached = bool(e.get("attached"))
    kind = kind_of(e["answer"], attached, e["logprob"], e.get("logprob_word"))
    return {
        "word": e["answer"],
        "count": 0,
        "share": 0.0,
        "p": probability(e["logprob"], e.get("logprob_word")),
        "actual": truth is not None and bare(e["answer"]) == truth and not attached,
        "said": False,
        "kind": kind,
        "plain": plain(e["answer"], kind),
    }


def scoreboard(done: Sequence[tuple[Step, Counter, list[dict] | None]]) -> dict:
    """The class against the model over the revealed guess steps (step, the class's counts, the chart's rows):
    {"steps", "class_right", "model_right", "beaten": [step numbers]}. The class guessed a word where the word that
    came is (among) its most given; the model where it is its likeliest word; the class beat the model where it gave
    the word that came a larger share than the model's probability of it."""
    out: dict = {"steps": 0, "class_right": 0, "model_right": 0, "beaten": []}
    for i, (step, counts, rows) in enumerate(done):
        if step.kind != "guess" or not step.actual or rows is None:
            continue
        truth = bare(step.actual)
        out["steps"] += 1
        most = max(counts.values(), default=0)
        out["class_right"] += int(most > 0 and any(bare(w) == truth and c == most for w, c in counts.items()))
        words = [r for r in rows if r["p"] is not None and r["kind"] in ("word", "start")]
        best = max(words, key=lambda r: r["p"], default=None)
        out["model_right"] += int(best is not None and best["actual"])
        came = [r for r in rows if r["actual"]]
        share = sum(r["share"] for r in came)
        p = max((r["p"] for r in came if r["p"] is not None), default=None)
        if came and p is not None and share > p:
            out["beaten"].append(i)
    return out
