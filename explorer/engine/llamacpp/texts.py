"""Several texts in one llama_decode on the llama.cpp engine: the rows of explorer/engine/passes/many.py's groups
(texts of one length) each in a KV sequence of its own, every position's logits asked, as llama.cpp's own
`llama-perplexity` and embedding tools batch texts.

`Texts` is a third context on the engine's model (made on first use, freed with the engine): SEQUENCES sequences of
POSITIONS cells each, llama.cpp's split KV cache (kv_unified off, as the engine's own context and the batch's
Decoder: each sequence its own cells, so no row's numbers depend on the others'). `rows(ids)` clears the cache,
decodes as many rows as fit one call (SEQUENCES rows, N_BATCH positions), reads their logits, and goes on with the
next rows. A row of more than POSITIONS positions is read by the engine alone (`None`: the caller's fallback).
On the default GGUF (SmolLM2-135M Q4_1, 2 threads) every logit of 8 texts of 9 tokens decoded together equalled
the same text decoded alone, bit for bit (tests/test_llamacpp_texts.py checks the logprobs to 1e-4; bench/RESULTS.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from explorer.engine.llamacpp.sequences import fill
from explorer.errors import ExplorerError

__all__ = ["N_BATCH", "POSITIONS", "SEQUENCES", "Texts"]

SEQUENCES = 16  # texts a llama_decode at most
POSITIONS = 128  # cells a sequence: a longer text is read alone (SmolLM2-135M: 16 x 128 cells, about 47 MB of KV)
N_BATCH = 512  # positions a llama_decode (its logits buffer: N_BATCH x V float32)


class Texts:
    """The engine's context for several texts at once; see the module."""

    def __init__(self, engine: Any):
        lc = self._lc = engine._lc
        self.engine = engine
        cp = lc.llama_context_default_params()
        cp.n_ctx, cp.n_seq_max, cp.kv_unified = SEQUENCES * POSITIONS, SEQUENCES, False
        cp.n_batch = cp.n_ubatch = N_BATCH
        cp.n_threads = cp.n_threads_batch = engine.threads
        self.ctx = lc.llama_init_from_model(engine._model, cp)
        if not self.ctx:
            raise ExplorerError(
                f"llama.cpp could not make a context of {SEQUENCES} texts for {engine.name}.", code="model_load_failed"
            )
        self.batch = lc.llama_batch_init(N_BATCH, 0, 1)

    def rows(self, ids: torch.Tensor) -> torch.Tensor | None:
        """ids (B, L), each row a text of its own -> logits (B, L, V) float32; None where a row is longer than a
        sequence holds (POSITIONS)."""
        b, n = ids.shape
        if n > POSITIONS or n == 0:
            return None
        step = max(1, min(SEQUENCES, N_BATCH // n))  # rows a llama_decode
        out = np.empty((b, n, self.engine.vocab_size), np.float32)
        rows = ids.tolist()
        for a in range(0, b, step):
            part = rows[a : a + step]
            out[a : a + len(part)] = self._decode(part).reshape(len(part), n, -1)
        return torch.from_numpy(out)

    def _decode(self, rows: list[list[int]]) -> np.ndarray:
        """(rows x L, V) logits of `rows`, text j in sequence j, every position asked, after an empty cache."""
        lc = self._lc
        fill(self.batch, [(t, p, s, True) for s, row in enumerate(rows) for p, t in enumerate(row)])
        with self.engine.lock:
            lc.llama_memory_clear(lc.llama_get_memory(self.ctx), True)
            rc = self.engine.compute(lc.llama_decode, self.ctx, self.batch)
            if rc != 0:
                raise ExplorerError(f"llama.cpp could not decode {len(rows)} texts (code {rc}).", code="engine_error")
            got = lc.llama_get_logits(self.ctx)
            return np.ctypeslib.as_array(got, shape=(self.batch.n_tokens, self.engine.vocab_size)).copy()

    def close(self) -> None:
        if self.batch is not None:
            self._lc.llama_batch_free(self.batch)
            self.batch = None
        if self.ctx:
            self._lc.llama_free(self.ctx)
            self.ctx = None
