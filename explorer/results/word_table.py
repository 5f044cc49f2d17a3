"""WordTable: the per-word table of a stimulus list (explorer/results/stimuli.py), one row per word of every text,
and one row per region, as `lm.words_many`, `logprob-explorer words --file` and the Batch tab give it.

A word row is the input's own columns, then `row` (the text's row, 1-based), `word_index` (1-based in its text),
`word_text` (the word without its leading whitespace), `region` (its region's name or number; empty outside one),
then the Words view's columns (results.words.WORD_COLUMNS) exactly as `lm.words(text)` gives them for that text
alone. A region row sums its words: the logprobs and surprisals (summed and corrected, nats and bits) are the sums
of its words' (unknown when one of its words' is); its `document_start` is its words'.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from explorer.errors import ExplorerError
from explorer.results.shown import show
from explorer.results.stimuli import Stimulus, region_of_words
from explorer.results.word_scores import WordScores
from explorer.results.words import WORD_COLUMNS, first_word, shown_tokens

if TYPE_CHECKING:
    import pandas as pd

FORMAT = "logprob-explorer/word-table"
OWN = ("row", "word_index", "word_text", "region")  # before WORD_COLUMNS
NUMBERS = (
    "logprob_sum", "surprisal_sum_bits", "surprisal_sum_nats",
    "logprob_corrected", "surprisal_corrected_bits", "surprisal_corrected_nats",
)  # fmt: skip
REGION_COLUMNS = ("row", "region", "region_index", "region_text", "char_start", "char_end", "n_words",
                  "first_word", "last_word", "n_scored", *NUMBERS, "document_start")  # fmt: skip


@dataclass(eq=False)
class WordTable:
    model: str
    extra: list[str] = field(default_factory=list)  # the input's own columns, in its order
    words: list[dict] = field(default_factory=list)  # extra + OWN + WORD_COLUMNS; numbers None where unknown
    regions: list[dict] = field(default_factory=list)  # extra + REGION_COLUMNS
    shown: list[str] = field(default_factory=list)  # per word row, its tokens as the page shows them (the CSV's)

    @classmethod
    def of(cls, model: str, items: list[Stimulus]) -> WordTable:
        """An empty table whose columns are already those of `items` (their own columns, in the order they come), so
        its CSV header can be written before any row (`drained`)."""
        t = cls(model)
        for s in items:
            _check_extra(t, s)
        return t

    def drained(self) -> WordTable:
        """The rows added since the last call, as a table of their own with this one's columns; they leave this one,
        so a list of any length is written as it is scored in bounded memory (`logprob-explorer words --file`)."""
        part = WordTable(self.model, list(self.extra), self.words, self.regions, self.shown)
        self.words, self.regions, self.shown = [], [], []
        return part

    @property
    def columns(self) -> list[str]:
        return [*self.extra, *OWN, *WORD_COLUMNS]

    @property
    def region_columns(self) -> list[str]:
        return [*self.extra, *REGION_COLUMNS]

    def add(self, s: Stimulus, ws: WordScores) -> None:
        """The rows of stimulus `s`, scored alone as `ws` (lm.words(s.text))."""
        _check_extra(self, s)
        rows = ws.rows()
        text = "".join(ws.scores.token_text[ws.lead :])  # the text as its tokens give it
        shift = len(text) - len(s.text)  # a SentencePiece dummy prefix: one space more than given
        if s.regions and (shift < 0 or text[shift:] != s.text):
            raise ExplorerError(
                f"{s.where}: {self.model}'s tokenizer changes this text ({s.text[:40]!r} -> {text[:40]!r}), so its "
                "regions cannot be placed on its words: give the text as the tokenizer writes it.",
                param="file",
            )
        bare = [(r["char_start"] + len(r["text"]) - len(r["text"].lstrip()), r["char_end"]) for r in rows]
        bare = [(max(a - shift, 0), max(b - shift, 0)) for a, b in bare]
        inside = region_of_words(bare, s.regions, s.text, s.where)
        first, at = len(self.words), first_word(ws.scores, ws.words, ws.lead)  # at: the text's first word in ws.words
        for i, row in enumerate(rows):
            own = {"row": s.row, "word_index": i + 1, "word_text": row["text"].lstrip(),
                   "region": s.regions[inside[i]].name if inside[i] >= 0 else None}  # fmt: skip
            self.words.append({**s.extra, **own, **row})
            self.shown.append(shown_tokens(ws.scores, ws.words, at + row["word"]))
        for k in range(len(s.regions)):
            held = [self.words[first + i] for i in range(len(rows)) if inside[i] == k]
            self.regions.append({**s.extra, **region_row(s, k, held)})

    # ---- files and frames ------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The whole table: {"format", "model", "columns", "words", "region_columns", "regions"}."""
        return {
            "format": FORMAT,
            "model": self.model,
            "units": "logprob_* in nats (natural log); surprisal_*_bits in bits, surprisal_*_nats in nats",
            "columns": self.columns,
            "words": [_json_row(r) for r in self.words],
            "region_columns": self.region_columns,
            "regions": [_json_row(r) for r in self.regions],
        }

    def to_csv(self, regions: bool = False, header: bool = True) -> str:
        """The word table (or the region table) as CSV: unknown numbers empty; a word's `tokens` as the page shows
        them joined by spaces and its `token_ids` joined by spaces (as the Words CSV); `header` False: the rows
        alone."""
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=self.region_columns if regions else self.columns, lineterminator="\n")
        if header:
            writer.writeheader()
        for i, row in enumerate(self.regions if regions else self.words):
            cells = {k: "" if _unknown(v) else v for k, v in row.items()}
            if not regions:
                cells.update(tokens=self.shown[i], token_ids=" ".join(str(t) for t in row["token_ids"]))
            writer.writerow(cells)
        return out.getvalue()

    def to_jsonl(self, regions: bool = False) -> str:
        """One JSON object per word (or region), one a line; tokens as their exact texts."""
        rows = self.regions if regions else self.words
        return "".join(json.dumps(_json_row(r), ensure_ascii=False, allow_nan=False) + "\n" for r in rows)

    def to_pandas(self) -> pd.DataFrame:
        """One row per word (`columns`), numbers float64 with NaN where unknown."""
        return _frame(self.words, self.columns)

    def regions_pandas(self) -> pd.DataFrame:
        """One row per region (`region_columns`), numbers float64 with NaN where unknown."""
        return _frame(self.regions, self.region_columns)

    def to_html(self) -> str:
        """The word table as one self-contained HTML file (its JSON inside)."""
        return show(self, "to_html")

    def _repr_html_(self) -> str:
        """Jupyter's view: the word table (and the regions' where there are any), as `to_pandas` holds them."""
        return show(self, "_repr_html_")


