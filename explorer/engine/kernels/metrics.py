"""Logits -> logprob, rank, entropy and top-k of the actual token, in float32.

Steps, per block of positions (c, V):
1. top-K of the logits (K = max(k, 20)); its first value is the row max m.
2. one fused pass (`sums`, torch.compile'd where it works): s = sum exp(x - m),
   q = sum exp(x - m) * (x - m) and r = sum exp(x - m) * (x - m)^2. Then log-sum-exp = m + log s,
   entropy = log s - q / s, and the varentropy Var_{v~p}[log p(v)] = r / s - (q / s)^2 (log p and
   x - m differ by the constant log s, so they have one variance).
3. logprob of any entry = (x - m) - log s, as log_softmax computes it.
4. rank = count of entries whose logprob >= the actual's. When the actual token beats
   the K-th best strictly, every such entry is in the top-K, so the count is read
   off the top-K; only the other rows get a full compare.
Filtered entries may be -inf (processed mode): they get probability 0.

Many texts' positions (explorer/engine/passes/many.py), where nothing needs the top-k: `block_rows`, step 1 as the
row max alone and steps 2-4 as `one_row` over a block of rows (compiled where the engine compiles: one kernel a block,
every rank counted over every entry), the same numbers as row_stats (the max is the top-K's first value; a rank
counted over every entry is the count the top-K gives).

A decode step's one row, where the statistics are compiled (`ForwardEngine.stats`): step 1's top-K, then steps 2-4 as
one compiled kernel (`one_row`), which counts the rank over every entry (no branch, no host sync: the same count,
as the entries outside the top-K are below the K-th best). Its eager operations cost more than the row's arithmetic:
0.69-0.76 ms a step right after a llama.cpp decode against 0.43-0.47 so (bench/RESULTS.md, 2026-12-04, evening).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import torch

from explorer.results.scores import Rows

log = logging.getLogger(__name__)
RANK_K = 20  # top-K always taken, so most ranks need no extra pass
SLOW_ROWS = 16  # rows per full compare


@dataclass
class Stats:
    logprob: torch.Tensor  # (c,) float32
    rank: torch.Tensor  # (c,) int64, 1-based, ties count against the token
    entropy: torch.Tensor  # (c,) float32, nats
    varentropy: torch.Tensor  # (c,) float32, nats^2: variance of log p under p
    top_ids: torch.Tensor  # (c, k) int64
    top_logprobs: torch.Tensor  # (c, k) float32
    full: torch.Tensor | None = None  # (c, V) float32 logprobs, only when asked (k = -1)

    def to_rows(self) -> Rows:
        """The same numbers on the host, as the project's numpy Rows."""

        def host(t):
            return t.cpu().numpy()

        return Rows(
            host(self.logprob),
            host(self.rank),
            host(self.entropy),
            host(self.top_ids),
            host(self.top_logprobs),
            host(self.full) if self.full is not None else None,
            varentropy=host(self.varentropy),
        )


