"""A page action as a ZeroGPU call: `spaces.GPU` with the duration its work needs, and only picklable CPU objects
crossing between this process and the worker (explorer/ui/actions.py says when, explorer/serving/zerogpu.py why).

Streaming holds the GPU from the first token to the last: `spaces.GPU` schedules a GPU once per call and a generator
keeps it until it ends, and releasing it between tokens would mean one call per token (a schedule and a minimum
duration each) while the KV cache lives in the worker's GPU memory, which the next call may not get (another GPU
index means another worker). So a generation asks for its tokens' duration, once.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import importlib
import inspect
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import gradio as gr

from explorer.rules.sampler import Limits
from explorer.serving import zerogpu

if TYPE_CHECKING:
    from explorer.serving.models import Models

MAX_PATH = 4096  # a longer string is a text, never an uploaded file's path


@dataclasses.dataclass(frozen=True)
class Key:
    """A page component named by its id: what a worker's output is keyed by (a built page's component does not
    pickle)."""

    id: int


def tokens_in(value: Any) -> int:
    """An upper bound on the tokens `value` holds: a string's UTF-8 bytes (a file's size where it names an uploaded
    file), a result's ids, the sum over a list, tuple or dict's values; 0 for anything else."""
    if isinstance(value, str):
        if len(value) < MAX_PATH and "\n" not in value and os.path.isfile(value):
            return os.path.getsize(value)
        return len(value.encode("utf-8"))
    if isinstance(value, (list, tuple)):
        return sum(tokens_in(v) for v in value)
    if isinstance(value, dict):
        return sum(tokens_in(v) for v in value.values())
    ids = getattr(value, "ids", None)
    return len(ids) if ids is not None and hasattr(ids, "__len__") else 0


def tokens_out(arguments: dict[str, Any], limits: Limits) -> int:
    """The tokens a call asks to generate: its `max_tokens`, at most the server's cap."""
    asked = arguments.get("max_tokens")
    if isinstance(asked, bool) or not isinstance(asked, (int, float)) or asked <= 0:
        return 0
    return int(min(asked, limits.max_tokens)) if limits.max_tokens else int(asked)


def rate_for(arguments: dict[str, Any], models: Models | None) -> zerogpu.Rate:
    """The rate of the largest model a call names (every listed model is in memory on ZeroGPU), else of the
    largest in memory."""
    loaded = dict(models.in_memory()) if models is not None else {}
    named = [mb for v in arguments.values() if isinstance(v, str) for name, mb in loaded.items() if v == name]
    return zerogpu.Rate.of(max(named or loaded.values() or [0.0]))


def asked(fn: Callable, limits: Limits, models: Models | None) -> Callable[..., int]:
    """The duration (whole seconds) a call of `fn` asks `spaces.GPU` for, from the call's own arguments."""
    signature = inspect.signature(fn)

    def seconds(*args, **kwargs) -> int:
        try:
            arguments = dict(signature.bind_partial(*args, **kwargs).arguments)
            for p in signature.parameters.values():  # a handler's keyword inputs (**options): by their own names
                if p.kind is inspect.Parameter.VAR_KEYWORD:
                    arguments |= arguments.pop(p.name, {})
        except TypeError:  # not fn's arguments after all: count them, name none
            arguments = {str(i): a for i, a in enumerate(args)} | kwargs
        rate = rate_for(arguments, models)
        return zerogpu.gpu_seconds(tokens_in(list(arguments.values())), tokens_out(arguments, limits), rate,
                                   limits.max_seconds)  # fmt: skip

    return seconds


def sendable(value: Any) -> Any:
    """An argument as it can cross to the worker: event data without the component that fired it."""
    if isinstance(value, gr.EventData):
        value = copy.copy(value)
        value.target = None
    return value


def cpu_only(value: Any) -> Any:
    """`value` as the worker sends it back: a dict's component keys as `Key`s, and a torch object anywhere in it an
    error (zerogpu.cpu_only: the page's results are numpy, nothing may hold the worker's GPU memory)."""
    return zerogpu.cpu_only(value, key=lambda k: Key(k._id) if isinstance(k, gr.blocks.Block) else k)


def received(value: Any, blocks: dict[int, Any]) -> Any:
    """What a worker sent back, its `Key`s the page's components again."""
    if isinstance(value, dict):
        return {(blocks[k.id] if isinstance(k, Key) else k): v for k, v in value.items()}
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(received(v, blocks) for v in value)
    return value


def in_worker(fn: Callable) -> Callable:
    """`fn` as the worker runs it: its output (each step's) made `cpu_only`."""
    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def steps(*args, **kwargs) -> Iterator[Any]:
            for item in fn(*args, **kwargs):
                yield cpu_only(item)

        return steps

    @functools.wraps(fn)
    def once(*args, **kwargs):
        return cpu_only(fn(*args, **kwargs))

    return once


def here(call: Callable, fn: Callable, blocks: dict[int, Any]) -> Callable:
    """`call` (fn under spaces.GPU) as the page calls it: arguments made `sendable`, outputs `received`."""
    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def steps(*args, **kwargs) -> Iterator[Any]:
            args, kwargs = tuple(sendable(a) for a in args), {k: sendable(v) for k, v in kwargs.items()}
            for item in call(*args, **kwargs):
                yield received(item, blocks)

        return steps

    @functools.wraps(fn)
    def once(*args, **kwargs):
        args, kwargs = tuple(sendable(a) for a in args), {k: sendable(v) for k, v in kwargs.items()}
        return received(call(*args, **kwargs), blocks)

    return once


def gpu_wrapper(limits: Limits, models: Models | None, blocks: dict[int, Any]) -> Callable[[Callable], Callable] | None:
    """On ZeroGPU, what puts an action (already bounded) under `spaces.GPU` (see the module); else None."""
    if not zerogpu.active():
        return None
    spaces = importlib.import_module("spaces")

    def wrap(fn: Callable) -> Callable:
        call = spaces.GPU(in_worker(fn), duration=asked(fn, limits, models))
        return here(call, fn, blocks)

    return wrap
