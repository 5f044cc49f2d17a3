"""The torch engine's linear layers on a CPU in float32: oneDNN's matmul on weights packed once at load.

PyTorch's own `F.linear` on a CPU (MKL's sgemm on the weights as stored) reads the weights in the order they are
stored at every call; oneDNN's, on a copy packed for its kernels, was 2.1x faster for a decode step's 8 rows and
2x for the output layer at any number of rows (SmolLM2-135M's 576 x 1,536 and 576 x 49,152 matrices, 2 cores,
measured 2026-12-03; bench/RESULTS.md). The packed copy is the weights' size again (the original stays: gradients,
for attribution, and code that reads `.weight` use it), so a model is packed only where the copy fits in a quarter
of the machine's memory beside the weights, and the copy counts in the model's memory (`weights_mb`).

Rows are computed alone whatever else is in the batch: a row's numbers are the same in a matmul of 1, 8 or 187
rows (to 1e-6, tests/test_packed.py; equal on this project's CPU), and they differ from `F.linear`'s only by float
rounding (about 1e-6 of the values; at most 3e-5 in a logprob of the default model).
"""

from __future__ import annotations

import torch
from torch import nn

BATCH_HINT = 8  # rows the packing is laid out for (a decode step's); any number of rows runs on it


def available() -> bool:
    """Whether this torch build has oneDNN's packed linear (every x86 and arm64 CPU wheel has)."""
    ops = torch.ops.mkldnn
    return torch.backends.mkldnn.is_available() and all(
        hasattr(ops, name) for name in ("_reorder_linear_weight", "_linear_pointwise")
    )


class PackedLinear(nn.Module):
    """`linear` with oneDNN's packed copy of its weights, used where no gradient is asked for; with one (attribution)
    and for other dtypes, `F.linear` on the original weights as before."""

    def __init__(self, linear: nn.Linear):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.weight, self.bias = linear.weight, linear.bias  # the same parameters: tied weights stay tied
        with torch.no_grad():
            self.packed = torch.ops.mkldnn._reorder_linear_weight(linear.weight.detach().contiguous(), BATCH_HINT)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if torch.is_grad_enabled() or x.dtype != torch.float32 or x.device.type != "cpu":
            return nn.functional.linear(x, self.weight, self.bias)
        bias = self.bias.detach() if self.bias is not None else None
        rows = x.reshape(-1, self.in_features)
        out = torch.ops.mkldnn._linear_pointwise(rows.contiguous(), self.packed, bias, "none", [], "")
        return out.reshape(*x.shape[:-1], self.out_features)


def pack(model: nn.Module, room_mb: float, onednn: bool = True) -> float:
    """Replace `model`'s float32 nn.Linear layers on the CPU by PackedLinear when their packed copies fit in
    `room_mb` (and `onednn`, the engine's EXPLORER_ONEDNN, is on); returns the MB the packed copies take (0: nothing
    packed)."""
    if not onednn or not available():
        return 0.0
    found = [
        (parent, name, child)
        for parent in model.modules()
        for name, child in parent.named_children()
        if type(child) is nn.Linear and child.weight.dtype == torch.float32 and child.weight.device.type == "cpu"
    ]
    need_mb = sum(child.weight.numel() * 4 for _, _, child in found) / 2**20
    if not found or need_mb > room_mb:
        return 0.0
    for parent, name, child in found:
        setattr(parent, name, PackedLinear(child))
    return need_mb
