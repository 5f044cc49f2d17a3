"""Helpers shared by the exporters: token text, JSON-safe numbers, top-k rows."""

from __future__ import annotations

import numpy as np

from explorer.result import TokenScores

NEG_INF_JSON = -9999.0  # how OpenAI and vLLM write -inf


def num(x: float) -> float:
    """A JSON-safe float: -inf -> -9999.0; NaN is a bug upstream and raises."""
    return nums(np.float32([x]))[0]


def nums(a: np.ndarray) -> list[float]:
    """`num` over a float32 array, vectorised (numpy writes each value's shortest round-trip text)."""
    out = []
    for t in np.asarray(a, dtype=np.float32).astype(str).tolist():
        if t == "-inf":
            out.append(NEG_INF_JSON)
        elif t == "nan":
            raise ValueError("NaN reached an exporter: a scored position has no number")
        else:
            out.append(float(t))
    return out


def token_str(b: bytes) -> str:
    """A token's text; bytes that are not valid UTF-8 on their own become literal `\\xNN`."""
    return b.decode("utf-8", errors="backslashreplace")


def top_pairs(r: TokenScores, pos: int) -> list[tuple[int, float]]:
    """(id, logprob) of the top-k at `pos`, in descending logprob (k as asked there)."""
    k = r.top_k(pos)
    if k <= 0:
        return []
    return [(int(i), float(lp)) for i, lp in zip(r.top_ids[pos, :k], r.top_logprobs[pos, :k]) if i >= 0]


def envelope(kind: str, model: str, created: int | None, id_: str | None, prefix: str) -> dict:
    """The id/object/created/model head of a response body."""
    import time
    import uuid

    return {"id": id_ or f"{prefix}-{uuid.uuid4().hex[:24]}", "object": kind,
            "created": int(time.time()) if created is None else created, "model": model}


def usage(results: list[TokenScores]) -> dict:
    """OpenAI usage: prompt tokens once, completion tokens over all choices."""
    p = results[0].n_prompt if results else 0
    c = sum(r.n - r.n_prompt for r in results)
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}
