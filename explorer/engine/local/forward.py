"""ForwardEngine: what the torch engine (explorer/engine/local/torch_engine.py) and the llama.cpp one (explorer/engine/llamacpp/engine.py)
share: a forward pass here, split into body (ids -> hidden states or logits) and head, our own statistics kernel,
the tokenizer's text side (explorer/engine/text/side.py), and scoring and generation by the code in scoring.py and generation.py.

Scoring and generation run the body once and apply the output layer per chunk of positions, so the full
[positions, vocabulary] logits never exist at once.
"""

from __future__ import annotations

import copy
import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import torch

from explorer.config import EngineOptions
from explorer.engine.capabilities import Capabilities
from explorer.engine.interface import HEAD_MIN_ROWS, HEAD_ROWS, STAT_ROWS, block_size
from explorer.engine.kernels.metrics import (
    Stats,
    block_rows,
    compiled_block_rows,
    compiled_one_row,
    compiled_row_stats,
    compiled_sums,
    row_stats,
    sums,
)
from explorer.engine.local import team
from explorer.engine.passes.events import Done, Step
from explorer.engine.passes.generation import decode_text
from explorer.engine.passes.scoring import score_forward
from explorer.engine.text.side import TokenizerText
from explorer.results.scores import TokenScores
from explorer.rules.sampler import SamplerSettings

log = logging.getLogger(__name__)


def one_torch_thread() -> None:
    team.torch_threads(1)


