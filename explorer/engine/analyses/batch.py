"""Many texts scored one after another (explorer.results.batch.Batch), each exactly as the Score tab scores it alone.

Steps, per text:
1. tokenise it as the Score tab does (`text_ids`, with the document-start token when one is asked) and check it
   (`check_ids`: the model's context, a page's input cap);
2. score it with no top-k (`score_progress`): logprobs, ranks over the whole vocabulary, entropy and varentropy;
3. its figures: token count, total and mean logprob, perplexity, the text statistics; for a quiz line, the answer
   set scored after the question (`score_answers`).
A text that cannot be scored (empty, over the context or the cap) gets its reason in its row and the batch goes on;
a stop (Stop pressed, the time cap, the client gone) ends it between texts, and the rows done so far are kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from explorer.engine.analyses.answers import score_answers
from explorer.engine.interface import ModelEngine
from explorer.engine.passes import bounds
from explorer.engine.passes.scoring import score_progress, start_token, text_ids
from explorer.engine.passes.word_ends import score_text_words
from explorer.errors import ExplorerError
from explorer.results.batch import Batch, BatchItem, BatchRow
from explorer.results.scores import TokenScores
from explorer.results.stats import MIN_K_PERCENT, check_k_percent, text_stats
from explorer.results.stimuli import Stimulus
from explorer.results.word_scores import WordScores
from explorer.results.word_table import WordTable
from explorer.results.words import leading, with_ends, words

STOP_CODES = frozenset({"cancelled", "timeout", "request_timeout", "request_cancelled", "server_busy"})
Progress = Callable[[int, int], None]  # (texts done, texts in all)


def _stats(r: TokenScores, k_percent: float) -> dict[str, float | None]:
    """The STAT_COLUMNS of `r`: GLTR's four bucket fractions, Min-K%, Min-K%++, Fast-DetectGPT."""
    gltr, min_k, min_k_plus, fdg = text_stats(r, k_percent)
    buckets = gltr.value if isinstance(gltr.value, dict) else {}
    names = {"1-10": "gltr_1_10", "11-100": "gltr_11_100", "101-1000": "gltr_101_1000", ">1000": "gltr_over_1000"}
    out: dict[str, float | None] = {col: buckets.get(b) for b, col in names.items()}
    for col, s in (("min_k", min_k), ("min_k_plus", min_k_plus), ("fast_detectgpt", fdg)):
        out[col] = s.value if isinstance(s.value, float) else None
    return out


def _quiz(engine: ModelEngine, item: BatchItem) -> dict:
    """A quiz line's answer set after its question: the predicted and right choices, correct, confidence."""
    assert item.choices is not None and item.answer is not None
    labels = [c[0] for c in item.choices]
    res = score_answers(engine, item.text, item.choices, labels)
    best = res.best
    return {
        "predicted": labels[best],
        "right": labels[item.answer],
        "correct": best == item.answer,
        "confidence": float(res.normalised[best]),
    }


def score_item(engine: ModelEngine, item: BatchItem, index: int, start: str | None, k_percent: float) -> BatchRow:
    """One text's row; a text that cannot be scored gets the reason as its `error` (a stop is raised)."""
    try:
        if not item.text.strip():
            raise ExplorerError("The text is empty: give it some text, or drop the line.")
        ids, lead = text_ids(engine, item.text, start)
        engine.check_ids(ids)
        *_, (_, r) = score_progress(engine, ids, 0, context_start=lead, partial=False)
        assert r is not None  # the last item is the whole result
        if not r.scored.any():
            raise ExplorerError(
                "The text is one token, and a text's first token has a score only after a document-start token: "
                "score from the start of a document (the page's checkbox, --context-start eos)."
            )
        quiz = _quiz(engine, item) if item.choices is not None else None
    except ExplorerError as e:
        if e.code in STOP_CODES:
            raise
        return BatchRow(index, item.id, item.text, item.line, error=f"{e.message} (line {item.line} of the file)")
    return BatchRow(
        index,
        item.id,
        item.text,
        item.line,
        tokens=len(ids) - lead,
        scored=int(r.scored.sum()),
        total_logprob=r.total_logprob,
        mean_logprob=r.mean_logprob,
        perplexity=r.perplexity,
        stats=_stats(r, k_percent),
        quiz=quiz,
    )


def score_batch(
    engine: ModelEngine,
    items: list[BatchItem],
    start: str | None = None,
    k_percent: float = MIN_K_PERCENT,
    first: int = 0,
) -> Iterator[BatchRow]:
    """Each text's row in turn, from `items[first]` on (rows keep their place in the file); `bounds.check()`
    before each text."""
    check_k_percent(k_percent)
    if start is not None:
        engine.context_start_ids(start)  # a start token this model lacks: refused before the first text
    for i in range(first, len(items)):
        bounds.check()
        yield score_item(engine, items[i], i, start, k_percent)


def run_batch(
    engine: ModelEngine,
    items: list[BatchItem],
    start: str | None = None,
    k_percent: float = MIN_K_PERCENT,
    progress: Progress | None = None,
) -> Batch:
    """Every text scored (`score_batch`); a stop ends it with the rows done so far and says why in `stopped`."""
    rows: list[BatchRow] = []
    stopped = ""
    if progress is not None:
        progress(0, len(items))
    try:
        for row in score_batch(engine, items, start, k_percent):
            rows.append(row)
            if progress is not None:
                progress(len(rows), len(items))
    except ExplorerError as e:
        if e.code not in STOP_CODES:
            raise
        stopped = e.message
    except KeyboardInterrupt:  # the CLI's Ctrl-C: the texts done so far are written
        stopped = f"Interrupted after {len(rows)} of {len(items)} texts."
    doc = start_token(engine, start)
    return Batch(engine.name, rows, len(items), settings(start, k_percent, doc), stopped)


def settings(start: str | None, k_percent: float, document_start: str | None = None) -> dict:
    """The batch's settings as its JSON records them (`document_start`: the token each text was scored after)."""
    return {"context_start": start or "none", "document_start": document_start, "k_percent": k_percent}


def fill_word_table(engine: ModelEngine, items: list[Stimulus], start: str | None, table: WordTable) -> Iterator[int]:
    """The word table of a stimulus list, one text at a time: each text scored alone exactly as `lm.words` scores it
    (`score_text_words`) and its rows added to `table`; yields the texts done after each. `lm.word_table`,
    `logprob-explorer words --file` and the Batch tab's word table all fill it here. A text that cannot be scored is
    an ExplorerError naming its row; a stop (STOP_CODES) is raised as it is, `table` keeping the texts done."""
    if start is not None:
        engine.context_start_ids(start)  # a start token this model lacks: refused before the first text
    for done, s in enumerate(items, 1):
        bounds.check()
        try:
            r, ends = score_text_words(engine, s.text, 1, start)
        except ExplorerError as e:
            if e.code in STOP_CODES:
                raise
            raise ExplorerError(f"{s.where}: {e.message}", param="file", code=e.code) from None
        table.add(s, WordScores(r, with_ends(words(r), ends), leading(ends.special)))
        yield done
