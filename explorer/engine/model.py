"""Engine: one loaded model with its tokenizer, split into body (ids -> hidden) and head.

Scoring and generation run the body once and apply the output layer per chunk of
positions, so the full [positions, vocabulary] logits never exist at once.
"""

from __future__ import annotations

import inspect
import threading

import torch

from explorer.engine import loading
from explorer.engine.tokens import vocab_bytes
from explorer.errors import ExplorerError


class Engine:
    def __init__(self, loaded: loading.Loaded):
        self.model = loaded.model
        self.tokenizer = loaded.tokenizer
        self.device = loaded.device
        self.dtype = loaded.dtype
        self.name = loaded.name
        head = self.model.get_output_embeddings()
        self.vocab_size = int(getattr(head, "out_features", 0) or self.model.config.vocab_size)
        self.vocab = vocab_bytes(self.tokenizer, self.vocab_size)  # id -> raw bytes
        cfg = self.model.config
        self.context = int(getattr(cfg, "max_position_embeddings", 0) or getattr(self.tokenizer, "model_max_length", 2048))
        self.eos_ids = self._eos_ids()
        # transformers >= 5.2x names the KV cache `cache`; older releases `past_key_values`
        params = inspect.signature(self.model.base_model.forward).parameters
        self._cache_arg = "cache" if "cache" in params else "past_key_values"
        self.lock = threading.Lock()  # one forward at a time on the shared model
        self.split_head = self._head_is_separable()

    @classmethod
    def load(cls, model_id: str | None = None, device: str | None = None, dtype: str | None = None,
             trust_remote_code: bool = False) -> "Engine":
        return cls(loading.load(model_id, device, dtype, trust_remote_code))

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

    def head(self, hidden: torch.Tensor) -> torch.Tensor:
        """hidden (c, H) -> logits (c, V) in the model's dtype."""
        if not self.split_head:
            return hidden
        return self.model.get_output_embeddings()(hidden)

    def chunk_size(self) -> int:
        """Positions per chunk: about 4M logits, so temporaries stay near 16 MB each."""
        return max(1, (1 << 22) // self.vocab_size)

    # ---- text -> ids --------------------------------------------------------------------
    def encode(self, text: str) -> list[int]:
        """Token ids of `text` with the tokenizer's own special tokens (a BOS where expected)."""
        if not isinstance(text, str) or text == "":
            raise ExplorerError("The text is empty: type or paste some text to score.", param="prompt", code="empty_text")
        return list(self.tokenizer(text, add_special_tokens=True)["input_ids"])

    def encode_chat(self, messages: list[dict]) -> list[int]:
        """Token ids of `messages` through the model's chat template, ready for the reply."""
        if not getattr(self.tokenizer, "chat_template", None):
            raise ExplorerError(f"Model {self.name!r} has no chat template: use a plain prompt instead of chat messages.", param="messages", code="no_chat_template")
        if not isinstance(messages, list) or not messages:
            raise ExplorerError("`messages` must be a non-empty list of {role, content} objects.", param="messages", code="invalid_value")
        for m in messages:
            if not isinstance(m, dict) or m.get("role") not in ("system", "user", "assistant") or not isinstance(m.get("content"), str):
                raise ExplorerError("Each message needs a `role` (system, user or assistant) and a string `content`.", param="messages", code="invalid_value")
        text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def check_ids(self, ids: list[int]) -> None:
        if not ids:
            raise ExplorerError("The prompt has no tokens: give some text or token ids.", param="prompt", code="empty_text")
        if len(ids) > self.context:
            raise ExplorerError(f"The text is {len(ids)} tokens; {self.name} reads at most {self.context}: shorten it.", param="prompt", code="context_length_exceeded")
        bad = [i for i in ids if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < self.vocab_size]
        if bad:
            raise ExplorerError(f"Token id {bad[0]!r} is outside the vocabulary (0..{self.vocab_size - 1}).", param="prompt", code="invalid_token_id")
