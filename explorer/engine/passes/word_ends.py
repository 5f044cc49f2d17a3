"""ids -> (TokenScores, WordEnds): scoring and, in the same forward pass, the log mass of the tokens that would start
a new word after each position (explorer/results/words.py says which: one id set per END_SETS class).

Steps, per block of positions through the KV cache (as scoring.py's chunked prefill):
1. the body runs every position, the last one too (the distribution after the text ends the last word);
2. per chunk of positions, the output layer once: the usual rows for positions with a next token, and
   log_softmax + a logsumexp over each end set (one gather of the set's ids per set) for every position.
Scoring alone (scoring.py) computes none of this: its memory and speed are unchanged.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator

import numpy as np
import torch

from explorer.engine.interface import Forward, ModelEngine, forward_pass
from explorer.engine.passes import blocks, bounds
from explorer.engine.passes.scoring import hidden_blocks, text_ids
from explorer.errors import ExplorerError
from explorer.results.scores import Rows, TokenScores, assemble
from explorer.results.words import WordEnds, end_masks

__all__ = ["end_ids", "score_text_words", "score_words"]
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


def end_ids(engine: Forward) -> list[torch.Tensor]:
    """One (m_c,) id tensor per END_SETS class, on the engine's device (cached per engine)."""
    sets = _SETS.get(engine)
    if sets is None:
        masks = end_masks(engine.vocab[: engine.vocab_size], engine.special_ids)  # (K, V) bool
        sets = [torch.from_numpy(np.flatnonzero(m)).to(engine.device) for m in masks]
        _SETS[engine] = sets
    return sets


def end_mass(logits: torch.Tensor, sets: list[torch.Tensor]) -> torch.Tensor:
    """logits (c, V) -> (c, K) float64: log of the probability summed over each set."""
    lp = logits.float().log_softmax(-1)  # (c, V)
    cols = [torch.logsumexp(lp.index_select(1, ids), -1) for ids in sets]  # K x (c,); an empty set gives -inf
    return torch.stack(cols, 1).double()


def _chunks(engine: Forward, hidden: torch.Tensor, targets: torch.Tensor, k: int, chunk: int | None):
    """hidden (c, H) of positions the first len(targets) of which have a next token -> (Rows, masses (c, K))."""
    sets = end_ids(engine)
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
