"""Independent computation: plain log_softmax + gather on the model's full logits."""

from __future__ import annotations

import numpy as np
import torch


@torch.no_grad()
def ref_logprobs(model, ids: list[int]) -> torch.Tensor:
    """(T-1, V) float32 log_softmax of the logits predicting ids[1:]."""
    logits = model(torch.tensor([ids])).logits[0].float()
    return torch.log_softmax(logits, -1)[:-1]


@torch.no_grad()
def ref_processed(model, r, warp) -> dict[int, torch.Tensor]:
    """Generated position -> (V,) float32 log_softmax of transformers' own `warp` (a LogitsProcessorList: the
    sampler's steps) applied to the logits predicting it, given the ids before it: what `processed` numbers are."""
    logits = model(torch.tensor([r.token_ids.tolist()])).logits[0].float()
    rows = {}
    for pos in range(r.n_prompt, r.n):
        ids = torch.tensor([r.token_ids[:pos].tolist()])
        rows[pos] = torch.log_softmax(warp(ids, logits[pos - 1 : pos].clone()), -1)[0]
    return rows


def ref_row(lp: torch.Tensor, actual: int) -> dict:
    """The numbers of one position from its full log-distribution (V,)."""
    a = lp[actual]
    return {
        "logprob": float(a),
        "rank": int((lp >= a).sum()),
        "entropy": float(-(lp.exp() * lp).nan_to_num(0.0).sum()),
        "sorted": torch.sort(lp, descending=True).values.numpy(),
    }


def assert_rank_close(rank: int, lp: torch.Tensor, actual: int, eps: float = 1e-5) -> None:
    """rank equals the count of entries >= the actual's, up to entries tied within eps."""
    a = float(lp[actual])
    lo = int((lp > a + eps).sum()) + 1
    hi = int((lp >= a - eps).sum())
    assert lo <= rank <= hi, (rank, lo, hi)


def assert_matches_reference(r, lp_rows: torch.Tensor, positions, atol: float = 1e-4) -> None:
    """Every number of TokenScores `r` at `positions` matches rows of `lp_rows` (position p uses row p-1)."""
    for pos in positions:
        lp = lp_rows[pos - 1]
        actual = int(r.token_ids[pos])
        ref = ref_row(lp, actual)
        assert abs(r.logprobs[pos] - ref["logprob"]) < atol
        assert abs(r.entropy[pos] - ref["entropy"]) < atol
        assert_rank_close(int(r.ranks[pos]), lp, actual)
        k = r.top_k(pos)
        if k > 0:
            np.testing.assert_allclose(r.top_logprobs[pos, :k], ref["sorted"][:k], atol=atol)
            # each reported id really has the reported logprob
            ids = r.top_ids[pos, :k]
            np.testing.assert_allclose(lp[torch.tensor(ids)].numpy(), r.top_logprobs[pos, :k], atol=atol)
            assert len(set(ids.tolist())) == k