def sums(logits: torch.Tensor, m: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(s, q, r), each (c, 1): sums of e = exp(x - m), e * (x - m) and e * (x - m)^2 (0 where e = 0)."""
    d = logits.float() - m  # (c, V)
    e = d.exp()
    s = e.sum(-1, keepdim=True)
    ed = torch.where(e > 0, e * d, 0.0)  # (c, V)
    q = ed.sum(-1, keepdim=True)
    r = torch.where(e > 0, ed * d, 0.0).sum(-1, keepdim=True)
    return s, q, r


def one_row(
    logits: torch.Tensor, targets: torch.Tensor, m: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(logprob (c,), rank (c,), entropy (c,), varentropy (c,), log-sum-exp - m (c, 1)) of rows `logits` (c, V)
    float32 for `targets` (c,), their maxima `m` (c, 1) given (the top-K's first value): row_stats' numbers, the rank
    counted over every entry. A decode step's one row (c = 1: shapes fixed by V alone, so one compiled kernel serves
    every k) or a block of `block_rows`."""
    s, q, r2 = sums(logits, m)
    ls = s.log()
    lp_t = (logits.gather(-1, targets[:, None]) - m) - ls  # (1, 1)
    rank = (((logits - m) - ls) >= lp_t).sum(-1)
    entropy = (ls - q / s)[:, 0]
    varentropy = (r2 / s - (q / s) ** 2).clamp_min(0.0)[:, 0]
    return lp_t[:, 0], rank, entropy, varentropy, ls


def block_rows(
    logits: torch.Tensor, targets: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(logprob, rank, entropy, varentropy), each (c,), of rows `logits` (c, V) for `targets` (c,): row_stats'
    numbers without the top-k (the max as the row's amax: the top-K's first value), as one kernel."""
    x = logits.float()
    lp_t, rank, entropy, varentropy, _ = one_row(x, targets, x.amax(-1, keepdim=True))
    return lp_t, rank, entropy, varentropy


def compiled_row_stats(one_row_fn, logits: torch.Tensor, targets: torch.Tensor, k: int) -> Stats:
    """row_stats of one row (1, V) float32 (not `full`), steps 2-4 by `one_row_fn` (`one_row`, compiled)."""
    kk = min(max(k, RANK_K), logits.shape[1])
    tv, ti = logits.topk(kk, dim=-1)
    m = tv[:, :1]
    lp_t, rank, entropy, varentropy, ls = one_row_fn(logits, targets, m)
    n_top = max(k, 0)
    return Stats(lp_t, rank, entropy, varentropy, ti[:, :n_top], ((tv[:, :n_top] - m) - ls))


def row_stats(
    logits: torch.Tensor,
    targets: torch.Tensor,
    k: int,
    *,
    full: bool = False,
    sums_fn=sums,
    sync_free: bool | None = None,
) -> Stats:
    """Statistics of rows `logits` (c, V) for the actual ids `targets` (c,); k top entries (k=-1 with full=True).

    `sync_free` (default: one row on an accelerator) counts every entry instead of asking
    the host which rows need it.
    """
    if sync_free is None:
        sync_free = logits.shape[0] == 1 and logits.device.type != "cpu"
    v = logits.shape[1]
    kk = min(max(k, RANK_K), v)
    tv, ti = logits.topk(kk, dim=-1)  # (c, K), descending
    m = tv[:, :1].float()  # (c, 1) row max
    s, q, r2 = sums_fn(logits, m)
    ls = s.log()  # (c, 1)
    entropy = (ls - q / s)[:, 0]  # (c,)
    varentropy = (r2 / s - (q / s) ** 2).clamp_min(0.0)[:, 0]  # (c,); rounding can dip below 0
    lp_t = (logits.gather(-1, targets[:, None]).float() - m) - ls  # (c, 1)
    top_lp = (tv.float() - m) - ls  # (c, K)
    rank = (top_lp >= lp_t).sum(-1)  # exact where the actual beats the K-th best
    lp_full = None
    if full:
        lp_full = (logits.float() - m) - ls  # (c, V)
        rank = (lp_full >= lp_t).sum(-1)
    elif sync_free:
        rank = torch.where(lp_t[:, 0] > top_lp[:, -1], rank, ((logits.float() - m) - ls >= lp_t).sum(-1))
    else:
        slow = (lp_t[:, 0] <= top_lp[:, -1]).nonzero()[:, 0]  # rows whose count needs every entry
        for a in range(0, slow.numel(), SLOW_ROWS):  # a few rows at a time: bounded memory
            r = slow[a : a + SLOW_ROWS]
            lp_rows = (logits[r].float() - m[r]) - ls[r]  # (r, V)
            rank = rank.index_copy(0, r, (lp_rows >= lp_t[r]).sum(-1))
    n_top = 0 if full else max(k, 0)
    return Stats(lp_t[:, 0], rank, entropy, varentropy, ti[:, :n_top], top_lp[:, :n_top], lp_full)


def compiled_sums():
    """`sums` compiled by torch.compile (fixed shapes), or None when compilation is unavailable."""
    return _compiled(sums)


def compiled_one_row():
    """`one_row` compiled by torch.compile (fixed shapes), or None when compilation is unavailable."""
    return _compiled(one_row)


def compiled_block_rows():
    """`block_rows` compiled by torch.compile (fixed shapes), or None when compilation is unavailable."""
    return _compiled(block_rows)


def _compiled(fn):
    try:
        return torch.compile(fn, dynamic=False)
    except Exception as err:  # noqa: BLE001 - any backend failure means: stay eager
        log.warning("torch.compile unavailable (%s); using eager statistics", err)
        return None