def region_row(s: Stimulus, k: int, held: list[dict]) -> dict:
    """Region k of `s` (REGION_COLUMNS) from its word rows: each number the sum of its words' (None when one is)."""
    reg = s.regions[k]
    sums = {c: None if any(w[c] is None for w in held) else math.fsum(w[c] for w in held) for c in NUMBERS}
    return {
        "row": s.row,
        "region": reg.name,
        "region_index": k + 1,
        "region_text": s.text[reg.start : reg.end],
        "char_start": reg.start,
        "char_end": reg.end,
        "n_words": len(held),
        "first_word": held[0]["word_index"],
        "last_word": held[-1]["word_index"],
        "n_scored": sum(w["n_scored"] for w in held),
        **sums,
        "document_start": held[0]["document_start"],  # its words' (the text's): what the text was scored after
    }


def _check_extra(t: WordTable, s: Stimulus) -> None:
    """The stimulus' own columns join the table's; one that has a name of the table's own is refused."""
    clash = next((k for k in s.extra if k in OWN or k in WORD_COLUMNS or k in REGION_COLUMNS), None)
    if clash is not None:
        raise ExplorerError(
            f"{s.where}: the column {clash!r} has the name of a column of the word table: rename it.", param="file"
        )
    t.extra += [k for k in s.extra if k not in t.extra]


def _unknown(v: object) -> bool:
    return v is None or (isinstance(v, float) and not math.isfinite(v))


def _json_row(row: dict) -> dict:
    return {k: None if _unknown(v) else v for k, v in row.items()}


def _frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    import numpy as np
    import pandas as pd

    frame = pd.DataFrame(rows, columns=columns)
    numbers = [c for c in NUMBERS if c in frame.columns]
    frame[numbers] = frame[numbers].astype(np.float64)  # None -> NaN
    return frame
