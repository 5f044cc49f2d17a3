"""Continuous batching on the llama.cpp engine: the rows of explorer/engine/batching/slots.py's DecodeBatch as KV sequences of
a second llama.cpp context, every live row's next token in one llama_decode per step (as llama.cpp's own server
does with --parallel).

1. `Decoder` (one per engine, made when a server serves it batched: scheduler.py's `attach`): a context of `size`
   sequences of `positions` cells each, llama.cpp's split KV cache (kv_unified off: each sequence its own cells,
   so no row's numbers depend on the others'; its unified cache changed them, see engine.py's SEQUENCES). The
   cells are allocated at once, so a full batch cannot run the server out of memory later.
2. `SequenceCache` (one per DecodeBatch): `join` copies the KV of a prompt read by the engine's own context
   (generation.py's `prefill`, on the request's thread, which also copies its cells out: the engine's
   `for_batch`) into a free sequence (llama_state_seq_get_data / set_data, `restream`: no token is decoded
   again); `advance` decodes one token per row, each at its own position in its own sequence, and keeps every
   row's logits (the llama.cpp engine's body gives logits: the head is the identity); `keep` frees the
   sequences of rows that left.
A generation that could outgrow a sequence (prompt + its token budget > `positions`) is refused here
(`TOO_LONG`): the scheduler lets it decode on its own, in turn with the engine's other lone generations.
"""

from __future__ import annotations

import ctypes
import struct
from typing import Any, cast

import numpy as np
import torch

from explorer.engine.passes.generation import Prefilled
from explorer.errors import ExplorerError

__all__ = ["TOO_LONG", "Decoder", "SequenceCache", "fill", "restream"]

TOO_LONG = "batch_too_long"  # the ExplorerError code of a generation longer than a batch sequence


def fill(batch: Any, rows: list[tuple[int, int, int, bool]]) -> None:
    """A llama_batch holding `rows`: (token, position, sequence id, logits wanted) each, in that order."""
    batch.n_tokens = len(rows)
    for j, (token, pos, seq, want) in enumerate(rows):
        batch.token[j], batch.pos[j], batch.n_seq_id[j], batch.logits[j] = token, pos, 1, want
        batch.seq_id[j][0] = seq


class Decoder:
    """The batch's own llama.cpp context: `size` KV sequences of `positions` cells each; a step of several rows
    runs on `threads` threads (all cores by default: a step of 8 rows is worth them, measured on 2 cores: 211-230
    tokens/s with 2 threads, 125-128 with 1), a step of one row on the engine's threads (the same by default; an
    engine made with fewer, as the tests' tiny one, keeps them for one row); see the module."""

    def __init__(self, engine: Any, size: int, positions: int, threads: int):
        lc = self._lc = engine._lc
        self.size, self.positions = size, positions
        cp = lc.llama_context_default_params()
        cp.n_ctx, cp.n_seq_max, cp.kv_unified = size * positions, size, False
        self.n_batch = cp.n_batch = cp.n_ubatch = max(size, 32)  # one token per row a step
        self.threads, self.one_row = threads, engine.threads
        cp.n_threads = cp.n_threads_batch = threads
        self._now = threads  # the threads set now
        self.ctx = lc.llama_init_from_model(engine._model, cp)
        if not self.ctx:
            raise ExplorerError(
                f"llama.cpp could not set aside {size} sequences of {positions:,} positions for {engine.name}: "
                "lower EXPLORER_WORKERS.",
                code="model_load_failed",
            )
        self.batch = lc.llama_batch_init(cp.n_batch, 0, 1)
        self.free = list(range(size))  # sequences no row holds

    def use(self, rows: int) -> None:
        """The threads for a step of `rows` rows."""
        want = self.threads if rows > 1 else self.one_row
        if want != self._now:
            self._lc.llama_set_n_threads(self.ctx, want, want)
            self._now = want

    def clear(self) -> None:
        """Every sequence free and empty (a new DecodeBatch starts from nothing)."""
        self._lc.llama_memory_clear(self._lc.llama_get_memory(self.ctx), True)
        self.free = list(range(self.size))

    def release(self, seq: int) -> None:
        self._lc.llama_memory_seq_rm(self._lc.llama_get_memory(self.ctx), seq, -1, -1)
        self.free.append(seq)

    def close(self) -> None:
        if self.batch is not None:
            self._lc.llama_batch_free(self.batch)
            self.batch = None
        if self.ctx:
            self._lc.llama_free(self.ctx)
            self.ctx = None


def restream(state: bytes, seq: int, streams: int, to_seq: int, to_streams: int) -> bytes | None:
    """Sequence `seq`'s KV state as a context of `streams` KV streams wrote it (split cache: sequence s is stream
    s), rewritten as sequence `to_seq` of a context of `to_streams` streams would write it; None where it is not
    laid out as expected (then the caller decodes the tokens again).

    llama.cpp (llama-cpp-python 0.3.36's) writes a u32 tag, the u32 sequence id, u32 n_stream, then per stream a
    u32 cell count and, where it is not 0, that stream's cells; reading one sequence's state it checks n_stream
    against its own and puts the cells of any stream in the destination sequence's."""
    word, zero = struct.Struct("<I").pack, struct.pack("<I", 0)
    if len(state) < 16 or state[4:12] != word(seq) + word(streams) or not 0 <= seq < streams:
        return None
    body = state[12:]
    before, after = zero * seq, zero * (streams - 1 - seq)
    if not (body.startswith(before) and body.endswith(after)):
        return None
    block = body[len(before) : len(body) - len(after)]
    if len(block) < 4 or block[:4] == zero:
        return None
    return state[:4] + word(to_seq) + word(to_streams) + zero * to_seq + block + zero * (to_streams - 1 - to_seq)


