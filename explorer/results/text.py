"""A token's text as the page shows it: whitespace as glyphs, a token that completes no character as its bytes."""

from __future__ import annotations

_VISIBLE = str.maketrans({" ": "·", "\t": "→", "\r": "␍"})


def visible(text: str) -> str:
    """Whitespace shown as glyphs (`·` space, `↵` newline, `→` tab), plain text (not escaped)."""
    return text.translate(_VISIBLE).replace("\n", "↵")


def token_label(text: str, b: bytes) -> str:
    """`visible(text)`, or `<0xNN>` per byte for a token that completes no character (part of a multi-byte one)."""
    return visible(text) if text or not b else "".join(f"<0x{x:02X}>" for x in b)
