"""HiddenStates: some layers' residual stream at some positions of one sequence (numpy, no torch), and `Capture`,
which layers and positions a request asks for.

Layers are numbered as Hugging Face's `output_hidden_states`: 0 is the embeddings' output, k (1..L) the residual
stream after k blocks, L the last block's output *before* the final norm; "final_norm" is after it (what the
output layer reads). (transformers itself reports the final norm's output as its entry L: here entry L is the
norm's input, and "final_norm" its output.) Position p is the state of token `token_ids[p]`, computed by the
forward step that reads it: a prompt's every token has one, a generated token the one the step after it computed,
and the last generated token none (no step read it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from explorer.errors import ExplorerError
from explorer.results.shown import show

if TYPE_CHECKING:
    import pandas as pd

FINAL_NORM = "final_norm"
Layer = int | str  # 0..L, or FINAL_NORM


def hook_name(layer: Layer) -> str:
    """TransformerLens's hook point of `layer` (a resolved layer: 0..L or "final_norm").

    HF entry 0 (the embeddings, with GPT-2's positions added) is what block 0 reads: `blocks.0.hook_resid_pre`;
    entry k >= 1 is what block k-1 wrote: `blocks.{k-1}.hook_resid_post`; the final norm's output is
    `ln_final.hook_normalized`.
    """
    if layer == FINAL_NORM:
        return "ln_final.hook_normalized"
    assert isinstance(layer, int) and layer >= 0
    return "blocks.0.hook_resid_pre" if layer == 0 else f"blocks.{layer - 1}.hook_resid_post"


def resolve_layers(layers: list, n_layers: int, param: str = "return_hidden_states.layers") -> list[Layer]:
    """`layers` as asked (ints, negative from the end, or "final_norm") -> 0..L or "final_norm", in the order
    asked; ExplorerError naming `param` for anything else (a repeat, a bool, an index outside -(L+1)..L)."""
    if not isinstance(layers, list) or not layers:
        raise ExplorerError(
            f'`{param}` must be a non-empty list of layer numbers (0..{n_layers}, negative from the end) or "final_norm".',
            param=param,
            code="invalid_value",
        )
    out: list[Layer] = []
    for x in layers:
        if x == FINAL_NORM:
            out.append(FINAL_NORM)
        elif isinstance(x, int) and not isinstance(x, bool) and -(n_layers + 1) <= x <= n_layers:
            out.append(x % (n_layers + 1))
        else:
            raise ExplorerError(
                f"`{param}` has {x!r}: this model has layers 0..{n_layers} (0 = the embeddings' output, "
                f'{n_layers} = the last block\'s, -1 = the last), and "final_norm".',
                param=param,
                code="invalid_value",
            )
    if len(set(out)) != len(out):
        raise ExplorerError(f"`{param}` names a layer twice: {layers}.", param=param, code="invalid_value")
    return out


@dataclass(frozen=True)
class Capture:
    """What one sequence's forward passes keep: `layers` (resolved) at positions `start` <= p < `stop` (None: to
    the end); with `last`, only the latest position kept (the sequence's length is known once it ends)."""

    layers: tuple[Layer, ...]
    start: int = 0
    stop: int | None = None
    last: bool = False

    def span(self, a: int, b: int) -> tuple[int, int]:
        """The part of positions a..b (exclusive) this capture keeps, as (from, to) within them (from >= to: none)."""
        hi = b if self.stop is None else min(b, self.stop)
        return max(self.start, a) - a, hi - a


Positions = str | tuple[int, int]  # "prompt", "all", "last", or (start, end), end excluded
POSITIONS = ("prompt", "all", "last")


def read_positions(x: object, param: str = "return_hidden_states.positions") -> Positions:
    """`positions` as asked ("prompt", "all", "last", or [start, end] with 0 <= start < end) -> a Positions;
    ExplorerError naming `param` for anything else."""
    if isinstance(x, str) and x in POSITIONS:
        return x
    ok = isinstance(x, list | tuple) and len(x) == 2 and all(isinstance(i, int) and not isinstance(i, bool) for i in x)
    if not ok or not 0 <= x[0] < x[1]:  # type: ignore[index]
        raise ExplorerError(
            f'`{param}` must be "prompt", "all", "last" or [start, end] with 0 <= start < end (end excluded); '
            f"got {x!r}.",
            param=param,
            code="invalid_value",
        )
    return (x[0], x[1])  # type: ignore[index]


def capture_of(layers: list[Layer], positions: Positions, prompt: int) -> Capture:
    """What a sequence whose prompt has `prompt` tokens keeps of `layers` (resolved) at `positions`."""
    if positions == "prompt":
        return Capture(tuple(layers), stop=prompt)
    if positions == "all":
        return Capture(tuple(layers))
    if positions == "last":
        return Capture(tuple(layers), last=True)
    assert isinstance(positions, tuple)  # read_positions let nothing else through
    return Capture(tuple(layers), start=positions[0], stop=positions[1])


@dataclass(eq=False)
class HiddenStates:
    """Layers `layers` at positions `positions` of one sequence: `values` (positions, layers, hidden) float32."""

    layers: list[Layer]
    token_ids: np.ndarray  # (P,) int64, the token at each position
    positions: np.ndarray  # (P,) int64, ascending
    values: np.ndarray  # (P, len(layers), H) float32

    @property
    def hook_names(self) -> list[str]:
        return [hook_name(x) for x in self.layers]

    @property
    def shape(self) -> tuple[int, int, int]:
        p, n, h = self.values.shape
        return p, n, h

    def to_pandas(self) -> pd.DataFrame:
        """One row per position and layer: position, token_id, layer, hook_name, norm (the vector's L2 norm) and
        vector (its float32 numpy array)."""
        return show(self, "to_pandas")

    def to_html(self) -> str:
        """The summary as one self-contained HTML file (its JSON inside)."""
        return show(self, "to_html")

    def _repr_html_(self) -> str:
        """Jupyter's view: the shape, and each layer's mean vector norm over the positions (the data is `values`)."""
        return show(self, "_repr_html_")

    def to_dict(self) -> dict:
        """Plain JSON (floats as lists): `from_dict` reads it back exactly."""
        return {
            "layers": list(self.layers),
            "token_ids": self.token_ids.tolist(),
            "positions": self.positions.tolist(),
            "shape": list(self.shape),
            "values": self.values.tolist(),
        }

    @classmethod
    def from_dict(cls, d: dict) -> HiddenStates:
        shape = tuple(d["shape"])
        return cls(
            layers=list(d["layers"]),
            token_ids=np.asarray(d["token_ids"], np.int64),
            positions=np.asarray(d["positions"], np.int64),
            values=np.asarray(d["values"], np.float32).reshape(shape),
        )
