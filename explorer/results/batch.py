"""Many texts scored at once (`logprob-explorer batch`, the Batch tab): the result type and its input.

Per text: its tokens, total and mean logprob, perplexity, the text statistics (explorer.results.stats), and for a
quiz line the answer set's result (predicted choice, right choice, confidence); a row whose text cannot be scored
(too long for the model, empty) keeps its place with the reason. The table is written as CSV and JSONL, the whole
batch as one JSON object (`to_dict`). explorer/engine/analyses/batch.py scores the texts.

Input, read here (no model needed): a CSV with a header and a `text` column (an `id` column is kept when there is
one; commas, semicolons or tabs), a .txt file with one text a line, or JSONL, one text a line: a JSON string, an
object with `text` (and optionally `id`), or a quiz line (`question`, `choices`, `answer`, as the Answers tab reads
them): its question is the text scored, its choices the answer set that follows it.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from explorer.errors import ExplorerError
from explorer.floats import to_json
from explorer.results.answers import json_lines, quiz_item, quiz_text
from explorer.results.shown import show

if TYPE_CHECKING:
    import pandas as pd

FORMAT = "logprob-explorer/batch"
FORMAT_VERSION = 1
MAX_TEXTS = 5000  # texts per file
STAT_COLUMNS = ("gltr_1_10", "gltr_11_100", "gltr_101_1000", "gltr_over_1000", "min_k", "min_k_plus", "fast_detectgpt")
QUIZ_COLUMNS = ("predicted", "right", "correct", "confidence")
COLUMNS = (
    "row", "line", "id", "text", "tokens", "scored", "total_logprob", "mean_logprob", "perplexity",
    *STAT_COLUMNS, *QUIZ_COLUMNS, "error",
)  # fmt: skip


@dataclass(frozen=True)
class BatchItem:
    """One text of the file: `line` is where it is (the CSV's row or the JSONL's line, 1-based)."""

    line: int
    text: str
    id: str = ""
    choices: list[list[str]] | None = None  # a quiz line's answer set (variant lists)
    answer: int | None = None  # its right choice


@dataclass(frozen=True)
class BatchRow:
    """One text's figures (None where unknown or not computable); `error` says why a text was not scored."""

    index: int  # 0-based, in the file's order (the table's `#` and the files' `row` are index + 1)
    id: str
    text: str
    line: int = 0  # the file line the text starts on
    tokens: int = 0  # the text's tokens (with a document-start token, if one was put before it)
    scored: int = 0  # the positions with a logprob
    total_logprob: float | None = None
    mean_logprob: float | None = None
    perplexity: float | None = None
    stats: dict[str, float | None] = field(default_factory=dict)  # STAT_COLUMNS -> value
    quiz: dict | None = None  # QUIZ_COLUMNS -> value, for a quiz line
    error: str = ""

    def to_dict(self) -> dict:
        """The row's columns (COLUMNS): floats through the JSON codec (None for NaN and infinity)."""
        d: dict = {"row": self.index + 1, "line": self.line, "id": self.id, "text": self.text, "tokens": self.tokens,
                   "scored": self.scored}  # fmt: skip
        for k in ("total_logprob", "mean_logprob", "perplexity"):
            v = getattr(self, k)
            d[k] = None if v is None else to_json(v)
        d.update({k: None if self.stats.get(k) is None else to_json(self.stats[k]) for k in STAT_COLUMNS})  # type: ignore[arg-type]
        quiz = self.quiz or {}
        d.update({k: quiz.get(k) for k in QUIZ_COLUMNS})
        d["error"] = self.error
        return d


