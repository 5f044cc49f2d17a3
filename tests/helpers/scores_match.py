"""Shared helper: a result's numbers against full-vocabulary rows of the same ids (a local rescoring), up to near ties."""

from __future__ import annotations

import numpy as np


def assert_scores_match(got, full, positions, eps: float = 1e-4, listed: bool = False) -> float:
    """Every number of TokenScores `got` at `positions` equals what `full` (the same ids scored with k = -1) says:
    the actual token's logprob, its rank where `got` knows it (0: unknown), each listed id's logprob, and a top-k
    that is the row's k best up to entries tied within eps. Returns the largest logprob difference seen."""
    assert got.token_ids.tolist() == full.token_ids.tolist()
    worst = 0.0
    for pos in positions:
        row = full.full_logprobs[pos]  # (V,)
        actual = int(got.token_ids[pos])
        worst = max(worst, abs(float(got.logprobs[pos]) - float(row[actual])))
        rank = int(got.ranks[pos])
        if rank:
            a = row[actual]
            assert int((row > a + eps).sum()) + 1 <= rank <= int((row >= a - eps).sum()), (pos, rank)
        ids, lps = got.top_ids[pos], got.top_logprobs[pos]
        keep = ids >= 0
        if keep.any():
            worst = max(worst, float(np.max(np.abs(lps[keep] - row[ids[keep]]))))
            if not listed:  # a top-k (not listed ids): the k best of the row, in order
                best = np.sort(row)[::-1][: int(keep.sum())]
                np.testing.assert_allclose(lps[keep], best, atol=eps)
    assert worst <= eps, worst
    return worst
