"""Every page action under the server's limits, and on ZeroGPU the model's work under `spaces.GPU`.

`bound_events(demo, limits)` wraps each event handler of the built page so that it runs `within` a fresh
`explorer.engine.passes.bounds.Bound` (the engine then refuses over-cap texts and max tokens, and stops work past the
deadline).
Handlers that run the model are marked with `@uses_model`: on a public server they share one queue group of
`workers` at a time, and on Hugging Face ZeroGPU (explorer/serving/zerogpu.py: the `spaces` package says so) each runs
under `spaces.GPU`, which runs it in a forked worker process holding a GPU and pickles what crosses:
1. here, before the call: the duration it asks (`asked`: the tokens its arguments hold and ask for, at the rate of
   the largest model it names), and its event data without the component that fired it (not picklable);
2. in the worker: the handler within its bound; the components keying its output as their ids (a component of a
   built page does not pickle), and a torch object in its output refused (only CPU objects come back);
3. here, after: each output's ids back to the page's components (a streaming handler: every step's).
Off ZeroGPU nothing is wrapped. Model loading (the model picker) is not marked: on ZeroGPU every listed model is
loaded at start-up (explorer/serving/models.py `preload_for_zero_gpu`).
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import gradio as gr

from explorer.engine.passes import bounds
from explorer.rules.sampler import Limits
from explorer.ui.gpu_calls import gpu_wrapper

if TYPE_CHECKING:
    from explorer.serving.models import Models

log = logging.getLogger(__name__)
MARK = "_lx_uses_model"


def uses_model(fn: Callable) -> Callable:
    """Mark an event handler that runs the model (it gets the GPU on ZeroGPU)."""
    setattr(fn, MARK, True)
    return fn


def marked(fn: Callable) -> bool:
    return bool(getattr(fn, MARK, False))


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


def bound_events(demo: gr.Blocks, limits: Limits, workers: int, models: Models | None = None) -> dict[str, Any]:
    """Wrap every handler of `demo` (see the module's docstring), and on a public server put those that run the
    model in one queue group of `workers` at a time; returns what was done, for the log and tests, and the ids of the
    events that run the model: as a page opens ("opening") and when a visitor asks ("model")."""
    gpu = gpu_wrapper(limits, models, demo.blocks)
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