@dataclass(eq=False)
class Batch:
    model: str
    rows: list[BatchRow]
    total: int  # texts this run was given (the file's, from its first row on; rows < total: stopped part-way)
    settings: dict = field(default_factory=dict)  # context_start, k_percent; first_row when a run starts later
    stopped: str = ""  # why the batch stopped before its last text ('' = it did not)

    @property
    def summary(self) -> dict:
        """Over the scored rows: texts, tokens, the corpus perplexity exp(-sum logprob / sum scored), the mean of
        the texts' mean logprobs; over the quiz rows: their number and accuracy."""
        ok = [r for r in self.rows if not r.error and r.scored]
        lp = sum(r.total_logprob or 0.0 for r in ok)
        n = sum(r.scored for r in ok)
        quiz = [r.quiz for r in self.rows if r.quiz is not None]
        return {
            "texts": self.total,
            "first_row": int(self.settings.get("first_row", 1)),
            "done": len(self.rows),
            "scored": len(ok),
            "failed": sum(1 for r in self.rows if r.error),
            "tokens_scored": n,
            "corpus_perplexity": math.exp(-lp / n) if n else None,
            "mean_of_mean_logprobs": sum(r.mean_logprob or 0.0 for r in ok) / len(ok) if ok else None,
            "questions": len(quiz),
            "accuracy": sum(1 for q in quiz if q["correct"]) / len(quiz) if quiz else None,
        }

    def to_dict(self) -> dict:
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "model": self.model,
            "settings": self.settings,
            "stopped": self.stopped,
            "summary": {k: to_json(v) if isinstance(v, float) else v for k, v in self.summary.items()},
            "columns": list(COLUMNS),
            "rows": [r.to_dict() for r in self.rows],
        }

    def to_csv(self) -> str:
        """One line per text, COLUMNS as the header; unknown numbers empty; a text cell that a spreadsheet would
        run as a formula (starting with = + - @, a tab or a carriage return) starts with a `'` (the JSONL keeps
        every text exactly)."""
        return csv_header() + "".join(csv_line(r) for r in self.rows)

    def to_html(self) -> str:
        """The Batch view as one self-contained HTML file (the tab's *Download view*): no script, no request."""
        return show(self, "to_html")

    def _repr_html_(self) -> str:
        """Jupyter's view: the Batch view, drawn (explorer.notebook.views), its CSS scoped to it."""
        return show(self, "_repr_html_")

    def to_pandas(self) -> pd.DataFrame:
        """One row per text (COLUMNS, as the CSV), NaN where a figure is unknown (explorer.notebook.frames.batch_frame)."""
        return show(self, "to_pandas")

    def to_jsonl(self) -> str:
        """One JSON object per text (BatchRow.to_dict), one a line."""
        return "".join(jsonl_line(r) for r in self.rows)


def csv_header() -> str:
    """The CSV's first line: COLUMNS."""
    return ",".join(COLUMNS) + "\n"


def csv_line(row: BatchRow) -> str:
    """One row's CSV line (Batch.to_csv's; a file written a row at a time is the same file)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(COLUMNS), lineterminator="\n")
    writer.writerow({k: "" if v is None else _cell(v) for k, v in row.to_dict().items()})
    return out.getvalue()


def jsonl_line(row: BatchRow) -> str:
    """One row's JSONL line (Batch.to_jsonl's)."""
    return json.dumps(row.to_dict(), ensure_ascii=False, allow_nan=False) + "\n"


def _cell(v: object) -> object:
    """A CSV cell: a text a spreadsheet would run as a formula gets a leading `'`; anything else as it is."""
    return "'" + v if isinstance(v, str) and v[:1] in ("=", "+", "-", "@", "\t", "\r") else v


# ---- the faces' input: a CSV or JSONL file of texts -------------------------------------------------------------
def _bad(msg: str) -> ExplorerError:
    return ExplorerError(msg, param="file", code="invalid_value")


def _json_item(n: int, d: object) -> BatchItem:
    """JSONL line n: a string, {"text", "id"?}, or a quiz line {"question", "choices", "answer"}."""
    if isinstance(d, str):
        return BatchItem(n, d)
    if isinstance(d, dict) and "question" in d and "choices" in d:
        q = quiz_item(n, d)
        return BatchItem(n, q["question"], _id(d.get("id")), q["choices"], q["answer"])
    if isinstance(d, dict) and isinstance(d.get("text"), str):
        return BatchItem(n, d["text"], _id(d.get("id")))
    raise _bad(
        f'Line {n}: write a JSON string, an object with "text" (and optionally "id"), or a quiz line with '
        '"question", "choices" and "answer".'
    )


def _id(v: object) -> str:
    return "" if v is None else str(v)[:200]


def _read_jsonl(text: str) -> list[BatchItem]:
    if text.lstrip().startswith("["):  # a JSON array of the same items
        try:
            whole = json.loads(text)
        except json.JSONDecodeError as e:
            raise _bad(f"The file is not JSON ({e.msg}, line {e.lineno}): a JSON array, or one item a line.") from None
        return [_json_item(n, d) for n, d in enumerate(whole, 1)]
    bad = lambda n, why: _bad(f"Line {n} is not JSON ({why}): one JSON text or object a line.")  # noqa: E731
    return [_json_item(n, d) for n, d in json_lines(text, bad)]


DELIMITERS = {",": "commas", ";": "semicolons", "\t": "tabs"}


def _records(text: str, delimiter: str) -> list[tuple[int, list[str]]]:
    """The CSV's records, each with the file line it starts on (a quoted text may span lines)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    out, line = [], 1
    try:
        for row in reader:
            out.append((line, row))
            line = reader.line_num + 1
    except csv.Error as e:
        raise _bad(f"The CSV could not be read at line {line} ({e}): check its quotes.") from None
    return out


