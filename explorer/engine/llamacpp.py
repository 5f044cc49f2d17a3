"""A llama.cpp engine: a GGUF model run by llama.cpp (through llama-cpp-python's low-level API), behind Engine's
interface, so scoring, generation, branches and every view compute their numbers with OUR code.

How it plugs in:
1. `body(ids, past)` decodes `ids` after the tokens `past` names, n_batch positions per llama_decode, every
   position's logits asked (per-token logits flags), and returns those logits rows (T, V) as float32: the head is
   the identity (`split_head` False), so logprob, rank over the full vocabulary, entropy, top-k, raw and processed,
   and the sampler are Engine.stats / sampling.py, exactly as for the transformers engine.
2. llama.cpp holds one KV cache (sequence 0); `past` (LlamaPast) records the tokens a caller's cache should hold.
   When it is not what the KV cache holds (a branch resuming an older path, another request in between), the KV
   cache is cut at the common prefix (llama_memory_seq_rm) and the missing tokens decoded again: results stay exact.
3. Token bytes come from the GGUF vocabulary (byte-level BPE `Ġ` and SentencePiece `▁` / `<0xNN>` alike); the
   tokenizer and chat template are transformers' reading of the same GGUF (explorer/engine/gguf.py).
Memory: one llama_decode returns at most n_batch rows; callers (scoring.score_blocks) ask PREFILL positions a call.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading

import numpy as np
import torch

from explorer.engine import gguf
from explorer.engine.capabilities import Capabilities
from explorer.engine.model import Engine
from explorer.engine.tokens import piece_bytes
from explorer.errors import ExplorerError
from explorer.settings import max_logprobs

N_BATCH = 512  # positions per llama_decode: its logits buffer holds at most this many rows
DEFAULT_CONTEXT = 8192  # KV cache positions when the model was trained on more (EXPLORER_CONTEXT changes it)
log = logging.getLogger(__name__)
_init_lock = threading.Lock()
_backend_ready = False


def available() -> bool:
    """Whether llama-cpp-python can be imported here."""
    import importlib.util

    return importlib.util.find_spec("llama_cpp") is not None


def _lib():
    """The llama_cpp bindings, the backend initialised once and its log quiet."""
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
        if not _backend_ready:
            set_verbose(os.environ.get("EXPLORER_LLAMA_VERBOSE", "") not in ("", "0"))
            llama_cpp.llama_backend_init()
            _backend_ready = True
    return llama_cpp


class LlamaPast:
    """The tokens a KV cache holds, as llama.cpp's one cache is shared: the engine syncs to it before decoding.

    Quacks like a transformers cache where branch.py needs it (get_seq_length, crop, deepcopy)."""

    def __init__(self, tokens: tuple[int, ...]):
        self.tokens = tokens

    def get_seq_length(self) -> int:
        return len(self.tokens)

    def crop(self, n: int) -> None:
        """Keep the first n positions (n < 0: drop the last -n), as DynamicCache.crop."""
        self.tokens = self.tokens[: n if n >= 0 else max(0, len(self.tokens) + n)]

    def __deepcopy__(self, memo) -> LlamaPast:
        return LlamaPast(self.tokens)


class LlamaCppEngine(Engine):
    """A GGUF file run by llama.cpp; numbers computed by Engine's own code from llama.cpp's logits."""

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
    ):
        lc = self._lc = _lib()
        self.path, self.name, self.n_batch = path, name or os.path.basename(path), n_batch
        self.device = torch.device("cpu")  # where the logits rows and the statistics live
        self.dtype = torch.float32
        mp = lc.llama_model_default_params()
        mp.n_gpu_layers = self._gpu_layers(device)
        self._model = lc.llama_model_load_from_file(path.encode(), mp)
        if not self._model:
            raise ExplorerError(
                f"llama.cpp could not load {os.path.basename(path)!r}: is it a GGUF model file?",
                code="model_load_failed",
            )
        self._vocab = lc.llama_model_get_vocab(self._model)
        self.vocab_size = int(lc.llama_vocab_n_tokens(self._vocab))
        trained = int(lc.llama_model_n_ctx_train(self._model)) or DEFAULT_CONTEXT
        self.context = min(trained, context or int(os.environ.get("EXPLORER_CONTEXT") or DEFAULT_CONTEXT))
        self.threads = threads or int(os.environ.get("EXPLORER_THREADS") or 0) or (os.cpu_count() or 1)
        self._ctx = self._new_context(self.context, n_batch, self.threads)
        self._batch = lc.llama_batch_init(n_batch, 0, 1)
        self._held: tuple[int, ...] = ()  # the tokens the KV cache (sequence 0) holds
        self.quant = self._describe()
        self.weights_mb = os.path.getsize(path) / 2**20
        self.tokenizer = gguf.tokenizer(path)
        self.vocab = self._vocab_bytes()
        self.eos_ids = {i for i in range(self.vocab_size) if lc.llama_vocab_is_eog(self._vocab, i)}
        eos = getattr(self.tokenizer, "eos_token_id", None)
        self.eos_ids |= {eos} if eos is not None and eos < self.vocab_size else set()
        self.special_ids = {i for i in self.tokenizer.all_special_ids if i < self.vocab_size} | self.eos_ids
        self.lock = threading.Lock()
        self.split_head = False
        self._sums_kernel = self._stats_kernel(compile)
        self._pool = None

    def _gpu_layers(self, device: str | None) -> int:
        """Every layer on the GPU when llama.cpp was built with one and the device allows, else none."""
        if device in ("cpu",) or not self._lc.llama_supports_gpu_offload():
            return 0
        return -1

    def _new_context(self, n_ctx: int, n_batch: int, threads: int):
        lc = self._lc
        cp = lc.llama_context_default_params()
        cp.n_ctx, cp.n_batch, cp.n_ubatch, cp.n_seq_max = n_ctx, n_batch, n_batch, 1
        cp.n_threads = cp.n_threads_batch = threads
        ctx = lc.llama_init_from_model(self._model, cp)
        if not ctx:
            raise ExplorerError(
                f"llama.cpp could not make a context of {n_ctx} tokens for {self.name}: lower EXPLORER_CONTEXT.",
                code="model_load_failed",
            )
        return ctx

    def _describe(self) -> str:
        buf = ctypes.create_string_buffer(256)
        n = self._lc.llama_model_desc(self._model, buf, len(buf))
        return buf.value[: max(0, n)].decode("utf-8", "replace")

    def _vocab_bytes(self) -> list[bytes]:
        """id -> raw bytes from the GGUF vocabulary: control / user-defined tokens as their text, byte-level BPE
        pieces through GPT-2's byte table, SentencePiece `▁` as a space and `<0xNN>` as that byte."""
        lc = self._lc
        byte_level = lc.llama_vocab_type(self._vocab) == lc.LLAMA_VOCAB_TYPE_BPE
        literal = lc.LLAMA_TOKEN_ATTR_CONTROL | lc.LLAMA_TOKEN_ATTR_USER_DEFINED | lc.LLAMA_TOKEN_ATTR_UNKNOWN
        out = []
        for i in range(self.vocab_size):
            text = lc.llama_vocab_get_text(self._vocab, i) or b""
            if lc.llama_vocab_get_attr(self._vocab, i) & literal:
                out.append(text)
            else:
                out.append(piece_bytes(text.decode("utf-8", "replace"), byte_level))
        return out

    def close(self) -> None:
        """Free llama.cpp's context and model (also when the engine is garbage-collected)."""
        lc = getattr(self, "_lc", None)
        if lc is None:
            return
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
        return Capabilities.llamacpp(max_logprobs(), bool(getattr(self.tokenizer, "chat_template", None)))

    # ---- the forward pass -----------------------------------------------------------------
    def body(self, ids: torch.Tensor, past=None, cache: bool = False):
        """ids (1, T) after the tokens `past` holds -> (logits (T, V) float32, LlamaPast of past + ids)."""
        new = tuple(int(i) for i in ids[0].tolist())
        before = past.tokens if isinstance(past, LlamaPast) else ()
        with self.lock:
            self._sync(before)
            logits = self._decode(new, len(before), want=True)
            self._held = before + new
        return torch.from_numpy(logits), LlamaPast(self._held)

    def _sync(self, want: tuple[int, ...]) -> None:
        """Make the KV cache hold exactly `want`: cut it at the common prefix, decode what is missing."""
        held = self._held
        if held is want or held == want:
            return
        n = min(len(held), len(want))
        diff = np.flatnonzero(np.asarray(held[:n]) != np.asarray(want[:n]))
        common = int(diff[0]) if diff.size else n
        if common < len(held):
            mem = self._lc.llama_get_memory(self._ctx)
            if not self._lc.llama_memory_seq_rm(mem, 0, common, -1):
                self._lc.llama_memory_clear(mem, True)
                common = 0
            self._held = held[:common]
        if common < len(want):
            self._decode(want[common:], common, want=False)
        self._held = want

    def _decode(self, tokens: tuple[int, ...], start: int, want: bool) -> np.ndarray:
        """Decode `tokens` at positions start.. in batches of n_batch; with `want`, their logits (T, V) float32."""
        lc, b = self._lc, self._batch
        out = np.empty((len(tokens) if want else 0, self.vocab_size), np.float32)
        for a in range(0, len(tokens), self.n_batch):
            part = tokens[a : a + self.n_batch]
            b.n_tokens = len(part)
            for j, t in enumerate(part):
                b.token[j], b.pos[j], b.n_seq_id[j], b.logits[j] = t, start + a + j, 1, want
                b.seq_id[j][0] = 0
            if not want:
                b.logits[len(part) - 1] = True  # llama.cpp wants at least one output row
            rc = lc.llama_decode(self._ctx, b)
            if rc != 0:
                self._held = ()
                lc.llama_memory_clear(lc.llama_get_memory(self._ctx), True)
                raise ExplorerError(
                    f"llama.cpp could not decode {len(part)} tokens at position {start + a} (code {rc}).",
                    code="engine_error",
                )
            if want:
                rows = np.ctypeslib.as_array(lc.llama_get_logits(self._ctx), shape=(len(part), self.vocab_size))
                out[a : a + len(part)] = rows
        return out

    def llama_tokenize(self, text: str, add_special: bool = True) -> list[int]:
        """llama.cpp's own tokenization of `text` (special tokens in the text parsed), for checks and the bench."""
        raw = text.encode("utf-8")
        buf = (self._lc.llama_token * (len(raw) + 8))()
        n = self._lc.llama_tokenize(self._vocab, raw, len(raw), buf, len(buf), add_special, True)
        return list(buf[:n])
