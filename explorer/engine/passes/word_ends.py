"""ids -> (TokenScores, WordEnds): scoring and, in the same forward pass, the log mass of the tokens that would start
a new word after each position (explorer/results/words.py says which: one id set per END_SETS class).

Steps, per block of positions through the KV cache (as scoring.py's chunked prefill):
1. the body runs every position, the last one too (the distribution after the text ends the last word);
2. per chunk of positions, the output layer once: the usual rows for positions with a next token, and for every
   position each end set's log mass (`end_mass`): e = exp(x - m) of the row, one gather of e putting the vocabulary
   class by class (an end set is a union of token classes, results/words.py), a sum per class, each set's classes
   added up (float64), log of that less log sum e. A set whose every token underflows (e = 0: below the row's
   best by more than 87 nats) is summed again over its log-probabilities, so its mass stays finite.
Scoring alone (scoring.py) computes none of this: its memory and speed are unchanged. Many texts a pass
(explorer/engine/passes/many.py) take each row's logprob and its end masses from one e (`logprob_ends`).
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import torch

from explorer.engine.interface import Forward, ModelEngine, block_size, forward_pass
from explorer.engine.passes import blocks, bounds
from explorer.engine.passes.scoring import hidden_blocks, text_ids
from explorer.errors import ExplorerError
from explorer.results.scores import Rows, TokenScores, assemble
from explorer.results.words import WordEnds, class_sets, token_classes

__all__ = ["EndSets", "end_ids", "end_mass", "end_sets", "logprob_ends", "score_text_words", "score_words"]
Progress = Callable[[int, int], None]  # (positions done, positions in all)
_SETS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # engine -> its end sets' ids, built once


def _forward(engine: ModelEngine) -> Forward:
    """`engine` when its forward pass runs here, else the ExplorerError saying why corrected surprisal is off."""
    if engine.capabilities.forward:
        return forward_pass(engine)
    raise ExplorerError(
        f"Corrected word surprisal needs the full next-token distribution at every position and after the text's "
        f"last token, which {engine.name} (a served model) does not give (its server sends full distributions of "
        "prompt positions only, within its cap): use a model loaded here (drop --backend).",
        code="not_available_remote",
    )


@dataclass(frozen=True)
class EndSets:
    """An engine's END_SETS, as id sets and as unions of its token classes (results/words.py), on its device."""

    ids: list[torch.Tensor]  # per END_SETS row: (m_c,) its ids
    order: torch.Tensor  # (V,) every id, class by class
    spans: list[tuple[int, int]]  # per class: its ids' range in `order`
    members: list[list[int]]  # per END_SETS row: the classes it unites


def end_sets(engine: Forward) -> EndSets:
    """The EndSets of `engine`'s vocabulary (built once per engine)."""
    sets = _SETS.get(engine)
    if sets is None:
        names, cls = token_classes(engine.vocab[: engine.vocab_size], engine.special_ids)
        inside = class_sets(names)  # (K, C)
        order = np.argsort(cls, kind="stable")
        bounds_ = np.searchsorted(cls[order], np.arange(len(names) + 1))
        dev = engine.device
        sets = EndSets(
            [torch.from_numpy(np.flatnonzero(row[cls])).to(dev) for row in inside],
            torch.from_numpy(order).to(dev),
            [(int(a), int(b)) for a, b in itertools.pairwise(bounds_)],
            [np.flatnonzero(row).tolist() for row in inside],
        )
        _SETS[engine] = sets
    return sets


def end_ids(engine: Forward) -> list[torch.Tensor]:
    """One (m_c,) id tensor per END_SETS class, on the engine's device (cached per engine)."""
    return end_sets(engine).ids


def _masses(x: torch.Tensor, m: torch.Tensor, e: torch.Tensor, ls: torch.Tensor, sets: EndSets) -> torch.Tensor:
    """(c, K) float64 log mass of each set, for rows x (c, V) float32 with maxima m (c, 1), e = exp(x - m) and
    ls = log sum e (c, 1)."""
    grouped = e.index_select(1, sets.order)  # (c, V) class by class
    cls = [grouped[:, a:b].sum(-1).double() for a, b in sets.spans]  # C x (c,): each class's sum of e
    zero = torch.zeros(x.shape[0], dtype=torch.float64, device=x.device)
    mass = torch.stack([sum((cls[j] for j in members), zero) for members in sets.members], 1)  # (c, K)
    out = mass.log() - ls.double()  # an empty set: -inf
    lost = (mass == 0) & torch.tensor([len(ids) > 0 for ids in sets.ids], device=x.device)  # every token underflowed
    for r, k in lost.nonzero().tolist():
        out[r, k] = torch.logsumexp((x[r, sets.ids[k]] - m[r]) - ls[r], 0).double()
    return out