def _header(text: str) -> tuple[str, list[str]]:
    """(the delimiter, the first line's column names, lower case) of the first delimiter giving a `text` column."""
    first = text.splitlines()[0] if text.strip() else ""
    for d in DELIMITERS:
        names = [h.strip().strip('"').lower() for h in first.split(d)]
        if "text" in names:
            return d, names
    shown = ", ".join(repr(h) for h in first.split(",")[:8]) or "none"
    raise _bad(
        f"The CSV's first line names its columns ({shown}) and none is `text`: call the column of texts `text` "
        "(columns separated by commas, semicolons or tabs), or give a .txt file with one text a line."
    )


def _read_csv(text: str) -> list[BatchItem]:
    if not text.strip():
        return []
    delimiter, _ = _header(text)
    records = _records(text, delimiter)
    header = [h.strip().lower() for h in records[0][1]]
    at, id_at = header.index("text"), header.index("id") if "id" in header else None
    out = []
    for line, row in records[1:]:
        if not any(c.strip() for c in row):
            continue  # a blank line
        if at >= len(row):
            raise _bad(f"Line {line} has {len(row)} columns and no `text` (column {at + 1}): fill it in.")
        out.append(BatchItem(line, row[at], row[id_at] if id_at is not None and id_at < len(row) else ""))
    return out


def _read_lines(text: str) -> list[BatchItem]:
    """A plain text file: one text a line, blank lines skipped."""
    return [BatchItem(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]


def read_batch(raw: bytes, name: str, limit: int | None = MAX_TEXTS) -> list[BatchItem]:
    """The texts of a CSV (commas, semicolons or tabs), JSONL or .txt (one text a line) file (`name`: its file name,
    whose ending decides; JSON lines are recognised otherwise by their first character), checked: UTF-8, at least
    one text, at most `limit` (None: any number, for a face that writes rows as they come)."""
    text = quiz_text(raw, "The file").removeprefix("\ufeff")  # a spreadsheet's byte-order mark
    lower = name.lower()
    first = text.lstrip()[:1]
    as_json = lower.endswith((".jsonl", ".json", ".ndjson")) or (
        not lower.endswith((".csv", ".tsv")) and first in '{"['
    )
    if as_json:
        items = _read_jsonl(text)
    elif lower.endswith(".txt"):
        items = _read_lines(text)
    else:
        items = _read_csv(text)
    if not items:
        raise _bad("The file has no texts: a CSV with a `text` column, JSONL or a .txt file with one text a line.")
    if limit is not None and len(items) > limit:
        raise _bad(f"At most {limit} texts a file, got {len(items)}: split the file.")
    return items
