"""ids -> TokenScores: the prompt runs through the KV cache a block of positions at a time (chunked prefill),
statistics per chunk of positions; between blocks `bounds.check()` may stop the work and callers see progress."""

from __future__ import annotations

from collections.abc import Iterator

import torch

from explorer.engine.interface import Forward, ModelEngine, forward_pass
from explorer.engine.kernels.listed import listed_rows, listed_width
from explorer.engine.passes import bounds
from explorer.engine.passes.blocks import PREFILL, logits, prefill_blocks
from explorer.errors import ExplorerError
from explorer.results.scores import Rows, TokenScores, assemble

__all__ = ["PREFILL", "chunked_rows", "hidden_blocks", "score_blocks", "score_forward", "score_ids", "score_progress"]


def chunked_rows(
    engine: Forward,
    hidden: torch.Tensor,
    targets: torch.Tensor,
    k: int,
    chunk: int | None = None,
    listed: torch.Tensor | None = None,
) -> Rows:
    """Rows of positions `hidden` (T, H) for `targets` (T,): k top entries (k = -1: full rows), or with
    `listed` (T, q) those ids' entries and true ranks instead.

    The output layer and the statistics run on `chunk` positions at a time.
    """
    t = hidden.shape[0]
    if t == 0:  # a one-token prompt: nothing to score
        return Rows.empty(k, engine.vocab_size)
    chunk = chunk or engine.chunk_size(t)
    parts = []
    for a in range(0, t, chunk):
        bounds.check()
        cut = slice(a, a + chunk)
        # on every core (the engine's compute_numbers): on the request's own thread, on one, 8 texts scored at once
        # ran slower than one at a time (bench/RESULTS.md, 2026-12-04, afternoon)
        parts.append(
            engine.compute_numbers(
                _block_rows, engine, hidden[cut], targets[cut], k, listed[cut] if listed is not None else None
            )
        )
    return Rows.concat(parts)


def _block_rows(
    engine: Forward, hidden: torch.Tensor, targets: torch.Tensor, k: int, listed: torch.Tensor | None
) -> Rows:
    """Rows of one block of positions `hidden` (c, H): the output layer, then the statistics (or `listed`'s)."""
    block = logits(engine, hidden)  # (c, V)
    if listed is not None:
        return listed_rows(engine, block, targets, listed)
    return engine.stats(block, targets, k, k == -1).to_rows()


def listed_ids(engine: Forward, listed: list[int] | list[list[int]], n_positions: int) -> torch.Tensor:
    """(n_positions, q) ids from one list for every scored position, or one list per position (each of length q)."""
    rows = listed if listed and isinstance(listed[0], list) else [listed] * n_positions
    if n_positions == 0 and listed:  # a one-token prompt: nothing to score
        return torch.zeros((0, listed_width(listed)), dtype=torch.long)
    if len(rows) != n_positions or len({len(r) for r in rows}) > 1 or not rows or not rows[0]:
        raise ExplorerError(
            f"`prompt_logprob_token_ids` must be one non-empty list of ids, or {n_positions} lists of equal "
            "length (one per scored prompt position).",
            param="prompt_logprob_token_ids",
            code="invalid_value",
        )
    flat = [i for r in rows for i in r]
    bad = [i for i in flat if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < engine.vocab_size]
    if bad:
        raise ExplorerError(
            f"Token id {bad[0]!r} is outside the vocabulary (0..{engine.vocab_size - 1}).",
            param="prompt_logprob_token_ids",
            code="invalid_token_id",
        )
    return torch.tensor(rows, dtype=torch.long, device=engine.device)


def score_blocks(
    engine: ModelEngine,
    ids: list[int],
    k: int = 5,
    chunk: int | None = None,
    listed: list[int] | list[list[int]] | None = None,
    prefill: int | None = None,
) -> Iterator[tuple[int, Rows]]:
    """Score `ids` a block of `prefill` positions at a time: yields (positions scored so far, Rows of the block).

    Block b runs ids[a:b] through the body with the KV cache of ids[:a] (chunked prefill), so the
    numbers equal one pass over all of `ids`; `bounds.check()` runs before every block. `k`: valid (the faces check it).
    """
    if not engine.capabilities.forward:  # a served model: one call, one block
        yield len(ids) - 1, engine.score(ids, k, listed).rows.sliced(slice(1, None))
        return
    yield from _blocks(forward_pass(engine), ids, k, chunk, listed, prefill)


@torch.inference_mode()
def _blocks(
    engine: Forward,
    ids: list[int],
    k: int,
    chunk: int | None,
    listed: list[int] | list[list[int]] | None,
    prefill: int | None,
) -> Iterator[tuple[int, Rows]]:
    """score_blocks over a forward pass here (`k` as score_blocks takes it)."""
    engine.check_ids(ids)
    q = listed_ids(engine, listed, len(ids) - 1) if listed is not None else None
    x = torch.tensor([ids], device=engine.device)  # (1, T)
    # positions 1..T-1 read the hidden states 0..T-2
    for a, b, hidden in hidden_blocks(engine, x, len(ids) - 1, prefill):
        yield b, chunked_rows(engine, hidden, x[0, a + 1 : b + 1], k, chunk, q[a:b] if q is not None else None)


