"""TokenScores -> pandas tables: one row per token, and one position's top-k detail."""

from __future__ import annotations

import numpy as np
import pandas as pd

from explorer.render.text import escape, visible
from explorer.result import TokenScores


def token_table(r: TokenScores) -> pd.DataFrame:
    """Every number, one row per token (NaN where unscored)."""
    top1 = [visible(r.pieces[int(i)].decode("utf-8", "replace")) if i >= 0 else "" for i in
            (r.top_ids[:, 0] if r.top_ids.shape[1] else np.full(r.n, -1))]
    return pd.DataFrame({
        "pos": np.arange(r.n),
        "part": np.where(np.arange(r.n) < r.n_prompt, "prompt", "generated"),
        "token": [visible(r.token_bytes[i].decode("utf-8", "backslashreplace")) for i in range(r.n)],
        "id": r.token_ids,
        "probability": r.probs.astype(np.float64),
        "logprob": r.logprobs.astype(np.float64),
        "rank": np.where(r.scored, r.ranks, 0),
        "entropy_nats": r.entropy.astype(np.float64),
        "surprisal_bits": r.surprisal_bits.astype(np.float64),
        "top1": top1,
    })


def token_csv(r: TokenScores) -> str:
    return token_table(r).to_csv(index=False)


def detail_table(r: TokenScores, pos: int, k: int) -> pd.DataFrame:
    """Top-k alternatives at `pos` (probability %, logprob, rank), the actual token marked and
    appended when outside the top-k, and an `(others)` row with the remaining mass."""
    k = max(0, min(k, r.top_ids.shape[1]))
    actual = int(r.token_ids[pos])
    rows, mass = [], 0.0
    for rank, (i, lp) in enumerate(zip(r.top_ids[pos, :k].tolist(), r.top_logprobs[pos, :k].tolist()), start=1):
        if i < 0:
            continue
        p = float(np.exp(lp))
        mass += p
        rows.append({"rank": rank, "token": visible(r.pieces[i].decode("utf-8", "backslashreplace")), "id": i,
                     "probability %": round(100 * p, 3), "logprob": round(lp, 4), "actual": "◀ actual" if i == actual else ""})
    if r.scored[pos] and actual not in r.top_ids[pos, :k].tolist():
        p = float(np.exp(r.logprobs[pos]))
        mass += p
        rows.append({"rank": int(r.ranks[pos]), "token": visible(r.token_bytes[pos].decode("utf-8", "backslashreplace")), "id": actual,
                     "probability %": round(100 * p, 3), "logprob": round(float(r.logprobs[pos]), 4), "actual": "◀ actual (outside top-k)"})
    if r.scored[pos]:
        rest = max(0.0, 1.0 - mass)
        rows.append({"rank": None, "token": "(others)", "id": None, "probability %": round(100 * rest, 3),
                     "logprob": round(float(np.log(rest)), 4) if rest > 0 else None, "actual": ""})
    return pd.DataFrame(rows, columns=["rank", "token", "probability %", "logprob", "actual", "id"])


def detail_markdown(r: TokenScores, pos: int) -> str:
    """One paragraph on the actual token at `pos`."""
    b = r.token_bytes[pos]
    shown = escape(visible(b.decode("utf-8", "backslashreplace")))  # markup in a token stays text
    head = f"**Position {pos}** ({'prompt' if pos < r.n_prompt else 'generated'}): token <code>{shown}</code>, id {int(r.token_ids[pos])}, bytes `{list(b)}`"
    if not r.scored[pos]:
        return head + "\n\nNot scored: " + ("the first token has no context to predict it from." if pos == 0 else "the prompt was not scored (tick “score the prompt”).")
    return (head + f"\n\nprobability **{r.probs[pos]:.3%}** · logprob **{r.logprobs[pos]:.4f}** nats · "
            f"rank **{r.ranks[pos]}** · entropy **{r.entropy[pos]:.3f}** nats · surprisal {r.surprisal_bits[pos]:.2f} bits"
            f" · numbers are **{r.mode}**")


def summary_markdown(r: TokenScores) -> str:
    k = int(r.scored.sum())
    if not k:
        return f"{r.n} tokens, none scored (a single token has no context)."
    return (f"**{r.n} tokens** ({k} scored) · total logprob **{r.total_logprob:.3f}** · mean **{r.mean_logprob:.3f}** nats/token"
            f" · perplexity **{r.perplexity:.3f}** · model `{r.model}` · {r.mode} numbers" + _sampler_note(r))


def _sampler_note(r: TokenScores) -> str:
    """How a generation was sampled (seed included, so it can be replayed)."""
    if r.output_k is None:
        return ""
    s = r.sampler
    how = "greedy" if s.get("temperature") == 0 else f"temperature {s.get('temperature')}, top-p {s.get('top_p')}, top-k {s.get('top_k')}, seed {s.get('seed')}"
    return f" · {how} · finish: {r.finish_reason}"
