"""Many callers at once, as a classroom or an evaluation client asks: each fn() on its own thread, all let go
together (a barrier), their results or errors in order."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def at_once(fns: list[Callable[[], Any]], timeout: float = 120) -> list:
    """Each fn() on its own thread, all let go together; their results (or the errors they raised) in order."""
    out: list = [None] * len(fns)
    gate = threading.Barrier(len(fns))

    def run(i, fn):
        gate.wait()
        try:
            out[i] = fn()
        except Exception as err:  # noqa: BLE001 - compared by the test
            out[i] = err

    threads = [threading.Thread(target=run, args=(i, fn)) for i, fn in enumerate(fns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=timeout)
    return out
