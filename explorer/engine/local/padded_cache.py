"""The rows of a batch on the torch engine (interface.BatchRows, explorer/engine/batching/slots.py's DecodeBatch): one
DynamicCache for every row, left-padded to one length, the mask of real positions, each row's last hidden state."""

from __future__ import annotations

import copy
from typing import Any, Protocol

import torch
from transformers.cache_utils import DynamicLayer

from explorer.engine.passes.generation import Prefilled
from explorer.errors import ExplorerError

__all__ = ["PaddedCache"]


class PaddedBody(Protocol):
    """What PaddedCache asks of the torch engine (local/torch_engine.py): its device and the batched body."""

    device: Any

    def body_rows(self, ids: torch.Tensor, past: Any, mask: torch.Tensor, positions: torch.Tensor) -> torch.Tensor: ...


def _layers(past) -> list:
    layers = list(past.layers)
    if any(type(layer) is not DynamicLayer for layer in layers):
        raise ExplorerError(
            "Batched decoding needs a model whose every layer attends to the whole text (no sliding window).",
            code="not_available",
        )
    return layers


def _pad_left(t: torch.Tensor, n: int, dim: int) -> torch.Tensor:
    """`t` with n zeros before its entries along `dim`."""
    if n == 0:
        return t
    shape = list(t.shape)
    shape[dim] = n
    return torch.cat([t.new_zeros(shape), t], dim)


class PaddedCache:
    """The batch's rows on the torch engine (interface.BatchRows): a DynamicCache (B, kv_heads, L, head_dim) per
    layer, left-padded, the (B, L) mask of real positions and each row's last hidden state (logits for unusual
    heads)."""

    def __init__(self, engine: PaddedBody):
        self.engine = engine
        self.past: Any = None
        self.mask = torch.zeros((0, 0), dtype=torch.long, device=engine.device)  # (B, L) 1 on real positions
        self.last: Any = None  # (B, H)

    @torch.inference_mode()
    def join(self, start: Prefilled, shared: bool, positions: int) -> None:
        """`start`'s cache and last hidden state as the last row, both sides left-padded to one length (a copy of
        its cache when `shared`; `positions`, what the row may reach, needs no room set aside here)."""
        t = start.x.shape[1]
        mask = torch.ones((1, t), dtype=torch.long, device=self.engine.device)
        if self.past is None:
            _layers(start.past)
            past = copy.deepcopy(start.past) if shared else start.past  # the batch's steps grow its layers
            self.past, self.mask, self.last = past, mask, start.last
            return
        length = self.mask.shape[1]
        for mine, new in zip(_layers(self.past), _layers(start.past)):
            for name in ("keys", "values"):
                a = _pad_left(getattr(mine, name), max(0, t - length), 2)
                b = _pad_left(getattr(new, name), max(0, length - t), 2)
                setattr(mine, name, torch.cat([a, b]))
        self.mask = torch.cat([_pad_left(self.mask, max(0, t - length), 1), _pad_left(mask, max(0, length - t), 1)])
        self.last = torch.cat([self.last, start.last])

    def keep(self, rows: list[int]) -> None:
        """Only rows `rows` (in that order); then no column every row pads."""
        if not rows:
            self.past, self.last = None, None
            self.mask = self.mask[:0, :0]
            return
        index = torch.tensor(rows, dtype=torch.long, device=self.engine.device)
        self.past.batch_select_indices(index)
        self.mask, self.last = self.mask[index], self.last[index]
        cut = int(self.mask.any(0).long().argmax())  # leading columns no row uses
        if cut:
            for layer in _layers(self.past):
                layer.keys, layer.values = layer.keys[:, :, cut:], layer.values[:, :, cut:]
            self.mask = self.mask[:, cut:]

    def advance(self, toks: torch.Tensor, positions: list[int]) -> None:
        """The body on tokens `toks` (B,), one per row, at each row's own position."""
        dev = self.engine.device
        self.mask = torch.cat([self.mask, torch.ones((len(positions), 1), dtype=torch.long, device=dev)], 1)
        at = torch.tensor(positions, dtype=torch.long, device=dev)[:, None]
        self.last = self.engine.body_rows(toks[:, None], self.past, self.mask, at)
