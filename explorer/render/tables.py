"""TokenScores -> tables: every token's numbers (full precision for downloads, formatted for the page),
the summary line, and the most surprising tokens."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from explorer.render.numbers import DASH, fixed, logprob, pct, whole
from explorer.render.text import escape, visible
from explorer.results.scores import TokenScores
from explorer.rules.sampler import is_greedy

SURPRISING = 10  # tokens in the "most surprising" list


ALT_COLUMNS = ["rank", "token", "probability %", "logprob", "actual", "id"]  # alternatives_table's, in order


def alternatives_table(pairs, pieces, actual: int, marker: str) -> pd.DataFrame:
    """A top-k table: (id, logprob) `pairs` by rank, the `actual` id marked with `marker`, and an `(others)` row with
    the rest of the probability mass (the lens's cells and the branch tree's nodes)."""
    rows, mass = [], 0.0
    for rank, (i, lp) in enumerate(pairs, start=1):
        mass += math.exp(lp)
        rows.append(
            {
                "rank": rank,
                "token": visible(pieces[i].decode("utf-8", "backslashreplace")),
                "probability %": round(100 * math.exp(lp), 3),
                "logprob": round(lp, 4),
                "actual": marker if i == actual else "",
                "id": i,
            }
        )
    if rows:
        rest = max(0.0, 1.0 - mass)
        rows.append(
            {
                "rank": None,
                "token": "(others)",
                "probability %": round(100 * rest, 3),
                "logprob": round(math.log(rest), 4) if rest > 0 else None,
                "actual": "",
                "id": None,
            }
        )
    return pd.DataFrame(rows, columns=["rank", "token", "probability %", "logprob", "actual", "id"])


def _text(b: bytes) -> str:
    return b.decode("utf-8", "backslashreplace")


def _parts(r: TokenScores) -> np.ndarray:
    pos = np.arange(r.n)
    part = np.where(pos < r.n_prompt, "prompt", "generated")
    return np.where(pos < r.context_start, "document start", part)


def token_table(r: TokenScores) -> pd.DataFrame:
    """Every number, one row per token (NaN where unscored); token text as it is (real spaces and newlines)."""
    top1 = r.top_ids[:, 0] if r.top_ids.shape[1] else np.full(r.n, -1)
    return pd.DataFrame(
        {
            "pos": np.arange(r.n),
            "part": _parts(r),
            "token": [_text(b) for b in r.token_bytes],
            "id": r.token_ids,
            "probability": r.probs.astype(np.float64),
            "logprob": r.logprobs.astype(np.float64),
            "rank": np.where(r.scored, r.ranks, 0),
            "entropy_nats": r.entropy.astype(np.float64),
            "surprisal_bits": r.surprisal_bits.astype(np.float64),
            "top1": [_text(r.pieces[int(i)]) if i >= 0 else "" for i in top1],
        }
    )


def token_csv(r: TokenScores) -> str:
    """The per-token table as CSV, full precision, the real token text (quoted where it holds a comma or newline)."""
    return token_table(r).to_csv(index=False)


VIEW_HEADERS = [
    "pos",
    "part",
    "token",
    "probability",
    "logprob",
    "rank",
    "entropy (nats)",
    "surprisal (bits)",
    "top guess",
]


def table_view(r: TokenScores) -> dict:
    """The per-token table for the page: numbers to sort by, each shown formatted for people (whitespace visible)."""
    t = token_table(r)
    data, shown = [], []
    for row in t.itertuples(index=False):
        ok = row.rank > 0
        values = [
            row.pos,
            row.part,
            visible(row.token),
            row.probability if ok else None,
            row.logprob if ok else None,
            row.rank if ok else None,
            row.entropy_nats if ok else None,
            row.surprisal_bits if ok else None,
            visible(row.top1),
        ]
        data.append([None if isinstance(v, float) and math.isnan(v) else v for v in values])
        shown.append(
            [
                str(row.pos),
                row.part,
                visible(row.token),
                pct(row.probability) if ok else DASH,
                logprob(row.logprob) if ok else DASH,
                whole(row.rank) if ok else DASH,
                fixed(row.entropy_nats) if ok else DASH,
                fixed(row.surprisal_bits, 2) if ok else DASH,
                visible(row.top1),
            ]
        )
    return {"headers": VIEW_HEADERS, "data": data, "metadata": {"display_value": shown, "styling": None}}


def surprising(r: TokenScores, n: int = SURPRISING) -> list[int]:
    """Positions of the `n` most surprising scored tokens (lowest logprob first)."""
    pos = np.flatnonzero(r.scored)
    return pos[np.argsort(r.logprobs[pos], kind="stable")[:n]].tolist()


def surprising_html(r: TokenScores, n: int = SURPRISING) -> str:
    """The most surprising tokens as small buttons that jump to them in the heatmap."""
    items = [
        f'<button type="button" data-jump="{p}" title="position {p:,}: {pct(float(r.probs[p]))}">'
        f'<code class="tok">{escape(visible(_text(r.token_bytes[p])))}</code> {fixed(float(r.surprisal_bits[p]), 1)} bits</button>'
        for p in surprising(r, n)
    ]
    if not items:
        return ""
    return f'<div class="sur"><span class="sur-h">Most surprising:</span> {"".join(items)}</div>'


def summary_markdown(r: TokenScores) -> str:
    """One line on the whole result: tokens, total and mean logprob, perplexity, model, how the numbers were made."""
    k = int(r.scored.sum())
    start = _start_note(r)
    if not k:
        return f"{r.n} tokens, none scored (a single token has no context).{start}"
    numbers = (
        "raw numbers" if r.output_k is None or r.mode == "raw" else "prompt: raw numbers · generated: processed numbers"
    )
    return (
        f"**{r.n:,} tokens** ({k:,} scored) · total logprob **{r.total_logprob:.4f}** · mean **{r.mean_logprob:.4f}** "
        f"nats/token · perplexity **{r.perplexity:.2f}** · model `{r.model}` · {numbers}" + _sampler_note(r) + start
    )


def _start_note(r: TokenScores) -> str:
    if not r.context_start:
        return ""
    shown = escape(visible("".join(_text(b) for b in r.token_bytes[: r.context_start])))
    return f"<br>Scored from the start of a document: <code>{shown}</code> was put before the text, so its first token has a score too."


def _sampler_note(r: TokenScores) -> str:
    """How a generation was sampled (seed included, so it can be replayed)."""
    if r.output_k is None:
        return ""
    s = r.sampler
    how = (
        "greedy"
        if is_greedy(s.get("temperature"))
        else f"temperature {s.get('temperature')}, top-p {s.get('top_p')}, top-k {s.get('top_k')}"
    )
    seed = f" · **seed {s.get('seed')}**" if s.get("seed") is not None and not is_greedy(s.get("temperature")) else ""
    return f" · {how}{seed} · finish: {r.finish_reason}"
