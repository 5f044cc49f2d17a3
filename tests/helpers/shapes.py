"""The shape of every tensor a block of torch code makes, to check that no [positions, vocabulary] matrix is."""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode


class Shapes(TorchDispatchMode):
    """Records the shape of every tensor an op returns."""

    def __init__(self):
        super().__init__()
        self.shapes = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else [out]:
            if isinstance(t, torch.Tensor):
                self.shapes.append(tuple(t.shape))
        return out


def recorded(fn, *args, record: type[TorchDispatchMode] = Shapes, **kwargs):
    """(fn(*args, **kwargs), the `record` mode (Shapes: every tensor's shape) that watched it), run on the team's
    thread in inference mode: the engine's passes and statistics run there (explorer/engine/local/team.py), and a
    dispatch mode sees its own thread's ops only."""
    from explorer.engine.local import team

    def job():
        with torch.inference_mode(), record() as rec:
            return fn(*args, **kwargs), rec

    return team.run(job)
