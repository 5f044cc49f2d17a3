"""TokenizerText: an engine's text side over a Hugging Face tokenizer, written once for every engine that holds one.

The torch and llama.cpp engines (through ForwardEngine, explorer/engine/local/forward.py) take it whole; the remote
engine (explorer/engine/remote/engine.py) takes it too and adds, per method, the server's answer where no tokenizer
loads here.

A mixin rather than an object the engines hold: the methods are the engine's own (the ModelEngine protocol asks them
of the engine), and they read the engine's attributes as they are at each call (a served model's `vocab_size` is
learnt after it starts), so there is nothing to hand down, keep in step or forward method by method.
"""

from __future__ import annotations

from typing import Any

from explorer.engine.text.context_start import adds_bos, context_start_ids, document_start, special_tokens
from explorer.engine.text.encoding import chat_ids, check_ids, check_text


class TokenizerText:
    """text <-> ids and where a text starts, from the engine's `tokenizer`, `name`, `context` and `vocab_size`."""

    name: str
    tokenizer: Any  # a transformers tokenizer (an engine without one overrides what needs it)
    context: int  # most tokens per text
    vocab_size: int  # 0: not known (a served model's): ids are then checked by the server

    # ---- text -> ids -----------------------------------------------------------------------
    def encode(self, text: str) -> list[int]:
        """Token ids of `text` with the tokenizer's own special tokens (a BOS where expected)."""
        check_text(text)
        return self.tokenize(text)

    def encode_many(self, texts: list[str]) -> list[list[int]]:
        """`encode` of each of `texts` (each non-empty), in one call of the tokenizer (one `encode` each where no
        tokenizer loads here)."""
        if self.tokenizer is None:
            return [self.encode(text) for text in texts]
        for text in texts:
            check_text(text)
        return [list(ids) for ids in self.tokenizer(texts, add_special_tokens=True)["input_ids"]] if texts else []

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
        return self.template_ids(messages, add_generation_prompt, continue_final_message, template_kwargs)

    def template_ids(self, messages: list[dict], reply: bool, continue_last: bool, kwargs: dict | None) -> list[int]:
        """`encode_chat`'s ids (`reply`: add_generation_prompt, `continue_last`: continue_final_message, `kwargs`:
        the template's own) from whoever holds the chat template: here the tokenizer. An engine whose template lives
        elsewhere (a server's) overrides this one method and keeps `encode_chat`'s signature and defaults."""
        return chat_ids(self.tokenizer, self.name, messages, reply, continue_last, kwargs)

    def check_ids(self, ids: list[int]) -> None:
        """Refuse no ids, more than `context`, and ids outside the vocabulary (explorer/engine/text/encoding.py)."""
        check_ids(ids, self.name, self.context, self.vocab_size)

    # ---- where a text starts (see explorer/engine/text/context_start.py) ----------------------
    @property
    def adds_bos(self) -> bool:
        """True when the tokenizer puts a BOS token before every text (its first token is then scored)."""
        return adds_bos(self.tokenizer)

    def special_tokens(self) -> list[str]:
        """The model's special tokens as text, its document separator (end-of-text) first."""
        return special_tokens(self.tokenizer, self.vocab_size)

    def document_start(self) -> str | None:
        """The token a text of this model starts after: the BOS its tokenizer adds, else its document start
        (end-of-text; never a chat turn token); None where it has none."""
        return document_start(self.tokenizer, self.vocab_size)

    def context_start_ids(self, mode: str | None) -> list[int]:
        """Ids to put before a text so its first token is scored: "none"; "document" (= "bos" = "eos"): the
        document start; or a special token's text or an id ([] where the tokenizer adds a BOS itself);
        ExplorerError for a token this model does not have."""
        return context_start_ids(self.tokenizer, self.vocab_size, self.name, mode)
