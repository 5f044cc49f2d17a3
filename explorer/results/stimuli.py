"""A stimulus list: texts with columns of their own (item, condition, ...) and optional regions, read from a CSV or
JSONL file, a pandas DataFrame or a list of records, checked before any model runs (explorer/results/word_table.py
turns it into the per-word table).

- The text is the `text` column (another name with `text_column`); every other column is carried as it is.
- Regions, in the text: `The horse [raced past the barn] [fell].` The brackets are removed before scoring; the
  regions are numbered 1, 2, ... in order, or named: `[verb: raced past the barn]` (a name: a letter or `_`, then
  letters, digits, `_` or `-`; the name, its colon and the spaces after it are removed too). Regions do not nest.
- Or a `regions` column of character spans in the text as given (0-based, end excluded, as Python's text[a:b]):
  `10:29 30:34`, separated by spaces, commas or semicolons, each optionally named: `verb=10:29`; in JSONL also a list
  of [start, end] pairs. With a `regions` column the text's brackets are its own: they are not read as regions.
- A region holds whole words (the Words view's split: a word's leading space does not count) and at least one.
Anything wrong is one ExplorerError naming the row (and the file line): an unclosed or nested bracket, a region
that cuts a word, no text column, an empty text, a CSV row with more or fewer fields than its header, more than MAX_TEXTS rows or MAX_BYTES bytes (the Batch limits).
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from explorer.errors import ExplorerError
from explorer.results.batch import DELIMITERS, MAX_TEXTS
from explorer.results.words import word_starts

MAX_BYTES = 2_000_000  # a stimulus file, as the Batch tab's upload
REGIONS = "regions"  # the column of character spans
NAME = r"[A-Za-z_][\w-]{0,39}"
NAMED = re.compile(rf"({NAME}):\s*")  # `[name: ...]`
SPAN = re.compile(rf"(?:({NAME})=)?(\d+):(\d+)")  # `name=a:b` or `a:b`
SEPARATORS = re.compile(r"[\s,;]+")


@dataclass(frozen=True)
class Region:
    name: str  # its name, or its number ("1", "2", ...) when it has none
    start: int  # character span in the text scored (brackets removed), end excluded
    end: int


@dataclass(frozen=True)
class Stimulus:
    row: int  # 1-based, in the input's order
    text: str  # the text scored (brackets removed)
    extra: dict = field(default_factory=dict)  # the input's other columns, as read
    regions: tuple[Region, ...] = ()
    line: int = 0  # the file line it starts on (0: not from a file)

    @property
    def where(self) -> str:
        return where(self.row, self.line)


def where(row: int, line: int = 0) -> str:
    """'Row 3 (line 4 of the file)': how a message names a row."""
    return f"Row {row}" + (f" (line {line} of the file)" if line else "")


def _bad(msg: str) -> ExplorerError:
    return ExplorerError(msg, param="file", code="invalid_value")


# ---- regions ---------------------------------------------------------------------------------------------------
def brackets(marked: str, at: str) -> tuple[str, tuple[Region, ...]]:
    """`marked` without its region brackets, and the regions they marked; `at` names the row in a message."""
    out: list[str] = []
    regions: list[Region] = []
    opened, name, start, i = -1, "", 0, 0
    while i < len(marked):
        c = marked[i]
        if c == "[":
            if opened >= 0:
                raise _bad(
                    f"{at}: the `[` at character {i + 1} opens a region inside the one opened at character "
                    f"{opened + 1}: regions do not nest; close the first with `]` before opening another."
                )
            m = NAMED.match(marked, i + 1)
            opened, name, start = i, m.group(1) if m else "", len(out)
            i = m.end() if m else i + 1
            continue
        if c == "]":
            if opened < 0:
                raise _bad(f"{at}: the `]` at character {i + 1} closes no region: add its `[` or remove it.")
            regions.append(Region(name or str(len(regions) + 1), start, len(out)))
            opened = -1
        else:
            out.append(c)
        i += 1
    if opened >= 0:
        raise _bad(f"{at}: the `[` at character {opened + 1} is never closed: add its `]`.")
    return "".join(out), tuple(regions)


def spans(value: object, text: str, at: str) -> tuple[Region, ...]:
    """The regions of a `regions` cell: `a:b` spans (optionally `name=a:b`) or a list of [a, b] pairs."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        return ()
    if isinstance(value, list):
        if not all(isinstance(p, list) and len(p) == 2 and all(_whole(x) for x in p) for p in value):
            raise _bad(f"{at}: `regions` must be a list of [start, end] pairs of character positions.")
        found = [(str(j + 1), int(a), int(b)) for j, (a, b) in enumerate(value)]
    elif isinstance(value, str):
        parts = [p for p in SEPARATORS.split(value.strip()) if p]
        found = []
        for j, p in enumerate(parts):
            m = SPAN.fullmatch(p)
            if m is None:
                raise _bad(
                    f"{at}: the region {p!r} is not a span: write start:end character positions (0-based, end "
                    "excluded), optionally named (name=start:end), separated by spaces or semicolons."
                )
            found.append((m.group(1) or str(j + 1), int(m.group(2)), int(m.group(3))))
    else:
        raise _bad(f"{at}: `regions` must be a text of start:end spans or a list of [start, end] pairs.")
    out, last = [], 0
    for name, a, b in found:
        if not (last <= a < b <= len(text)):
            raise _bad(
                f"{at}: the region {name} ({a}:{b}) must lie in the text (0..{len(text)}), after the region before "
                "it and not overlap it, with its start before its end."
            )
        out.append(Region(name, a, b))
        last = b
    return tuple(out)


