"""Where a text starts: the token put before it so that its first token gets a score too.

Position 0 of a text has no context, so it is never scored. The document start is the token the model was trained
to see at a document's start, resolved once here for every surface (page, CLI, `/v1`'s tokenizer info, Python):

1. a tokenizer that adds a BOS itself (Llama, Mistral): that BOS; nothing is put before the text;
2. else the end-of-text / document-separator token where the model has one (GPT-2, SmolLM2, Qwen: `<|endoftext|>`);
3. else its BOS, else its EOS, unless that token is one of its chat template's own (a role or turn token such as
   SmolLM2-Instruct's `<|im_start|>` / `<|im_end|>`: a text after it reads as a chat turn, not a document);
4. else none: the text is scored from its own first token, and a DocumentStartWarning says what that means.

"document", "bos", "eos" and True all name that token; "none" nothing; any other special token is used only when
asked for by its text or its id.
"""

from __future__ import annotations

import warnings

from explorer.errors import ExplorerError

DOCUMENT_TOKENS = ("<|endoftext|>", "<|end_of_text|>", "</s>", "<eos>", "<|eos|>")  # most likely first
DOCUMENT = ("document", "bos", "eos", "true")  # the names that mean the model's document start
NONE = ("none", "", "false")
NO_START = (
    "{name} has no document-start token (no end-of-text token, and its BOS/EOS are missing or chat-turn tokens): "
    "the text is scored from its first token, which has no context, so its first word has no surprisal and every "
    "later word is conditioned on the text alone. Name a special token to put first if you want one."
)


class DocumentStartWarning(UserWarning):
    """A model has no document-start token, so the first word of a text cannot be scored."""


def adds_bos(tokenizer) -> bool:
    """True when the tokenizer itself puts its BOS token before every text."""
    bos = tokenizer.bos_token_id
    return bos is not None and tokenizer("a", add_special_tokens=True)["input_ids"][:1] == [bos]


def _found(tokenizer, vocab_size: int) -> list[str]:
    """The tokenizer's special tokens (text) with an id in the vocabulary, each once."""
    found = list(
        dict.fromkeys(
            [
                *tokenizer.all_special_tokens,
                *(t.content for i, t in sorted(tokenizer.added_tokens_decoder.items()) if t.special),
            ]
        )
    )
    ids = [tokenizer.convert_tokens_to_ids(t) for t in found]
    return [t for t, i in zip(found, ids) if i is not None and 0 <= i < vocab_size]


def _chat_tokens(tokenizer) -> str:
    """The chat template's text (all of them where there are several): a token written in it is a turn token."""
    t = getattr(tokenizer, "chat_template", None)
    return " ".join(t.values()) if isinstance(t, dict) else (t or "")


def document_token(found: list[str], tokenizer) -> str | None:
    """The document-start token among `found` (steps 2-3 of the module): None where the model has none."""
    for t in DOCUMENT_TOKENS:
        if t in found:
            return t
    chat = _chat_tokens(tokenizer)
    for t in (tokenizer.bos_token, tokenizer.eos_token):
        if t and t in found and t not in chat:
            return t
    return None


def document_start(tokenizer, vocab_size: int) -> str | None:
    """The token a text of this model starts after (the BOS a tokenizer adds itself included), None where none."""
    if adds_bos(tokenizer):
        return str(tokenizer.bos_token)
    return document_token(_found(tokenizer, vocab_size), tokenizer)


def special_tokens(tokenizer, vocab_size: int) -> list[str]:
    """The tokenizer's special tokens (text), the document start first where there is one, each once."""
    found = _found(tokenizer, vocab_size)
    doc = document_token(found, tokenizer)
    return ([doc] if doc else []) + [t for t in found if t != doc]


def context_start_ids(tokenizer, vocab_size: int, name: str, mode: str | None) -> list[int]:
    """Ids to put before a text: [] for "none" and wherever the tokenizer adds a BOS itself; the document start for
    "document" / "bos" / "eos" (none and a DocumentStartWarning where the model has none); otherwise `mode` names
    one of the model's special tokens by its text, or a token by its id."""
    mode = (mode or "none").strip()
    if mode.lower() in NONE:
        return []
    specials = special_tokens(tokenizer, vocab_size)
    if mode.lower() in DOCUMENT:
        if adds_bos(tokenizer):
            return []
        doc = document_token(specials, tokenizer)
        if doc is None:
            warnings.warn(NO_START.format(name=name), DocumentStartWarning, stacklevel=2)
            return []
        return [int(tokenizer.convert_tokens_to_ids(doc))]
    if mode in specials:
        tid = int(tokenizer.convert_tokens_to_ids(mode))
    elif mode.isascii() and mode.isdigit() and int(mode) < vocab_size:
        tid = int(mode)
    else:
        shown = mode if len(mode) <= 40 else mode[:40] + "..."
        raise ExplorerError(
            f"Unknown context start {shown!r}: use document, none, one of {name}'s special tokens "
            f"({', '.join(specials[:8]) or 'it has none'}) or a token id (0..{vocab_size - 1}).",
            param="context_start",
            code="invalid_value",
        )
    return [] if adds_bos(tokenizer) else [tid]
