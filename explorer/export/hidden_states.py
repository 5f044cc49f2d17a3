"""HiddenStates -> the `hidden_states` value of a choice, read off its result's `TokenScores.hidden_states`
(`choice_states`): our object (`states`), or SGLang's nested floats (`sglang`); and the CLI's .npz file (`npz`).

The object carries the array as `shape` (positions, layers, hidden), little-endian, in `dtype`, either base64 of
the raw bytes (decode with `numpy.frombuffer(base64.b64decode(data), dtype).reshape(shape)`; bfloat16 travels as
uint16, the top half of float32's bits: shift it left 16 and view as float32) or nested JSON floats.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass

import numpy as np

from explorer.errors import ExplorerError
from explorer.results.hidden import HiddenStates
from explorer.results.scores import TokenScores

DTYPES = ("float32", "float16", "bfloat16")
ENCODINGS = ("base64", "float")
ITEM_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}
_WIRE = {"float32": "<f4", "float16": "<f2", "bfloat16": "<u2"}  # what numpy reads the bytes as


def bfloat16_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 as uint16 bits, rounded to nearest even (as torch's `.to(torch.bfloat16)`)."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32)
    return ((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)).astype(np.uint16)


def bfloat16_values(bits: np.ndarray) -> np.ndarray:
    """uint16 bfloat16 bits -> float32 (exact)."""
    return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def cast(values: np.ndarray, dtype: str) -> np.ndarray:
    """`values` (float32) as `dtype` travels: float32, float16, or bfloat16's uint16 bits; a value float16 cannot
    hold is an ExplorerError (it would arrive as infinity)."""
    if dtype == "bfloat16":
        return bfloat16_bits(values)
    out = values.astype(_WIRE[dtype])
    if dtype == "float16" and not np.isfinite(out).all():
        raise ExplorerError(
            "A hidden state is beyond float16's range (65504): ask for `dtype: float32` or `bfloat16`.",
            param="return_hidden_states.dtype",
            code="invalid_value",
        )
    return out


def as_floats(wire: np.ndarray, dtype: str) -> list:
    """The nested lists of what `cast` gave, each value the float it stands for."""
    return (bfloat16_values(wire) if dtype == "bfloat16" else wire.astype(np.float32)).tolist()


def states(h: HiddenStates, dtype: str = "float32", encoding_format: str = "base64") -> dict:
    """The `hidden_states` object of one choice."""
    wire = cast(h.values, dtype)
    data: str | list = (
        base64.b64encode(wire.tobytes()).decode("ascii") if encoding_format == "base64" else as_floats(wire, dtype)
    )
    return {
        "layers": list(h.layers),
        "hook_names": h.hook_names,
        "token_ids": h.token_ids.tolist(),
        "positions": h.positions.tolist(),
        "shape": list(h.shape),
        "dtype": dtype,
        "endianness": "little",
        "encoding_format": encoding_format,
        "data": data,
    }


def sglang(h: HiddenStates, last: bool) -> list:
    """SGLang's value for `return_hidden_states: true` (`last` False: one layer's vector at the latest position,
    [] when there is none) or `"last"` (one vector per position), each the first layer's floats."""
    rows = h.values[:, 0, :].astype(np.float32)  # (P, H)
    if last:
        return rows.tolist()
    return rows[-1].tolist() if len(rows) else []


def npz(h: HiddenStates) -> bytes:
    """An .npz (numpy.savez) of `h`: `states` (positions, layers, hidden) float32, `layers` (str: "0", "6",
    "final_norm"), `hook_names` (str), `token_ids` and `positions` (int64); `numpy.load` reads it."""
    buf = io.BytesIO()
    np.savez(
        buf,
        states=h.values.astype(np.float32),
        layers=np.asarray([str(x) for x in h.layers]),
        hook_names=np.asarray(h.hook_names),
        token_ids=h.token_ids.astype(np.int64),
        positions=h.positions.astype(np.int64),
    )
    return buf.getvalue()


@dataclass(frozen=True)
class Shape:
    """How a request asked its choices' `hidden_states` written (`return_hidden_states`): `form` "object" (ours, in
    `dtype` and `encoding_format`), "sglang" (`true`) or "sglang_last" (`"last"`)."""

    form: str
    dtype: str = "float32"
    encoding_format: str = "base64"


def value(shape: Shape, h: HiddenStates) -> dict | list:
    """The `hidden_states` of states `h`: our object, or SGLang's nested floats."""
    if shape.form == "object":
        return states(h, shape.dtype, shape.encoding_format)
    return sglang(h, last=shape.form == "sglang_last")


def choice_states(r: TokenScores, shape: Shape) -> dict | list:
    """A choice's `hidden_states`, written from its result as `shape` asks (after its other keys, where SGLang puts
    them); a result made without them is an ExplorerError saying how to make one that has them."""
    if r.hidden_states is None:
        raise ExplorerError(
            "These results carry no hidden states to write: make them with `return_hidden_states` (the API) or "
            "`score_states` / `generate_states` (explorer.engine.analyses.hidden), or export without "
            "`Options.hidden_states`.",
            param="return_hidden_states",
            code="invalid_value",
        )
    return value(shape, r.hidden_states)
