"""The one data blob a page gets per result: every token's numbers and top-5, for the hover card, the
span sums and the keyboard, so the heatmap's markup stays a few bytes a token.

It travels inside the heatmap's HTML as the text of one hidden element (never markup per token): JSON
whose `<`, `>`, `&`, `$` and backquote are written as \\u escapes, so no token text can open a tag or a
template expression; the page reads it with JSON.parse.
"""

from __future__ import annotations

import json
import math

import numpy as np

from explorer.render.text import visible
from explorer.results.scores import TokenScores

CARD_TOP = 5  # alternatives on the hover card


def _nums(a: np.ndarray, digits: int) -> list:
    """JSON-safe rounded floats: None where NaN (unscored), -1e9 for -inf."""
    return [
        None if math.isnan(x) else (-1e9 if x == -math.inf else round(x, digits)) for x in a.astype(np.float64).tolist()
    ]


def page_data(r: TokenScores, rid: str = "") -> dict:
    """Per token: logprob `lp` (6 decimals, enough for span sums to 1e-4), rank `rk` (0 unscored), entropy `en`
    (nats), top-5 ids `ti` and logprobs `tl` (filtered entries left out); `pc`: display text of those ids;
    `part`: which positions' numbers are raw (the prompt always is) and which are `mode`."""
    k = min(CARD_TOP, r.top_ids.shape[1])
    ti, tl = [], []
    for ids, lps in zip(r.top_ids[:, :k].tolist(), r.top_logprobs[:, :k].tolist()):
        keep = [(i, lp) for i, lp in zip(ids, lps) if i >= 0 and lp != -math.inf]
        ti.append([i for i, _ in keep])
        tl.append([round(lp, 4) for _, lp in keep])
    shown = {i for row in ti for i in row}
    return {
        "rid": rid,
        "n": r.n,
        "n_prompt": r.n_prompt,
        "generated": r.output_k is not None,
        "mode": r.mode,
        "lp": _nums(r.logprobs, 6),
        "rk": r.ranks.tolist(),
        "en": _nums(r.entropy, 4),
        "ti": ti,
        "tl": tl,
        "pc": {str(i): visible(r.pieces[i].decode("utf-8", "backslashreplace")) for i in sorted(shown)},
        "ids": r.token_ids.tolist(),
    }


_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "$": "\\u0024", "`": "\\u0060"})


def data_html(data: dict) -> str:
    """`data` as the text of one hidden <div class="lx-data"> (JSON with markup characters escaped)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False).translate(_SAFE)
    return f'<div class="lx-data" hidden>{text}</div>'
