"""A llama.cpp engine: a GGUF model run by llama.cpp (through llama-cpp-python's low-level API), behind ForwardEngine's
interface, so scoring, generation, branches and every view compute their numbers with OUR code.

How it plugs in:
1. `body(ids, past)` decodes `ids` after the tokens `past` names, n_batch positions per llama_decode, every
   position's logits asked (per-token logits flags), and returns those logits rows (T, V) as float32: the head is
   the identity (`split_head` False), so logprob, rank over the full vocabulary, entropy, top-k, raw and processed,
   and the sampler are ForwardEngine.stats / sampling.py, exactly as for the transformers engine.
2. `past` (LlamaPast) records the tokens a caller's KV cache holds. A call continues the KV sequence holding
   exactly `past` (SEQUENCES of them, so two requests decode in turn without re-decoding); else the least recently
   used one is cut at the longest prefix it shares with `past` and the rest decoded again. So branches from older
   paths keep their numbers (to float rounding: a re-decode batches positions differently).
3. Token bytes come from the GGUF vocabulary (byte-level BPE `Ġ` and SentencePiece `▁` / `<0xNN>` alike); the
   tokenizer and chat template are transformers' reading of the same GGUF (explorer/engine/llamacpp/gguf.py).
4. Several texts at once (many.py's groups, `continue_rows` after nothing) decode in a context of their own, a KV
   sequence each (explorer/engine/llamacpp/texts.py).
Memory: one llama_decode returns at most n_batch rows; callers (scoring.score_blocks) ask PREFILL positions a call.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager

import numpy as np
import torch

from explorer.config import EngineOptions
from explorer.engine.capabilities import Capabilities
from explorer.engine.llamacpp.gguf import tokenizer as gguf_tokenizer
from explorer.engine.llamacpp.sequences import Decoder, SequenceCache, fill
from explorer.engine.llamacpp.texts import Texts
from explorer.engine.local import team
from explorer.engine.local.forward import ForwardEngine, one_torch_thread
from explorer.engine.local.options import in_force
from explorer.engine.text.tokens import piece_bytes
from explorer.errors import ExplorerError
from explorer.rules.sampler import max_logprobs

N_BATCH = 512  # positions per llama_decode: its logits buffer holds at most this many rows
# KV sequences kept, each with its own cells (llama.cpp's split KV cache: n_ctx = context x SEQUENCES): two requests
# decode in turn without re-decoding each other's text. Not its unified cache: there a sequence's logits changed
# by up to 1.0 while another one held cells (llama-cpp-python 0.3.36, flash attention on or off).
SEQUENCES = 2
DEFAULT_CONTEXT = 8192  # KV cache positions when the model was trained on more (EXPLORER_CONTEXT changes it)
# positions (prompt + tokens) of a generation decoded in a batch: the batch's KV cells are allocated up front, so
# each of its sequences gets this many, not the whole context; a longer generation decodes on its own, in turn
BATCH_POSITIONS = 2048
log = logging.getLogger(__name__)
_init_lock = threading.Lock()
_backend_ready = False


def cores() -> int:
    """CPU cores this process may run on (its affinity where the OS says, else the machine's count)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def default_threads(options: EngineOptions | None = None) -> int:
    """The options' threads (EXPLORER_THREADS; None: those in force), else every core. (It was all cores but one,
    when every thread that decoded started its own OpenMP pool and llama.cpp's barriers slept: 2 threads ran slower
    than 1. With every decode on one thread, explorer/engine/local/team.py, one client on 2 cores through /v1: 102
    tokens/s with 2 threads, 59 with 1.)"""
    return in_force(options).threads or cores()


def available() -> bool:
    """Whether llama-cpp-python can be imported here."""
    import importlib.util

    return importlib.util.find_spec("llama_cpp") is not None


def _lib(verbose: bool | None = None):
    """The llama_cpp bindings, the backend initialised once; its own log on stderr where `verbose` (an engine's
    EXPLORER_LLAMA_VERBOSE; the log is the process's: the last engine loaded sets it), else quiet."""
    global _backend_ready
    try:
        import llama_cpp
        from llama_cpp._logger import set_verbose
    except ImportError:
        raise ExplorerError(
            "The llama.cpp engine needs llama-cpp-python: `pip install llama-cpp-python` (make setup installs it), "
            "or use --engine torch.",
            param="engine",
            code="engine_unavailable",
        ) from None
    with _init_lock:
        if verbose is not None or not _backend_ready:
            set_verbose(bool(verbose))
        if not _backend_ready:
            llama_cpp.llama_backend_init()
            _backend_ready = True
    return llama_cpp


def extra_buffers(system_info: bytes) -> bool:
    """Whether llama.cpp may repack the weights into its extra buffer types, from its system info line: not where its
    CPU backend has AMX kernels, which crash (SIGSEGV in ggml_backend_amx_mul_mat, llama.cpp #20824: seen on this
    project's 2-core Sapphire Rapids machines with the default Q4_1 GGUF, llama-cpp-python 0.3.36); there the
    weights stay as stored and the AVX-512 kernels run them."""
    return b"AMX_INT8 = 1" not in system_info


def repacking() -> bool:
    """extra_buffers() of the llama.cpp built here (bench/gguf_group.py gives llama.cpp's server the same)."""
    return extra_buffers(_lib().llama_print_system_info())


def _common(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """Length of the common prefix of two token tuples."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    diff = np.flatnonzero(np.asarray(a[:n]) != np.asarray(b[:n]))
    return int(diff[0])


class LlamaPast:
    """The tokens a KV cache holds, as llama.cpp's one cache is shared: the engine syncs to it before decoding.

    Quacks like a transformers cache where branch.py needs it (get_seq_length, crop, deepcopy)."""

    def __init__(self, tokens: tuple[int, ...]):
        self.tokens = tokens
        # the cells of a sequence holding `tokens`, as llama_state_seq_get_data wrote them (state, sequence id),
        # taken for a batch (`for_batch`) so that it needs no sequence of the engine's by the time the row joins
        self.cells: tuple[bytes, int] | None = None

    def get_seq_length(self) -> int:
        return len(self.tokens)

    def crop(self, n: int) -> None:
        """Keep the first n positions (n < 0: drop the last -n), as DynamicCache.crop."""
        self.tokens = self.tokens[: n if n >= 0 else max(0, len(self.tokens) + n)]
        self.cells = None

    def __deepcopy__(self, memo) -> LlamaPast:
        return LlamaPast(self.tokens)


class LlamaCppEngine(ForwardEngine):
    """A GGUF file run by llama.cpp; numbers computed by ForwardEngine's own code from llama.cpp's logits."""

    batches_texts = True  # several texts in one llama_decode, a KV sequence each (explorer/engine/llamacpp/texts.py)
    group_tokens = N_BATCH  # a many-texts group's positions: its logits (positions x V float32) are held at once
    compiles_block = False  # no second compile at load (the default model's start): many texts' statistics eager

    def __init__(
        self,
        path: str,
        name: str | None = None,
        *,
        device: str | None = None,
        threads: int | None = None,
        context: int | None = None,
        n_batch: int = N_BATCH,
        compile: bool | None = None,
        options: EngineOptions | None = None,
    ):
        """`path` on `device` with `threads` and a `context` of KV positions per sequence, each where given, else as
        `options` say (None: those in force, explorer/engine/local/options.py)."""
        options = in_force(options)
        lc = self._lc = _lib(options.llama_verbose)
        self.path, self.n_batch = path, n_batch
        shown = name or os.path.basename(path)
        self._model = self._load_model(path, device or options.device)
        self._vocab = lc.llama_model_get_vocab(self._model)
        vocab_size = int(lc.llama_vocab_n_tokens(self._vocab))
        trained = int(lc.llama_model_n_ctx_train(self._model)) or DEFAULT_CONTEXT
        n_ctx = min(trained, context or options.context or DEFAULT_CONTEXT)
        self._threads_asked = threads  # also the batch's (else default_threads)
        self.threads = threads or default_threads(options)
        self._ctx = self._new_context(n_ctx, n_batch, self.threads, shown)
        self._batch = lc.llama_batch_init(n_batch, 0, 1)
        self.streams = SEQUENCES  # KV streams of its context (llamacpp/sequences.py's restream)
        self._seqs: list[tuple[int, ...]] = [()] * SEQUENCES  # the tokens each KV sequence holds
        self._lru = list(range(SEQUENCES))  # least recently used first
        tokenizer = gguf_tokenizer(path, options.cache)
        eos_ids = {i for i in range(vocab_size) if lc.llama_vocab_is_eog(self._vocab, i)}
        eos = getattr(tokenizer, "eos_token_id", None)
        eos_ids |= {eos} if eos is not None and eos < vocab_size else set()
        super().__init__(
            name=shown,
            tokenizer=tokenizer,
            vocab=self._vocab_bytes(vocab_size),
            vocab_size=vocab_size,
            context=n_ctx,
            eos_ids=eos_ids,
            device=torch.device("cpu"),  # where the logits rows and the statistics live
            dtype=torch.float32,
            split_head=False,  # body gives logits rows: the head is the identity
            weights_mb=os.path.getsize(path) / 2**20,
            quant=self._describe(),
            compile=compile,
            options=options,
        )
        # one generation at a time, each to its end, where they are not batched: interleaved, 8 of them took turns
        # in SEQUENCES KV sequences and decoded their whole text again at every turn (2.7 tokens/s in all)
        self.one_at_a_time = threading.RLock()
        self._for_batch = threading.local()  # .on: this thread's prompt reads are for a batch (`for_batch`)
        self.decoder: Decoder | None = None  # a served model's batch (reserve), explorer/engine/llamacpp/sequences.py
        self.texts: Texts | None = None  # several texts a llama_decode (continue_rows), made on first use

    def _load_model(self, path: str, device: str | None):
        """llama.cpp's model of the GGUF file `path`, every layer on `device`'s GPU where it has one."""
        mp = self._lc.llama_model_default_params()
        mp.n_gpu_layers = self._gpu_layers(device)
        mp.use_extra_bufts = repacking()
        model = self._lc.llama_model_load_from_file(path.encode(), mp)
        if not model:
            raise ExplorerError(
                f"llama.cpp could not load {os.path.basename(path)!r}: is it a GGUF model file?",
                code="model_load_failed",
            )
        return model

    def _gpu_layers(self, device: str | None) -> int:
        """Every layer on the GPU when llama.cpp was built with one and the device allows, else none."""
        if device in ("cpu",) or not self._lc.llama_supports_gpu_offload():
            return 0
        return -1

    def _new_context(self, n_ctx: int, n_batch: int, threads: int, name: str):
        lc = self._lc
        cp = lc.llama_context_default_params()
        cp.n_ctx, cp.n_batch, cp.n_ubatch, cp.n_seq_max = n_ctx * SEQUENCES, n_batch, n_batch, SEQUENCES
        cp.kv_unified = False  # each sequence its own n_ctx cells (see SEQUENCES)
        cp.n_threads = cp.n_threads_batch = threads
        ctx = lc.llama_init_from_model(self._model, cp)
        if not ctx:
            raise ExplorerError(
                f"llama.cpp could not make a context of {n_ctx} tokens for {name}: lower EXPLORER_CONTEXT.",
                code="model_load_failed",
            )
        return ctx

    def _describe(self) -> str:
        """The weights' type as the status line shows it, e.g. "GGUF Q4_1"."""
        buf = ctypes.create_string_buffer(256)
        n = self._lc.llama_model_desc(self._model, buf, len(buf))
        parts = buf.value[: max(0, n)].decode("utf-8", "replace").split(" ", 2)  # arch, size class, file type
        return "GGUF " + parts[-1]

    def _vocab_bytes(self, vocab_size: int) -> list[bytes]:
        """id -> raw bytes from the GGUF vocabulary: control / user-defined tokens as their text, byte-level BPE
        pieces through GPT-2's byte table, SentencePiece `▁` as a space and `<0xNN>` as that byte."""
        lc = self._lc
        byte_level = lc.llama_vocab_type(self._vocab) == lc.LLAMA_VOCAB_TYPE_BPE
        literal = lc.LLAMA_TOKEN_ATTR_CONTROL | lc.LLAMA_TOKEN_ATTR_USER_DEFINED | lc.LLAMA_TOKEN_ATTR_UNKNOWN
        out = []
        for i in range(vocab_size):
            text = lc.llama_vocab_get_text(self._vocab, i) or b""
            if lc.llama_vocab_get_attr(self._vocab, i) & literal:
                out.append(text)
            else:
                out.append(piece_bytes(text.decode("utf-8", "replace"), byte_level))
        return out

    def compute_numbers(self, fn, *args):
        """fn(*args), the numbers of a block of rows: on the team's thread, on every core, unless this engine decodes
        on fewer threads than the team's (EXPLORER_THREADS, --threads): then on the caller's, where torch runs on
        one. There, on the team, torch's workers spun on after the statistics while llama.cpp decoded on one
        thread: one row through the batch at 1 thread of 2 cores took 3.2 ms a step more than a bare decode,
        1.4 ms with torch on one thread (bench/RESULTS.md, 2026-12-04, evening)."""
        if self.threads < team.THREADS:
            return fn(*args)
        return self.compute(fn, *args)

    def background(self, fn, *args) -> Future:
        """Run fn(*args) on this engine's own thread, which computes with one torch thread (torch's spinning OpenMP
        workers would slow llama.cpp's next step). Beside the caller when llama.cpp leaves a core free; else
        waited for here, as then nothing is gained by overlapping and the next step's threads would be slowed."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, "llamacpp-stats", initializer=one_torch_thread)
        done = self._pool.submit(fn, *args)
        if self.threads >= cores():
            done.result()
        return done

    # ---- continuous batching (explorer/engine/batching/scheduler.py: interface.Batching) ------------------
    batch_positions = BATCH_POSITIONS
    batch_allocated = True  # the batch's KV cells are allocated at `reserve`

    def batch_refusal(self) -> str | None:
        """None: llama.cpp's KV sequences hold any attention's cells."""
        return None

    def reserve(self, size: int, positions: int) -> Decoder:
        """Set aside a batch of `size` KV sequences of `positions` cells each (at most BATCH_POSITIONS), before the
        batch starts (scheduler.py's `attach`): a running batch's rows would lose their cells."""
        if self.decoder is not None:
            self.decoder.close()
        threads = self._threads_asked or default_threads(self.options)
        self.decoder = Decoder(self, size, min(positions, self.context, BATCH_POSITIONS), threads)
        return self.decoder

    @contextmanager
    def for_batch(self) -> Iterator[None]:
        """This thread's prompt reads copy their KV cells out (LlamaPast.cells) under the lock of their decode, so
        that the batch takes them whatever the engine's SEQUENCES hold when the row joins: with 8 requests at once
        the others' prompts had let them go, and the batch's thread decoded each prompt again while every row
        waited (measured: a fifth of its time)."""
        self._for_batch.on = True
        try:
            yield
        finally:
            self._for_batch.on = False

    def cells_of(self, tokens: tuple[int, ...]) -> tuple[bytes, int] | None:
        """(state, sequence) of the engine's sequence holding exactly `tokens`, None where none does (hold the
        lock)."""
        held = [s for s, t in enumerate(self._seqs) if t == tokens]
        if not held:
            return None
        n = self._lc.llama_state_seq_get_size(self._ctx, held[0])
        buf = (ctypes.c_uint8 * n)()
        if self._lc.llama_state_seq_get_data(self._ctx, buf, n, held[0]) != n:
            return None
        return bytes(buf), held[0]

    def batch_cache(self) -> SequenceCache:
        """The rows of a new DecodeBatch (explorer/engine/batching/slots.py): KV sequences of the batch's context."""
        return SequenceCache(self, self.decoder or self.reserve(8, BATCH_POSITIONS))

    def kv_position_bytes(self) -> int:
        """Bytes one position of one sequence takes in llama.cpp's KV cache (keys and values, float16)."""
        lc, m = self._lc, self._model
        head_dim = int(lc.llama_model_n_embd(m)) // max(1, int(lc.llama_model_n_head(m)))
        return 2 * int(lc.llama_model_n_layer(m)) * int(lc.llama_model_n_head_kv(m)) * head_dim * 2

    def close(self) -> None:
        """Free llama.cpp's contexts and model (also when the engine is garbage-collected)."""
        lc = getattr(self, "_lc", None)
        if lc is None:
            return
        decoder = getattr(self, "decoder", None)
        if decoder is not None:
            decoder.close()
            self.decoder = None
        texts = getattr(self, "texts", None)
        if texts is not None:
            texts.close()
            self.texts = None
        if getattr(self, "_batch", None) is not None:
            lc.llama_batch_free(self._batch)
            self._batch = None
        if getattr(self, "_ctx", None):
            lc.llama_free(self._ctx)
            self._ctx = None
        if getattr(self, "_model", None):
            lc.llama_model_free(self._model)
            self._model = None

    def __del__(self):
        self.close()

    @property
    def capabilities(self) -> Capabilities:
        """Everything from logits (full vocabulary, ranks, entropy); no hidden states (the logit lens)."""
        return Capabilities.llamacpp(
            max_logprobs=max_logprobs(), chat_template=bool(getattr(self.tokenizer, "chat_template", None))
        )

    # ---- the forward pass -----------------------------------------------------------------
    def body(self, ids: torch.Tensor, past=None, cache: bool = False, last: bool = False):
        """ids (1, T) after the tokens `past` holds -> (logits (T, V) float32, LlamaPast of past + ids); with `last`,
        the last position's logits (1, V) only: llama.cpp then runs the output layer on that position alone (a
        prompt of 8 tokens read in 28 ms instead of 34 on 2 cores)."""
        new = tuple(int(i) for i in ids[0].tolist())
        before = past.tokens if isinstance(past, LlamaPast) else ()
        with self.lock:
            s = self._sequence(before)
            logits = self._decode(s, new, len(before), want=not last)
            if last:
                logits = self._last_logits()
            self._seqs[s] = before + new
            past = LlamaPast(self._seqs[s])
            if cache and getattr(self._for_batch, "on", False) and len(past.tokens) <= BATCH_POSITIONS:
                past.cells = self.cells_of(past.tokens)
        return torch.from_numpy(logits), past

    def continue_rows(self, ids: torch.Tensor, past=None) -> torch.Tensor:
        """ids (B, L) -> logits (B, L, V) float32: after nothing (`past` None, several texts: many.py's groups) the
        rows decode together, each in a KV sequence of its own (explorer/engine/llamacpp/texts.py); else, or a row
        longer than a sequence there holds, one row at a time (ForwardEngine's)."""
        if past is None and ids.shape[0] > 1:
            with self.lock:
                if self.texts is None:
                    self.texts = Texts(self)
            rows = self.texts.rows(ids)
            if rows is not None:
                return rows
        return super().continue_rows(ids, past)

    def last_rows(self, ids: torch.Tensor, past=None) -> torch.Tensor:
        """ids (B, L), every row continuing the tokens `past` holds -> each row's last logits (B, V) float32: one
        row at a time, each continuing the KV sequence that holds `past` (so only its own tokens are decoded)."""
        before = past.tokens if isinstance(past, LlamaPast) else ()
        out = []
        for row in ids:
            new = tuple(int(i) for i in row.tolist())
            with self.lock:
                s = self._sequence(before)
                self._decode(s, new, len(before), want=False)  # the output layer on the last token only
                self._seqs[s] = before + new
                last = self._last_logits()[0]
            out.append(torch.from_numpy(last))
        return torch.stack(out)

    def _last_logits(self) -> np.ndarray:
        """(1, V) the logits of the one position the last decode asked for (hold the lock)."""
        return np.ctypeslib.as_array(self._lc.llama_get_logits(self._ctx), shape=(1, self.vocab_size)).copy()

    def _sequence(self, want: tuple[int, ...]) -> int:
        """A KV sequence holding exactly `want`: one that does, else the least recently used one, cut at the prefix
        it shares with `want` and the rest decoded."""
        exact = [s for s, held in enumerate(self._seqs) if held == want]
        if exact:
            return self._touch(exact[0])
        dst = self._touch(self._lru[0])
        common = _common(self._seqs[dst], want)
        self._lc.llama_memory_seq_rm(self._lc.llama_get_memory(self._ctx), dst, common, -1)
        self._seqs[dst] = want[:common]
        if common < len(want):
            self._decode(dst, want[common:], common, want=False)
        self._seqs[dst] = want
        return dst

    def _touch(self, s: int) -> int:
        self._lru.remove(s)
        self._lru.append(s)
        return s

    def _decode(self, seq: int, tokens: tuple[int, ...], start: int, want: bool) -> np.ndarray:
        """Decode `tokens` at positions start.. of sequence `seq`, n_batch a call; with `want`, their logits (T, V)."""
        b = self._batch
        out = np.empty((len(tokens) if want else 0, self.vocab_size), np.float32)
        for a in range(0, len(tokens), self.n_batch):
            part = tokens[a : a + self.n_batch]
            # without `want`, the last row's logits all the same: llama.cpp wants at least one output row
            fill(b, [(t, start + a + j, seq, want or j == len(part) - 1) for j, t in enumerate(part)])
            self._run(seq, len(part), start + a)
            if want:
                rows = np.ctypeslib.as_array(self._lc.llama_get_logits(self._ctx), shape=(len(part), self.vocab_size))
                out[a : a + len(part)] = rows
        return out

    def _run(self, seq: int, n: int, at: int) -> None:
        """llama_decode the batch; when the KV cache is full, drop other sequences (least recently used first)."""
        lc, mem = self._lc, self._lc.llama_get_memory(self._ctx)
        while True:
            rc = self.compute(lc.llama_decode, self._ctx, self._batch)
            if rc == 0:
                return
            others = [s for s in self._lru if s != seq and self._seqs[s]]
            if rc != 1 or not others:  # 1: no room in the KV cache
                lc.llama_memory_seq_rm(mem, seq, -1, -1)
                self._seqs[seq] = ()
                raise ExplorerError(
                    f"llama.cpp could not decode {n} tokens at position {at} (code {rc}).", code="engine_error"
                )
            lc.llama_memory_seq_rm(mem, others[0], -1, -1)
            self._seqs[others[0]] = ()

    def llama_tokenize(self, text: str, add_special: bool = True) -> list[int]:
        """llama.cpp's own tokenization of `text` (special tokens in the text parsed), for checks and the bench."""
        raw = text.encode("utf-8")
        buf = (self._lc.llama_token * (len(raw) + 8))()
        n = self._lc.llama_tokenize(self._vocab, raw, len(raw), buf, len(buf), add_special, True)
        return list(buf[:n])
