"""What the many-text commands (`batch`, `words --file`) share: the progress bar on stderr, and the output file
their rows are written to as they come."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO


class Progress:
    """`batch: 37/200 texts [###.................] 41 texts/s` on stderr (`label` first), at most once a second (and
    the last): on one line on a terminal, a line each otherwise."""

    def __init__(self, label: str = "batch") -> None:
        self.label = label
        self.last, self.open = 0.0, False
        self.started = time.monotonic()
        self.tty = sys.stderr.isatty()

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if done == total or now - self.last >= 1.0:
            self.last = now
            self.open = self.tty and done < total
            lead, end = ("\r", "" if self.open else "\n") if self.tty else ("", "\n")
            bar = "#" * (20 * done // max(total, 1))
            rate = f" {done / (now - self.started):.0f} texts/s" if done and now > self.started else ""
            print(f"{lead}{self.label}: {done}/{total} texts [{bar:.<20}]{rate}", end=end, file=sys.stderr, flush=True)

    def end(self) -> None:
        """Close an open progress line (before another message)."""
        if self.open:
            print(file=sys.stderr)
            self.open = False


@contextmanager
def rows_out(path: str | None) -> Iterator[TextIO]:
    """Where rows are written as they come: the file `path` (closed after, whatever happened), else stdout."""
    if not path:
        yield sys.stdout
        return
    with open(path, "w", encoding="utf-8", newline="") as out:
        yield out