def _normalised(logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(x, m, e, ls) of rows `logits` (c, V): x float32, m (c, 1) the maxima, e = exp(x - m), ls = log sum e (c, 1):
    row_stats' formulas (metrics.sums' s), so a logprob from them is the one scoring gives."""
    x = logits.float()
    m = x.amax(-1, keepdim=True)
    e = (x - m).exp()
    return x, m, e, e.sum(-1, keepdim=True).log()


def end_mass(logits: torch.Tensor, sets: EndSets) -> torch.Tensor:
    """logits (c, V) -> (c, K) float64: log of the probability summed over each set; block_size(V) rows at a
    time (warm in cache)."""
    b = block_size(logits.shape[1])
    parts = []
    for a in range(0, logits.shape[0], b):
        x, m, e, ls = _normalised(logits[a : a + b])
        parts.append(_masses(x, m, e, ls, sets))
    return torch.cat(parts) if parts else torch.zeros((0, len(sets.ids)), dtype=torch.float64)


def logprob_ends(logits: torch.Tensor, targets: torch.Tensor, sets: EndSets) -> tuple[torch.Tensor, torch.Tensor]:
    """((c,) float32 logprob of `targets` (c,), (c, K) float64 end masses) of rows `logits` (c, V), both from one
    e = exp(x - m) a block of block_size(V) rows: the logprob as scoring's ((x - m) - log sum e), the masses as
    end_mass's."""
    b = block_size(logits.shape[1])
    lps, parts = [], []
    for a in range(0, logits.shape[0], b):
        x, m, e, ls = _normalised(logits[a : a + b])
        lps.append(((x.gather(-1, targets[a : a + b, None]) - m) - ls)[:, 0])
        parts.append(_masses(x, m, e, ls, sets))
    return torch.cat(lps), torch.cat(parts)


def _chunks(engine: Forward, hidden: torch.Tensor, targets: torch.Tensor, k: int, chunk: int | None):
    """hidden (c, H) of positions the first len(targets) of which have a next token -> (Rows, masses (c, K))."""
    sets = end_sets(engine)
    rows, mass = [], []
    step = chunk or engine.chunk_size(hidden.shape[0])
    for a in range(0, hidden.shape[0], step):
        bounds.check()
        # on every core, as scoring's blocks (scoring.chunked_rows)
        row, end = engine.compute_numbers(_chunk_rows, engine, hidden[a : a + step], targets[a : a + step], k, sets)
        if row is not None:
            rows.append(row)
        mass.append(end)
    return rows, mass


def _chunk_rows(
    engine: Forward, hidden: torch.Tensor, targets: torch.Tensor, k: int, sets
) -> tuple[Rows | None, torch.Tensor]:
    """One block of `_chunks`: the rows of its positions with a target (None where none has), its end masses."""
    logits = blocks.logits(engine, hidden)  # (c, V)
    m = targets.shape[0]  # rows with a target: the first m
    row = engine.stats(logits[:m], targets, k, k == -1).to_rows() if m else None
    return row, end_mass(logits, sets)


@torch.inference_mode()
def _blocks(
    engine: Forward, ids: list[int], k: int, chunk: int | None, prefill: int | None, progress: Progress | None
) -> Iterator:
    """(Rows, masses) per chunk over every position of `ids` (the last one too); progress(done, total) per block."""
    engine.check_ids(ids)
    x = torch.tensor([ids], device=engine.device)  # (1, T)
    for a, b, hidden in hidden_blocks(engine, x, len(ids), prefill):  # every position, the last one too
        yield _chunks(engine, hidden, x[0, a + 1 : b + 1], k, chunk)
        if progress is not None:
            progress(b, len(ids))


def score_words(
    engine: ModelEngine,
    ids: list[int],
    k: int = 5,
    *,
    context_start: int = 0,
    chunk: int | None = None,
    prefill: int | None = None,
    progress: Progress | None = None,
) -> tuple[TokenScores, WordEnds]:
    """`ids` scored as score_ids does, and each position's end masses (WordEnds, rows 0..len(ids)-1);
    `progress(done, total)` after each block of positions."""
    fwd = _forward(engine)
    parts = list(_blocks(fwd, ids, k, chunk, prefill, progress))  # the body takes the engine's lock per block
    rows = [r for p, _ in parts for r in p]
    mass = [m for _, p in parts for m in p]
    r = assemble(
        fwd.name,
        fwd.vocab,
        ids,
        len(ids),
        Rows.concat(rows) if rows else Rows.empty(k, fwd.vocab_size),
        first=1,
        prompt_k=k,
        context_start=context_start,
    )
    logmass = torch.cat(mass).cpu().numpy() if mass else np.zeros((0, len(end_ids(fwd))))
    special = np.array([i in fwd.special_ids for i in ids], bool)
    return r, WordEnds(logmass, special)


def score_text_words(
    engine: ModelEngine, text: str, k: int = 5, start: str | None = None
) -> tuple[TokenScores, WordEnds]:
    """score_words of `text`; `start` as in scoring.text_ids (a document-start token before it)."""
    _forward(engine)  # refuse before tokenizing
    ids, lead = text_ids(engine, text, start)
    return score_words(engine, ids, k, context_start=lead)
