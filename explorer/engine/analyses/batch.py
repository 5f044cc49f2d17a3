"""Many texts scored (explorer.results.batch.Batch), each with the numbers the Score tab gives it alone.

Steps, per window of WINDOW texts:
1. tokenise them as the Score tab does (`encode_many`: one tokenizer call; the document-start token before each
   when one is asked) and check each (`check_ids`: the model's context, a page's input cap);
2. score them several a forward pass where the engine batches texts (explorer/engine/passes/many.py: the torch
   engine), else one at a time (`score_progress`): logprobs, and with `stats` ranks over the whole vocabulary,
   entropy and varentropy;
3. each text's figures: token count, total and mean logprob, perplexity, with `stats` the text statistics (a group's
   texts together: `text_stats_rows`, numpy over (texts, positions), no TokenScores made); for a quiz line, the
   answer set scored after the question (`score_answers`).
A text that cannot be scored (empty, over the context or the cap) gets its reason in its row and the batch goes on;
a stop (Stop pressed, the time cap, the client gone) ends it between rows, and the rows done so far are kept.
Stimulus lists (`fill_word_table`) go the same way, with each position's word-end masses.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import numpy as np

from explorer.engine.analyses.answers import score_answers
from explorer.engine.interface import ModelEngine, forward_pass
from explorer.engine.passes import bounds, many
from explorer.engine.passes.scoring import score_progress, start_token, text_ids
from explorer.engine.passes.word_ends import score_text_words
from explorer.engine.text.encoding import check_text
from explorer.errors import ExplorerError
from explorer.results.batch import Batch, BatchItem, BatchRow
from explorer.results.scores import Rows, TokenScores, assemble
from explorer.results.stats import MIN_K_PERCENT, ROW_VALUES, check_k_percent, text_stats, text_stats_rows
from explorer.results.stimuli import Stimulus
from explorer.results.word_scores import WordScores
from explorer.results.word_table import WordTable
from explorer.results.words import WordEnds, leading, with_ends, words

WINDOW = 2048  # texts tokenised, sorted by length and scored together (bounded memory, rows in the file's order)
STOP_CODES = frozenset({"cancelled", "timeout", "request_timeout", "request_cancelled", "server_busy"})
Progress = Callable[[int, int], None]  # (texts done, texts in all)


GLTR_COLUMNS = {"1-10": "gltr_1_10", "11-100": "gltr_11_100", "101-1000": "gltr_101_1000", ">1000": "gltr_over_1000"}
VALUE_COLUMNS = [GLTR_COLUMNS.get(v, v) for v in ROW_VALUES]  # text_stats_rows' values as STAT_COLUMNS


def _stats(r: TokenScores, k_percent: float) -> dict[str, float | None]:
    """The STAT_COLUMNS of `r`: GLTR's four bucket fractions, Min-K%, Min-K%++, Fast-DetectGPT."""
    gltr, min_k, min_k_plus, fdg = text_stats(r, k_percent)
    buckets = gltr.value if isinstance(gltr.value, dict) else {}
    out: dict[str, float | None] = {col: buckets.get(b) for b, col in GLTR_COLUMNS.items()}
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


ONE_TOKEN = (
    "The text is one token, and a text's first token has a score only after a document-start token: "
    "score from the start of a document (the page's checkbox, --context-start eos)."
)


def _failed(item: BatchItem, index: int, message: str) -> BatchRow:
    """The row of a text that cannot be scored, saying why and where."""
    return BatchRow(index, item.id, item.text, item.line, error=f"{message} (line {item.line} of the file)")


def _row(item: BatchItem, index: int, r: TokenScores, lead: int, k_percent: float, stats: bool, quiz=None):
    """A scored text's row from its TokenScores `r` (`lead` ids of a document start before the text)."""
    return BatchRow(
        index,
        item.id,
        item.text,
        item.line,
        tokens=r.n - lead,
        scored=int(r.scored.sum()),
        total_logprob=r.total_logprob,
        mean_logprob=r.mean_logprob,
        perplexity=r.perplexity,
        stats=_stats(r, k_percent) if stats else {},
        quiz=quiz,
    )


def _sums_row(item: BatchItem, index: int, tokens: int, logprobs: np.ndarray) -> BatchRow:
    """A row of the sums alone from the text's logprobs (m,): TokenScores' total, mean and perplexity, computed the
    same way (a float64 sum), with no TokenScores built."""
    total = float(logprobs.sum(dtype=np.float64))
    mean = total / len(logprobs)
    return BatchRow(index, item.id, item.text, item.line, tokens, len(logprobs), total, mean, math.exp(-mean))


