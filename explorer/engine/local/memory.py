"""How much memory a device has: the default budget of the model registry (explorer/serving/models.py)."""

from __future__ import annotations

import os

import torch

from explorer.engine.local.loading import pick_device
from explorer.errors import ExplorerError


def device_memory_mb(device: str | None = None) -> int:
    """Total memory of `device` (auto: the device models load on) in MB: the GPU's own, else the machine's RAM or
    the container's limit where that is less (a Space); 0 when it cannot be told."""
    try:
        dev = pick_device(device)
    except ExplorerError:
        dev = torch.device("cpu")  # the load itself will say what is wrong with `device`
    try:
        if dev.type == "cuda":
            return int(torch.cuda.get_device_properties(dev.index or 0).total_memory // 2**20)
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        return int(min(ram, container_limit() or ram) // 2**20)
    except (ValueError, OSError, RuntimeError, AttributeError):
        return 0


CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")  # cgroup v2, v1


def container_limit() -> int:
    """The memory limit of this process's container (cgroup v2 or v1) in bytes; 0 when there is none."""
    for path in CGROUP_LIMITS:
        try:
            with open(path) as f:
                raw = f.read().strip()
        except OSError:
            continue
        if raw.isdigit() and int(raw) < 1 << 60:  # "max" or v1's huge number: no limit
            return int(raw)
    return 0
