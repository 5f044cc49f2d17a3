"""Logprob and rank of any given token ids at every position, beyond the top-k, in the scoring pass.

Steps, per block of positions (c, V) of output-layer logits (`engine.chunk_size`, as scoring):
1. row max m and the fused sums s (the engine's kernel, as `engine.stats`); log-sum-exp = m + log s.
2. logprob of each query id = (x[q] - m) - log s: the very formula of `metrics.row_stats`,
   so the actual token's id gets exactly the logprob scoring reports.
3. rank = count of entries whose logprob >= the query's, over 16-row slices (c x V never
   copied whole): a compare per query when there are few, else one sort and a binary search.
"""

from __future__ import annotations

import numpy as np
import torch

from explorer.engine.interface import STAT_ROWS, Forward, ModelEngine, forward_pass
from explorer.engine.passes import blocks, bounds
from explorer.errors import ExplorerError
from explorer.results.lookup import Lookup, check_queries, joint_logprobs, parse_query

FEW_QUERIES = 8  # up to this many: one compare per query; more: sort the row once


def _ranks(lp: torch.Tensor, lp_q: torch.Tensor) -> torch.Tensor:
    """(r, Q) count of entries of lp (r, V) >= each of lp_q (r, Q)."""
    if lp_q.shape[1] <= FEW_QUERIES:
        return torch.stack([(lp >= lp_q[:, j : j + 1]).sum(-1) for j in range(lp_q.shape[1])], -1)
    asc = lp.sort(-1).values  # (r, V) ascending
    return lp.shape[1] - torch.searchsorted(asc, lp_q.contiguous(), side="left")  # entries < x are below it


def block_logprobs_of_ids(
    engine: Forward, logits: torch.Tensor, q: torch.Tensor, targets: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(logprobs (c, Q) float32, ranks (c, Q) int64) of ids `q` (Q,) in logits rows (c, V),
    and (c,) the logprob of each row's actual id `targets` (c,)."""
    m = logits.max(-1, keepdim=True).values.float()  # (c, 1), the value topk's first entry holds
    s = engine.row_sums(logits, m)[0]
    ls = s.log()  # (c, 1)
    lp_q = (logits.gather(-1, q[None].expand(logits.shape[0], -1)).float() - m) - ls  # (c, Q)
    lp_t = (logits.gather(-1, targets[:, None]).float() - m) - ls  # (c, 1)
    ranks = []
    for a in range(0, logits.shape[0], STAT_ROWS):
        rows = slice(a, a + STAT_ROWS)
        lp = (logits[rows].float() - m[rows]) - ls[rows]  # (r, V)
        ranks.append(_ranks(lp, lp_q[rows]))
    return lp_q, torch.cat(ranks), lp_t[:, 0]


def check_query_ids(engine: ModelEngine, query_ids) -> list[int]:
    """`query_ids` as a list of in-vocabulary ints, or an ExplorerError saying what to change."""
    if not isinstance(query_ids, (list, tuple)) or not query_ids:
        raise ExplorerError("Give at least one token id to look up.", param="logprob_token_ids", code="invalid_value")
    bad = [i for i in query_ids if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < engine.vocab_size]
    if bad:
        raise ExplorerError(
            f"Token id {bad[0]!r} is outside the vocabulary (0..{engine.vocab_size - 1}).",
            param="logprob_token_ids",
            code="invalid_token_id",
        )
    return list(query_ids)


@torch.inference_mode()
def _pass(engine: Forward, ids: list[int], q_ids: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(logprobs (T, Q), ranks (T, Q), logprob of the actual token (T,)); row 0 NaN and rank 0."""
    engine.check_ids(ids)
    t, nq = len(ids), len(q_ids)
    out_lp = np.full((t, nq), np.nan, np.float32)
    out_rank = np.zeros((t, nq), np.int64)
    out_actual = np.full(t, np.nan, np.float32)
    if t < 2:
        return out_lp, out_rank, out_actual
    x = torch.tensor([ids], device=engine.device)  # (1, T)
    q = torch.tensor(q_ids, device=engine.device)  # (Q,)
    hidden, _ = blocks.prefill(engine, x, keep=False)  # (T, H)
    hidden, targets = hidden[:-1], x[0, 1:]  # (T-1, H), (T-1,): row j predicts position j + 1
    chunk = engine.chunk_size(t - 1)
    for a in range(0, t - 1, chunk):
        bounds.check()
        logits = blocks.logits(engine, hidden[a : a + chunk])  # (c, V)
        lp, rank, actual = block_logprobs_of_ids(engine, logits, q, targets[a : a + chunk])
        span = slice(a + 1, a + 1 + lp.shape[0])
        out_lp[span], out_rank[span], out_actual[span] = lp.cpu().numpy(), rank.cpu().numpy(), actual.cpu().numpy()
    return out_lp, out_rank, out_actual


def logprobs_of_ids(engine: ModelEngine, ids: list[int], query_ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(logprobs (T, Q) float32, ranks (T, Q) int64) of `query_ids` at every position of `ids`.

    Row i is the distribution that predicts ids[i] from ids[:i] (raw: the model's own);
    row 0 has no context: NaN and rank 0.
    """
    lp, rank, _ = _pass(forward_pass(engine), ids, check_query_ids(engine, query_ids))
    return lp, rank


def query_ids_of(engine: ModelEngine, query: str) -> list[int]:
    """The token ids a typed query stands for: one id (`42`, `id:42`) or the tokens of a text (no special tokens)."""
    kind, value = parse_query(query)
    if kind == "id":
        return check_query_ids(engine, [value])
    ids = engine.tokenize(str(value), add_special_tokens=False)
    if not ids:
        raise ExplorerError(f"Lookup {query!r} has no tokens: type a word or a token id.", param="lookup")
    return ids


def lookup(engine: ModelEngine, ids: list[int], queries: list[str]) -> list[Lookup]:
    """One Lookup per typed query over the text `ids` (one scoring pass for all of them).

    A query of several tokens is followed by its first token at every position; where the text
    continues with all of its tokens, the joint logprob (the sum of those tokens' logprobs) too.
    """
    if not queries:
        raise ExplorerError("Type at least one string or token id to look up.", param="lookup")
    check_queries(queries)
    tokens = [query_ids_of(engine, q) for q in queries]
    lp, rank, actual = _pass(forward_pass(engine), ids, [t[0] for t in tokens])
    return [
        Lookup(q, np.array(t, np.int64), lp[:, j], rank[:, j], joint_logprobs(actual, ids, t))
        for j, (q, t) in enumerate(zip(queries, tokens))
    ]