def _stats_row(item: BatchItem, index: int, tokens: int, logprobs: np.ndarray, values: np.ndarray) -> BatchRow:
    """A row of a text scored in a group, its statistics computed with the group's (`values`: text_stats_rows' row):
    TokenScores' total (a float64 sum after position 0's 0, as its nansum), mean and perplexity, computed the same
    way, with no TokenScores built."""
    total = float(np.concatenate(([0.0], logprobs.astype(np.float64))).sum())
    mean = total / len(logprobs)
    stats: dict[str, float | None] = dict(zip(VALUE_COLUMNS, values.tolist()))
    return BatchRow(index, item.id, item.text, item.line, tokens, len(logprobs), total, mean, math.exp(-mean), stats)


def score_item(
    engine: ModelEngine, item: BatchItem, index: int, start: str | None, k_percent: float, stats: bool = True
) -> BatchRow:
    """One text's row, scored alone; a text that cannot be scored gets the reason as its `error` (a stop is
    raised)."""
    try:
        if not item.text.strip():
            raise ExplorerError("The text is empty: give it some text, or drop the line.")
        ids, lead = text_ids(engine, item.text, start)
        engine.check_ids(ids)
        *_, (_, r) = score_progress(engine, ids, 0, context_start=lead, partial=False)
        assert r is not None  # the last item is the whole result
        if not r.scored.any():
            raise ExplorerError(ONE_TOKEN)
        quiz = _quiz(engine, item) if item.choices is not None else None
    except ExplorerError as e:
        if e.code in STOP_CODES:
            raise
        return _failed(item, index, e.message)
    return _row(item, index, r, lead, k_percent, stats, quiz)


def _checked(
    engine: ModelEngine, prefix: list[int], texts: list[str], one_token: bool = False
) -> list[list[int] | ExplorerError]:
    """Each text's ids (`prefix` before it) or the ExplorerError that refuses it (a stop is raised); `one_token`:
    a text of one id is fine (its words' masses still count)."""
    encoded = iter(engine.encode_many([t for t in texts if t]))
    out: list[list[int] | ExplorerError] = []
    for text in texts:
        try:
            check_text(text)
            ids = prefix + next(encoded)
            engine.check_ids(ids)
            if len(ids) < 2 and not one_token:
                raise ExplorerError(ONE_TOKEN)
        except ExplorerError as e:
            if e.code in STOP_CODES:
                raise
            out.append(e)
            continue
        out.append(ids)
    return out


_COLUMNS = ("logprobs", "ranks", "entropy", "varentropy")  # a TextNumbers' columns text_stats_rows reads


class _Numbers:
    """Each text's numbers, several texts a forward pass (explorer/engine/passes/many.py): a text's group is
    scored when its first text is asked for, so rows come in order as their groups are done (a stop is seen
    between groups, progress moves as rows come)."""

    def __init__(
        self, engine: ModelEngine, seqs: dict[int, list[int]], full: bool, ends: bool, k_percent: float | None = None
    ):
        self.engine, self.seqs, self.full, self.ends = forward_pass(engine), seqs, full, ends
        self.k_percent = k_percent  # with `full`: the group's text statistics too (`values`)
        keys = list(seqs)
        self.groups = [
            [keys[g] for g in group] for group in many.groups([len(seqs[j]) for j in keys], many.group_tokens(engine))
        ]
        self.group_of = {j: g for g, js in enumerate(self.groups) for j in js}
        self.done: dict[int, many.TextNumbers] = {}
        self.values: dict[int, np.ndarray] = {}  # text_stats_rows' row of each text it could do

    def __contains__(self, j: int) -> bool:
        return j in self.group_of

    def __getitem__(self, j: int) -> many.TextNumbers:
        if j not in self.done:
            js = self.groups[self.group_of[j]]
            nums = many.score_group(self.engine, [self.seqs[i] for i in js], full=self.full, ends=self.ends)
            self.done.update(zip(js, nums))
            if self.full and self.k_percent is not None and len({len(n.logprobs) for n in nums}) == 1:
                lp, rank, ent, var = (np.stack([getattr(n, c) for n in nums]) for c in _COLUMNS)  # (texts, positions)
                values, ok = text_stats_rows(lp, rank, ent, var, self.k_percent)
                self.values.update((i, values[b]) for b, i in enumerate(js) if ok[b])
        return self.done.pop(j)  # each text's numbers are read once: memory stays one window's


def _scores(engine: ModelEngine, ids: list[int], num: many.TextNumbers, lead: int) -> TokenScores:
    """The TokenScores of a text scored in a group: what score_progress gives it alone (no top-k)."""
    m = len(num.logprobs)
    none = np.full(m, np.nan, np.float32)
    rows = Rows(
        num.logprobs,
        num.ranks if num.ranks is not None else np.zeros(m, np.int64),
        num.entropy if num.entropy is not None else none,
        np.zeros((m, 0), np.int64),
        np.zeros((m, 0), np.float32),
        varentropy=num.varentropy,
    )
    return assemble(engine.name, engine.vocab, ids, len(ids), rows, first=1, prompt_k=0, context_start=lead)


