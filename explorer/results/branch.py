"""BranchTree: the roads not taken, a tree of tokens with their numbers under the model (numpy, no torch).

Every node is one token: its logprob, rank, entropy and top-k under the model (raw numbers)
at its depth, given the path from the root to it. Branch 0 (the seed) is the text the tree
grew from; every other branch puts a token after a node (an alternative to that node's
child) and adds what the sampler drew next, with its own settings and seed, so the tree
can be regrown from `branches`. Units: natural log, entropy in nats.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from explorer.floats import from_json, list_to_json, to_json
from explorer.results.shown import show

if TYPE_CHECKING:
    import pandas as pd

FORMAT = "logprob-explorer/branch-tree"
FORMAT_VERSION = 1


@dataclass(eq=False, frozen=True)
class BranchTree:
    model: str
    parent: np.ndarray  # (N,) int64 node id of the parent; -1 for the root
    token_ids: np.ndarray  # (N,) int64
    logprobs: np.ndarray  # (N,) float32 logprob of the node's token after its path; NaN for the root
    ranks: np.ndarray  # (N,) int64, 1-based; 0 for the root
    entropy: np.ndarray  # (N,) float32, nats; NaN for the root
    top_ids: np.ndarray  # (N, k) int64, descending logprob; -1 for the root
    top_logprobs: np.ndarray  # (N, k) float32; -inf for the root
    branch: np.ndarray  # (N,) int64 index in `branches` of the branch that made the node
    branches: tuple[dict, ...]  # per branch: from (node id, -1 for the seed), token_id, sampler, finish_reason
    pieces: dict[int, bytes]  # raw bytes of every id in token_ids and top_ids
    n_prompt: int = 0  # seed tokens that were its prompt (the rest were generated)

    # ---- building -----------------------------------------------------------------------
    @classmethod
    def planted(
        cls, model: str, vocab: Sequence[bytes], ids: list[int], rows, n_prompt: int, sampler: dict | None
    ) -> BranchTree:
        """A tree of one path, `ids`; `rows` (numpy Rows) hold positions 1.. (the root has no context)."""
        n, k = len(ids), rows.top_ids.shape[1]
        used = set(ids) | set(rows.top_ids[rows.top_ids >= 0].tolist())
        return cls(
            model,
            np.arange(-1, n - 1, dtype=np.int64),
            np.asarray(ids, np.int64),
            np.concatenate([[np.nan], rows.logprobs]).astype(np.float32),
            np.concatenate([[0], rows.ranks]).astype(np.int64),
            np.concatenate([[np.nan], rows.entropy]).astype(np.float32),
            np.concatenate([np.full((1, k), -1), rows.top_ids]).astype(np.int64),
            np.concatenate([np.full((1, k), -np.inf), rows.top_logprobs]).astype(np.float32),
            np.zeros(n, np.int64),
            (
                {
                    "id": 0,
                    "from": -1,
                    "at": 0,
                    "token_id": int(ids[0]),
                    "first_node": 0,
                    "sampler": sampler or {},
                    "finish_reason": None,
                },
            ),
            {i: vocab[i] for i in used},
            n_prompt,
        )

    def grown(self, after: int, ids: list[int], rows, vocab: Sequence[bytes], info: dict) -> BranchTree:
        """A tree with a new branch: the chain `ids` after node `after`; `rows` (len(ids) rows, width k) are their
        numbers; `info` (its sampler settings, finish reason) is kept in `branches`."""
        m, first, b = len(ids), self.n, len(self.branches)
        parent = np.concatenate([self.parent, [after], np.arange(first, first + m - 1)]).astype(np.int64)
        used = set(ids) | set(rows.top_ids[rows.top_ids >= 0].tolist())
        branches = self.branches + (
            {
                "id": b,
                "from": int(after),
                "at": self.depth(after) + 1,
                "token_id": int(ids[0]),
                "first_node": first,
                **info,
            },
        )
        return replace(
            self,
            parent=parent,
            token_ids=np.concatenate([self.token_ids, np.asarray(ids, np.int64)]),
            logprobs=np.concatenate([self.logprobs, rows.logprobs]).astype(np.float32),
            ranks=np.concatenate([self.ranks, rows.ranks]).astype(np.int64),
            entropy=np.concatenate([self.entropy, rows.entropy]).astype(np.float32),
            top_ids=np.concatenate([self.top_ids, rows.top_ids]).astype(np.int64),
            top_logprobs=np.concatenate([self.top_logprobs, rows.top_logprobs]).astype(np.float32),
            branch=np.concatenate([self.branch, np.full(m, b, np.int64)]),
            branches=branches,
            pieces={**self.pieces, **{i: vocab[i] for i in used}},
        )

    # ---- reading ------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return len(self.token_ids)

    @property
    def k(self) -> int:
        return self.top_ids.shape[1]

    def children(self, node: int) -> list[int]:
        return np.flatnonzero(self.parent == node).tolist()

    def leaves(self) -> list[int]:
        """Nodes without children, in the order they were made."""
        return np.setdiff1d(np.arange(self.n), self.parent).tolist()

    def path(self, node: int) -> list[int]:
        """Node ids from the root to `node`."""
        out = []
        while node >= 0:
            out.append(int(node))
            node = int(self.parent[node])
        return out[::-1]

    def depth(self, node: int) -> int:
        """The node's position in its text (the root is 0)."""
        return len(self.path(node)) - 1

    def ids_to(self, node: int) -> list[int]:
        """Token ids of the text ending at `node`."""
        return self.token_ids[self.path(node)].tolist()

    def seed_ids(self) -> list[int]:
        """The text the tree grew from (branch 0)."""
        return self.token_ids[self.branch == 0].tolist()

    def cumulative_logprob(self, node: int) -> float:
        """Sum of the scored logprobs from the root to `node` (nats)."""
        return float(np.nansum(self.logprobs[self.path(node)].astype(np.float64)))

    def perplexity(self, node: int) -> float:
        """exp(-mean logprob) of the scored nodes from the root to `node`."""
        lp = self.logprobs[self.path(node)].astype(np.float64)
        lp = lp[~np.isnan(lp)]
        return math.exp(-lp.mean()) if lp.size else math.nan

    def piece(self, node: int) -> str:
        """The node's own bytes as text (a character split over tokens shows as �)."""
        return self.pieces[int(self.token_ids[node])].decode("utf-8", "replace")

    def text(self, node: int) -> str:
        """The whole text ending at `node`."""
        return b"".join(self.pieces[i] for i in self.ids_to(node)).decode("utf-8", "replace")

    def top(self, node: int) -> list[tuple[int, float]]:
        """(id, logprob) of the k best tokens at the node's position, descending; [] for the root."""
        return [(int(i), float(lp)) for i, lp in zip(self.top_ids[node], self.top_logprobs[node]) if i >= 0]

    # ---- JSON round trip ----------------------------------------------------------------
    def to_pandas(self) -> pd.DataFrame:
        """One row per node: parent, token, logprob (nats), rank, entropy, branch (explorer.notebook.frames.branch_frame)."""
        return show(self, "to_pandas")

    def to_html(self) -> str:
        """The tree of branches as one self-contained HTML file (the tab's *Download view*): no script, no request."""
        return show(self, "to_html")

    def _repr_html_(self) -> str:
        """Jupyter's view: the tree of branches, drawn (explorer.notebook.views), its CSS scoped to it."""
        return show(self, "_repr_html_")

    def to_dict(self) -> dict:
        """Nodes (id, parent, token_id, bytes, logprob, rank, entropy, top-k, branch), branches, and each leaf's path numbers."""
        nodes = [
            {
                "id": i,
                "parent": int(self.parent[i]),
                "token_id": int(self.token_ids[i]),
                "bytes": self.pieces[int(self.token_ids[i])].hex(),
                "text": self.piece(i),
                "logprob": to_json(self.logprobs[i]),
                "rank": int(self.ranks[i]) or None,
                "entropy": to_json(self.entropy[i]),
                "top_ids": self.top_ids[i].tolist(),
                "top_logprobs": list_to_json(self.top_logprobs[i]),
                "branch": int(self.branch[i]),
            }
            for i in range(self.n)
        ]
        leaves = [
            {
                "node": j,
                "depth": self.depth(j),
                "cumulative_logprob": self.cumulative_logprob(j),
                "perplexity": to_json(self.perplexity(j)),
                "text": self.text(j),
            }
            for j in self.leaves()
        ]
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "model": self.model,
            "k": self.k,
            "n_prompt": self.n_prompt,
            "nodes": nodes,
            "branches": [dict(b) for b in self.branches],
            "leaves": leaves,
            "pieces": {str(i): b.hex() for i, b in sorted(self.pieces.items())},
        }

    @classmethod
    def from_dict(cls, d: dict) -> BranchTree:
        nodes, k = d["nodes"], d["k"]
        if d.get("format") != FORMAT:
            raise ValueError(f"not a branch tree (format {d.get('format')!r})")
        return cls(
            model=d["model"],
            parent=np.array([x["parent"] for x in nodes], np.int64),
            token_ids=np.array([x["token_id"] for x in nodes], np.int64),
            logprobs=from_json([x["logprob"] for x in nodes], np.float32),
            ranks=np.array([x["rank"] or 0 for x in nodes], np.int64),
            entropy=from_json([x["entropy"] for x in nodes], np.float32),
            top_ids=np.array([x["top_ids"] for x in nodes], np.int64).reshape(len(nodes), k),
            top_logprobs=from_json([x["top_logprobs"] for x in nodes], np.float32).reshape(len(nodes), k),
            branch=np.array([x["branch"] for x in nodes], np.int64),
            branches=tuple(dict(b) for b in d["branches"]),
            pieces={int(i): bytes.fromhex(h) for i, h in d["pieces"].items()},
            n_prompt=d.get("n_prompt", 0),
        )
