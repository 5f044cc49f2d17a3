"""`logprob-explorer serve` as a ZeroGPU Space runs it, for tests/test_zerogpu.py.

The real `spaces` package runs in ZeroGPU mode (the environment says so and names the stand-in device API,
tests/helpers/zerogpu.py), with the two steps of its worker that need a real CUDA device replaced where
ZEROGPU_TEST_NO_DEVICE=1: `spaces.zero.torch.init` (CUDA's start in the worker) and `spaces.zero.torch.move` (the
packed weights onto the GPU), and on torch's CPU wheel a CUDA version is named for it. After the server's start-up it writes what the package packed to ZEROGPU_TEST_REPORT.
"""

from __future__ import annotations

import json
import os
import sys

import torch


def never_in_bad_fork() -> bool:
    return False


if torch.version.cuda is None:  # torch's CPU wheel: name what the package reads of a CUDA build
    torch.version.cuda = "12.8"  # which memory statistics it fakes
    torch._C._cuda_init = lambda: None  # saved, and replaced by one that raises, while it patches
    torch.cuda._is_in_bad_fork = never_in_bad_fork  # asked in a forked process: sent there by name

from explorer.cli import main  # noqa: E402
from explorer.serving import zerogpu  # noqa: E402 - after the version above: serve imports `spaces`
from explorer.serving.models import Models  # noqa: E402

_start_up = zerogpu.start_up
_preload = Models.preload_for_zero_gpu
LOADED: list = []  # the engines serve preloaded


def preload(self: Models) -> list:
    LOADED[:] = _preload(self)
    return LOADED


def warm_thread() -> None:
    """ZEROGPU_TEST_WARM_THREAD=1: one generation in the server's own process, so the default model's batch thread
    runs here before any worker forks (nothing of the served app generates here on ZeroGPU: the page and /v1 generate
    in the package's workers), as a thread started in the main process would."""
    from explorer.engine import generate
    from explorer.rules.sampler import SamplerSettings

    engine = LOADED[0]
    generate(engine, engine.encode("the fox"), SamplerSettings(max_tokens=3, temperature=0.0))
    assert getattr(engine, "scheduler", None) is not None and engine.scheduler._thread is not None


def start_up() -> None:
    if os.environ.get("ZEROGPU_TEST_WARM_THREAD") == "1":
        warm_thread()
    _start_up()
    from spaces.zero import torch as zero_torch

    if os.environ.get("ZEROGPU_TEST_NO_DEVICE") == "1":  # no CUDA device here: the worker skips its two steps
        zero_torch.init = lambda uuid: None
        zero_torch.move = lambda callback=None: None
    with open(os.environ["ZEROGPU_TEST_REPORT"], "w") as f:
        json.dump({"packed_bytes": zero_torch.size(), "pid": os.getpid()}, f)


zerogpu.start_up = start_up
Models.preload_for_zero_gpu = preload  # type: ignore[method-assign]

if __name__ == "__main__":
    sys.exit(main(["serve", *sys.argv[1:]]))