def _window(
    engine: ModelEngine, items: list[BatchItem], first: int, start: str | None, k_percent: float, stats: bool
) -> Iterator[BatchRow]:
    """The rows of items (the file's from `first` on), their texts scored together; quiz lines and empty texts
    alone (score_item); `bounds.check()` before each row."""
    prefix = engine.context_start_ids(start) if start is not None else []
    plain = [j for j, item in enumerate(items) if item.choices is None and item.text.strip()]
    seqs: dict[int, list[int]] = {}
    failed: dict[int, BatchRow] = {}
    for j, ids in zip(plain, _checked(engine, prefix, [items[j].text for j in plain])):
        if isinstance(ids, ExplorerError):
            failed[j] = _failed(items[j], first + j, ids.message)
        else:
            seqs[j] = ids
    nums = _Numbers(engine, seqs, stats, False, k_percent)
    for j, item in enumerate(items):
        bounds.check()
        if j in failed:
            yield failed[j]
        elif j in nums and not stats:
            yield _sums_row(item, first + j, len(seqs[j]) - len(prefix), nums[j].logprobs)
        elif j in nums:
            num = nums[j]
            values = nums.values.pop(j, None)
            if values is not None:
                yield _stats_row(item, first + j, len(seqs[j]) - len(prefix), num.logprobs, values)
            else:
                yield _row(item, first + j, _scores(engine, seqs[j], num, len(prefix)), len(prefix), k_percent, stats)
        else:
            yield score_item(engine, item, first + j, start, k_percent, stats)


def score_batch(
    engine: ModelEngine,
    items: list[BatchItem],
    start: str | None = None,
    k_percent: float = MIN_K_PERCENT,
    first: int = 0,
    stats: bool = True,
) -> Iterator[BatchRow]:
    """Each text's row in turn, from `items[first]` on (rows keep their place in the file); `bounds.check()`
    before each row. `stats` False: the sums only (no rank, entropy or text statistics: minicons' figures)."""
    check_k_percent(k_percent)
    if start is not None:
        engine.context_start_ids(start)  # a start token this model lacks: refused before the first text
    if not many.batches_texts(engine):
        for i in range(first, len(items)):
            bounds.check()
            yield score_item(engine, items[i], i, start, k_percent, stats)
        return
    for a in range(first, len(items), WINDOW):
        yield from _window(engine, items[a : a + WINDOW], a, start, k_percent, stats)


def run_batch(
    engine: ModelEngine,
    items: list[BatchItem],
    start: str | None = None,
    k_percent: float = MIN_K_PERCENT,
    progress: Progress | None = None,
    stats: bool = True,
) -> Batch:
    """Every text scored (`score_batch`; `stats` as there); a stop ends it with the rows done so far and says why in
    `stopped`."""
    rows: list[BatchRow] = []
    stopped = ""
    if progress is not None:
        progress(0, len(items))
    try:
        for row in score_batch(engine, items, start, k_percent, stats=stats):
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
    """The word table of a stimulus list: each text with the numbers `lm.words` gives it alone (`score_text_words`;
    several texts a forward pass where the engine batches them) and its rows added to `table`, in order; yields the
    texts done after each. `lm.word_table`, `logprob-explorer words --file` and the Batch tab's word table all fill
    it here. A text that cannot be scored is an ExplorerError naming its row; a stop (STOP_CODES) is raised as it
    is, `table` keeping the texts done."""
    if start is not None:
        engine.context_start_ids(start)  # a start token this model lacks: refused before the first text
    if not many.batches_texts(engine):
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
        return
    prefix = engine.context_start_ids(start) if start is not None else []
    special = forward_pass(engine).special_ids
    for a in range(0, len(items), WINDOW):
        window = items[a : a + WINDOW]
        checked = _checked(engine, prefix, [s.text for s in window], one_token=True)
        bad = next((j for j, ids in enumerate(checked) if isinstance(ids, ExplorerError)), len(window))
        seqs = {j: ids for j, ids in enumerate(checked[:bad]) if not isinstance(ids, ExplorerError)}
        nums = _Numbers(engine, seqs, False, True)
        for j in range(bad):
            bounds.check()
            num = nums[j]
            r = _scores(engine, seqs[j], num, len(prefix))
            assert num.ends is not None  # asked for (`ends`)
            ends = WordEnds(num.ends, np.array([i in special for i in seqs[j]], bool))
            table.add(window[j], WordScores(r, with_ends(words(r), ends), leading(ends.special)))
            yield a + j + 1
        if bad < len(window):
            why = checked[bad]
            assert isinstance(why, ExplorerError)
            raise ExplorerError(f"{window[bad].where}: {why.message}", param="file", code=why.code)
