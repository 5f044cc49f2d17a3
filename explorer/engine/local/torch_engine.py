"""TorchEngine: a transformers model loaded here, with its tokenizer, split into body (ids -> hidden) and head.

What it shares with the llama.cpp engine (statistics, text side, scoring and generation) is ForwardEngine's
(explorer/engine/local/forward.py); here is only what needs the transformers model.
"""

from __future__ import annotations

import copy
import inspect
from typing import Any

import torch

from explorer.config import EngineOptions
from explorer.engine.capabilities import Capabilities
from explorer.engine.interface import HEAD_MIN_ROWS, STAT_ROWS
from explorer.engine.local.forward import ForwardEngine
from explorer.engine.local.loading import Loaded, load
from explorer.engine.local.memory import device_memory_mb
from explorer.engine.local.options import in_force
from explorer.engine.local.packed import pack
from explorer.engine.local.padded_cache import PaddedCache
from explorer.engine.text.tokens import vocab_bytes
from explorer.rules.sampler import max_logprobs

__all__ = ["HEAD_MIN_ROWS", "STAT_ROWS", "TorchEngine"]


def _eos_ids(model: Any, tokenizer: Any) -> set[int]:
    ids: set[int] = set()
    for src in (getattr(model, "generation_config", None), model.config):
        v = getattr(src, "eos_token_id", None) if src is not None else None
        ids.update(v if isinstance(v, (list, tuple)) else ([v] if v is not None else []))
    if tokenizer.eos_token_id is not None:
        ids.add(tokenizer.eos_token_id)
    return ids


@torch.inference_mode()
def _head_is_separable(model: Any, device: torch.device, vocab_size: int) -> bool:
    """True when logits == output_layer(body(ids)): no soft-capping or scaling after the head."""
    ids = torch.tensor([[0, 1, 2]], device=device) % vocab_size
    full = model(input_ids=ids).logits[0]
    hidden = model.base_model(input_ids=ids).last_hidden_state[0]
    split = model.get_output_embeddings()(hidden)
    return bool(torch.allclose(full.float(), split.float(), atol=1e-3, rtol=1e-3))


