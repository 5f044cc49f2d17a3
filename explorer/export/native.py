"""TokenScores -> its own JSON (round-trips through TokenScores.from_dict), and the compact full-vocabulary form."""

from __future__ import annotations

import io

import numpy as np

from explorer.results.scores import TokenScores
from explorer.results.stats import MIN_K_PERCENT, stats_block


def export(results: TokenScores | list[TokenScores], *, stats: bool = False, k_percent: float = MIN_K_PERCENT) -> dict:
    """The native JSON of one result or n samples; `stats` adds each one's `stats` block and `varentropy` list."""
    results = results if isinstance(results, list) else [results]
    bodies = [_one(r, stats, k_percent) for r in results]
    if len(bodies) == 1:
        return bodies[0]
    return {"format": "logprob-explorer/token-scores-list", "samples": bodies}


def _one(r: TokenScores, stats: bool, k_percent: float) -> dict:
    d = r.to_dict(with_varentropy=stats)
    if stats:
        d["stats"] = stats_block(r, k_percent)
    return d


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
