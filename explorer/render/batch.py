"""Batch -> the page's table of texts (one row each, sortable) and its summary line. Pure functions (pandas)."""

from __future__ import annotations

import math

import pandas as pd

from explorer.results.batch import Batch, BatchRow

PREVIEW_CHARS = 80  # a text's characters shown in the table (the whole text opens in the Score tab)
TABLE_COLUMNS = {  # the page's column -> the row's value (rounded); the main figures before the text (a phone)
    "#": lambda r: r.index + 1,
    "id": lambda r: r.id,
    "perplexity": lambda r: _num(r.perplexity, 2),
    "mean logprob": lambda r: _num(r.mean_logprob),
    "text": lambda r: _preview(r.text),
    "tokens": lambda r: r.tokens,
    "total logprob": lambda r: _num(r.total_logprob, 2),
    "GLTR 1-10": lambda r: _num(r.stats.get("gltr_1_10"), 3),
    "Min-K%": lambda r: _num(r.stats.get("min_k")),
    "Min-K%++": lambda r: _num(r.stats.get("min_k_plus")),
    "Fast-DetectGPT": lambda r: _num(r.stats.get("fast_detectgpt")),
}
QUIZ_TABLE_COLUMNS = {
    "predicted": lambda r: (r.quiz or {}).get("predicted"),
    "right": lambda r: (r.quiz or {}).get("right"),
    "correct": lambda r: None if r.quiz is None else ("yes" if r.quiz["correct"] else "no"),
    "confidence": lambda r: _num((r.quiz or {}).get("confidence")),
}


def _preview(text: str) -> str:
    one = " ".join(text.split())  # one line: newlines and runs of spaces as one space
    return one if len(one) <= PREVIEW_CHARS else one[: PREVIEW_CHARS - 1] + "…"


def _num(v: float | None, digits: int = 4) -> float | None:
    return None if v is None or not math.isfinite(v) else round(float(v), digits)


def batch_table(b: Batch) -> pd.DataFrame:
    """One row per text done: TABLE_COLUMNS, the quiz's columns when a row is a quiz line, `error` (after the text)
    when one failed."""
    columns = dict(TABLE_COLUMNS)
    if any(r.quiz is not None for r in b.rows):
        columns.update(QUIZ_TABLE_COLUMNS)
    if any(r.error for r in b.rows):  # beside the text, where it is seen
        at = list(columns).index("text") + 1
        columns = {**dict(list(columns.items())[:at]), "error": lambda r: r.error, **dict(list(columns.items())[at:])}
    return pd.DataFrame([{name: get(r) for name, get in columns.items()} for r in b.rows], columns=list(columns))


def batch_markdown(b: Batch, on_page: bool = True) -> str:
    """The batch's summary: texts done and failed, tokens, corpus perplexity, quiz accuracy, and why it stopped
    (`on_page`: and that a row opens in the Score tab)."""
    s = b.summary
    where = f" (from text {s['first_row']:,} of the file)" if s["first_row"] > 1 else ""
    parts = [
        f"**{s['scored']:,} of {_n(s['texts'], 'text')} scored**{where} ({_n(s['tokens_scored'], 'token')} scored)"
    ]
    if s["corpus_perplexity"] is not None:
        parts.append(f"corpus perplexity **{s['corpus_perplexity']:.3f}** (all texts' tokens together)")
    if s["mean_of_mean_logprobs"] is not None:
        parts.append(f"mean of the texts' mean logprobs {s['mean_of_mean_logprobs']:.4f} nats")
    if s["questions"]:
        parts.append(f"quiz accuracy **{100 * s['accuracy']:.1f}%** over {s['questions']} questions")
    text = "; ".join(parts) + "."
    if s["failed"]:
        text += f" {s['failed']} could not be scored: see their `error`."
    if b.stopped:
        text += f"\n\n**Stopped after {s['done']:,} of {_n(s['texts'], 'text')}**: {b.stopped} The rows done are kept."
    click = "Click a row to open its text in the Score tab. " if on_page else ""
    return text + f"\n\n{click}The statistics are scores, not verdicts."


def _n(n: int, what: str) -> str:
    return f"{n:,} {what}" + ("" if n == 1 else "s")


def row_of(b: Batch, number: object) -> BatchRow | None:
    """The row whose `#` (1-based) is `number`, as the page's table shows it (sorted or not); None if none."""
    try:
        i = int(number) - 1  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None
    return next((r for r in b.rows if r.index == i), None)
