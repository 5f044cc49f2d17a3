"""Numbers written for people: percentages with significant digits, tiny probabilities in scientific
notation, logprobs with 4 decimals. Downloads keep full precision; these are for the page only."""

from __future__ import annotations

import math

DASH = "—"


def _finite(x) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def pct(p) -> str:
    """Probability `p` (0..1): '42.1%', '3.14%', '0.42%', '0.013%'; below 0.01%: '1.3e-6'; '—' when unknown."""
    if p is not None and not (isinstance(p, float) and math.isnan(p)) and 0 < float(p) < 1e-4:
        mant, exp = f"{float(p):.1e}".split("e")
        return f"{mant}e-{int(exp[1:])}"
    return plain_pct(p)  # from 0.01% on the two read alike


def plain_pct(p) -> str:
    """Probability `p` (0..1) in plain words, never e-notation (the card and the simple start): '42.1%', '0.013%',
    '0.00013%'; below 0.0001%: '< 0.0001%'; '—' when unknown."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return DASH
    p = float(p)
    if p <= 0:
        return "0%"
    if p < 1e-6:
        return "< 0.0001%"
    x = 100 * p
    if x >= 10:
        return f"{x:.1f}%"
    if x >= 1:
        return f"{x:.2f}%"
    return f"{x:.2g}%" if x >= 1e-3 else f"{x:.6f}".rstrip("0") + "%"


def logprob(x) -> str:
    """A natural-log probability with 4 decimals ('-0.0123'); '-inf' for a token the sampler cut."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return DASH
    return "-inf" if x == -math.inf else f"{float(x):.4f}"


def fixed(x, digits: int = 3) -> str:
    """A number with `digits` decimals, or '—'."""
    return f"{float(x) + 0.0:.{digits}f}".replace("-0." + "0" * digits, "0." + "0" * digits) if _finite(x) else DASH


def whole(n) -> str:
    """A whole number with thousands separators, or '—'."""
    return f"{int(n):,}" if n is not None and _finite(float(n)) else DASH
