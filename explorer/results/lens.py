"""LensGrid: a logit lens, every layer's reading of every position, as statistics only (numpy, no torch).

Row l < L is the residual stream after l blocks (0 = the embeddings) read through the model's
final norm and output layer (the plain logit lens); row L is the model's own output, so it
equals scoring. Position p scores token `token_ids[p]` given `token_ids[:p]`; position 0 is
unscored (NaN logprob/entropy, rank 0, top ids -1). Units: natural log, entropy in nats.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from explorer.floats import from_json, list_to_json
from explorer.results.shown import show

if TYPE_CHECKING:
    import pandas as pd

FORMAT = "logprob-explorer/logit-lens"
FORMAT_VERSION = 1


@dataclass(eq=False)
class LensGrid:
    model: str
    token_ids: np.ndarray  # (n,) int64
    token_bytes: list[bytes]  # n raw byte strings
    logprobs: np.ndarray  # (L+1, n) float32, logprob of the actual token at each layer; NaN at position 0
    ranks: np.ndarray  # (L+1, n) int64, 1-based; 0 at position 0
    entropy: np.ndarray  # (L+1, n) float32, nats; NaN at position 0
    top_ids: np.ndarray  # (L+1, n, k) int64, descending logprob; -1 at position 0
    top_logprobs: np.ndarray  # (L+1, n, k) float32; -inf at position 0
    pieces: dict[int, bytes]  # raw bytes of every id in token_ids and top_ids
    note: str = ""  # said above the grid: which engine computed it, where another one serves the model

    @property
    def n(self) -> int:
        return len(self.token_ids)

    @property
    def n_layers(self) -> int:
        """L: the number of blocks (the grid has L+1 rows)."""
        return self.logprobs.shape[0] - 1

    @property
    def k(self) -> int:
        return self.top_ids.shape[2]

    @cached_property
    def token_text(self) -> list[str]:
        """Per token, the characters it completes (as TokenScores.token_text)."""
        dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
        last = len(self.token_bytes) - 1
        return [dec.decode(b, final=(i == last)) for i, b in enumerate(self.token_bytes)]

    def top(self, layer: int, pos: int) -> list[tuple[int, float]]:
        """(id, logprob) of layer `layer`'s k best tokens at `pos`, descending; [] at position 0."""
        ids, lps = self.top_ids[layer, pos], self.top_logprobs[layer, pos]
        return [(int(i), float(lp)) for i, lp in zip(ids, lps) if i >= 0]

    # ---- JSON round trip ----------------------------------------------------------------
    def to_pandas(self) -> pd.DataFrame:
        """One row per layer and position: the token, its logprob (nats), rank and entropy at that layer, the layer's top guess (explorer.notebook.frames.lens_frame)."""
        return show(self, "to_pandas")

    def to_html(self) -> str:
        """The logit lens grid as one self-contained HTML file (the tab's *Download view*): no script, no request."""
        return show(self, "to_html")

    def _repr_html_(self) -> str:
        """Jupyter's view: the logit lens grid, drawn (explorer.notebook.views), its CSS scoped to it."""
        return show(self, "_repr_html_")

    def to_dict(self) -> dict:
        """The CLI's JSON: model, token_ids, n_layers and one object per layer 0..L (null at position 0)."""

        def lists(a):
            return [None] + [list_to_json(row) for row in a[1:]]

        layers = []
        for layer in range(self.n_layers + 1):
            ranks = self.ranks[layer].tolist()
            layers.append(
                {
                    "layer": layer,
                    "logprobs": list_to_json(self.logprobs[layer]),
                    "ranks": [None] + ranks[1:] if ranks else [],
                    "entropy": list_to_json(self.entropy[layer]),
                    "top_ids": [None] + self.top_ids[layer, 1:].tolist() if self.n else [],
                    "top_logprobs": lists(self.top_logprobs[layer]) if self.n else [],
                }
            )
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "model": self.model,
            "token_ids": self.token_ids.tolist(),
            "token_bytes": [b.hex() for b in self.token_bytes],
            "n_layers": self.n_layers,
            "k": self.k,
            "layers": layers,
            "pieces": {str(i): b.hex() for i, b in sorted(self.pieces.items())},
        } | ({"note": self.note} if self.note else {})  # which engine computed it, where another serves the model

    @classmethod
    def from_dict(cls, d: dict) -> LensGrid:
        n, k, rows = len(d["token_ids"]), d["k"], d["layers"]
        top_ids = np.full((len(rows), n, k), -1, np.int64)
        top_lp = np.full((len(rows), n, k), -np.inf, np.float32)
        for layer, row in enumerate(rows):
            for p in range(1, n):
                top_ids[layer, p] = row["top_ids"][p]
                top_lp[layer, p] = from_json(row["top_logprobs"][p], np.float32)
        return cls(
            model=d["model"],
            token_ids=np.array(d["token_ids"], np.int64).reshape(n),
            token_bytes=[bytes.fromhex(h) for h in d["token_bytes"]],
            logprobs=np.array([from_json(r["logprobs"], np.float32) for r in rows], np.float32).reshape(len(rows), n),
            ranks=np.array([[r or 0 for r in row["ranks"]] for row in rows], np.int64).reshape(len(rows), n),
            entropy=np.array([from_json(r["entropy"], np.float32) for r in rows], np.float32).reshape(len(rows), n),
            top_ids=top_ids,
            top_logprobs=top_lp,
            pieces={int(i): bytes.fromhex(h) for i, h in d["pieces"].items()},
            note=d.get("note", ""),
        )