class SequenceCache:
    """The rows of one DecodeBatch on the llama.cpp engine (interface.BatchRows); see the module."""

    def __init__(self, engine: Any, decoder: Decoder):
        self.engine, self.dec = engine, decoder
        decoder.clear()
        self.seqs: list[int] = []  # row -> its KV sequence in the decoder's context
        self.last: Any = None  # (B, V) each row's last logits

    def join(self, start: Prefilled, shared: bool, positions: int) -> None:
        """`start`'s KV (the engine's own sequence holding its prompt) copied into a free sequence, as the last row
        (`shared` changes nothing: the engine's sequence is copied, never taken)."""
        dec = self.dec
        if positions > dec.positions or not dec.free:
            raise ExplorerError(
                f"A generation of up to {positions:,} positions does not fit a batch sequence ({dec.positions:,}).",
                code=TOO_LONG,
            )
        seq = min(dec.free)  # the lowest free: llama.cpp decodes a step fastest with no gaps between the ids
        dec.free.remove(seq)
        try:
            self._fill(seq, cast(Any, start.past))  # a LlamaPast
        except BaseException:
            dec.release(seq)
            raise
        self.seqs.append(seq)
        self.last = start.last if self.last is None else torch.cat([self.last, start.last])

    def _fill(self, seq: int, past: Any) -> None:
        """Sequence `seq` of the batch's context holding `past.tokens`: the cells the request's thread took
        (`for_batch`), else those of an engine's sequence that holds them still, copied where llama.cpp's state
        reads as this module expects; else the tokens decoded there (the same numbers to float rounding)."""
        if past.cells is not None and self._put(seq, *past.cells):
            return
        with self.engine.lock:
            held = self.engine.cells_of(past.tokens)
            if held is not None and self._put(seq, *held):
                return
            lc = self.dec._lc
            lc.llama_memory_seq_rm(lc.llama_get_memory(self.dec.ctx), seq, -1, -1)
            self._decode_prompt(seq, past.tokens)

    def _put(self, seq: int, state: bytes, src: int) -> bool:
        """Cells `state` (sequence `src` of the engine's context) into sequence `seq`; False where they do not go."""
        lc, dec = self.dec._lc, self.dec
        moved = restream(state, src, self.engine.streams, seq, dec.size)
        if moved is None:
            return False
        into = (ctypes.c_uint8 * len(moved)).from_buffer_copy(moved)
        return lc.llama_state_seq_set_data(dec.ctx, into, len(moved), seq) == len(moved)

    def _decode_prompt(self, seq: int, tokens: tuple[int, ...]) -> None:
        dec, lc, b = self.dec, self.dec._lc, self.dec.batch
        for a in range(0, len(tokens), dec.n_batch):
            part = tokens[a : a + dec.n_batch]
            fill(b, [(t, a + j, seq, j == len(part) - 1) for j, t in enumerate(part)])
            dec.use(len(part))
            rc = self.engine.compute(lc.llama_decode, dec.ctx, b)
            if rc != 0:
                raise ExplorerError(
                    f"llama.cpp could not copy a prompt into the batch (code {rc}).", code="engine_error"
                )

    def keep(self, rows: list[int]) -> None:
        """Only rows `rows` (in that order): the sequences of the others freed."""
        kept = set(rows)
        for i, seq in enumerate(self.seqs):
            if i not in kept:
                self.dec.release(seq)
        self.seqs = [self.seqs[i] for i in rows]
        self.last = self.last[torch.tensor(rows, dtype=torch.long)] if rows else None

    def advance(self, toks: torch.Tensor, positions: list[int]) -> None:
        """One llama_decode: token toks[b] at positions[b] of row b's sequence, every row's logits kept. The rows go
        to llama.cpp in the order of their sequence ids: in any other order its split cache decodes them in
        several passes (measured: 8 rows in reverse order took 62-68 ms a step, in order 35-39, at 2 threads)."""
        dec, lc, b = self.dec, self.dec._lc, self.dec.batch
        order = sorted(range(len(positions)), key=self.seqs.__getitem__)
        tids = toks.tolist()
        fill(b, [(tids[row], positions[row], self.seqs[row], True) for row in order])
        with self.engine.lock:
            dec.use(len(order))
            rc = self.engine.compute(lc.llama_decode, dec.ctx, b)
            if rc != 0:
                raise ExplorerError(f"llama.cpp could not decode the batch's step (code {rc}).", code="engine_error")
            rows = np.ctypeslib.as_array(lc.llama_get_logits(dec.ctx), shape=(len(order), self.engine.vocab_size))
            last = np.empty_like(rows)
            last[order] = rows
        self.last = torch.from_numpy(last)
