"""Hugging Face ZeroGPU, as the `spaces` package runs code: what a `spaces.GPU` call asks for, and start-up.

On ZeroGPU (the package's own setting, `SPACES_ZERO_GPU=true`, with its device API at SPACES_ZERO_DEVICE_API_URL)
the main process never holds a GPU. Importing `spaces` patches torch there so that moving a model to `cuda` makes
placeholders; at start-up the package packs the weights behind them once (`start_up`). Each `@spaces.GPU` call then
asks the device API to schedule a GPU for a duration, forks a worker process (or reuses an idle one), moves the
packed weights onto the GPU in it, runs the function there and sends its pickled result back, then releases the GPU.
So, on ZeroGPU:
1. `activate()` imports `spaces` before any model loads (its patching must see the load);
2. every served model loads at start-up, on `cuda` (models.py beside this: `Models.preload`), never lazily in a worker;
3. each call asks `gpu_seconds(...)`: a pure function of the tokens asked and the model's rate (below);
4. the server runs the package's start-up (`start_up`: pack, report) itself, since it does not call `Blocks.launch`.

The duration rule (docs/operators.md, "On ZeroGPU"): seconds = START_S + weights_mb / MOVE_MB_S (a worker moving the
weights onto its GPU) + tokens_in x position_s + tokens_out x step_s, rounded up, at least FLOOR_S, at most the
time cap. `step_s` (one decode step) is STEP_S plus the weights read once at DECODE_MB_S; a prompt position costs
a sixteenth of that (positions are read in blocks of up to 256 at once). The constants are estimates for the H200
slice ZeroGPU hands out, with room: a call that outruns its duration is aborted, one that asks more waits longer in
the queue and needs more of the visitor's quota left.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

FLOOR_S = 10  # the least a call asks: a worker's fork, CUDA's start and the weights' move come first
START_S = 3.0  # fork, CUDA context, the result pickled back
MOVE_MB_S = 2_000.0  # packed weights onto the GPU, MB a second
STEP_S = 0.03  # one decode step's fixed cost: kernel launches, the statistics, the text layer
DECODE_MB_S = 500_000.0  # weights read by one decode step, MB a second
PREFILL_SHARE = 16  # a prompt position costs 1/16 of a decode step
NO_CAP_S = 120  # the ceiling when the server sets no time cap (EXPLORER_MAX_SECONDS=0)


@dataclass(frozen=True)
class Rate:
    """How fast one model works on the GPU: seconds to start a call, a prompt position, a generated token."""

    start_s: float
    position_s: float
    step_s: float

    @classmethod
    def of(cls, weights_mb: float) -> Rate:
        """The rate of a model of `weights_mb` MB of weights (see the module)."""
        step = STEP_S + weights_mb / DECODE_MB_S
        return cls(START_S + weights_mb / MOVE_MB_S, step / PREFILL_SHARE, step)


def gpu_seconds(tokens_in: int, tokens_out: int, rate: Rate, cap_s: float) -> int:
    """Whole seconds a `spaces.GPU` call asks for `tokens_in` positions read and `tokens_out` generated at `rate`:
    at least FLOOR_S, at most `cap_s` (the time cap; 0: NO_CAP_S)."""
    need = rate.start_s + tokens_in * rate.position_s + tokens_out * rate.step_s
    ceiling = int(cap_s) if cap_s > 0 else NO_CAP_S
    return max(FLOOR_S, min(math.ceil(need), ceiling))


def cpu_only(value: Any, key: Callable[[Any], Any] = lambda k: k, depth: int = 0) -> Any:
    """`value` as a GPU call sends it back, each dict key made `key(k)`; a TypeError when a torch object is anywhere in
    it (dicts, lists, tuples and dataclasses, 8 levels deep): a CUDA tensor would hang the call, and results are numpy."""
    if type(value).__module__.split(".")[0] == "torch":
        raise TypeError(f"A GPU call returned a torch object ({type(value).__name__}): return numpy or Python.")
    if depth > 8:
        return value
    if isinstance(value, dict):
        return {key(k): cpu_only(v, key, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(cpu_only(v, key, depth + 1) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            cpu_only(getattr(value, f.name), key, depth + 1)
    return value


def active() -> bool:
    """Whether this process runs on ZeroGPU, as the `spaces` package tells (False where it is not installed)."""
    try:
        config = importlib.import_module("spaces.config")
    except ImportError:
        return False
    return bool(config.Config.zero_gpu)


def activate() -> bool:
    """On ZeroGPU, import `spaces` now, before any model loads, so that its torch patching sees the load (a model
    moved to `cuda` is packed at start-up); whether this is ZeroGPU."""
    if not active():
        return False
    importlib.import_module("spaces")
    return True


def start_up() -> None:
    """The package's start-up step: pack the weights moved to `cuda` so far (once) and report to the device API.
    `spaces` runs it from the first `gradio.Blocks.launch`; the server here runs uvicorn itself, so it calls it."""
    zero = importlib.import_module("spaces.zero")
    zero.startup()
