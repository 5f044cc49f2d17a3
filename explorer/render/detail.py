"""The selected token's detail as HTML: its numbers, its alternatives with bars (the actual token's row
marked in words and colour), and for a generated token the raw and the sampler's distribution side by side.

Every token text is escaped; filtered (-inf) entries are never listed as alternatives.
"""

from __future__ import annotations

import math

import numpy as np

from explorer.render.numbers import fixed, logprob, plain_pct, whole
from explorer.render.text import escape, visible
from explorer.results.scores import TokenScores
from explorer.results.step_view import StepView

NOISE = 1e-6  # a remaining mass below this is float32 rounding, not probability


def _tok(b: bytes) -> str:
    return f'<code class="tok">{escape(visible(b.decode("utf-8", "backslashreplace"))) or "&nbsp;"}</code>'


def _mode(r: TokenScores, pos: int) -> str:
    """'raw' for every prompt position (the prompt is always scored from the model's own distribution)."""
    return r.mode if pos >= r.n_prompt and r.output_k is not None else "raw"


def _head(r: TokenScores, pos: int, role: str | None) -> str:
    part = "generated" if pos >= r.n_prompt else ("document start" if pos < r.context_start else "prompt")
    turn = f" · {escape(role)} turn" if role else ""
    b = r.token_bytes[pos]
    return (
        f'<h3 class="td-title">{_tok(b)} <span>position {pos:,}</span></h3>'
        f'<p class="td-meta">{part}{turn} · id {int(r.token_ids[pos])} · bytes {escape(b.hex(" ")) or "none"}</p>'
    )


def _unscored(r: TokenScores, pos: int) -> str:
    if pos < r.context_start:
        why = "this is the document-start token put before the text so that the text's first token gets a score."
    elif pos == 0:
        why = "the first token has nothing before it to predict it from (score from the start of a document to change that)."
    else:
        why = "the prompt was not scored (tick “Also score the prompt”)."
    return f'<p class="td-note">Not scored: {why}</p>'


def _rank(r: TokenScores, pos: int) -> str:
    """'12 of 49,152'; a rank or vocabulary the result does not know (opened from an OpenAI body) is left out."""
    rank = whole(r.ranks[pos]) if r.ranks[pos] > 0 else "—"
    return f"{rank} of {whole(r.vocab_size)}" if r.vocab_size else rank


def _numbers(r: TokenScores, pos: int) -> str:
    items = [
        ("probability", plain_pct(float(r.probs[pos]))),
        ("logprob", logprob(float(r.logprobs[pos]))),
        ("rank", _rank(r, pos)),
        ("entropy", f"{fixed(float(r.entropy[pos]))} nats"),
        ("surprisal", f"{fixed(float(r.surprisal_bits[pos]), 2)} bits"),
    ]
    cells = "".join(f"<div><dt>{a}</dt><dd>{b}</dd></div>" for a, b in items)
    mode = _mode(r, pos)
    what = (
        "the model's own distribution"
        if mode == "raw"
        else "what the sampler drew from (after temperature, top-k, top-p)"
    )
    return f'<dl class="td-nums">{cells}</dl><p class="td-note"><b>{mode}</b> numbers: {what}.</p>'


def _row(rank, b: bytes, lp: float, actual: bool, tag: str = "", cls: str = "") -> str:
    p = math.exp(lp) if lp != -math.inf else 0.0
    mark = f' <span class="tag">{tag}</span>' if tag else ""
    cls = " ".join(c for c in (cls, "act" if actual else "") if c)
    return (
        f"<tr{f' class={chr(34)}{cls}{chr(34)}' if cls else ''}><td>{whole(rank) if rank else ''}</td>"
        f"<td>{_tok(b)}{mark}</td>"
        f'<td class="pb"><span class="bar" style="width:{100 * p:.1f}%"></span><span class="pv">{plain_pct(p)}</span></td>'
        f"<td>{logprob(lp)}</td></tr>"
    )


