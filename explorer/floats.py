"""The JSON float codec: how every file and body this project writes or reads carries a float (numpy only).

JSON has no NaN and no infinity, so one rule holds everywhere:

| value   | written as                                 | read back as |
|---------|--------------------------------------------|--------------|
| NaN     | null (an unscored position)                | NaN          |
| -inf    | -9999.0 (OpenAI's and vLLM's habit)        | -inf         |
| +inf    | null (never a logprob: a KL, a perplexity) | NaN          |
| finite  | a Python float, the value itself exactly   | the value    |
| -9999.0 | -9999.0 (the one value the rule loses)     | -inf         |

Two variants, for the shapes of other servers, each asked for by name:
- `list_to_json(a, shortest=True)`: each float32 as its shortest round-trip digits (-0.41, not
  -0.4099999964237213), as OpenAI and vLLM write them: the exporters' API bodies (`export.common.nums`).
- `from_json(values, clamped=True)`: every value at or below -9999.0 reads as -inf, since OpenAI
  and vLLM clamp with `max(logprob, -9999.0)`: their bodies (the remote engine, imported bodies).
  Our own files write a finite -12000.0 as itself and read it back so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

NEG_INF_JSON = -9999.0  # how -inf is written: OpenAI's and vLLM's habit


def to_json(x: float) -> float | None:
    """One float for JSON: NaN and +inf -> None, -inf -> -9999.0, else `float(x)`."""
    x = float(x)
    if math.isnan(x) or x == math.inf:
        return None
    return NEG_INF_JSON if x == -math.inf else x


def list_to_json(a: Iterable[float] | np.ndarray, *, shortest: bool = False) -> list[float | None]:
    """`to_json` of each value of the 1-D `a` (n,); `shortest`: each as the float32's shortest round-trip digits."""
    if not shortest:  # `to_json` written out: this runs over every top-k row of a result
        inf = math.inf
        return [
            None if x != x or x == inf else NEG_INF_JSON if x == -inf else x for x in np.asarray(a, np.float64).tolist()
        ]
    out: list[float | None] = []
    for t in np.asarray(a, dtype=np.float32).astype(str).tolist():  # numpy writes float32's shortest text
        out.append(None if t in ("nan", "inf") else NEG_INF_JSON if t == "-inf" else float(t))
    return out


def from_json(values, dtype=np.float32, *, clamped: bool = False) -> np.ndarray:
    """The array (any shape) of JSON numbers `values` (nested lists): None -> NaN, -9999.0 -> -inf, as `dtype`.

    `clamped`: a body of OpenAI's or vLLM's, where every value at or below -9999.0 is -inf.
    """
    a = np.array(values, dtype=np.float64)  # numpy reads None as NaN
    a[(a <= NEG_INF_JSON) if clamped else (a == NEG_INF_JSON)] = -np.inf
    return a.astype(dtype, copy=False)


def value_from_json(v: float | None, *, clamped: bool = False) -> float:
    """One JSON number: None -> NaN, -9999.0 -> -inf (`clamped`: at or below it), else `float(v)`."""
    if v is None:
        return math.nan
    v = float(v)
    return -math.inf if (v <= NEG_INF_JSON if clamped else v == NEG_INF_JSON) else v
