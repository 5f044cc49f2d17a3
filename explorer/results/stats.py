"""Text statistics built on token probabilities: GLTR, Min-K%, Min-K%++, Fast-DetectGPT, Binoculars.

Pure numpy functions of TokenScores (and of a Comparison of two models for Binoculars). Each gives a
`TextStat`: its value, a one-line meaning, its reference and the caveat that it is a score, not a verdict.
Natural log throughout; only scored positions count (position 0 of a prompt has no score).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass

import numpy as np

from explorer.errors import ExplorerError
from explorer.results.compare import Comparison
from explorer.results.scores import TokenScores

MIN_K_PERCENT = 20.0  # the k of Min-K% and Min-K%++ (both papers' usual setting)
GLTR_BUCKETS = (10, 100, 1000)  # rank <= 10, <= 100, <= 1000, beyond
CAVEAT = (
    "A score, not a verdict: it measures how predictable the text is to this model, and perplexity-based "
    "detectors flag non-native English writing as machine-made far more often (Liang et al. 2023, "
    "arXiv:2304.02819)."
)


@dataclass(frozen=True)
class TextStat:
    name: str
    value: float | dict[str, float] | None  # None: not computable here (see `note`)
    meaning: str  # one line
    reference: str
    caveat: str = CAVEAT
    note: str = ""  # why the value is missing, or what it was computed on

    def to_dict(self) -> dict:
        d = asdict(self)
        if isinstance(self.value, float) and not math.isfinite(self.value):
            d["value"] = None  # strict JSON: no NaN
        return d


def check_k_percent(k: float) -> float:
    """`k` of Min-K% as given, or an ExplorerError saying what to change."""
    if not (isinstance(k, (int, float)) and 0 < k <= 100):
        raise ExplorerError(f"k of Min-K% is a percentage in (0, 100], not {k!r}: use e.g. 20")
    return float(k)


def _lowest_mean(values: np.ndarray, k: float) -> float:
    """Mean of the lowest k% of `values` (at least one of them); NaN when there are none."""
    if len(values) == 0:
        return float("nan")
    n = max(1, int(len(values) * k / 100))  # the papers' int(len * ratio), never empty
    return float(np.sort(values.astype(np.float64))[:n].mean())


def gltr(r: TokenScores) -> TextStat:
    """GLTR (Gehrmann et al. 2019): fractions of scored tokens whose 1-based rank is <= 10, 11..100, 101..1000, > 1000.

    Positions whose rank is not known (0: a served model beyond its top-k) are left out.
    """
    ranks = r.ranks[r.scored & (r.ranks > 0)]  # (m,)
    n = len(ranks)
    edges = [0, *GLTR_BUCKETS, np.iinfo(np.int64).max]
    names = ["1-10", "11-100", "101-1000", ">1000"]  # rank ranges, not running totals
    value = {
        name: float(((ranks > lo) & (ranks <= hi)).sum()) / max(n, 1) for name, lo, hi in zip(names, edges, edges[1:])
    }
    return TextStat(
        "GLTR rank buckets",
        value if n else None,
        "Share of tokens the model ranked 1-10 / 11-100 / 101-1000 / beyond 1000 (each range on its own, not running totals): machine text sits mostly in 1-10.",
        "Gehrmann, Strobelt, Rush 2019, GLTR: Statistical Detection and Visualization of Generated Text (arXiv:1906.04043)",
        note=f"{n} tokens with a known rank" if n else "no token has a known rank",
    )


def min_k(r: TokenScores, k: float = MIN_K_PERCENT) -> TextStat:
    """Min-K% Prob (Shi et al. 2023): (1/|S|) sum_{t in S} log p(x_t), S = the k% of tokens with the lowest log p."""
    lp = r.logprobs[r.scored]
    v = _lowest_mean(lp, k)
    return TextStat(
        f"Min-{k:g}% Prob",
        v if len(lp) else None,
        f"Mean logprob (nats) of the {k:g}% least likely tokens: higher (nearer 0) means no token surprised the model.",
        "Shi et al. 2023, Detecting Pretraining Data from Large Language Models (arXiv:2310.16789)",
        note=f"k = {k:g}%, over {max(1, int(len(lp) * k / 100)) if len(lp) else 0} of {len(lp)} tokens",
    )


def min_k_plus(r: TokenScores, k: float = MIN_K_PERCENT) -> TextStat:
    """Min-K%++ (Zhang et al. 2024): z_t = (log p(x_t) - mu_t) / sigma_t, mu_t = E_{v~p_t}[log p_t(v)] = -H_t,
    sigma_t^2 = Var_{v~p_t}[log p_t(v)] (the varentropy); the score is the mean of the lowest k% of z_t.

    Positions with no varentropy (unknown, or 0: a one-point distribution, where z is undefined) are left out.
    """
    var = r.rows.varentropy_or_nan()
    ok = r.scored & np.isfinite(var) & (var > 0) & np.isfinite(r.entropy)
    z = (r.logprobs[ok].astype(np.float64) + r.entropy[ok]) / np.sqrt(var[ok].astype(np.float64))  # (m,)
    missing = int(r.scored.sum()) - len(z)
    return TextStat(
        f"Min-{k:g}%++",
        _lowest_mean(z, k) if len(z) else None,
        f"Mean of the lowest {k:g}% token z-scores (logprob against the model's own expectation, in its standard "
        "deviations): near 0 or above, no token was much less likely than the model expected; well below 0 (-2 or "
        "less), some tokens surprised it.",
        "Zhang et al. 2024, Min-K%++: Improved Baseline for Detecting Pre-Training Data from LLMs (arXiv:2404.02936)",
        note=f"k = {k:g}%, over {max(1, int(len(z) * k / 100)) if len(z) else 0} of {len(z)} tokens"
        + (f"; {missing} tokens without a varentropy left out" if missing else ""),
    )


def fast_detectgpt(r: TokenScores) -> TextStat:
    """Fast-DetectGPT analytic criterion (Bao et al. 2024), sampling model = scoring model:
    (sum_t log p(x_t) - sum_t mu_t) / sqrt(sum_t sigma_t^2), mu_t = -H_t, sigma_t^2 the varentropy at t.
    """
    var = r.rows.varentropy_or_nan()
    ok = r.scored & np.isfinite(var) & np.isfinite(r.entropy)
    unknown = int(r.scored.sum()) - int(ok.sum())
    total_var = float(var[ok].astype(np.float64).sum())
    value = None
    if not unknown and ok.any() and total_var > 0:
        value = float(
            (r.logprobs[ok].astype(np.float64).sum() + r.entropy[ok].astype(np.float64).sum()) / math.sqrt(total_var)
        )
    return TextStat(
        "Fast-DetectGPT (analytic)",
        value,
        "How far the text's log-likelihood is above what the model expects of its own samples, in standard "
        "deviations: large positive values are typical of machine text.",
        "Bao et al. 2024, Fast-DetectGPT: Efficient Zero-Shot Detection of Machine-Generated Text (arXiv:2310.05130)",
        note=f"{unknown} tokens have no varentropy (a served model sends it only within its full-vocabulary cap)"
        if unknown
        else "",
    )


def binoculars(c: Comparison) -> TextStat:
    """Binoculars (Hans et al. 2024), observer M1 = model A, performer M2 = model B:
    B = log PPL_M1(s) / log X-PPL_{M1,M2}(s), log PPL_M1 = -(1/L) sum_t log p1_t(x_t) and
    log X-PPL = -(1/L) sum_t sum_v p1_t(v) log p2_t(v) = (1/L) sum_t (H(p1_t) + KL(p1_t || p2_t)).

    (The paper's equation takes the observer's perplexity; its released code takes the performer's.)
    """
    if c.kind != "models":
        return TextStat(
            "Binoculars",
            None,
            "Needs two models that share one tokenizer (position by position).",
            _BINOCULARS_REF,
            note="the two models tokenize differently" if c.kind == "spans" else "one model after two prompts",
        )
    ent_a = c.a.entropy[c.pos_a].astype(np.float64)
    ok = c.scored & np.isfinite(c.kl_ab) & np.isfinite(ent_a)
    log_ppl = -float(c.logprob_a[ok].astype(np.float64).mean()) if ok.any() else float("nan")
    log_xppl = float((ent_a[ok] + c.kl_ab[ok]).mean()) if ok.any() else float("nan")
    return TextStat(
        "Binoculars",
        log_ppl / log_xppl if ok.any() and log_xppl > 0 else None,
        "The observer's log-perplexity over the cross-perplexity of observer and performer: low values are "
        "typical of machine text (the paper's threshold, about 0.90, is for its Falcon-7B pair only).",
        _BINOCULARS_REF,
        note=f"observer {c.a.model}, performer {c.b.model}; {int(ok.sum())} tokens"
        + (
            "; one model as both observer and performer: the cross-perplexity is then its entropy, and the "
            "paper's pairs are two different models (a base model and its instruction-tuned sibling)"
            if c.a.model == c.b.model
            else ""
        ),
    )


_BINOCULARS_REF = (
    "Hans et al. 2024, Spotting LLMs With Binoculars: Zero-Shot Detection of Machine-Generated Text (arXiv:2401.12070)"
)


def text_stats(r: TokenScores, k: float = MIN_K_PERCENT) -> list[TextStat]:
    """Every single-model statistic of `r`, in the order the panel shows them."""
    k = check_k_percent(k)
    return [gltr(r), min_k(r, k), min_k_plus(r, k), fast_detectgpt(r)]


ROW_VALUES = (
    "1-10",
    "11-100",
    "101-1000",
    ">1000",
    "min_k",
    "min_k_plus",
    "fast_detectgpt",
)  # text_stats_rows' columns


def text_stats_rows(
    logprobs: np.ndarray, ranks: np.ndarray, entropy: np.ndarray, varentropy: np.ndarray, k: float = MIN_K_PERCENT
) -> tuple[np.ndarray, np.ndarray]:
    """text_stats' values for B texts of m scored positions each, all at once: each of logprobs (float32), ranks,
    entropy, varentropy (float32) is (B, m), row b a text's scored positions. Returns (values (B, 7) float64 in
    ROW_VALUES' order: GLTR's four shares, Min-K%, Min-K%++, Fast-DetectGPT; done (B,) bool). The same operations
    as gltr, min_k, min_k_plus and fast_detectgpt, row by row along the last axis, so a value equals text_stats' to
    the bit; a row with a position those functions would leave out (a rank unknown, an entropy or varentropy not
    finite, a varentropy of 0) is not done (NaN): ask text_stats for it."""
    k = check_k_percent(k)
    b, m = logprobs.shape
    out = np.full((b, len(ROW_VALUES)), np.nan)
    done = np.isfinite(varentropy).all(1) & (varentropy > 0).all(1) & np.isfinite(entropy).all(1) & (ranks > 0).all(1)
    done &= ~np.isnan(logprobs).any(1) & (m > 0)
    rows = np.flatnonzero(done)
    if not len(rows):
        return out, done
    lp, rank, ent, var = logprobs[rows].astype(np.float64), ranks[rows], entropy[rows], varentropy[rows]
    edges = [0, *GLTR_BUCKETS, np.iinfo(np.int64).max]
    for j, (lo, hi) in enumerate(itertools.pairwise(edges)):
        out[rows, j] = ((rank > lo) & (rank <= hi)).sum(1) / m
    n = max(1, int(m * k / 100))  # _lowest_mean's count
    out[rows, 4] = np.sort(lp, axis=1)[:, :n].mean(axis=1)
    z = (lp + ent) / np.sqrt(var.astype(np.float64))  # (r, m)
    out[rows, 5] = np.sort(z, axis=1)[:, :n].mean(axis=1)
    out[rows, 6] = (lp.sum(1) + ent.astype(np.float64).sum(1)) / np.sqrt(var.astype(np.float64).sum(1))
    return out, done


def stats_block(r: TokenScores, k: float = MIN_K_PERCENT) -> dict:
    """The native JSON's `stats` block: {"k_percent": k, "statistics": [TextStat.to_dict(), ...]}."""
    return {"k_percent": k, "statistics": [s.to_dict() for s in text_stats(r, k)]}