def _whole(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def word_spans(text: str) -> list[tuple[int, int]]:
    """Each word of `text` (the Words view's split) as its character span without its leading whitespace."""
    cut = [*np.flatnonzero(word_starts(text)).tolist(), len(text)]
    return [(a + len(text[a:b]) - len(text[a:b].lstrip()), b) for a, b in itertools.pairwise(cut)]


def region_of_words(words: list[tuple[int, int]], regions: tuple[Region, ...], text: str, at: str) -> list[int]:
    """(w,) the index of the region holding each word (-1: none), each span a word's characters without its leading
    space; an ExplorerError when a region cuts a word or holds none."""
    out = [-1] * len(words)
    for r, reg in enumerate(regions):
        held = 0
        for j, (a, b) in enumerate(words):
            if a >= b or b <= reg.start or a >= reg.end:
                continue  # empty (whitespace only) or outside
            if a < reg.start or b > reg.end:
                raise _bad(
                    f"{at}: the region {reg.name} ({text[reg.start : reg.end]!r}) cuts the word {text[a:b]!r}: "
                    "put its brackets (or its span's ends) between words."
                )
            out[j], held = r, held + 1
        if not held:
            raise _bad(f"{at}: the region {reg.name} ({text[reg.start : reg.end]!r}) holds no word.")
    return out


def _check_names(regions: tuple[Region, ...], at: str) -> None:
    names = [r.name for r in regions]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise _bad(f"{at}: two regions are named {twice!r}: give each region of a text its own name.")


# ---- records -> stimuli ------------------------------------------------------------------------------------------
def stimulus(row: int, record: Mapping, text_column: str = "text", line: int = 0, has_regions: bool = False):
    """One record (column -> value) as a checked Stimulus; `has_regions`: the input has a `regions` column."""
    at = where(row, line)
    key = _column(record, text_column)
    if key is None:
        shown = ", ".join(repr(str(k)) for k in list(record)[:8]) or "none"
        raise _bad(
            f"{at} has no {text_column!r} column (its columns: {shown}): name the column of texts {text_column!r}, "
            "or say which column holds the texts (text_column=, --text-column)."
        )
    value = record[key]
    if not isinstance(value, str):
        raise _bad(f"{at}: the text must be a text, got {_plain(value)!r}.")
    if has_regions:
        text, regions = value, spans(record.get(REGIONS), value, at)
    else:
        text, regions = brackets(value, at)
    if not text.strip():
        raise _bad(f"{at}: the text is empty: give it some text, or drop the row.")
    _check_names(regions, at)
    region_of_words(word_spans(text), regions, text, at)
    extra = {str(k): _plain(v) for k, v in record.items() if k != key and not (has_regions and k == REGIONS)}
    return Stimulus(row, text, extra, regions, line)


def _column(record: Mapping, name: str) -> object | None:
    """The key of `record` that is `name`, else the one that is `name` in any case (None: none)."""
    if name in record:
        return name
    return next((k for k in record if isinstance(k, str) and k.strip().lower() == name.lower()), None)


def _plain(v: object) -> object:
    """A numpy scalar as the Python value it holds; anything else as it is."""
    item = getattr(v, "item", None)
    return item() if callable(item) and type(v).__module__ == "numpy" else v


def from_records(
    records: Iterable, text_column: str = "text", lines: list[int] | None = None, capped: bool = True
) -> list[Stimulus]:
    """Records (dicts, or plain texts) as checked stimuli, at most MAX_TEXTS where `capped` (a list written row by
    row as it is scored, `words --file` to csv or jsonl, has no cap)."""
    items = list(records)
    if not items:
        raise _bad("There are no texts: give at least one row with a text.")
    if capped and len(items) > MAX_TEXTS:
        raise _bad(f"At most {MAX_TEXTS} texts at once, got {len(items)}: split them.")
    has_regions = any(isinstance(r, Mapping) and REGIONS in r for r in items)
    out = []
    for i, rec in enumerate(items):
        line = lines[i] if lines else 0
        if isinstance(rec, str):
            rec = {text_column: rec}
        if not isinstance(rec, Mapping):
            raise _bad(f"{where(i + 1, line)}: write a text or an object with a {text_column!r} field.")
        out.append(stimulus(i + 1, rec, text_column, line, has_regions))
    return out


def from_frame(frame, text_column: str = "text") -> list[Stimulus]:
    """A pandas DataFrame's rows as checked stimuli (row i is the frame's i-th row, 1-based)."""
    return from_records(frame.to_dict("records"), text_column)


def read_stimuli(raw: bytes, name: str, text_column: str = "text", capped: bool = True) -> list[Stimulus]:
    """The stimuli of a CSV (commas, semicolons or tabs), JSONL (`name` ends in .jsonl/.json/.ndjson, or its first
    character is `{`, `"` or `[`) or .txt file (one text a line, as the Batch tab reads it), checked; `capped`: at most
    MAX_BYTES and MAX_TEXTS (the Batch tab's limits)."""
    if capped and len(raw) > MAX_BYTES:
        raise _bad(f"The file is over {MAX_BYTES // 1_000_000} MB: split it.")
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as err:
        raise _bad(f"The file is not UTF-8 (bad byte at offset {err.start}): convert it to UTF-8.") from None
    lower = name.lower()
    as_json = lower.endswith((".jsonl", ".json", ".ndjson")) or (
        not lower.endswith((".csv", ".tsv")) and text.lstrip()[:1] in '{"['
    )
    if as_json:
        records, lines = _json_records(text)
    elif lower.endswith(".txt"):
        records, lines = _txt_records(text)
    else:
        records, lines = _csv_records(text, text_column)
    return from_records(records, text_column, lines, capped)


def _txt_records(text: str) -> tuple[list, list[int]]:
    """A plain text file's lines as texts (blank lines skipped) and their line numbers."""
    found = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    return [line for _, line in found], [n for n, _ in found]


def _json_records(text: str) -> tuple[list, list[int]]:
    if text.lstrip().startswith("["):
        try:
            whole = json.loads(text)
        except json.JSONDecodeError as e:
            raise _bad(
                f"The file is not JSON ({e.msg}, line {e.lineno}): a JSON array, or one object a line."
            ) from None
        return (whole, []) if isinstance(whole, list) else ([whole], [])
    records, lines = [], []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise _bad(f"Line {n} is not JSON ({e.msg}): one JSON object a line.") from None
            lines.append(n)
    return records, lines


def _csv_records(text: str, text_column: str) -> tuple[list[dict], list[int]]:
    """A CSV's rows as dicts keyed by its header (the first delimiter whose header has the text column)."""
    first = text.splitlines()[0] if text.strip() else ""
    delimiter = next(
        (d for d in DELIMITERS if text_column.lower() in [h.strip().strip('"').lower() for h in first.split(d)]),
        ",",
    )
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    rows, lines, line = [], [], 1
    try:
        for row in reader:
            rows.append(row)
            lines.append(line)
            line = reader.line_num + 1
    except csv.Error as e:
        raise _bad(f"The CSV could not be read at line {line} ({e}): check its quotes.") from None
    if not rows:
        return [], []
    header = [h.strip() for h in rows[0]]
    records: list[dict] = []
    at: list[int] = []
    for n, row in zip(lines[1:], rows[1:]):
        if not any(c.strip() for c in row):
            continue  # a blank line
        if len(row) != len(header):  # a missing or an extra delimiter: its cells would land in other columns
            name = {",": "commas", ";": "semicolons", "\t": "tabs"}.get(delimiter, "delimiters")
            raise _bad(
                f"{where(len(records) + 1, n)} has {len(row)} fields where the header has {len(header)}: check its "
                f"{name} and quotes (a text with a {delimiter!r} in it goes in double quotes; an empty field still "
                "needs its delimiter)."
            )
        records.append(dict(zip(header, row)))
        at.append(n)
    return records, at
