"""How much memory a device has: the default budget of the model registry (explorer/runtime.py)."""

from __future__ import annotations

import os

import torch

from explorer.engine.loading import pick_device
from explorer.errors import ExplorerError


def device_memory_mb(device: str | None = None) -> int:
    """Total memory of `device` (auto: the device models load on) in MB: the GPU's own, else the machine's RAM;
    0 when it cannot be told."""
    try:
        dev = pick_device(device)
    except ExplorerError:
        dev = torch.device("cpu")  # the load itself will say what is wrong with `device`
    try:
        if dev.type == "cuda":
            return int(torch.cuda.get_device_properties(dev.index or 0).total_memory // 2**20)
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20)
    except (ValueError, OSError, RuntimeError, AttributeError):
        return 0
