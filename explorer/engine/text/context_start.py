"""Where a text starts: the token put before it so that its first token gets a score too.

Position 0 of a text has no context, so it is never scored. A tokenizer that adds a BOS
token (Llama, Mistral) already gives the first text token a context; for the others
(GPT-2, SmolLM2, Qwen) a document-start token can be put first: the end-of-text /
document-separator token where the model has one, or any of its special tokens.
"""

from __future__ import annotations

from explorer.errors import ExplorerError

DOCUMENT_TOKENS = ("<|endoftext|>", "<|end_of_text|>", "</s>", "<eos>", "<|eos|>", "<|end|>")  # most likely first


def adds_bos(tokenizer) -> bool:
    """True when the tokenizer itself puts its BOS token before every text."""
    bos = tokenizer.bos_token_id
    return bos is not None and tokenizer("a", add_special_tokens=True)["input_ids"][:1] == [bos]


def special_tokens(tokenizer, vocab_size: int) -> list[str]:
    """The tokenizer's special tokens (text), the document separator first, each once."""
    found = list(
        dict.fromkeys(
            [
                *tokenizer.all_special_tokens,
                *(t.content for i, t in sorted(tokenizer.added_tokens_decoder.items()) if t.special),
            ]
        )
    )
    ids = [tokenizer.convert_tokens_to_ids(t) for t in found]
    found = [t for t, i in zip(found, ids) if i is not None and 0 <= i < vocab_size]
    doc = document_token(found, tokenizer)
    return ([doc] if doc else []) + [t for t in found if t != doc]


def document_token(found: list[str], tokenizer) -> str | None:
    """The end-of-text / document-separator token among `found`, else the EOS token, else None."""
    for t in DOCUMENT_TOKENS:
        if t in found:
            return t
    eos = tokenizer.eos_token
    return eos if eos in found else None


def context_start_ids(tokenizer, vocab_size: int, name: str, mode: str | None) -> list[int]:
    """Ids to put before a text: [] for "none" and wherever the tokenizer adds a BOS itself;
    "bos" / "eos": that token; otherwise `mode` names one of the model's special tokens."""
    mode = (mode or "none").strip()
    specials = special_tokens(tokenizer, vocab_size)
    if mode.lower() in ("none", ""):
        return []
    if mode.lower() in ("bos", "eos"):
        tid = tokenizer.bos_token_id if mode.lower() == "bos" else tokenizer.eos_token_id
        if tid is None:
            raise ExplorerError(
                f"{name} has no {mode.upper()} token: use none, or one of its special tokens "
                f"({', '.join(specials[:8]) or 'it has none'}).",
                param="context_start",
                code="invalid_value",
            )
    elif mode in specials:
        tid = tokenizer.convert_tokens_to_ids(mode)
    else:
        shown = mode if len(mode) <= 40 else mode[:40] + "..."
        raise ExplorerError(
            f"Unknown context start {shown!r}: use none, bos, eos or one of {name}'s special tokens "
            f"({', '.join(specials[:8]) or 'it has none'}).",
            param="context_start",
            code="invalid_value",
        )
    return [] if adds_bos(tokenizer) else [int(tid)]
