"""Many texts' ids -> each text's numbers, several texts a forward pass (the batch's and stimulus lists' speed).

Steps, per group of texts (`groups`: sorted by length within a window, so that rows of one pass pad little):
1. the body on the group's rows right-padded to one length (B, L): causal attention keeps a row's real positions
   blind to the padding after them, so a row's numbers are its own (to float rounding, tests/test_many.py);
2. the real positions only, packed one text after another (N, H): positions with a next token, and with `ends`
   every text's last position too (the distribution after the text ends its last word);
3. per chunk of packed positions, the output layer once, then only what was asked, block_size(V) rows at a time
   (warm in cache): the logprob of the actual token ((x - m) - log sum exp(x - m), as metrics.row_stats writes
   it); with `full` the statistics of row_stats (rank over every entry, entropy, varentropy) in one kernel a block
   (the engine's `block_stats`: compiled where it compiles); with `ends` each end set's log mass from the same
   exp(x - m) as the logprob (word_ends.logprob_ends).
All of a group runs as one piece of the engine's `compute` (one hand-over to the team thread, one host copy), so a
text costs its tokens and nothing more. On llama.cpp step 1 is one llama_decode of several KV sequences
(explorer/engine/llamacpp/texts.py). An engine that does not batch texts (`batches_texts` False: a served model)
scores each text alone as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch

from explorer.engine.interface import HEAD_MIN_ROWS, Forward, ModelEngine, block_size, forward_pass
from explorer.engine.passes import blocks, bounds
from explorer.engine.passes.scoring import score_ids
from explorer.engine.passes.word_ends import end_mass, end_sets, logprob_ends
from explorer.results.scores import Rows, TokenScores, assemble

__all__ = ["ROWS", "TOKENS", "TextNumbers", "batches_texts", "group_tokens", "groups", "score_group", "score_prompts"]

TOKENS = 4096  # padded positions per forward pass (rows x the longest row): bounded memory
ROWS = 128  # most texts per forward pass


@dataclass
class TextNumbers:
    """One text's numbers: positions 1.. of its ids (position 0 has no logprob)."""

    logprobs: np.ndarray  # (n-1,) float32
    ranks: np.ndarray | None = None  # (n-1,) int64, with `full`
    entropy: np.ndarray | None = None  # (n-1,) float32 nats, with `full`
    varentropy: np.ndarray | None = None  # (n-1,) float32 nats^2, with `full`
    ends: np.ndarray | None = None  # (n, K) float64 log mass of each end set after each position, with `ends`
    top_ids: np.ndarray | None = None  # (n-1, k) int64 top-k ids, with `full` and k > 0
    top_logprobs: np.ndarray | None = None  # (n-1, k) float32 their logprobs, with `full` and k > 0


def batches_texts(engine: object) -> bool:
    """Whether `engine` scores several texts in one forward pass (the torch and llama.cpp engines)."""
    return bool(getattr(engine, "batches_texts", False))


def group_tokens(engine: object) -> int:
    """Positions a group of `engine` may hold: TOKENS, or fewer where its forward pass hands back every position's
    logits rather than hidden states (llama.cpp: `group_tokens`, one llama_decode's worth, so a group's logits stay
    about 100 MB on SmolLM2, not 0.8 GB)."""
    return min(TOKENS, int(getattr(engine, "group_tokens", TOKENS)))


def groups(lengths: list[int], tokens: int = TOKENS, rows: int = ROWS) -> Iterator[list[int]]:
    """Indices of `lengths` in groups for one forward pass each: texts of one length together (shortest first), at
    most `rows` texts and `tokens` positions a group."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    group: list[int] = []
    for i in order:
        n = lengths[i]
        if group and (n != lengths[group[0]] or len(group) + 1 > rows or (len(group) + 1) * n > tokens):
            yield group
            group = []
        group.append(i)
    if group:
        yield group


@torch.inference_mode()
def score_group(
    engine: Forward, seqs: list[list[int]], *, full: bool = False, ends: bool = False, k: int = 0
) -> list[TextNumbers]:
    """Each of `seqs` (lists of ids, checked by the caller) scored in one forward pass (the steps above); `k`: with
    `full`, each position's k top entries too (k >= 0)."""
    bounds.check()
    return engine.compute(_group, engine, seqs, full, ends, k)


def score_prompts(engine: ModelEngine, seqs: list[list[int]], k: int = 0) -> list[TokenScores]:
    """Each of `seqs` (lists of ids, checked by the caller) as `score_ids(engine, ids, k)` gives it alone, to float32
    rounding: several a forward pass where the engine batches texts (`groups`), else one at a time. A prompt of one
    token or of more than PREFILL (read through the KV cache a block at a time), and full rows (k = -1), go alone."""
    out: list[TokenScores | None] = [None] * len(seqs)
    together = [i for i, ids in enumerate(seqs) if 2 <= len(ids) <= blocks.PREFILL] if k >= 0 else []
    if batches_texts(engine) and len(together) > 1:
        fwd = forward_pass(engine)
        for group in groups([len(seqs[i]) for i in together], group_tokens(engine)):
            js = [together[g] for g in group]
            nums = score_group(fwd, [seqs[j] for j in js], full=True, k=k)
            for j, num in zip(js, nums):
                out[j] = _prompt_scores(fwd, seqs[j], num, k)
    return [r if r is not None else score_ids(engine, seqs[i], k=k) for i, r in enumerate(out)]


