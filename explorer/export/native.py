"""TokenScores -> its own JSON (round-trips through TokenScores.from_dict), and the compact full-vocabulary form."""

from __future__ import annotations

import io

import numpy as np

from explorer.results.scores import TokenScores


def export(results: TokenScores | list[TokenScores]) -> dict:
    results = results if isinstance(results, list) else [results]
    if len(results) == 1:
        return results[0].to_dict()
    return {"format": "logprob-explorer/token-scores-list", "samples": [r.to_dict() for r in results]}


def full_vocab_npy(r: TokenScores) -> bytes:
    """Scored positions' full distributions as a .npy float16 array (positions, V), vocabulary order.

    About 2·V bytes a position (256 KB for a 128k vocabulary) where the JSON takes ~10 MB.
    Row j is position `np.flatnonzero(r.scored)[j]`.
    """
    if r.full_logprobs is None:
        raise ValueError("this result has no full-vocabulary logprobs: score with k=-1")
    rows = r.full_logprobs[r.scored].astype(np.float16)  # -inf stays -inf in float16
    buf = io.BytesIO()
    np.save(buf, rows, allow_pickle=False)
    return buf.getvalue()
