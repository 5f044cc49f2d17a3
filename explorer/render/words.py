"""Words -> word chips coloured by joint probability or surprisal, a per-word curve, one word's tokens. Pure functions."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.render.figures import styled
from explorer.render.text import escape, visible
from explorer.results.scores import TokenScores
from explorer.results.words import Words, first_word, shown_tokens, word_rows

METRICS = {
    "probability": "joint probability of the word's tokens (orange 0% → blue 100%)",
    "surprisal": "surprisal of the word, −log₂ of its joint probability (blue 0 → orange 24+ bits)",
}
SURPRISAL_MAX_BITS = 24.0
# the main heatmap's colour-blind safe scale: orange (unlikely) .. blue (likely), no red-versus-green pair
_C = [
    "214,96,77",
    "240,138,93",
    "246,177,127",
    "251,220,192",
    "220,233,245",
    "181,211,236",
    "139,187,227",
    "95,159,214",
]
CSS = (
    ".wx{line-height:2;font-family:ui-monospace,monospace;font-size:14px;overflow-wrap:anywhere}"
    ".wx .t{border-radius:3px;padding:1px 0;cursor:pointer;white-space:pre-wrap}"
    ".wx .t:focus,.wx .t.sel{outline:2px solid #2563eb;outline-offset:1px}.wx .u{outline:1px dashed #9ca3af}"
    ".wx .p{text-decoration:underline dotted}"
    + "".join(f".wx .c{i}{{background:rgba({c},.45)}}" for i, c in enumerate(_C))
)


def _classes(w: Words, metric: str) -> list[str]:
    ok = ~np.isnan(w.logprobs)
    if metric == "surprisal":
        x = 1 - np.clip(np.nan_to_num(w.surprisal_bits) / SURPRISAL_MAX_BITS, 0, 1)
    else:
        x = np.nan_to_num(w.probs)
    idx = np.minimum((x * len(_C)).astype(int), len(_C) - 1)
    return [f"c{i}" if s else "u" for i, s in zip(idx.tolist(), ok)]


def _tip(w: Words, j: int) -> str:
    if np.isnan(w.logprobs[j]):
        return "unscored (no context before it)"
    part = "" if w.complete[j] else f" · only {int(w.n_scored[j])} of its {int(w.n_tokens[j])} tokens scored"
    p = float(w.probs[j])
    return (f"p {p:.2%}" if p >= 1e-4 else f"p {p:.1e}") + (
        f" · logprob {w.logprobs[j]:.3f} · {w.surprisal_bits[j]:.2f} bits · "
        f"{int(w.n_tokens[j])} token{'s' if w.n_tokens[j] > 1 else ''}{part}"
    )


def words_html(w: Words, metric: str = "probability", selected: int | None = None) -> str:
    """The text as word chips (data-pos = word index); a dotted underline marks words only partly scored."""
    classes = _classes(w, metric if metric in METRICS else "probability")
    out = ['<div class="wx">']
    for j, t in enumerate(w.text):
        cls = (
            classes[j] + ("" if w.complete[j] or np.isnan(w.logprobs[j]) else " p") + (" sel" if j == selected else "")
        )
        out.append(
            f'<span class="t {cls}" data-pos="{j}" tabindex="0" title="{escape(_tip(w, j))}">'
            f"{escape(visible(t)).replace('↵', '↵<br>')}</span><wbr>"
        )
    return "".join(out) + "</div>"


def words_legend(metric: str) -> str:
    lo, hi = ("0%", "100%") if metric != "surprisal" else (f"{SURPRISAL_MAX_BITS:g}+ bits", "0 bits")
    chips = "".join(f'<span class="t c{i}">&nbsp;&nbsp;</span>' for i in range(len(_C)))
    return f'<div class="wx"><b>{escape(metric)}</b>: {escape(METRICS.get(metric, METRICS["probability"]))}<br>{lo} {chips} {hi}</div>'


def words_figure(w: Words) -> go.Figure:
    """Surprisal in bits of each scored word; hovering shows the word."""
    ok = np.flatnonzero(~np.isnan(w.logprobs))
    text = [html.escape(visible(w.text[j])) or "▯" for j in ok]
    fig = go.Figure(
        go.Scatter(
            x=ok,
            y=w.surprisal_bits[ok],
            mode="lines+markers",
            text=text,
            marker={"size": 5},
            customdata=w.n_tokens[ok],
            hovertemplate="word %{x}: %{text}<br>%{y:.2f} bits (%{customdata} tokens)<extra></extra>",
        )
    )
    return styled(
        fig,
        height=300,
        title="surprisal per word (bits)",
        margin={"l": 40, "r": 10, "t": 40, "b": 30},
        xaxis_title="word",
    )


def words_summary(w: Words, r: TokenScores) -> str:
    ok = ~np.isnan(w.logprobs)
    if not ok.any():
        return f"{w.n} words, none scored."
    mean = float(np.nanmean(w.surprisal_bits[ok]))
    worst = int(np.nanargmax(np.where(ok, w.surprisal_bits, np.nan)))
    return (
        f"**{w.n} words** from {r.n} tokens ({r.n / max(w.n, 1):.2f} tokens a word) · total logprob **{np.nansum(w.logprobs):.3f}** "
        f"(the tokens' sum) · mean surprisal **{mean:.2f}** bits a word · most surprising: "
        f"<code>{escape(visible(w.text[worst]))}</code> ({w.surprisal_bits[worst]:.2f} bits) · {escape(r.mode)} numbers"
    )


def word_tokens(r: TokenScores, w: Words, j: int) -> tuple[str, pd.DataFrame]:
    """(markdown, table) of word j: its tokens with their own numbers."""
    rows = [
        {
            "pos": p,
            "token": visible(r.token_text[p]),
            "bytes": r.token_bytes[p].hex(" "),
            "id": int(r.token_ids[p]),
            "probability %": round(100 * float(r.probs[p]), 3) if r.scored[p] else None,
            "logprob": round(float(r.logprobs[p]), 4) if r.scored[p] else None,
            "rank": int(r.ranks[p]) if r.scored[p] else None,
        }
        for p in w.tokens(j)
    ]
    md = f"**Word {j}** <code>{escape(visible(w.text[j]))}</code>: {_tip(w, j)}"
    return md, pd.DataFrame(rows, columns=["pos", "token", "bytes", "id", "probability %", "logprob", "rank"])


COLUMNS_NOTE = (
    "**corrected**: the word's surprisal including that it ends there (the next token starts a new word), "
    "as Pimentel & Meister 2024 show word probabilities must be computed for `Ġ`/`▁` tokenizers; **summed**: the "
    "usual sum of its tokens' surprisals."
)
CORRECTED_NOTE = (  # the tab's, above its result
    f"{COLUMNS_NOTE} Show words runs a **second full pass** of the model over the text for the corrected column "
    "(about as long as scoring it again; its progress shows here)."
)


def file_note(w: Words, r: TokenScores) -> str:
    """What the Words file says of its columns: what they mean, where the corrected one came from or why it is empty."""
    if w.corrected is None or not np.isfinite(w.corrected).any():
        return (
            f"{COLUMNS_NOTE} **No corrected surprisal** in this file: the engine that made it gave none (the corrected "
            "columns are empty); the summed ones are complete."
        )
    raw = " The corrected numbers are of the model's raw distribution." if r.mode != "raw" else ""
    return (
        f"{COLUMNS_NOTE} The corrected column came from a second full pass of the model over the text when this "
        f"view was made; a blank cell is a word with a special token or one with nothing before it to predict it from."
        f"{raw}"
    )


def words_table(r: TokenScores, w: Words, lead: int | None = None) -> pd.DataFrame:
    """One row per word: text, character span, tokens, summed and corrected surprisal (bits, nats; blank: unknown)."""

    def rnd(x: float | None) -> float | None:
        return None if x is None else round(x, 4)

    first = first_word(r, w, lead)  # a row's `word` counts the text's words: its index in `w` less this
    rows = [
        {
            "word": x["word"],
            "text": visible(x["text"]),
            "chars": f"{x['char_start']}–{x['char_end']}",
            "tokens": shown_tokens(r, w, first + x["word"]),
            "summed bits": rnd(x["surprisal_sum_bits"]),
            "corrected bits": rnd(x["surprisal_corrected_bits"]),
            "summed nats": rnd(x["surprisal_sum_nats"]),
            "corrected nats": rnd(x["surprisal_corrected_nats"]),
        }
        for x in word_rows(r, w, lead)
    ]
    cols = ["word", "text", "chars", "tokens", "summed bits", "corrected bits", "summed nats", "corrected nats"]
    return pd.DataFrame(rows, columns=cols)