def hidden_blocks(
    engine: Forward, x: torch.Tensor, t: int, prefill: int | None = None
) -> Iterator[tuple[int, int, torch.Tensor]]:
    """(a, b, hidden (b - a, H)) for the first `t` positions of x (1, T), `prefill` positions a pass through the KV
    cache (blocks.prefill_blocks: the same numbers as one pass); the last block keeps no cache."""
    for a, b, hidden, _ in prefill_blocks(engine, x[:, :t], keep=False, step=prefill):
        yield a, b, hidden


def score_ids(
    engine: ModelEngine,
    ids: list[int],
    k: int = 5,
    chunk: int | None = None,
    listed: list[int] | list[list[int]] | None = None,
    prefill: int | None = None,
) -> TokenScores:
    """Score `ids` exactly as given: position i gets log p(ids[i] | ids[:i]); position 0 is unscored.

    `listed`: report these ids (one list, or one per scored position) instead of the top-k. The engine scores
    (`engine.score`); `chunk` and `prefill` size a forward pass's blocks here (a served model has none).
    """
    if engine.capabilities.forward and (chunk is not None or prefill is not None):
        return score_forward(forward_pass(engine), ids, k, listed, chunk, prefill)
    return engine.score(ids, k, listed)


def score_forward(
    engine: Forward,
    ids: list[int],
    k: int,
    listed: list[int] | list[list[int]] | None = None,
    chunk: int | None = None,
    prefill: int | None = None,
) -> TokenScores:
    """score_ids over a forward pass here (ForwardEngine.score): every block's rows, assembled once."""
    parts = [rows for _, rows in _blocks(engine, ids, k, chunk, listed, prefill)]
    width = listed_width(listed) if listed else k
    rows = Rows.concat(parts) if parts else Rows.empty(k, engine.vocab_size)
    return assemble(
        engine.name, engine.vocab, ids, len(ids), rows, first=1, prompt_k=width if listed is not None else k
    )


def score_progress(
    engine: ModelEngine,
    ids: list[int],
    k: int = 5,
    *,
    context_start: int = 0,
    chunk: int | None = None,
    prefill: int | None = None,
    partial: bool = True,
) -> Iterator[tuple[int, TokenScores | None]]:
    """Score `ids` a block at a time: yields (positions scored, the TokenScores of every position so far) after
    each block, the last one whole (`partial` False: None before the last, nothing assembled twice);
    `context_start`: how many leading ids are a document start (see text_ids)."""
    if not engine.capabilities.forward:  # a served model: one call, one block
        r = engine.score(ids, k, None)
        r.context_start = context_start
        yield len(ids) - 1, r
        return

    def so_far(parts: list[Rows]) -> TokenScores:
        rows = Rows.concat(parts) if parts else Rows.empty(k, engine.vocab_size)  # a one-token text: none scored
        return assemble(
            engine.name, engine.vocab, ids, len(ids), rows, first=1, prompt_k=k, context_start=context_start
        )

    parts: list[Rows] = []
    total = len(ids) - 1
    for done, rows in score_blocks(engine, ids, k, chunk, prefill=prefill):
        parts.append(rows)
        if done < total:
            yield done, so_far(parts) if partial else None
    yield total, so_far(parts)


def text_ids(engine: ModelEngine, text: str, start: str | None = None) -> tuple[list[int], int]:
    """The ids that score `text` and how many of them lead as a document start: `start` ("none", "bos", "eos" or a
    special token) puts that token before the text so its first token is scored too (see
    TorchEngine.context_start_ids)."""
    prefix = engine.context_start_ids(start) if start is not None else []
    return prefix + engine.encode(text), len(prefix)


def start_token(engine: ModelEngine, start: str | None) -> str | None:
    """The token a text is scored after under `start` (as text_ids puts it, or the BOS the tokenizer adds itself);
    None: none (a served model without its tokenizer here says nothing)."""
    tokenizer = getattr(engine, "tokenizer", None)
    if tokenizer is None:
        return None
    ids = engine.context_start_ids(start) if start is not None else []
    if ids:
        return engine.detokenize(ids)
    return str(tokenizer.bos_token) if engine.adds_bos else None


def score_text(
    engine: ModelEngine,
    text: str,
    k: int = 5,
    chunk: int | None = None,
    start: str | None = None,
) -> TokenScores:
    """Score `text`, tokenized with the tokenizer's special tokens; `start` as in `text_ids`."""
    ids, lead = text_ids(engine, text, start)
    *_, (_, r) = score_progress(engine, ids, k, context_start=lead, chunk=chunk, partial=False)
    assert r is not None  # the last item is the whole result
    return r
