"""`logprob-explorer batch FILE`: many texts scored, one row per text (explorer.results.batch.Batch).

FILE is a CSV with a `text` column (and optionally `id`) or JSONL (one JSON string, `{"text": ...}` or quiz line a
line). Each row: tokens, total and mean logprob, perplexity, the text statistics (`--sums-only`: none, the sums
alone, which is all minicons' sequence_score gives), and for quiz lines the answer set's result. `--format json` is
the whole batch (`Batch.to_dict`, at most MAX_TEXTS texts), `csv` and `jsonl` its table, each row written as it
comes (any number of texts in bounded memory). A progress bar goes to stderr; Ctrl-C stops between texts, keeps the
rows done so far and exits with status 130.
"""

from __future__ import annotations

import argparse
import sys

from explorer.cli.progress import Progress as _Progress
from explorer.cli.progress import rows_out

FORMATS = ("json", "csv", "jsonl")


def add_parser(sub) -> None:
    from explorer.cli.args import model_args

    p = sub.add_parser(
        "batch",
        help="score many texts from a CSV or JSONL file: one row per text",
        description="One row per text of FILE (a CSV with a `text` column, or JSONL: one JSON string, "
        '{"text": ...} or quiz line {"question", "choices", "answer"} a line): tokens, total and mean logprob, '
        "perplexity, GLTR, Min-K%%, Min-K%%++ and Fast-DetectGPT (scores, not verdicts), and for quiz lines the "
        "predicted choice. Each text is scored exactly as `score` scores it alone.",
    )
    model_args(p)
    p.add_argument("file", help="a CSV (with a `text` column) or JSONL file")
    p.add_argument(
        "--context-start",
        default="none",
        metavar="none|document|TOKEN|ID",
        help="put this before each text so its first token is scored too: document (bos and eos mean the same): "
        "the token the model was trained to see at a document's start; or a special token by its text or id "
        "(default: none)",
    )
    p.add_argument(
        "--min-k", type=float, default=20.0, metavar="PERCENT", help="k of Min-K%% and Min-K%%++ (default 20)"
    )
    p.add_argument(
        "--sums-only",
        action="store_true",
        help="only each text's summed and mean logprob and perplexity (what minicons' sequence_score gives): no "
        "ranks, entropy or text statistics, faster",
    )
    p.add_argument("--format", choices=FORMATS, default="json")
    p.add_argument("--out", help="write the result here instead of stdout")


def run(a: argparse.Namespace) -> dict | str | int:
    from explorer.cli.args import check_out
    from explorer.errors import ExplorerError
    from explorer.results.batch import MAX_TEXTS, read_batch
    from explorer.results.stats import check_k_percent

    # 1. every check that needs no model: the output, k, the file and its texts
    check_out(a.out, "--out")
    check_k_percent(a.min_k)
    try:
        with open(a.file, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise ExplorerError(f"{a.file!r}: {e.strerror}; give a CSV or JSONL file that exists.") from None
    if a.format == "json":
        try:
            items = read_batch(raw, a.file)
        except ExplorerError as e:
            if f"At most {MAX_TEXTS}" not in e.message:
                raise
            more = "Or write --format csv or jsonl, whose rows are written as they come (any number of texts)."
            raise ExplorerError(f"{e.message} {more}", param="file", code=e.code) from None
    else:
        items = read_batch(raw, a.file, limit=None)
    del raw
    # 2. load the model and score every text
    from explorer.cli.args import load_engine

    engine = load_engine(a, a.model)
    start = None if a.context_start.lower() == "none" else a.context_start
    if a.format != "json":
        return _stream(a, engine, items, start)
    from explorer.engine.analyses.batch import run_batch

    progress = _Progress()
    b = run_batch(engine, items, start, a.min_k, progress=progress, stats=not a.sums_only)
    progress.end()
    if not b.stopped:
        return b.to_dict()
    # 3. stopped (Ctrl-C): the rows done are written, and the exit status says the output is partial
    from explorer.cli.args import write

    write(b.to_dict(), a.out)
    print(f"batch: {b.stopped} The {len(b.rows)} rows done are written; exit status 130.", file=sys.stderr)
    return 130


def _stream(a: argparse.Namespace, engine, items: list, start: str | None) -> int:
    """--format csv / jsonl: each row written to --out (or stdout) as it comes; Ctrl-C keeps the rows done (130)."""
    from explorer.engine.analyses.batch import score_batch
    from explorer.results.batch import csv_header, csv_line, jsonl_line

    line = csv_line if a.format == "csv" else jsonl_line
    if start is not None:
        engine.context_start_ids(start)  # a start token this model lacks: refused before --out is opened (kept)
    progress = _Progress()
    done = 0
    with rows_out(a.out) as out:
        if a.format == "csv":
            out.write(csv_header())
        progress(0, len(items))
        try:
            for row in score_batch(engine, items, start, a.min_k, stats=not a.sums_only):
                out.write(line(row))
                done += 1
                progress(done, len(items))
        except KeyboardInterrupt:
            progress.end()
            print(f"batch: Interrupted after {done} of {len(items)} texts. The {done} rows done are written; exit "
                  "status 130.", file=sys.stderr)  # fmt: skip
            return 130
    progress.end()
    if a.out:
        print(f"wrote {a.out}", file=sys.stderr)
    return 0