class TorchEngine(ForwardEngine):
    batches_texts = True  # several texts right-padded in one forward pass (explorer/engine/passes/many.py)

    def __init__(self, loaded: Loaded, compile: bool | None = None, options: EngineOptions | None = None):
        options = in_force(options)
        model, tokenizer = loaded.model, loaded.tokenizer
        self.model: Any = model  # a transformers model: its attributes vary by architecture
        head = model.get_output_embeddings()
        vocab_size = int(getattr(head, "out_features", 0) or model.config.vocab_size)
        context = int(
            getattr(model.config, "max_position_embeddings", 0) or getattr(tokenizer, "model_max_length", 2048)
        )
        # transformers >= 5.2x names the KV cache `cache`; older releases `past_key_values`
        params = inspect.signature(model.base_model.forward).parameters
        self._cache_arg = "cache" if "cache" in params else "past_key_values"
        super().__init__(
            name=loaded.name,
            tokenizer=tokenizer,
            vocab=vocab_bytes(tokenizer, vocab_size),
            vocab_size=vocab_size,
            context=context,
            eos_ids=_eos_ids(model, tokenizer),
            device=loaded.device,
            dtype=loaded.dtype,
            split_head=_head_is_separable(model, loaded.device, vocab_size),
            weights_mb=sum(p.numel() * p.element_size() for p in model.parameters()) / 2**20,
            compile=compile,
            options=options,
        )
        # float32 on a CPU: oneDNN's matmul on packed weights (engine/local/packed.py), if a copy fits in a quarter of memory
        room = device_memory_mb("cpu") / 4 - self.weights_mb if loaded.device.type == "cpu" else 0
        self.packed_mb = pack(model, room, options.onednn)  # memory the packed copies take, counted with the weights
        self.weights_mb += self.packed_mb

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
        options: EngineOptions | None = None,
    ) -> TorchEngine:
        """Load `model_id` (hub id or folder; `hub_only`: never a folder), called `name` (default: the id), under
        `options` (None: those in force, explorer/engine/local/options.py); `device`, `dtype`, `compile`, where
        given, win over theirs."""
        options = in_force(options)
        device, dtype = device or options.device, dtype or options.dtype
        loaded = load(model_id, device, dtype, trust_remote_code, name=name, hub_only=hub_only, options=options)
        return cls(loaded, compile, options)

    @property
    def capabilities(self) -> Capabilities:
        """What this engine can give (everything: the model runs here)."""
        return Capabilities.local(
            max_logprobs=max_logprobs(), chat_template=bool(getattr(self.tokenizer, "chat_template", None))
        )

    # ---- the two halves of a forward pass ----------------------------------------------
    def body(self, ids: torch.Tensor, past=None, cache: bool = False, last: bool = False):
        """ids (1, T) -> (hidden (T, H) or, for unusual heads, logits (T, V); KV cache when `cache`); with `last`,
        the last row only."""
        kw = {self._cache_arg: past, "use_cache": cache or past is not None}
        rows = slice(-1, None) if last else slice(None)
        with self.lock:
            if self.split_head:
                out = self.compute(self.model.base_model, input_ids=ids, **kw)
                return out.last_hidden_state[0, rows], getattr(out, self._cache_arg)
            out = self.compute(self.model, input_ids=ids, **(self.last_only if last else {}), **kw)
            return out.logits[0, rows], getattr(out, self._cache_arg)

    def body_states(
        self, ids: torch.Tensor, norm: torch.nn.Module, past=None, cache: bool = False
    ) -> tuple[torch.Tensor, list[torch.Tensor], Any]:
        """`body(ids, past, cache)` (every row) and, from the same forward pass, the residual stream: L+2 tensors
        (T, H), HF's entries 0..L-1 (the embeddings' output, then after each block), the input of the final norm
        `norm` (after L blocks) and its output. transformers reports the norm's output as its entry L, so the
        norm's input is read by a hook, registered under the lock: no other forward pass can run through it."""
        kw = {self._cache_arg: past, "use_cache": cache or past is not None, "output_hidden_states": True}
        seen: list[tuple[torch.Tensor, torch.Tensor]] = []
        with self.lock:
            hook = norm.register_forward_hook(lambda mod, args, out: seen.append((args[0], out)))
            try:
                out = self.compute(self.model.base_model if self.split_head else self.model, input_ids=ids, **kw)
            finally:
                hook.remove()
        before, after = seen[-1]  # the body applies its final norm last (lens.find_final_norm checks it)
        states = [h[0] for h in out.hidden_states[:-1]] + [before[0], after[0]]
        rows = out.last_hidden_state[0] if self.split_head else out.logits[0]
        return rows, states, getattr(out, self._cache_arg)

    @property
    def n_layers(self) -> int:
        """L, the model's blocks: its residual stream has L+1 entries (the embeddings' output, then each block's)."""
        return int(self._text_config().num_hidden_layers)

    @property
    def hidden_size(self) -> int:
        """H, the width of the residual stream."""
        return int(self._text_config().hidden_size)

    def body_rows(self, ids: torch.Tensor, past, mask: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """ids (B, 1), row b the next token of row b of the left-padded KV cache `past` (grown in place);
        `mask` (B, L + 1): 1 on real positions, this one included; `positions` (B, 1): each row's own position
        -> hidden (B, H) or, for unusual heads, logits (B, V) (explorer/engine/batching/slots.py)."""
        kw = {self._cache_arg: past, "use_cache": True, "attention_mask": mask, "position_ids": positions}
        with self.lock:
            if self.split_head:
                return self.compute(self.model.base_model, input_ids=ids, **kw).last_hidden_state[:, -1]
            return self.compute(self.model, input_ids=ids, **self.last_only, **kw).logits[:, -1]

    def _rows_cache(self, ids: torch.Tensor, past) -> dict:
        """The model's cache arguments for rows `ids` (B, L) that each continue `past`: a copy of it, repeated
        B times (the caller's cache is never changed), or no cache when `past` is None."""
        if past is not None:
            past = copy.deepcopy(past)
            if ids.shape[0] > 1:
                past.batch_repeat_interleave(ids.shape[0])
        return {self._cache_arg: past, "use_cache": past is not None}

    def last_rows(self, ids: torch.Tensor, past=None) -> torch.Tensor:
        """ids (B, L), every row continuing the text `past` holds (copied, never changed) -> each row's last
        position: hidden (B, H) or, for unusual heads, logits (B, V)."""
        kw = self._rows_cache(ids, past)
        with self.lock:
            if self.split_head:
                return self.compute(self.model.base_model, input_ids=ids, **kw).last_hidden_state[:, -1]
            return self.compute(self.model, input_ids=ids, **self.last_only, **kw).logits[:, -1]

    def continue_rows(self, ids: torch.Tensor, past=None) -> torch.Tensor:
        """ids (B, L), every row continuing the text `past` holds (copied, never changed) -> every position of
        every row in one forward pass: hidden (B, L, H) or, for unusual heads, logits (B, L, V). Rows may be
        right-padded: causal attention keeps a row's real positions blind to the padding after them."""
        kw = self._rows_cache(ids, past)
        with self.lock:
            if self.split_head:
                return self.compute(self.model.base_model, input_ids=ids, **kw).last_hidden_state
            return self.compute(self.model, input_ids=ids, **kw).logits

    @property
    def last_only(self) -> dict:
        """The forward argument that computes the logits of the last position only, where the model takes one."""
        params = inspect.signature(self.model.forward).parameters
        return {"logits_to_keep": 1} if "logits_to_keep" in params else {}

    def head(self, hidden: torch.Tensor) -> torch.Tensor:
        """hidden (c, H) -> logits (c, V) in the model's dtype."""
        if not self.split_head:
            return hidden
        return self.compute(self.model.get_output_embeddings(), hidden)

    # ---- continuous batching (explorer/engine/batching/scheduler.py: interface.Batching) -----------------
    batch_allocated = False  # the batch's padded cache grows as rows join and step

    @property
    def batch_positions(self) -> int:
        return self.context

    def _text_config(self) -> Any:
        config = self.model.config
        return config.get_text_config() if hasattr(config, "get_text_config") else config

    def batch_refusal(self) -> str | None:
        """Why generations cannot decode together: a sliding-window attention's cache is not padded here."""
        config = self._text_config()
        types = getattr(config, "layer_types", None) or []
        sliding = bool(getattr(config, "sliding_window", None) and getattr(config, "use_sliding_window", True))
        if sliding or any("sliding" in str(t) for t in types):
            return "a sliding-window model is not batched"
        return None

    def kv_position_bytes(self) -> int:
        """Bytes one position of one sequence takes in the KV cache (keys and values of every layer)."""
        config = self._text_config()
        heads = int(getattr(config, "num_attention_heads", 1) or 1)
        kv_heads = int(getattr(config, "num_key_value_heads", None) or heads)
        head_dim = int(getattr(config, "head_dim", None) or config.hidden_size // heads)
        size = self.model.dtype.itemsize if hasattr(self.model.dtype, "itemsize") else 4
        return 2 * int(config.num_hidden_layers) * kv_heads * head_dim * size

    def reserve(self, size: int, positions: int) -> None:
        """Nothing to set aside: the batch's cache grows with its rows (at most `size` x `positions` positions)."""

    def batch_cache(self) -> Any:
        """The rows of a new Batch: a left-padded DynamicCache (explorer/engine/local/padded_cache.py)."""
        return PaddedCache(self)
