"""Results -> pandas DataFrames for notebooks and scripts, one row per token, word, text, pair or answer.

Numbers keep full precision (float64 copies of the float32 values, no rounding); natural log everywhere, units in
the column names where they are not nats. Unscored positions hold NaN and a missing rank (pandas' `<NA>`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from explorer.results.answers import Answers
from explorer.results.attribution import Attribution
from explorer.results.batch import COLUMNS, Batch
from explorer.results.branch import BranchTree
from explorer.results.compare import Comparison
from explorer.results.hidden import HiddenStates
from explorer.results.lens import LensGrid
from explorer.results.lookup import Lookups
from explorer.results.scores import TokenScores
from explorer.results.words import WORD_COLUMNS, Words, word_rows

TOKEN_COLUMNS = ("token", "token_id", "logprob", "prob", "rank", "entropy", "surprisal_bits", "part", "top_k")


def _parts(r: TokenScores) -> np.ndarray:
    """(n,) 'document start', 'prompt' or 'generated' per position."""
    pos = np.arange(r.n)
    part = np.where(pos < r.n_prompt, "prompt", "generated")
    return np.where(pos < r.context_start, "document start", part)


def _top_k(r: TokenScores) -> list[list[dict]]:
    """Per position, its listed alternatives in order: [{token_id, token, logprob}, ...] ([] where unscored)."""
    out = []
    for pos in range(r.n):
        pairs = r.top(pos)
        out.append(
            [
                {"token_id": i, "token": r.pieces[i].decode("utf-8", "backslashreplace"), "logprob": lp}
                for i, lp in pairs
            ]
        )
    return out


def token_frame(r: TokenScores) -> pd.DataFrame:
    """One row per token (index `pos`): `token` (the characters it completes; the column joins to the text),
    `token_id`, `logprob` (nats), `prob`, `rank` (1-based, <NA> unscored), `entropy` (nats), `surprisal_bits`,
    `part` (document start / prompt / generated) and `top_k` (a list of {token_id, token, logprob}, best first)."""
    frame = pd.DataFrame(
        {
            "token": r.token_text,
            "token_id": r.token_ids.astype(np.int64),
            "logprob": r.logprobs.astype(np.float64),
            "prob": r.probs.astype(np.float64),
            "rank": _ranks(r.ranks, r.scored),
            "entropy": r.entropy.astype(np.float64),
            "surprisal_bits": r.surprisal_bits.astype(np.float64),
            "part": _parts(r),
            "top_k": _top_k(r),
        },
        columns=list(TOKEN_COLUMNS),
    )
    frame.index.name = "pos"
    return frame


def word_frame(r: TokenScores, w: Words, lead: int | None = None) -> pd.DataFrame:
    """One row per word of the text (results.words.word_rows: WORD_COLUMNS), numbers NaN where unknown."""
    rows = word_rows(r, w, lead)
    frame = pd.DataFrame(rows, columns=list(WORD_COLUMNS))
    numbers = [c for c in WORD_COLUMNS if c.startswith(("logprob", "surprisal"))]
    frame[numbers] = frame[numbers].astype(np.float64)  # None -> NaN
    return frame


def batch_frame(b: Batch) -> pd.DataFrame:
    """One row per text (Batch's COLUMNS, as its CSV): figures NaN where unknown, the reason in `error`."""
    return pd.DataFrame([row.to_dict() for row in b.rows], columns=list(COLUMNS))


def _ranks(ranks: np.ndarray, scored: np.ndarray) -> pd.arrays.IntegerArray:
    """(m,) 1-based ranks as a nullable integer column, <NA> where unscored."""
    return pd.array([int(x) if ok else None for x, ok in zip(ranks.tolist(), scored.tolist())], dtype="Int64")


def comparison_frame(c: Comparison) -> pd.DataFrame:
    """Paired comparisons: one row per pair (the token, both logprobs and ranks, their difference b - a, KL both ways
    and Jensen-Shannon, in nats). Models with different tokenizers: one row per aligned character span with both
    summed logprobs."""
    if not c.paired:
        return pd.DataFrame(
            {
                "start": c.spans[:, 0].astype(np.int64),
                "end": c.spans[:, 1].astype(np.int64),
                "text": [c.text[a:b] for a, b in c.spans.tolist()],
                "logprob_a": c.span_logprob_a.astype(np.float64),
                "logprob_b": c.span_logprob_b.astype(np.float64),
            }
        )
    scored = c.scored
    return pd.DataFrame(
        {
            "pos_a": c.pos_a.astype(np.int64),
            "pos_b": c.pos_b.astype(np.int64),
            "token": c.token_text,
            "token_id": c.token_ids.astype(np.int64),
            "logprob_a": c.logprob_a.astype(np.float64),
            "logprob_b": c.logprob_b.astype(np.float64),
            "delta_logprob": c.delta_logprob.astype(np.float64),
            "rank_a": _ranks(c.rank_a, scored),
            "rank_b": _ranks(c.rank_b, scored),
            "kl_ab": c.kl_ab.astype(np.float64),
            "kl_ba": c.kl_ba.astype(np.float64),
            "js": c.js.astype(np.float64),
        }
    )


def answers_frame(a: Answers) -> pd.DataFrame:
    """One row per answer: its name, logprob (nats, the logsumexp of its variants'), probability, probability
    normalised over the set, whether it is the best, and its variants' texts."""
    return pd.DataFrame(
        {
            "answer": [x.name for x in a.answers],
            "logprob": a.logprobs,
            "probability": a.probabilities,
            "normalised": a.normalised,
            "best": [i == a.best for i in range(len(a.answers))],
            "variants": [[v.text for v in x.variants] for x in a.answers],
        }
    )


def attribution_frame(a: Attribution) -> pd.DataFrame:
    """One row per source unit before the target: its token range [start, end), text, value (the method's share of
    f in nats; attention: a weight), rank by strength (1 = strongest) and whether it is a special/template token."""
    rank = {u: i + 1 for i, u in enumerate(a.ranked(a.n, with_special=True))}
    special = a.special if len(a.special) == a.n else np.zeros(a.n, bool)
    return pd.DataFrame(
        {
            "start": a.spans[:, 0].astype(np.int64),
            "end": a.spans[:, 1].astype(np.int64),
            "text": a.unit_text,
            "value": a.values.astype(np.float64),
            "rank": pd.array([rank.get(u) for u in range(a.n)], dtype="Int64"),
            "special": special.astype(bool),
        }
    )


def lens_frame(g: LensGrid) -> pd.DataFrame:
    """One row per layer and position (layer 0: the embeddings, L: the model's output): the actual token, its
    logprob (nats), rank and the layer's entropy (nats), and the layer's top guess; position 0 has no numbers."""
    layers, pos = np.meshgrid(np.arange(g.n_layers + 1), np.arange(g.n), indexing="ij")  # (L+1, n) each
    top = g.top_ids[:, :, 0] if g.k else np.full(layers.shape, -1)
    return pd.DataFrame(
        {
            "layer": layers.ravel().astype(np.int64),
            "pos": pos.ravel().astype(np.int64),
            "token": [g.token_text[p] for p in pos.ravel().tolist()],
            "logprob": g.logprobs.ravel().astype(np.float64),
            "rank": _ranks(g.ranks.ravel(), (pos.ravel() > 0)),
            "entropy": g.entropy.ravel().astype(np.float64),
            "top_token": [
                g.pieces.get(int(i), b"").decode("utf-8", "backslashreplace") if i >= 0 else None
                for i in top.ravel().tolist()
            ],
        }
    )


def branch_frame(tree: BranchTree) -> pd.DataFrame:
    """One row per node of the tree: its parent (<NA> for the root), token text and id, logprob (nats) after its
    path, rank (<NA> for the root), entropy (nats) and the branch that made it."""
    text = [tree.pieces.get(int(i), b"").decode("utf-8", "backslashreplace") for i in tree.token_ids.tolist()]
    root = tree.parent < 0
    return pd.DataFrame(
        {
            "node": np.arange(len(tree.token_ids), dtype=np.int64),
            "parent": pd.array([None if r else int(p) for p, r in zip(tree.parent.tolist(), root)], dtype="Int64"),
            "text": text,
            "token_id": tree.token_ids.astype(np.int64),
            "logprob": tree.logprobs.astype(np.float64),
            "rank": _ranks(tree.ranks, ~root),
            "entropy": tree.entropy.astype(np.float64),
            "branch": tree.branch.astype(np.int64),
        }
    )


def lookup_frame(res: Lookups) -> pd.DataFrame:
    """One row per position of the text: the actual token and its logprob, then per query its (first token's)
    logprob and rank, and the joint logprob of all its tokens where the text continues with them."""
    r = res.scores
    cols: dict = {
        "pos": np.arange(r.n, dtype=np.int64),
        "token": r.token_text,
        "logprob": r.logprobs.astype(np.float64),
    }
    for x in res.lookups:
        cols[f"logprob({x.query})"] = x.logprobs.astype(np.float64)
        cols[f"rank({x.query})"] = _ranks(x.ranks, ~np.isnan(x.logprobs))
        if x.multi_token:
            cols[f"joint_logprob({x.query})"] = x.joint_logprobs.astype(np.float64)
    return pd.DataFrame(cols)


def hidden_frame(h: HiddenStates) -> pd.DataFrame:
    """One row per position and layer: position, token_id, layer, hook_name, norm (the vector's L2 norm, float64)
    and vector (its float32 numpy array, a view of `h.values`)."""
    p, n, _ = h.shape
    flat = h.values.reshape(p * n, -1)
    return pd.DataFrame(
        {
            "position": np.repeat(h.positions, n),
            "token_id": np.repeat(h.token_ids, n),
            "layer": pd.Series(list(h.layers) * p, dtype=object),
            "hook_name": h.hook_names * p,
            "norm": np.linalg.norm(flat.astype(np.float64), axis=1),
            "vector": list(flat),
        }
    )