class ForwardEngine(TokenizerText, ABC):
    """A model whose forward pass runs in this process; subclasses give `body`, `last_rows` and `capabilities`;
    the text side (text <-> ids, where a text starts) is TokenizerText's (explorer/engine/text/side.py)."""

    compiles_block = True  # many texts' statistics by a compiled block kernel (where `batches_texts`; on a CPU)

    def __init__(
        self,
        *,
        name: str,
        tokenizer: Any,
        vocab: Sequence[bytes],
        vocab_size: int,
        context: int,
        eos_ids: set[int],
        device: torch.device,
        dtype: torch.dtype,
        split_head: bool,
        weights_mb: float,
        options: EngineOptions,
        quant: str | None = None,
        compile: bool | None = None,
    ):
        self.options = options  # how it loads and runs (explorer/engine/local/options.py resolved them)
        self.name = name
        self.tokenizer: Any = tokenizer
        self.vocab: Sequence[bytes] = vocab  # id -> raw bytes
        self.vocab_size = vocab_size
        self.context = context
        self.eos_ids = eos_ids
        self.special_ids = {i for i in tokenizer.all_special_ids if i < self.vocab_size} | eos_ids
        self.device: Any = device  # where the logits rows and the statistics live
        self.dtype: Any = dtype
        self.split_head = split_head  # body gives hidden states, `head` the logits; else body gives logits
        self.weights_mb = weights_mb
        self.quant = quant  # the weights' type where the dtype does not say it ("GGUF Q4_1")
        self.lock = threading.Lock()  # one forward at a time on the shared model
        self._pool: ThreadPoolExecutor | None = None  # see background()
        self.scheduler: Any = None  # a served torch model's continuous batching (engine/batching/scheduler.py `attach`)
        self.one_at_a_time: Any = None  # where generations must not interleave (llama.cpp's)
        self._sums_kernel, self._row_kernel, self._block_kernel = self._stats_kernels(compile)

    # ---- what this engine is -------------------------------------------------------------
    @property
    @abstractmethod
    def capabilities(self) -> Capabilities: ...

    def placement(self) -> str:
        """Where and how the model runs, for people (the page's status line, the server's log): "cpu (float32) with torch"."""
        how = str(self.quant or self.dtype).replace("torch.", "")
        return f"{self.device.type} ({how}) with {self.capabilities.engine}"

    @property
    def compiled(self) -> bool:
        return self._sums_kernel is not sums

    # ---- the two halves of a forward pass --------------------------------------------------
    @abstractmethod
    def body(self, ids: torch.Tensor, past=None, cache: bool = False, last: bool = False) -> tuple[torch.Tensor, Any]:
        """ids (1, T) after the text `past` holds -> (hidden (T, H) or logits (T, V), KV cache when `cache`); with
        `last`, the last position's row only (1, ·): a prompt read for its cache and its next token."""

    @abstractmethod
    def last_rows(self, ids: torch.Tensor, past=None) -> torch.Tensor:
        """ids (B, L), every row continuing the text `past` holds (never changed) -> each row's last position."""

    def continue_rows(self, ids: torch.Tensor, past=None) -> torch.Tensor:
        """ids (B, L), every row continuing the text `past` holds (never changed) -> every position of every row:
        hidden (B, L, H) or logits (B, L, V). Here one row at a time, each on a copy of `past`; TorchEngine batches."""
        return torch.stack([self.body(row[None], copy.deepcopy(past))[0] for row in ids])

    def for_batch(self) -> AbstractContextManager:
        """Where this thread reads a prompt for a batch to take up at a later step (generation.py, when the engine
        has a scheduler). Here nothing changes: the torch engine's KV cache of a prompt is the request's own."""
        return nullcontext()

    def head(self, hidden: torch.Tensor) -> torch.Tensor:
        """hidden (c, H) -> logits (c, V) in the model's dtype (the identity where `body` gives logits)."""
        return hidden

    def chunk_size(self, positions: int) -> int:
        """Positions per output-layer call: at most HEAD_ROWS (and 256 MB of logits), split evenly.

        One block's logits and their statistics' temporaries are the only [positions, V] tensors alive, beside
        the KV cache of the prefill blocks: scoring 2,048 positions needs about a fifth of one float32 [2048, V]
        matrix more than the model's body alone (bench/run.py's score_mem_ratio).
        """
        cap = max(HEAD_MIN_ROWS, min(HEAD_ROWS, (1 << 26) // self.vocab_size))
        blocks = max(1, -(-positions // cap))
        return -(-positions // blocks)

    # ---- statistics ------------------------------------------------------------------------
    def _stats_kernels(self, compile: bool | None):
        """(the fused-sums kernel, the one-row kernel or None, the block kernel or None): torch.compile'd (and warmed
        up here) when asked and it works, else (eager `sums`, None, None). The one-row and block kernels only on a
        CPU, where they were measured (metrics.py; bench/RESULTS.md, #54); the block kernel only for an engine that
        scores many texts a pass (`batches_texts`) and compiles it (`compiles_block`: the torch engine; llama.cpp's
        load stays free of a second compile, its many texts' statistics eager).

        `compile=None`: the engine's options say (EXPLORER_COMPILE: 1 on, 0 off, auto (default) on).
        """
        if compile is None:
            compile = self.options.compile
        fn = compiled_sums() if compile else None
        if fn is None:
            return sums, None, None
        try:  # compile now (seconds), not on a user's first request: scoring slices and decode steps
            for rows, dtype in ((STAT_ROWS, self.dtype), (1, torch.float32)):
                fn(
                    torch.zeros((rows, self.vocab_size), device=self.device, dtype=dtype),
                    torch.zeros((rows, 1), device=self.device),
                )
        except Exception as err:  # noqa: BLE001 - any compiler failure means: stay eager
            log.warning("torch.compile failed (%s); using eager statistics", str(err).splitlines()[0][:200])
            return sums, None, None
        if self.device.type != "cpu":
            return fn, None, None
        v, b = self.vocab_size, block_size(self.vocab_size)
        row = self._warm(compiled_one_row(), "one row", (1, v), torch.float32, ((1,), torch.long), ((1, 1), None))
        block = None
        if getattr(self, "batches_texts", False) and self.compiles_block:
            block = self._warm(compiled_block_rows(), "a block", (b, v), self.dtype, ((b,), torch.long))
        return fn, row, block

    def _warm(self, kernel, what: str, shape: tuple, dtype: torch.dtype, *more: tuple):
        """`kernel` called once on zeros of `shape` (dtype) and `more` ((shape, dtype or None: float32), ...), so it
        compiles now; None where it is None or fails (eager there)."""
        if kernel is None:
            return None
        try:
            zeros = [torch.zeros(s, device=self.device, dtype=d or torch.float32) for s, d in more]
            kernel(torch.zeros(shape, device=self.device, dtype=dtype), *zeros)
        except Exception as err:  # noqa: BLE001 - a kernel failing leaves the sums kernel
            log.warning("torch.compile failed on %s (%s); eager there", what, str(err).splitlines()[0][:200])
            return None
        return kernel

    def row_sums(self, logits: torch.Tensor, m: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Forward.row_sums: `sums` over slices of STAT_ROWS rows (cache-sized; the compiled kernel sees exactly that
        shape)."""
        if logits.shape[0] == 1 or (self._sums_kernel is sums and logits.shape[0] <= STAT_ROWS):
            return self._sums_kernel(logits, m)  # a decode step: its own compiled shape
        parts: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []
        for a in range(0, logits.shape[0], STAT_ROWS):
            x, mm = logits[a : a + STAT_ROWS], m[a : a + STAT_ROWS]
            c = x.shape[0]
            if c < STAT_ROWS and self._sums_kernel is not sums:
                x = torch.cat([x, x.new_zeros((STAT_ROWS - c, x.shape[1]))])
                mm = torch.cat([mm, mm.new_zeros((STAT_ROWS - c, 1))])
            s, q, r = self._sums_kernel(x, mm)  # each (c', 1)
            parts.append((s[:c], q[:c], r[:c]))
        s, q, r = (torch.cat(col) for col in zip(*parts))
        return s, q, r

    def block_stats(
        self, logits: torch.Tensor, targets: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Forward.block_stats: `block_rows` over slices of block_size(V) rows (the compiled kernel sees exactly that
        shape: the last slice padded with zero rows)."""
        b = block_size(logits.shape[1])
        parts = []
        for a in range(0, logits.shape[0], b):
            x, t = logits[a : a + b], targets[a : a + b]
            c = x.shape[0]
            if self._block_kernel is None:
                parts.append(block_rows(x, t))
                continue
            if c < b:
                x, t = torch.cat([x, x.new_zeros((b - c, x.shape[1]))]), torch.cat([t, t.new_zeros(b - c)])
            parts.append(tuple(v[:c] for v in self._block_kernel(x, t)))
        lp, rank, entropy, varentropy = (torch.cat(col) for col in zip(*parts))
        return lp, rank, entropy, varentropy

    def stats(self, logits: torch.Tensor, targets: torch.Tensor, k: int, full: bool = False) -> Stats:
        """row_stats of a block of positions, with the engine's kernels (a decode step's one row: its own)."""
        if self._row_kernel is not None and logits.shape[0] == 1 and not full and logits.dtype == torch.float32:
            return compiled_row_stats(self._row_kernel, logits, targets, k)
        return row_stats(logits, targets, k, full=full, sums_fn=self.row_sums)

    def compute(self, fn, *args, **kwargs):
        """fn(*args, **kwargs) (a forward pass, the output layer, a llama.cpp decode) on the process's team thread where
        this model computes on a CPU (explorer/engine/local/team.py); on an accelerator, here."""
        if self.device.type == "cpu":
            return team.run(fn, *args, **kwargs)
        return fn(*args, **kwargs)

    def compute_numbers(self, fn, *args):
        """fn(*args), the numbers of a block of rows, on `compute`'s thread (every core)."""
        return self.compute(fn, *args)

    def background(self, fn, *args) -> Future:
        """Run fn(*args) beside the caller on a CPU (a decode step's numbers overlap the next
        forward pass there); elsewhere inline, as the accelerator queues the work anyway. The thread beside runs
        torch on one thread: two OpenMP teams of all the cores each, on a CPU both use, slowed a batched decode
        step 1.8x (bench/RESULTS.md, 2026-12-02)."""
        if self.device.type == "cpu":
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, "logprob-stats", initializer=one_torch_thread)
            return self._pool.submit(fn, *args)
        done: Future = Future()
        done.set_result(fn(*args))
        return done

    # ---- scoring and generation (the Protocol's, by our own code) ----------------------------
    def score(self, ids: list[int], k: int, listed: Any = None) -> TokenScores:
        """scoring.score_ids over this forward pass."""
        return score_forward(self, ids, k, listed=listed)

    def stream(
        self, ids: list[int], s: SamplerSettings, sample: int = 0, want_prompt: bool = True
    ) -> Iterator[Step | Done]:
        """generation.stream over this forward pass."""
        return decode_text(self, ids, s, sample, want_prompt)
