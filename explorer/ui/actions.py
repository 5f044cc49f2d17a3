"""Every page action under the server's limits, and on a ZeroGPU Space the model's work under `spaces.GPU`.

`bound_events(demo, limits)` wraps each event handler of the built page so that it runs `within` a fresh
`explorer.bounds.Bound` (the engine then refuses over-cap texts and max tokens, and stops work past the deadline).
Handlers that run the model are marked with `@uses_model`: on a public server they share one queue group of
`workers` at a time, and on a Space where the `spaces` package is importable (Hugging Face ZeroGPU) they run under `spaces.GPU(duration=...)`
sized to the time cap. Off ZeroGPU, `spaces.GPU` returns the function as is; off Spaces nothing is wrapped.
Model loading (the model picker) is not marked: it stays on the CPU until first use, as ZeroGPU requires.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import logging
import os
from collections.abc import Callable
from typing import Any

import gradio as gr

from explorer import bounds
from explorer.settings import Limits

log = logging.getLogger(__name__)
MARK = "_lx_uses_model"
GPU_MARGIN_S = 15  # spaces.GPU's duration: the time cap plus moving the weights onto the GPU
GPU_DEFAULT_S = 120  # ... when the server sets no time cap


def uses_model(fn: Callable) -> Callable:
    """Mark an event handler that runs the model (it gets the GPU on ZeroGPU)."""
    setattr(fn, MARK, True)
    return fn


def marked(fn: Callable) -> bool:
    return bool(getattr(fn, MARK, False))


def zero_gpu(limits: Limits) -> Callable[[Callable], Callable] | None:
    """`spaces.GPU` with a duration fitting the time cap, on a Space (SPACE_ID) where the `spaces` package is
    importable; else None."""
    if not os.environ.get("SPACE_ID"):
        return None
    try:
        spaces = importlib.import_module("spaces")
    except Exception:  # noqa: BLE001 - not installed, or broken off a Space: no ZeroGPU here
        return None
    duration = int(limits.max_seconds + GPU_MARGIN_S) if limits.max_seconds else GPU_DEFAULT_S
    return lambda fn: spaces.GPU(fn, duration=duration)


def bounded(fn: Callable, limits: Limits) -> Callable:
    """`fn` run within a bound that starts when it is called (a generator: the bound spans all its steps)."""
    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def steps(*args, **kwargs):
            bound = bounds.start(limits)
            with bounds.within(bound):
                gen = fn(*args, **kwargs)
            try:
                while True:
                    with bounds.within(bound):  # Gradio may run each step on another thread
                        try:
                            item = next(gen)
                        except StopIteration:
                            return
                    yield item
            finally:  # Stop pressed: the handler's own cleanup (the model's pin) runs now, not at garbage collection
                gen.close()

        return steps

    @functools.wraps(fn)
    def once(*args, **kwargs):
        with bounds.within(bounds.start(limits)):
            return fn(*args, **kwargs)

    return once


def bound_events(demo: gr.Blocks, limits: Limits, workers: int) -> dict[str, Any]:
    """Wrap every handler of `demo` (see the module's docstring), and on a public server put those that run the
    model in one queue group of `workers` at a time; returns what was done, for the log and tests, and the ids of the
    events that run the model: as a page opens ("opening") and when a visitor asks ("model")."""
    gpu = zero_gpu(limits)
    count, on_gpu = 0, []
    lines: dict[str, list[int]] = {"model": [], "opening": []}
    for block_fn in demo.fns.values():
        fn = block_fn.fn
        if fn is None or inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
            continue
        wrapped = bounded(fn, limits)
        if marked(fn):
            lines["opening" if any(t[1] == "load" for t in block_fn.targets) else "model"].append(block_fn._id)
            if limits.public:  # one queue for all the model's work; elsewhere each action keeps its own
                block_fn.concurrency_id, block_fn.concurrency_limit = "model", workers
            if gpu is not None:
                wrapped = gpu(wrapped)
                on_gpu.append(block_fn.name)
        block_fn.fn = wrapped
        count += 1
    if gpu is not None:
        log.info("ZeroGPU: %d actions run under spaces.GPU", len(on_gpu))
    return {"bounded": count, "gpu": on_gpu, **lines}