def _prompt_scores(engine: Forward, ids: list[int], num: TextNumbers, k: int) -> TokenScores:
    """The TokenScores of a prompt scored in a group: score_ids' assembly of the same rows."""
    assert num.ranks is not None and num.entropy is not None  # `full`
    m = len(num.logprobs)
    top_ids = num.top_ids if num.top_ids is not None else np.zeros((m, 0), np.int64)  # k = 0: no top-k
    top_lps = num.top_logprobs if num.top_logprobs is not None else np.zeros((m, 0), np.float32)
    rows = Rows(num.logprobs, num.ranks, num.entropy, top_ids, top_lps, varentropy=num.varentropy)
    return assemble(engine.name, engine.vocab, ids, len(ids), rows, first=1, prompt_k=k)


def _group(engine: Forward, seqs: list[list[int]], full: bool, ends: bool, k: int = 0) -> list[TextNumbers]:
    """score_group on the engine's compute thread."""
    dev = engine.device
    n = torch.tensor([len(s) for s in seqs], device=dev)  # (B,)
    reach = n if ends else n - 1  # (B,) positions read per text: with a next token, and the last one with `ends`
    width = int(reach.max())
    x = torch.zeros((len(seqs), width + 1), dtype=torch.long, device=dev)  # (B, L + 1), right-padded with id 0
    for b, s in enumerate(seqs):
        x[b, : len(s)] = torch.tensor(s, device=dev)
    # 1. the body on exactly the positions a text alone reads (scoring.py: all but the last; word_ends.py: all)
    hidden = engine.continue_rows(x[:, :width])  # (B, L, H) hidden states, or (B, L, V) logits
    # 2. real positions, text after text
    pos = torch.arange(width, device=dev)[None, :]  # (1, L)
    keep = pos < reach[:, None]  # (B, L)
    cols = _columns(engine, hidden[keep], x[:, 1:][keep], full, ends, k)  # targets: the next id (0 after the last)
    has_next = (pos < (n - 1)[:, None])[keep]  # (N,)
    return _split(cols, has_next, reach.tolist(), full, ends)


def _columns(engine: Forward, rows: torch.Tensor, targets: torch.Tensor, full: bool, ends: bool, k: int) -> dict:
    """Per packed position: `lp`, with `full` `rank`, `entropy`, `varentropy` (and `top_ids`, `top_lp` (N, k) when
    k > 0: the engine's row statistics with their top-k), with `ends` `ends` (N, K); numpy."""
    sets = end_sets(engine) if ends else None
    parts: dict[str, list[torch.Tensor]] = {}
    step = max(HEAD_MIN_ROWS, min(rows.shape[0], (1 << 24) // max(engine.vocab_size, 1)))  # 64 MB of logits a chunk
    for a in range(0, rows.shape[0], step):
        logits = blocks.logits(engine, rows[a : a + step])  # (c, V)
        t = targets[a : a + step]
        got: dict[str, torch.Tensor] = {}
        if full and k > 0:  # a prompt's top-k too (/v1 prompt lists): the engine's statistics with their top-k
            st = engine.stats(logits, t, k)
            got = {"lp": st.logprob, "rank": st.rank, "entropy": st.entropy, "varentropy": st.varentropy}
            got |= {"top_ids": st.top_ids, "top_lp": st.top_logprobs}
            if sets is not None:
                got["ends"] = end_mass(logits, sets)
        elif full:
            got["lp"], got["rank"], got["entropy"], got["varentropy"] = engine.block_stats(logits, t)
            if sets is not None:
                got["ends"] = end_mass(logits, sets)
        elif sets is not None:
            got["lp"], got["ends"] = logprob_ends(logits, t, sets)
        else:
            got["lp"] = _logprob(logits, t)
        for key, v in got.items():
            parts.setdefault(key, []).append(v)
    return {key: torch.cat(v).cpu().numpy() for key, v in parts.items()}


def _logprob(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """(c,) float32 logprob of `targets` (c,) under rows `logits` (c, V): (x - m) - log sum exp(x - m), row_stats'
    formula, and nothing else; block_size(V) rows at a time."""
    b = block_size(logits.shape[1])
    out = []
    for a in range(0, logits.shape[0], b):
        x = logits[a : a + b].float()
        m = x.amax(-1, keepdim=True)  # (c, 1)
        ls = (x - m).exp().sum(-1, keepdim=True).log()  # (c, 1)
        out.append(((x.gather(-1, targets[a : a + b, None]) - m) - ls)[:, 0])
    return torch.cat(out)


def _split(cols: dict, has_next: torch.Tensor, reach: list[int], full: bool, ends: bool) -> list[TextNumbers]:
    """The packed columns cut back into one TextNumbers per text."""
    cuts = np.cumsum(reach)[:-1]
    nxt = np.split(has_next.cpu().numpy(), cuts)
    per = {key: np.split(v, cuts) for key, v in cols.items()}
    out = []
    for b in range(len(reach)):
        sel = nxt[b]

        def col(key: str, b: int = b, sel: np.ndarray = sel) -> np.ndarray:
            return per[key][b][sel]

        out.append(
            TextNumbers(
                col("lp"),
                col("rank") if full else None,
                col("entropy") if full else None,
                col("varentropy") if full else None,
                per["ends"][b] if ends else None,
                col("top_ids") if "top_ids" in per else None,  # with `full` and k > 0
                col("top_lp") if "top_lp" in per else None,
            )
        )
    return out
