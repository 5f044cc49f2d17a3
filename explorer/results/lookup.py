"""Lookup: how likely one chosen token (or string) was at every position of a text, beyond the top-k.

Numpy only; the engine fills it (explorer.engine.analyses.lookup). A query is a token id (`42`, or
`id:42`) or a text (`text:42` forces text); a text of several tokens is followed by its
first token at every position, and by the joint logprob of all its tokens where the text
actually continues with them. Units: natural log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from explorer.errors import ExplorerError
from explorer.floats import from_json, list_to_json
from explorer.results.scores import TokenScores
from explorer.results.shown import show

if TYPE_CHECKING:
    import pandas as pd

MAX_LOOKUPS = 16  # queries at once (a compare each, or one sort, per position)
MAX_QUERY_CHARS = 200


def parse_query(query: str) -> tuple[str, int | str]:
    """("id", n) for a bare whole number or `id:n`; ("text", s) for anything else (`text:` forces text)."""
    if not isinstance(query, str) or query == "":
        raise ExplorerError("A lookup is empty: type a word (such as ' yes') or a token id.", param="lookup")
    if len(query) > MAX_QUERY_CHARS:
        raise ExplorerError(f"A lookup may be at most {MAX_QUERY_CHARS} characters.", param="lookup")
    if query.startswith("text:"):
        if len(query) == 5:
            raise ExplorerError("`text:` needs a text after it, like `text:42`.", param="lookup")
        return "text", query[5:]
    body = query[3:] if query.startswith("id:") else query
    if body.isascii() and body.isdigit():
        return "id", int(body)
    if query.startswith("id:"):
        raise ExplorerError(f"{query!r}: `id:` needs a whole number, like `id:42`.", param="lookup")
    return "text", query


def check_queries(queries: list[str], fmt: str = "native", backend: str | None = None) -> None:
    """Every check of a list of lookups that needs no model (the CLI's `score --lookup`)."""
    if backend:
        raise ExplorerError(
            "--lookup reads the model's logits, so it needs the model loaded here: drop --backend.", param="lookup"
        )
    if fmt != "native":
        raise ExplorerError(
            f"--lookup adds a `lookup` list to this project's own JSON: add --format native (not {fmt}).",
            param="lookup",
        )
    if len(queries) > MAX_LOOKUPS:
        raise ExplorerError(f"At most {MAX_LOOKUPS} lookups at once (got {len(queries)}).", param="lookup")
    for q in queries:
        parse_query(q)


def joint_logprobs(actual: np.ndarray, ids: list[int] | np.ndarray, tokens: list[int]) -> np.ndarray:
    """(T,) float64: at each position p where ids[p : p + m] == tokens, the sum of the actual
    tokens' logprobs `actual` (T,) over those m positions; NaN elsewhere (and where unscored)."""
    ids = np.asarray(ids, np.int64)
    m, t = len(tokens), len(ids)
    out = np.full(t, np.nan)
    if m == 0 or m > t:
        return out
    windows = np.lib.stride_tricks.sliding_window_view(ids, m)  # (T - m + 1, m)
    hits = np.flatnonzero((windows == np.asarray(tokens, np.int64)).all(-1))
    sums = np.lib.stride_tricks.sliding_window_view(actual.astype(np.float64), m).sum(-1)  # NaN spreads
    out[hits] = sums[hits]
    return out


@dataclass(eq=False)
class Lookup:
    """One query's numbers at every position of a text (position i: predicting token i from tokens < i)."""

    query: str  # as typed
    token_ids: np.ndarray  # (m,) int64, the query's tokens; the numbers below are of the first
    logprobs: np.ndarray  # (T,) float32, raw logprob of token_ids[0]; NaN where unscored (position 0)
    ranks: np.ndarray  # (T,) int64, 1-based rank of token_ids[0]; 0 where unscored
    joint_logprobs: np.ndarray  # (T,) float64, logprob of all m tokens where the text continues with them; else NaN

    @property
    def token_id(self) -> int:
        return int(self.token_ids[0])

    @property
    def multi_token(self) -> bool:
        return len(self.token_ids) > 1

    @property
    def probs(self) -> np.ndarray:
        """(T,) probability of the first token; NaN where unscored."""
        return np.exp(self.logprobs)

    def to_dict(self) -> dict:
        """`{"query", "token_id", "token_ids", "logprobs", "ranks", "joint_logprobs"}`: one value per position, null where unscored."""
        scored = ~np.isnan(self.logprobs)
        return {
            "query": self.query,
            "token_id": self.token_id,
            "token_ids": self.token_ids.tolist(),
            "logprobs": list_to_json(self.logprobs),
            "ranks": [int(r) if s else None for r, s in zip(self.ranks.tolist(), scored)],
            "joint_logprobs": list_to_json(self.joint_logprobs),
        }

    @classmethod
    def from_dict(cls, d: dict) -> Lookup:
        return cls(
            d["query"],
            np.array(d["token_ids"], np.int64),
            from_json(d["logprobs"], np.float32),
            np.array([0 if r is None else r for r in d["ranks"]], np.int64),
            from_json(d["joint_logprobs"], np.float64),
        )


@dataclass(eq=False)
class Lookups:
    """A text and the queries looked up along it (the Lookup view; `LM.lookup`)."""

    scores: TokenScores  # the text, scored
    lookups: list[Lookup]  # one per query, in the order asked

    @property
    def model(self) -> str:
        return self.scores.model

    def to_dict(self) -> dict:
        """`{"model", "text", "token_ids", "lookups": [Lookup.to_dict(), ...]}`."""
        return {
            "model": self.model,
            "text": self.scores.text,
            "token_ids": self.scores.token_ids.tolist(),
            "lookups": [x.to_dict() for x in self.lookups],
        }

    def to_pandas(self) -> pd.DataFrame:
        """One row per position: the actual token, then each query's logprob and rank (explorer.notebook.frames)."""
        return show(self, "to_pandas")

    def to_html(self) -> str:
        """The view as one self-contained HTML file."""
        return show(self, "to_html")

    def _repr_html_(self) -> str:
        return show(self, "_repr_html_")
