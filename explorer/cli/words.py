"""`logprob-explorer words`: per-word surprisal for reading-time studies, one row per word.

Each word (explorer/results/words.py's segmentation) with its character span, tokens, the usual summed surprisal and
the corrected one (Pimentel & Meister 2024: the word's probability includes that the next token starts a new word),
in bits and nats. The body is `explorer.export.words.to_dict` (`--format json`) or `to_csv` (`--format csv`).

`--file STIMULI` (a CSV or JSONL stimulus list, explorer/results/stimuli.py) gives the table of every row, each
text scored alone, its own columns (item, condition, ...) on every word row (explorer.results.word_table); the
format follows --out's ending (.csv, .jsonl, .json) unless --format says it, and when the texts mark regions the
region table goes beside it (`words.csv` -> `words-regions.csv`, or --regions-out).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from typing import TextIO

from explorer.cli.progress import Progress, rows_out
from explorer.errors import ExplorerError

FORMATS = ("json", "csv", "jsonl")  # jsonl: with --file only


def add_parser(sub) -> None:
    from explorer.cli.args import model_args

    p = sub.add_parser(
        "words",
        help="per-word surprisal: summed over the word's tokens, and corrected for where the word ends",
        description="One row per word: text, character span, tokens, summed surprisal, corrected surprisal "
        "(Pimentel & Meister 2024, 'How to compute the probability of a word'), in bits and nats. Needs the full "
        "next-token distribution, so a model loaded here (not --backend).",
    )
    model_args(p)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--text")
    src.add_argument("--text-file")
    src.add_argument(
        "--file",
        help="a stimulus list (CSV or JSONL with a `text` column and any others: item, condition, ...; regions as "
        "[brackets] or a `regions` column): one row per word of every text, its columns carried",
    )
    p.add_argument("--text-column", default="text", help="with --file: the column of texts (default: text)")
    p.add_argument("--regions-out", help="with --file: write the region table here (default: beside --out)")
    p.add_argument(
        "--context-start",
        default="document",
        metavar="document|none|TOKEN|ID",
        help="what to put before each text so its first word is scored too: document (the default; bos and eos "
        "mean the same): the token the model was trained to see at a document's start (SmolLM2's <|endoftext|>; "
        "nothing where the tokenizer adds a BOS itself); none: nothing, the first word has no score; or a special "
        "token by its text or id (a chat turn token only so)",
    )
    p.add_argument(
        "--format", choices=FORMATS, help="json (default; with --file: --out's ending, else csv), csv, jsonl"
    )
    p.add_argument("--out", help="write the result here instead of stdout")


def run(a: argparse.Namespace) -> dict | str | int:
    from explorer.cli.args import check_out, load_engine, source_text
    from explorer.engine.passes.word_ends import score_text_words
    from explorer.export.words import to_csv, to_dict
    from explorer.results.words import leading, with_ends, words

    if a.file:
        return _many(a)
    if a.format == "jsonl":
        raise ExplorerError("--format jsonl is for a stimulus list (--file): use json or csv.", param="format")
    a.ids = None  # source_text reads --text / --text-file
    text = source_text(a, "split into words")
    check_out(a.out, "--out")
    _no_backend(a)
    engine = load_engine(a, a.model)
    r, ends = score_text_words(engine, text, k=1, start=a.context_start)
    w = with_ends(words(r), ends)
    lead = leading(ends.special)
    return to_csv(r, w, lead) if a.format == "csv" else to_dict(r, w, lead)


def _no_backend(a: argparse.Namespace) -> None:
    """Refused before any request: a served model gives no distribution after the text."""
    from explorer.cli.args import backend_of

    if backend_of(a):
        raise ExplorerError(
            "words needs the full next-token distribution at every position and after the text's last token, "
            "which a served model does not give: use a model loaded here (drop --backend).",
            param="backend",
        )


def _many(a: argparse.Namespace) -> dict | int:
    """--file: the word table of every text (and the region table beside it), csv and jsonl written text by text as
    the texts are scored, with a progress bar on stderr; json (one document) whole at the end."""
    from explorer.cli.args import check_out, load_engine
    from explorer.notebook.lm import LM
    from explorer.results.word_table import WordTable

    fmt = a.format or _ending(a.out)
    regions_out = a.regions_out or (_beside(a.out, fmt) if a.out else None)
    check_out(a.out, "--out")
    check_out(regions_out, "--regions-out")
    _no_backend(a)
    items = _stimuli(a.file, a.text_column, fmt)  # every row checked before the model loads
    start = None if a.context_start.lower() == "none" else a.context_start
    engine = load_engine(a, a.model)
    if start is not None:
        engine.context_start_ids(start)  # a start token this model lacks: refused before --out is opened
    table = WordTable.of(LM(engine).name, items)
    if fmt == "json":
        progress = Progress("words")
        for done in _scored(engine, items, start, table):
            progress(done, len(items))
        progress.end()
        return table.to_dict()
    regions = any(s.regions for s in items)
    if regions and regions_out is None:
        print("words: the texts mark regions; give --out or --regions-out to write the region table.", file=sys.stderr)
    with ExitStack() as files:
        out = files.enter_context(rows_out(a.out))
        side = files.enter_context(rows_out(regions_out)) if regions and regions_out else None
        status = _stream(engine, items, start, table, fmt, out, side)
    for path in (side and regions_out, a.out):
        if path:
            print(f"wrote {path}", file=sys.stderr)
    return status


def _stimuli(path: str, text_column: str, fmt: str) -> list:
    """The checked stimuli of --file: json (one document held whole) within the Batch tab's limits, csv and jsonl
    (written row by row) of any size."""
    from explorer.notebook.lm import stimuli_of
    from explorer.results.stimuli import MAX_TEXTS

    try:
        return stimuli_of(path, text_column, capped=fmt == "json")
    except ExplorerError as e:
        if f"At most {MAX_TEXTS}" not in e.message and "MB: split it" not in e.message:
            raise
        more = "Or write --format csv or jsonl, whose rows are written as they come (any number of texts)."
        raise ExplorerError(f"{e.message} {more}", param="file", code=e.code) from None


def _scored(engine, items: list, start: str | None, table) -> Iterator[int]:
    """fill_word_table's texts done after each text (explorer/engine/analyses/batch.py)."""
    from explorer.engine.analyses.batch import fill_word_table

    yield 0
    yield from fill_word_table(engine, items, start, table)


