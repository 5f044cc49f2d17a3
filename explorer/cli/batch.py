"""`logprob-explorer batch FILE`: many texts scored, one row per text (explorer.results.batch.Batch).

FILE is a CSV with a `text` column (and optionally `id`) or JSONL (one JSON string, `{"text": ...}` or quiz line a
line). Each row: tokens, total and mean logprob, perplexity, the text statistics, and for quiz lines the answer
set's result. `--format json` is the whole batch (`Batch.to_dict`), `csv` and `jsonl` its table. Progress goes to
stderr; Ctrl-C stops between texts, writes the rows done so far and exits with status 130.
"""

from __future__ import annotations

import argparse
import sys
import time

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
    p.add_argument("--format", choices=FORMATS, default="json")
    p.add_argument("--out", help="write the result here instead of stdout")


class _Progress:
    """`batch: 37/200 texts` on stderr, at most once a second (and the last): on one line on a terminal, a line each
    otherwise."""

    def __init__(self) -> None:
        self.last, self.open = 0.0, False
        self.tty = sys.stderr.isatty()

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done == total or now - self.last >= 1.0:
            self.last = now
            self.open = self.tty and done < total
            lead, end = ("\r", "" if self.open else "\n") if self.tty else ("", "\n")
            print(f"{lead}batch: {done}/{total} texts", end=end, file=sys.stderr, flush=True)

    def end(self) -> None:
        """Close an open progress line (before another message)."""
        if self.open:
            print(file=sys.stderr)
            self.open = False


def run(a: argparse.Namespace) -> dict | str | int:
    from explorer.cli.args import check_out
    from explorer.errors import ExplorerError
    from explorer.results.batch import read_batch
    from explorer.results.stats import check_k_percent

    # 1. every check that needs no model: the output, k, the file and its texts
    check_out(a.out, "--out")
    check_k_percent(a.min_k)
    try:
        with open(a.file, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise ExplorerError(f"{a.file!r}: {e.strerror}; give a CSV or JSONL file that exists.") from None
    items = read_batch(raw, a.file)
    # 2. load the model and score every text
    from explorer.cli.args import load_engine
    from explorer.engine.analyses.batch import run_batch

    engine = load_engine(a, a.model)
    start = None if a.context_start.lower() == "none" else a.context_start
    progress = _Progress()
    b = run_batch(engine, items, start, a.min_k, progress=progress)
    progress.end()
    body = b.to_csv() if a.format == "csv" else b.to_jsonl() if a.format == "jsonl" else b.to_dict()
    if not b.stopped:
        return body
    # 3. stopped (Ctrl-C): the rows done are written, and the exit status says the output is partial
    from explorer.cli.args import write

    write(body, a.out)
    print(f"batch: {b.stopped} The {len(b.rows)} rows done are written; exit status 130.", file=sys.stderr)
    return 130