def alternatives_table(
    r: TokenScores, pos: int, ids, lps, caption: str, cut=None, actual=None, pieces=None, compact: bool = False
) -> str:
    """A table of alternatives (ids, lps) at `pos`: the actual token's row marked (appended with its rank when
    outside the list; `actual` = its (rank, logprob), default r's), then the rest of the vocabulary as '(others)'.
    Entries at -inf (filtered by the sampler) are left out; `cut` marks entries the sampler removed; `pieces`:
    the listed ids' bytes (default r.pieces); `compact`: no logprob column (two tables side by side)."""
    pieces = r.pieces if pieces is None else pieces
    tid, rows, mass = int(r.token_ids[pos]), [], 0.0
    rank_lp = actual if actual is not None else (int(r.ranks[pos]), float(r.logprobs[pos]))
    listed = [(i, lp) for i, lp in zip(ids, lps) if i >= 0 and lp != -math.inf]
    for rank, (i, lp) in enumerate(listed, start=1):
        is_cut = cut is not None and bool(cut[rank - 1])
        mass += math.exp(lp)
        tag = " · ".join(
            t for t, on in (("◀ actual", i == tid), ("✂ cut" if compact else "cut by the sampler", is_cut)) if on
        )
        rows.append(_row(rank, pieces[i], lp, i == tid, tag, "cut" if is_cut else ""))
    if r.scored[pos] and tid not in [i for i, _ in listed]:
        mass += math.exp(rank_lp[1])
        rows.append(
            _row(
                rank_lp[0],
                r.token_bytes[pos],
                rank_lp[1],
                True,
                "◀ actual" + ("" if compact else " (outside this list)"),
            )
        )
    rows.append(_others(1.0 - mass, exhausted=len(listed) < len(ids)))
    head = '<tr><th scope="col">rank</th><th scope="col">token</th><th scope="col">probability</th><th scope="col">logprob</th></tr>'
    return (
        f'<table class="alts{" compact" if compact else ""}"><caption>{caption}</caption><thead>{head}</thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _others(rest: float, exhausted: bool) -> str:
    """The '(others)' row: the probability left to the rest of the vocabulary."""
    if exhausted or rest < NOISE:
        note = "no other token was kept" if exhausted else "≈ 0"
        return f'<tr class="others"><td></td><td>(others)</td><td class="pb"><span class="pv">{note}</span></td><td>—</td></tr>'
    return (
        f'<tr class="others"><td></td><td>(others)</td><td class="pb"><span class="bar" style="width:{100 * rest:.1f}%">'
        f'</span><span class="pv">{plain_pct(rest)}</span></td><td>{logprob(math.log(rest))}</td></tr>'
    )


def _sampler_note(v: StepView) -> str:
    if v.greedy:
        how = "Greedy decoding: the sampler takes the most likely token"
        return f'<p class="td-note">{how}{" after the penalties" if v.changed else ""}; nothing is drawn.</p>'
    if not v.changed:
        return '<p class="td-note">The sampler changed nothing at this step (temperature 1, no top-k, top-p or penalties).</p>'
    if v.kept == v.vocab_size:
        return (
            '<p class="td-note">The sampler cut no token here; it only reshaped the probabilities '
            "(temperature or penalties), and drew from all of them.</p>"
        )
    return (
        f'<p class="td-note">The sampler kept <b>{whole(v.kept)}</b> of {whole(v.vocab_size)} tokens, holding '
        f"<b>{plain_pct(v.kept_raw_mass)}</b> of the raw probability, and drew from those.</p>"
    )


def side_by_side(r: TokenScores, v: StepView, k: int) -> str:
    """The same step as the model saw it (raw) and as the sampler drew from it (processed), which tokens were cut."""
    raw = alternatives_table(
        r,
        v.pos,
        v.raw.top_ids[0, :k].tolist(),
        v.raw.top_logprobs[0, :k].tolist(),
        "Raw: the model",
        cut=v.cut[:k],
        actual=(int(v.raw.ranks[0]), float(v.raw.logprobs[0])),
        pieces=v.pieces,
        compact=True,
    )
    proc = alternatives_table(
        r,
        v.pos,
        v.processed.top_ids[0, :k].tolist(),
        v.processed.top_logprobs[0, :k].tolist(),
        "After the sampler",
        actual=(int(v.processed.ranks[0]), float(v.processed.logprobs[0])),
        pieces=v.pieces,
        compact=True,
    )
    a, b = float(v.raw.logprobs[0]), float(v.processed.logprobs[0])
    line = f'<p class="td-note">This token: raw {plain_pct(math.exp(a))} ({logprob(a)}), after the sampler {plain_pct(math.exp(b))} ({logprob(b)}).</p>'
    return f'{_sampler_note(v)}{line}<div class="sbs">{raw}{proc}</div>'


def detail_html(r: TokenScores, pos: int, k: int, step: StepView | None = None, role: str | None = None) -> str:
    """The detail of the token at `pos`: head, numbers, alternatives (or raw vs processed for a generated token)."""
    body = [_head(r, pos, role)]
    if not r.scored[pos]:
        body.append(_unscored(r, pos))
    else:
        body.append(_numbers(r, pos))
        if step is not None and step.pos == pos and step.changed:
            body.append(side_by_side(r, step, k))
        else:
            if step is not None and step.pos == pos:  # the sampler changed nothing here: one table says it all
                body.append(_sampler_note(step))
            ids, lps = r.rows.top(pos, k) if k else (np.zeros(0, np.int64), np.zeros(0))
            shown = len([x for x in lps.tolist() if x != -math.inf])
            mode = _mode(r, pos)
            title = f"Top {shown} alternatives ({mode}) and the rest" if shown else f"No alternatives recorded ({mode})"
            body.append(alternatives_table(r, pos, ids.tolist(), lps.tolist(), title))
    return f'<div class="td" data-pos="{pos}">{"".join(body)}</div>'
