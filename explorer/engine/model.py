"""Engine: one loaded model with its tokenizer, split into body (ids -> hidden) and head.

Scoring and generation run the body once and apply the output layer per chunk of
positions, so the full [positions, vocabulary] logits never exist at once.
"""

from __future__ import annotations

import copy
import inspect
import logging
import os
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import torch

from explorer import bounds
from explorer.engine import context_start, loading
from explorer.engine.capabilities import Capabilities
from explorer.engine.metrics import Stats, compiled_sums, row_stats, sums
from explorer.engine.tokens import vocab_bytes
from explorer.errors import ExplorerError
from explorer.settings import max_logprobs

CHAT_TEMPLATE_RESERVED = {
    "conversation",
    "messages",
    "tools",
    "documents",
    "chat_template",
    "tokenize",
    "padding",
    "truncation",
    "max_length",
    "return_tensors",
    "return_dict",
    "return_assistant_tokens_mask",
    "tokenizer_kwargs",
    "add_generation_prompt",
    "continue_final_message",
}
STAT_ROWS = 16  # rows per fused-sums call: a few MB of float32 logits, warm in cache
HEAD_ROWS = 128  # most positions per output-layer call (more buys no speed on a CPU; fewer bytes alive)
HEAD_MIN_ROWS = 64  # the output layer always sees >= 64 rows: the same BLAS kernel, so chunking cannot change a logit
log = logging.getLogger(__name__)


