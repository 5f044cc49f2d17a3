"""Per-token raw bytes for both tokenizer families.

Byte-level BPE (GPT-2, SmolLM, Llama 3, Qwen) maps each byte to a printable
character (`Ġ` = space); SentencePiece with byte fallback (Llama 2, Mistral) writes
`▁` for a space and `<0xNN>` for a raw byte. Added/special tokens are their text.
"""

from __future__ import annotations

import json
import re

_BYTE_TOKEN = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable-character table."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


_BYTE_DECODER = {c: b for b, c in _bytes_to_unicode().items()}


def is_byte_level(tokenizer) -> bool:
    """True when the tokenizer decodes with a ByteLevel step (GPT-2 family)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        spec = json.loads(backend.to_str())
        return '"ByteLevel"' in json.dumps(spec.get("decoder"))
    pieces = tokenizer.convert_ids_to_tokens(list(range(min(len(tokenizer), 5000))))
    return any(p and "Ġ" in p for p in pieces)


def piece_bytes(piece: str | None, byte_level: bool) -> bytes:
    """The raw bytes of one vocabulary piece (a normal, non-added token)."""
    if piece is None:
        return b""
    m = _BYTE_TOKEN.match(piece)
    if m:
        return bytes([int(m.group(1), 16)])
    if byte_level:
        if all(c in _BYTE_DECODER for c in piece):
            return bytes(_BYTE_DECODER[c] for c in piece)
        return piece.encode("utf-8")
    return piece.replace("▁", " ").encode("utf-8")


def vocab_bytes(tokenizer, size: int) -> list[bytes]:
    """Raw bytes of every id in [0, size); ids past the tokenizer's vocabulary are b''."""
    byte_level = is_byte_level(tokenizer)
    n = min(size, len(tokenizer))
    pieces = tokenizer.convert_ids_to_tokens(list(range(n)))
    table = [piece_bytes(p, byte_level) for p in pieces]
    for i, tok in tokenizer.added_tokens_decoder.items():
        if i < n and not _BYTE_TOKEN.match(tok.content):
            table[i] = tok.content.encode("utf-8")
    return table + [b""] * (size - n)
