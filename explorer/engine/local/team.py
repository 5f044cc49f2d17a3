"""One thread runs the process's parallel CPU work: the model's forward passes, its output layer and llama.cpp's
decodes (`run`); torch runs on one thread in every other thread.

Why: libgomp, the OpenMP runtime that torch and llama.cpp share in one process, keeps a pool of worker threads
for every thread that ever started a parallel region, for as long as that thread lives; once the threads of all
the pools outnumber the CPU cores, its barriers stop spinning and sleep and wake instead. llama.cpp passes a
barrier after each operation of its graph (about 900 a token for SmolLM2-135M), torch one per operation.
Measured on 2 cores (bench/RESULTS.md, 2026-12-04): a thread decoding with llama.cpp on both cores ran 36-39
tokens/s once any other thread had run one parallel torch operation, 106-162 when it was the only one; the torch
engine's batch of 8 rows, 87-93 against 132-139. Which threads do model work (the page's and the API's request
threads, the batch's, the main thread loading) is then no longer a question of speed.

`EXPLORER_TEAM=0` turns it off (every thread keeps torch's default and runs its own work, as before), to measure.

Engines call it through `ForwardEngine.compute` (a model on an accelerator computes on the caller's thread).
`run(fn, *args, **kwargs)` runs fn on that thread (inline where it is that thread already) in the caller's torch grad
mode, inference mode and context variables (explorer/engine/passes/bounds.py's request bounds), and returns its
result or raises its error. The work is serialized, as each engine's lock already serialized a model's passes; on
a CPU two teams of all the cores at once only slowed each other.
"""

from __future__ import annotations

import contextvars
import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future, wait
from typing import TypeVar

import torch

from explorer.config import engine_options

__all__ = ["ON", "THREADS", "is_team", "run", "torch_threads"]

T = TypeVar("T")

# EXPLORER_TEAM (explorer.config), read once at import, not from an engine's options: the team is one thread for the
# whole process, which every engine in it shares, so it is the process's setting (the named exception to engines
# taking their options, tests/test_engine_options.py)
ON = engine_options().team
THREADS = torch.get_num_threads()  # the team's: the process's default (every core, or OMP_NUM_THREADS)

_jobs: queue.SimpleQueue = queue.SimpleQueue()
_thread: threading.Thread | None = None
_start = threading.Lock()


def torch_threads(k: int) -> None:
    """This thread runs torch on `k` threads; threads started later keep the process's default."""
    n = torch.get_num_threads()
    torch.set_num_threads(k)  # this thread's OpenMP setting, and (in torch) the default of threads not yet started
    reset = threading.Thread(target=torch.set_num_threads, args=(n,))  # so put the default back, from another thread
    reset.start()
    reset.join()


def _loop(ready: Future) -> None:
    try:
        torch.get_num_threads()  # torch's first look at this thread (it would set the default over ours later)
        torch.set_num_threads(THREADS)
    except BaseException as e:  # noqa: BLE001 - handed to the thread that starts the team
        ready.set_exception(e)
        return
    ready.set_result(None)
    while True:
        _jobs.get()()


def _team() -> threading.Thread:
    """The team's thread, started where it is not running (at import, and in a forked child)."""
    global _thread
    with _start:
        if _thread is None or not _thread.is_alive():
            ready: Future = Future()
            t = threading.Thread(target=_loop, args=(ready,), name="explorer-team", daemon=True)
            t.start()
            ready.result()
            # the team set torch's default for threads started later to THREADS: back to one (and this thread's)
            torch.set_num_threads(1)
            _thread = t
        return _thread


def _forget() -> None:
    """In a forked child (ZeroGPU runs a Space's GPU work so): the parent's team thread is not there; start anew."""
    global _jobs, _thread, _start
    _jobs, _thread, _start = queue.SimpleQueue(), None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget)
if ON:
    _team()  # now, before any other thread can read torch's default while the team has it at THREADS


def is_team() -> bool:
    """Whether the caller is the team's thread."""
    return _thread is not None and threading.current_thread() is _thread


def run(fn: Callable[..., T], *args, **kwargs) -> T:
    """fn(*args, **kwargs) on the team's thread, as the caller would run it (see the module). A caller interrupted
    while it waits (Ctrl-C in a notebook) is interrupted once the work is done: the engine's lock it holds is not
    let go while the team still uses the model's buffers."""
    if is_team() or not ON:
        return fn(*args, **kwargs)
    team = _team()
    grad, inference = torch.is_grad_enabled(), torch.is_inference_mode_enabled()
    context = contextvars.copy_context()
    done: Future = Future()

    def job() -> None:
        try:
            with torch.inference_mode(inference), torch.set_grad_enabled(grad):
                done.set_result(context.run(fn, *args, **kwargs))
        except BaseException as e:  # noqa: BLE001 - handed to the caller, whatever it is
            done.set_exception(e)

    _jobs.put(job)
    interrupted: BaseException | None = None
    while not done.done():
        try:
            wait([done], timeout=1.0)
        except BaseException as e:  # noqa: BLE001 - the caller interrupted: raised once the work is done
            interrupted = e
        if not done.done() and not team.is_alive():
            raise RuntimeError("The model's thread stopped: restart the app.") from interrupted
    if interrupted is not None:
        raise interrupted
    return done.result()