def _stream(engine, items: list, start: str | None, table, fmt: str, out: TextIO, side: TextIO | None) -> int:
    """Each text's word rows (and region rows) written as soon as it is scored; a text that cannot be scored ends
    the list with an error naming its row, Ctrl-C with status 130, the rows of the texts before kept either way."""
    progress = Progress("words")
    done = 0
    try:
        for done in _scored(engine, items, start, table):
            part = table.drained()
            for file, regions in ((out, False), (side, True)):
                if file is not None:
                    file.write(part.to_csv(regions, header=done == 0) if fmt == "csv" else part.to_jsonl(regions))
            progress(done, len(items))
    except KeyboardInterrupt:
        progress.end()
        print(f"words: Interrupted after {done} of {len(items)} texts. The rows of the {done} texts done are "
              "written; exit status 130.", file=sys.stderr)  # fmt: skip
        return 130
    except ExplorerError as e:
        progress.end()
        raise ExplorerError(f"{e.message} The rows of the {done} texts before it are written.", param=e.param,
                            code=e.code) from None  # fmt: skip
    progress.end()
    return 0


def _ending(out: str | None) -> str:
    """The format --out's ending names (csv without one); another ending (.xlsx, .parquet) is an ExplorerError,
    not a CSV under that name."""
    ext = os.path.splitext(out or "")[1].lower()
    known = {"": "csv", ".csv": "csv", ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl"}
    if ext not in known:
        raise ExplorerError(
            f"--out {out}: words writes .csv, .jsonl or .json (or give --format csv|jsonl|json to write that format "
            f"under this name)."
        )
    return known[ext]


def _beside(out: str, fmt: str) -> str:
    """words.csv -> words-regions.csv."""
    stem, ext = os.path.splitext(out)
    return f"{stem}-regions{ext or '.' + fmt}"