class Engine:
    def __init__(self, loaded: loading.Loaded, compile: bool | None = None):
        self.model: Any = loaded.model  # a transformers model: its attributes vary by architecture
        self.tokenizer: Any = loaded.tokenizer
        self.device: Any = loaded.device  # a torch.device (a remote engine has none: see engine/remote.py)
        self.dtype: Any = loaded.dtype
        self.name = loaded.name
        self.weights_mb = sum(p.numel() * p.element_size() for p in self.model.parameters()) / 2**20
        head = self.model.get_output_embeddings()
        self.vocab_size = int(getattr(head, "out_features", 0) or self.model.config.vocab_size)
        self.vocab: Sequence[bytes] = vocab_bytes(self.tokenizer, self.vocab_size)  # id -> raw bytes
        cfg = self.model.config
        self.context = int(
            getattr(cfg, "max_position_embeddings", 0) or getattr(self.tokenizer, "model_max_length", 2048)
        )
        self.eos_ids = self._eos_ids()
        self.special_ids = {i for i in self.tokenizer.all_special_ids if i < self.vocab_size} | self.eos_ids
        # transformers >= 5.2x names the KV cache `cache`; older releases `past_key_values`
        params = inspect.signature(self.model.base_model.forward).parameters
        self._cache_arg = "cache" if "cache" in params else "past_key_values"
        self.lock = threading.Lock()  # one forward at a time on the shared model
        self.split_head = self._head_is_separable()
        self._sums_kernel = self._stats_kernel(compile)
        self._pool: ThreadPoolExecutor | None = None  # see background()

    @classmethod
    def load(
        cls,
        model_id: str | None = None,
        device: str | None = None,
        dtype: str | None = None,
        trust_remote_code: bool = False,
        compile: bool | None = None,
        *,
        name: str | None = None,
        hub_only: bool = False,
    ) -> Engine:
        """Load `model_id` (hub id or folder; `hub_only`: never a folder), called `name` (default: the id)."""
        return cls(loading.load(model_id, device, dtype, trust_remote_code, name=name, hub_only=hub_only), compile)

    @property
    def capabilities(self) -> Capabilities:
        """What this engine can give (everything: the model runs here)."""
        return Capabilities.local(max_logprobs(), bool(getattr(self.tokenizer, "chat_template", None)))

    def placement(self) -> str:
        """Where and how the model runs, for people (the page's status line, the server's log): "cpu (float32) with torch"."""
        how = str(getattr(self, "quant", None) or self.dtype).replace("torch.", "")
        return f"{self.device.type} ({how}) with {self.capabilities.engine}"

    @property
    def compiled(self) -> bool:
        return self._sums_kernel is not sums

    def _stats_kernel(self, compile: bool | None):
        """The fused-sums kernel: torch.compile'd (and warmed up here) when asked and it works, else eager.

        `compile=None` reads EXPLORER_COMPILE: 1 (on), 0 (off), auto (default: on).
        """
        if compile is None:
            compile = os.environ.get("EXPLORER_COMPILE", "auto").lower() not in ("0", "false", "off", "no")
        if not compile:
            return sums
        fn = compiled_sums()
        if fn is None:
            return sums
        try:  # compile now (seconds), not on a user's first request: scoring slices and decode steps
            for rows, dtype in ((STAT_ROWS, self.dtype), (1, torch.float32)):
                fn(
                    torch.zeros((rows, self.vocab_size), device=self.device, dtype=dtype),
                    torch.zeros((rows, 1), device=self.device),
                )
        except Exception as err:  # noqa: BLE001 - any compiler failure means: stay eager
            log.warning("torch.compile failed (%s); using eager statistics", str(err).splitlines()[0][:200])
            return sums
        return fn

    def _sums(self, logits: torch.Tensor, m: torch.Tensor):
        """`sums` over slices of STAT_ROWS rows (cache-sized; the compiled kernel sees exactly that shape)."""
        if logits.shape[0] == 1 or (self._sums_kernel is sums and logits.shape[0] <= STAT_ROWS):
            return self._sums_kernel(logits, m)  # a decode step: its own compiled shape
        ss, qs = [], []
        for a in range(0, logits.shape[0], STAT_ROWS):
            x, mm = logits[a : a + STAT_ROWS], m[a : a + STAT_ROWS]
            c = x.shape[0]
            if c < STAT_ROWS and self._sums_kernel is not sums:
                x = torch.cat([x, x.new_zeros((STAT_ROWS - c, x.shape[1]))])
                mm = torch.cat([mm, mm.new_zeros((STAT_ROWS - c, 1))])
            s, q = self._sums_kernel(x, mm)
            ss.append(s[:c])
            qs.append(q[:c])
        return torch.cat(ss), torch.cat(qs)

    def stats(self, logits: torch.Tensor, targets: torch.Tensor, k: int, full: bool = False) -> Stats:
        """row_stats of a block of positions, with the engine's kernel."""
        return row_stats(logits, targets, k, full=full, sums_fn=self._sums)

    def background(self, fn, *args) -> Future:
        """Run fn(*args) beside the caller on a CPU (a decode step's numbers overlap the next
        forward pass there); elsewhere inline, as the accelerator queues the work anyway."""
        if self.device.type == "cpu":
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="logprob-stats")
            return self._pool.submit(fn, *args)
        done: Future = Future()
        done.set_result(fn(*args))
        return done

    def _eos_ids(self) -> set[int]:
        ids: set[int] = set()
        for src in (getattr(self.model, "generation_config", None), self.model.config):
            v = getattr(src, "eos_token_id", None) if src is not None else None
            ids.update(v if isinstance(v, (list, tuple)) else ([v] if v is not None else []))
        if self.tokenizer.eos_token_id is not None:
            ids.add(self.tokenizer.eos_token_id)
        return ids

    @torch.inference_mode()
    def _head_is_separable(self) -> bool:
        """True when logits == output_layer(body(ids)): no soft-capping or scaling after the head."""
        ids = torch.tensor([[0, 1, 2]], device=self.device) % self.vocab_size
        full = self.model(input_ids=ids).logits[0]
        hidden = self.model.base_model(input_ids=ids).last_hidden_state[0]
        split = self.model.get_output_embeddings()(hidden)
        return bool(torch.allclose(full.float(), split.float(), atol=1e-3, rtol=1e-3))

    # ---- the two halves of a forward pass ----------------------------------------------
    def body(self, ids: torch.Tensor, past=None, cache: bool = False):
        """ids (1, T) -> (hidden (T, H) or, for unusual heads, logits (T, V); KV cache when `cache`)."""
        kw = {self._cache_arg: past, "use_cache": cache or past is not None}
        with self.lock:
            if self.split_head:
                out = self.model.base_model(input_ids=ids, **kw)
                return out.last_hidden_state[0], getattr(out, self._cache_arg)
            out = self.model(input_ids=ids, **kw)
            return out.logits[0], getattr(out, self._cache_arg)

    def last_rows(self, ids: torch.Tensor, past=None) -> torch.Tensor:
        """ids (B, L), every row continuing the text `past` holds (copied, never changed) -> each row's last
        position: hidden (B, H) or, for unusual heads, logits (B, V)."""
        if past is not None:
            past = copy.deepcopy(past)
            if ids.shape[0] > 1:
                past.batch_repeat_interleave(ids.shape[0])
        kw = {self._cache_arg: past, "use_cache": past is not None}
        with self.lock:
            if self.split_head:
                return self.model.base_model(input_ids=ids, **kw).last_hidden_state[:, -1]
            return self.model(input_ids=ids, **self.last_only, **kw).logits[:, -1]

    @property
    def last_only(self) -> dict:
        """The forward argument that computes the logits of the last position only, where the model takes one."""
        params = inspect.signature(self.model.forward).parameters
        return {"logits_to_keep": 1} if "logits_to_keep" in params else {}

    def head(self, hidden: torch.Tensor) -> torch.Tensor:
        """hidden (c, H) -> logits (c, V) in the model's dtype."""
        if not self.split_head:
            return hidden
        return self.model.get_output_embeddings()(hidden)

    def chunk_size(self, positions: int) -> int:
        """Positions per output-layer call: at most HEAD_ROWS (and 256 MB of logits), split evenly.

        One block's logits and their statistics' temporaries are the only [positions, V] tensors alive, beside
        the KV cache of the prefill blocks: scoring 2,048 positions needs about a fifth of one float32 [2048, V]
        matrix more than the model's body alone (bench/run.py's score_mem_ratio).
        """
        cap = max(HEAD_MIN_ROWS, min(HEAD_ROWS, (1 << 26) // self.vocab_size))
        blocks = max(1, -(-positions // cap))
        return -(-positions // blocks)

    # ---- text -> ids --------------------------------------------------------------------
    def encode(self, text: str) -> list[int]:
        """Token ids of `text` with the tokenizer's own special tokens (a BOS where expected)."""
        if not isinstance(text, str) or text == "":
            raise ExplorerError(
                "The text is empty: type or paste some text to score.", param="prompt", code="empty_text"
            )
        return self.tokenize(text)

    def tokenize(self, text: str, add_special_tokens: bool = True) -> list[int]:
        """Token ids of `text`, with the tokenizer's own special tokens (a BOS where expected) when asked."""
        return list(self.tokenizer(text, add_special_tokens=add_special_tokens)["input_ids"])

    def detokenize(self, ids: list[int]) -> str:
        """The text of token `ids`, special tokens written out (vLLM's /detokenize)."""
        return self.tokenizer.decode(ids)

    def token_strs(self, ids: list[int]) -> list[str]:
        """The vocabulary strings of `ids` (`Ġcapital`), as vLLM's /tokenize writes `token_strs`."""
        return list(self.tokenizer.convert_ids_to_tokens(ids))

    def encode_chat(
        self,
        messages: list[dict],
        *,
        add_generation_prompt: bool = True,
        continue_final_message: bool = False,
        template_kwargs: dict | None = None,
    ) -> list[int]:
        """Token ids of `messages` through the model's chat template, ready for the reply (or continuing the last message)."""
        if not getattr(self.tokenizer, "chat_template", None):
            raise ExplorerError(
                f"Model {self.name!r} has no chat template: use a plain prompt instead of chat messages.",
                param="messages",
                code="no_chat_template",
            )
        if not isinstance(messages, list) or not messages:
            raise ExplorerError(
                "`messages` must be a non-empty list of {role, content} objects.",
                param="messages",
                code="invalid_value",
            )
        for m in messages:
            if (
                not isinstance(m, dict)
                or m.get("role") not in ("system", "user", "assistant")
                or not isinstance(m.get("content"), str)
            ):
                raise ExplorerError(
                    "Each message needs a `role` (system, user or assistant) and a string `content`.",
                    param="messages",
                    code="invalid_value",
                )
        if continue_final_message and (add_generation_prompt or messages[-1]["role"] != "assistant"):
            raise ExplorerError(
                "`continue_final_message` continues a last message from the assistant: end `messages` with one "
                "and set `add_generation_prompt: false`.",
                param="continue_final_message",
                code="invalid_value",
            )
        kwargs = dict(template_kwargs or {})
        reserved = sorted(set(kwargs) & CHAT_TEMPLATE_RESERVED)
        if reserved:
            raise ExplorerError(
                f"`chat_template_kwargs` may not set {reserved[0]!r}: use the request field of that name.",
                param="chat_template_kwargs",
                code="invalid_value",
            )
        try:
            text = self.tokenizer.apply_chat_template(
                messages,
                tokenize=False,
                add_generation_prompt=add_generation_prompt,
                continue_final_message=continue_final_message,
                **kwargs,
            )
        except Exception as err:  # noqa: BLE001 - the template's own checks (roles must alternate, ...) are user errors
            first = str(err).splitlines()[0][:200] if str(err) else type(err).__name__
            raise ExplorerError(
                f"The chat template refused these messages: {first}", param="messages", code="invalid_value"
            ) from None
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    # ---- where a text starts (see explorer/engine/context_start.py) ----------------------
    @property
    def adds_bos(self) -> bool:
        """True when the tokenizer puts a BOS token before every text (its first token is then scored)."""
        return context_start.adds_bos(self.tokenizer)

    def special_tokens(self) -> list[str]:
        """The model's special tokens as text, its document separator (end-of-text) first."""
        return context_start.special_tokens(self.tokenizer, self.vocab_size)

    def context_start_ids(self, mode: str | None) -> list[int]:
        """Ids to put before a text so its first token is scored: "none", "bos", "eos" or a special token's text
        ([] where the tokenizer adds a BOS itself); ExplorerError for a token this model does not have."""
        return context_start.context_start_ids(self.tokenizer, self.vocab_size, self.name, mode)

    def check_ids(self, ids: list[int]) -> None:
        if not ids:
            raise ExplorerError(
                "The prompt has no tokens: give some text or token ids.", param="prompt", code="empty_text"
            )
        bounds.check_input(len(ids))  # a page action's cap (explorer/bounds.py); the API checks its own
        if len(ids) > self.context:
            raise ExplorerError(
                f"The text is {len(ids)} tokens; {self.name} reads at most {self.context}: shorten it.",
                param="prompt",
                code="context_length_exceeded",
            )
        top = self.vocab_size or float("inf")  # 0: not known (a remote server's): the server checks the bound
        bad = [i for i in ids if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < top]
        if bad:
            raise ExplorerError(
                f"Token id {bad[0]!r} is outside the vocabulary (0..{self.vocab_size - 1}).",
                param="prompt",
                code="invalid_token_id",
            )
