"""TokenScores: the one type that carries a scored or generated sequence to every view.

Numpy only (no torch): the engine fills it, exporters, renderers and the UI read it.
Position i scores token `token_ids[i]` given `token_ids[:i]`; unscored positions
(position 0 of a prompt, or prompt positions when only the output was asked for)
hold NaN logprob/entropy and rank 0. Units: natural log, entropy in nats.
"""

from __future__ import annotations

import base64
import codecs
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from explorer.floats import from_json, list_to_json
from explorer.results.hidden import HiddenStates
from explorer.results.shown import show

if TYPE_CHECKING:
    import pandas as pd

FORMAT_VERSION = 1


@dataclass(eq=False)
class Rows:
    """The numbers of some consecutive positions, as scoring and generation produce them (numpy)."""

    logprobs: np.ndarray  # (m,) float32, logprob of the actual token
    ranks: np.ndarray  # (m,) int64, 1-based
    entropy: np.ndarray  # (m,) float32, nats
    top_ids: np.ndarray  # (m, k) int64, descending logprob (listed ids: in the order asked)
    top_logprobs: np.ndarray  # (m, k) float32
    full: np.ndarray | None = None  # (m, V) float32 logprobs in vocabulary order, only for k = -1
    top_ranks: np.ndarray | None = None  # (m, k) int64 ranks of the listed entries; None: they are the top-k (1..k)
    varentropy: np.ndarray | None = None  # (m,) float32, nats^2: Var of log p under p; None (or NaN): not known

    def __len__(self) -> int:
        return len(self.logprobs)

    @classmethod
    def empty(cls, k: int = 0, vocab_size: int = 0) -> Rows:
        """No positions, k top entries (a (0, V) `full` when k = -1)."""
        kk = max(k, 0)
        return cls(
            np.zeros(0, np.float32),
            np.zeros(0, np.int64),
            np.zeros(0, np.float32),
            np.zeros((0, kk), np.int64),
            np.zeros((0, kk), np.float32),
            np.zeros((0, vocab_size), np.float32) if k == -1 else None,
        )

    @classmethod
    def concat(cls, parts: list[Rows]) -> Rows:
        """Rows of `parts` one after another (same k; `full` kept only when every part has it)."""
        full = [p.full for p in parts]
        explicit = any(p.top_ranks is not None for p in parts)
        known = any(p.varentropy is not None for p in parts)
        return cls(
            np.concatenate([p.logprobs for p in parts]).astype(np.float32),
            np.concatenate([p.ranks for p in parts]).astype(np.int64),
            np.concatenate([p.entropy for p in parts]).astype(np.float32),
            np.concatenate([p.top_ids for p in parts]).astype(np.int64),
            np.concatenate([p.top_logprobs for p in parts]).astype(np.float32),
            np.concatenate([f for f in full if f is not None]) if full and all(f is not None for f in full) else None,
            np.concatenate([p.listed_ranks() for p in parts]).astype(np.int64) if explicit else None,
            np.concatenate([p.varentropy_or_nan() for p in parts]).astype(np.float32) if known else None,
        )

    def sliced(self, part: slice) -> Rows:
        """The rows of `part` (views)."""

        def cut(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[part]

        return Rows(
            self.logprobs[part],
            self.ranks[part],
            self.entropy[part],
            self.top_ids[part],
            self.top_logprobs[part],
            cut(self.full),
            cut(self.top_ranks),
            cut(self.varentropy),
        )

    def varentropy_or_nan(self) -> np.ndarray:
        """(m,) the varentropy, NaN where it is not known."""
        return self.varentropy if self.varentropy is not None else np.full(len(self), np.nan, np.float32)

    def listed_ranks(self) -> np.ndarray:
        """(m, k) rank of each listed entry: its true rank, or 1..k for a top-k (0 for padding)."""
        if self.top_ranks is not None:
            return self.top_ranks
        implied = np.broadcast_to(np.arange(1, self.top_ids.shape[1] + 1), self.top_ids.shape)
        return np.where(self.top_ids >= 0, implied, 0)

    def top(self, j: int, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(ids, logprobs) of the k best entries of row j in descending order; k = -1: the whole vocabulary.

        Read off the stored top-k when it is wide enough, otherwise off the full row.
        """
        width = self.top_ids.shape[1]
        if k == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        if self.full is not None and (k == -1 or k > width):
            row = np.nan_to_num(self.full[j], nan=-np.inf, neginf=-np.inf)  # (V,); -inf stays -inf
            order = np.argsort(-row, kind="stable")
            order = order if k == -1 else order[:k]
            return order.astype(np.int64), row[order].astype(np.float32)
        ids, lps = (
            self.top_ids[j, : max(k, 0) if k != -1 else width],
            self.top_logprobs[j, : max(k, 0) if k != -1 else width],
        )
        keep = ids >= 0
        return ids[keep], lps[keep]


def assemble(
    model: str, vocab: Sequence[bytes], ids: list[int], n_prompt: int, rows: Rows, first: int = 1, **kw
) -> TokenScores:
    """TokenScores of `ids`: `rows` fill positions first.. first+len(rows); the rest stay unscored.

    `vocab` maps every id to its raw bytes. Top-k lists narrower than the widest are padded (-1, -inf).
    """
    n, m = len(ids), len(rows)
    width = rows.top_ids.shape[1]
    logprobs = np.full(n, np.nan, np.float32)
    ranks = np.zeros(n, np.int64)
    entropy = np.full(n, np.nan, np.float32)
    top_ids = np.full((n, width), -1, np.int64)
    top_lp = np.full((n, width), -np.inf, np.float32)
    span = slice(first, first + m)
    logprobs[span], ranks[span], entropy[span] = rows.logprobs, rows.ranks, rows.entropy
    top_ids[span], top_lp[span] = rows.top_ids, rows.top_logprobs
    top_ranks = None
    if rows.top_ranks is not None:
        top_ranks = np.zeros((n, width), np.int64)
        top_ranks[span] = rows.top_ranks
    full = None
    if rows.full is not None:
        full = np.full((n, len(vocab)), np.nan, np.float32)
        full[span] = rows.full
    varentropy = np.full(n, np.nan, np.float32)
    varentropy[span] = rows.varentropy_or_nan()
    used = range(len(vocab)) if full is not None else sorted(set(ids) | set(top_ids[top_ids >= 0].tolist()))
    return TokenScores(
        model=model,
        token_ids=np.array(ids, np.int64),
        token_bytes=[vocab[i] for i in ids],
        n_prompt=n_prompt,
        logprobs=logprobs,
        ranks=ranks,
        entropy=entropy,
        top_ids=top_ids,
        top_logprobs=top_lp,
        pieces={i: vocab[i] for i in used},
        full_logprobs=full,
        vocab_size=len(vocab),
        top_ranks=top_ranks,
        varentropy=varentropy,
        **kw,
    )


@dataclass(eq=False)
class TokenScores:
    model: str
    token_ids: np.ndarray  # (n,) int64
    token_bytes: list[bytes]  # n raw byte strings; their concatenation is the UTF-8 text
    n_prompt: int  # tokens [0, n_prompt) are prompt, the rest were generated
    logprobs: np.ndarray  # (n,) float32, logprob of the actual token; NaN where unscored
    ranks: np.ndarray  # (n,) int64, 1-based count of entries >= the actual; 0 where unscored
    entropy: np.ndarray  # (n,) float32, nats; NaN where unscored
    top_ids: np.ndarray  # (n, K) int64, descending logprob (listed ids: in the order asked); -1 padding
    top_logprobs: np.ndarray  # (n, K) float32; -inf padding
    pieces: dict[int, bytes]  # raw bytes of every id in token_ids and top_ids (all ids for k=-1)
    mode: str = "raw"  # "raw": the model's distribution; "processed": after the sampler
    sampler: dict = field(default_factory=dict)  # the settings that produced it
    prompt_k: int | None = None  # k asked for prompt positions; None: prompt not scored; -1: full
    output_k: int | None = None  # k asked for generated positions; None: not generated
    finish_reason: str | None = None  # "stop" | "length" for generations
    output_text: str | None = None  # generated text when a stop string cut it; else derived
    full_logprobs: np.ndarray | None = None  # (n, V) float32 in vocabulary order, for k=-1
    vocab_size: int = 0
    top_ranks: np.ndarray | None = None  # (n, K) int64 true ranks of listed ids (`logprob_token_ids`); None: top-k
    stop_reason: str | int | None = None  # the stop string or stop token id that ended a generation
    stop_token: bool = False  # the last token ended the generation and adds nothing to the text (EOS)
    context_start: int = 0  # leading tokens put before the text as a document start (so its first token is scored)
    varentropy: np.ndarray | None = None  # (n,) float32, nats^2: Var_{v~p}[log p(v)] per position; NaN/None: unknown
    hidden_states: HiddenStates | None = None  # the residual stream its forward passes kept; None: not asked

    # ---- derived values -------------------------------------------------------------
    @property
    def n(self) -> int:
        return len(self.token_ids)

    @property
    def scored(self) -> np.ndarray:
        """(n,) bool: positions that carry numbers."""
        return ~np.isnan(self.logprobs)

    @property
    def probs(self) -> np.ndarray:
        """(n,) probability of the actual token; NaN where unscored."""
        return np.exp(self.logprobs)

    @property
    def surprisal_bits(self) -> np.ndarray:
        """(n,) -log2 p of the actual token, in bits."""
        return -self.logprobs / math.log(2)

    @property
    def total_logprob(self) -> float:
        """Sum of the scored positions' logprobs (nats)."""
        return float(np.nansum(self.logprobs.astype(np.float64)))

    @property
    def mean_logprob(self) -> float:
        k = int(self.scored.sum())
        return self.total_logprob / k if k else float("nan")

    @property
    def perplexity(self) -> float:
        """exp(-mean logprob) over the scored positions."""
        m = self.mean_logprob
        return math.exp(-m) if not math.isnan(m) else float("nan")

    @property
    def cumulative_logprob(self) -> float | None:
        """Sum of the generated tokens' logprobs (vLLM's `cumulative_logprob`)."""
        if self.output_k is None:
            return None
        return float(np.sum(self.logprobs[self.n_prompt :].astype(np.float64)))

    @cached_property
    def token_text(self) -> list[str]:
        """Per token, the characters it completes: a character split over tokens sits on its last token."""
        dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
        last = len(self.token_bytes) - 1
        return [dec.decode(b, final=(i == last)) for i, b in enumerate(self.token_bytes)]

    @cached_property
    def offsets(self) -> np.ndarray:
        """(n,) character offset of each token's text from the start of the whole text."""
        lengths = [len(t) for t in self.token_text]
        return np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64) if lengths else np.zeros(0, np.int64)

    @property
    def prompt_text(self) -> str:
        return "".join(self.token_text[: self.n_prompt])

    @property
    def completion_text(self) -> str:
        if self.output_text is not None:
            return self.output_text
        return "".join(self.token_text[self.n_prompt :])

    @property
    def text(self) -> str:
        return self.prompt_text + self.completion_text

    def top_k(self, pos: int) -> int:
        """The k asked for at this position (-1: full vocabulary; 0 when none)."""
        k = self.prompt_k if pos < self.n_prompt else self.output_k
        return 0 if k is None else k

    @property
    def rows(self) -> Rows:
        """Every position's numbers as Rows (views, no copy); row j is position j."""
        return Rows(
            self.logprobs,
            self.ranks,
            self.entropy,
            self.top_ids,
            self.top_logprobs,
            self.full_logprobs,
            self.top_ranks,
            self.varentropy,
        )

    def top(self, pos: int, k: int | None = None) -> list[tuple[int, float]]:
        """(id, logprob) of the k best tokens at `pos` (default: the k asked there), descending; [] where unscored."""
        k = self.top_k(pos) if k is None else k
        if k == 0 or not self.scored[pos]:
            return []
        ids, lps = self.rows.top(pos, k)
        return list(zip(ids.tolist(), lps.tolist()))

    # ---- JSON round trip --------------------------------------------------------------
    def to_dict(self, *, with_varentropy: bool = False) -> dict:
        """A JSON-safe dict (no NaN/Infinity: unscored numbers are null, -inf is -9999.0: explorer.floats).

        `with_varentropy` adds the per-position varentropy (`varentropy`, null where unknown); off by default,
        so the shape stays as it was unless text statistics were asked for.
        """
        d = {
            "format": "logprob-explorer/token-scores",
            "version": FORMAT_VERSION,
            "model": self.model,
            "mode": self.mode,
            "sampler": self.sampler,
            "n_prompt": self.n_prompt,
            "prompt_k": self.prompt_k,
            "output_k": self.output_k,
            "finish_reason": self.finish_reason,
            "output_text": self.output_text,
            "vocab_size": self.vocab_size,
            "token_ids": self.token_ids.tolist(),
            "token_bytes": [b.hex() for b in self.token_bytes],
            "token_text": self.token_text,
            "text_offset": self.offsets.tolist(),
            "logprobs": list_to_json(self.logprobs),
            "ranks": self.ranks.tolist(),
            "entropy": list_to_json(self.entropy),
            "top_ids": self.top_ids.tolist(),
            "top_logprobs": [list_to_json(row) for row in self.top_logprobs],
            "pieces": {str(i): b.hex() for i, b in sorted(self.pieces.items())},
        }
        if self.top_ranks is not None:
            d["top_ranks"] = self.top_ranks.tolist()
        if self.stop_reason is not None or self.stop_token:
            d["stop_reason"], d["stop_token"] = self.stop_reason, self.stop_token
        if self.context_start:
            d["context_start"] = self.context_start
        if with_varentropy:
            d["varentropy"] = list_to_json(self.rows.varentropy_or_nan())
        if self.hidden_states is not None:
            d["hidden_states"] = self.hidden_states.to_dict()
        if self.full_logprobs is not None:
            d["full_logprobs_f32_b64"] = base64.b64encode(self.full_logprobs.astype("<f4").tobytes()).decode()
        return d

    @classmethod
    def from_dict(cls, d: dict) -> TokenScores:
        n = len(d["token_ids"])
        top_ids = np.array(d["top_ids"], dtype=np.int64).reshape(n, -1)
        top_lp = from_json(d["top_logprobs"], np.float32).reshape(top_ids.shape)
        full = None
        if "full_logprobs_f32_b64" in d:
            full = np.frombuffer(base64.b64decode(d["full_logprobs_f32_b64"]), dtype="<f4").reshape(n, -1).copy()
        return cls(
            model=d["model"],
            token_ids=np.array(d["token_ids"], dtype=np.int64),
            token_bytes=[bytes.fromhex(h) for h in d["token_bytes"]],
            n_prompt=d["n_prompt"],
            logprobs=from_json(d["logprobs"], np.float32),
            ranks=np.array(d["ranks"], dtype=np.int64),
            entropy=from_json(d["entropy"], np.float32),
            top_ids=top_ids,
            top_logprobs=top_lp,
            pieces={int(i): bytes.fromhex(h) for i, h in d["pieces"].items()},
            mode=d["mode"],
            sampler=d["sampler"],
            prompt_k=d["prompt_k"],
            output_k=d["output_k"],
            finish_reason=d["finish_reason"],
            output_text=d["output_text"],
            full_logprobs=full,
            vocab_size=d["vocab_size"],
            top_ranks=np.array(d["top_ranks"], dtype=np.int64).reshape(top_ids.shape) if "top_ranks" in d else None,
            stop_reason=d.get("stop_reason"),
            stop_token=bool(d.get("stop_token", False)),
            context_start=int(d.get("context_start", 0)),
            varentropy=from_json(d["varentropy"], np.float32) if "varentropy" in d else None,
            hidden_states=HiddenStates.from_dict(d["hidden_states"]) if "hidden_states" in d else None,
        )

    # ---- in Python and notebooks: one-line calls of the presenters registered in explorer/results/shown.py ------
    def to_pandas(self) -> pd.DataFrame:
        """One row per token (index `pos`): token, token_id, logprob (nats), prob, rank, entropy (nats),
        surprisal_bits, part and top_k (a list of {token_id, token, logprob}); explorer.notebook.frames.token_frame."""
        return show(self, "to_pandas")

    def to_json(self, shape: str = "native") -> str:
        """The JSON text of one export shape, as the page's download: "native", "vllm", "openai-completion",
        "vllm-offline" and, for a generation, "openai-chat" (explorer.export.FORMATS); an unknown name is an
        ExplorerError naming these."""
        return show(self, "to_json", shape)

    def to_csv(self) -> str:
        """The per-token table as the page's CSV download."""
        return show(self, "to_csv")

    def to_html(self, metric: str = "logprob") -> str:
        """The heatmap view (hover card, click detail) as one self-contained HTML page: CSS, script and data inline,
        no network request; `metric` colours it (logprob, rank, probability, entropy, surprisal)."""
        return show(self, "to_html", metric)

    def save_html(self, path: str | os.PathLike[str], metric: str = "logprob") -> str:
        """Write `to_html(metric)` to `path`; the path written."""
        return show(self, "save_html", path, metric)

    def _repr_html_(self) -> str:
        """Jupyter's view of the result: the interactive heatmap (explorer.notebook.page.view_html)."""
        return show(self, "_repr_html_")
