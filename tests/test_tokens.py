"""Per-token raw bytes, display text and offsets for both tokenizer families."""

from __future__ import annotations

import pytest

from explorer.engine import score_text
from explorer.engine.text.tokens import piece_bytes

SAMPLES = ["Grüße 🦊 Ωmega", "東京 is big. Emoji: 👋🙂", "a\n\n  b\tc", "<script>alert(1)</script>"]


@pytest.mark.parametrize("text", SAMPLES)
def test_bytes_join_to_the_text(engine, text):
    r = score_text(engine, text, k=1)
    joined = b"".join(r.token_bytes)
    special = engine.vocab[engine.tokenizer.bos_token_id] if r.token_ids[0] == engine.tokenizer.bos_token_id else b""
    body = joined[len(special) :]
    # SentencePiece adds one leading space (the dummy prefix); byte-level keeps the text as is
    assert body in (text.encode(), b" " + text.encode())
    assert "".join(r.token_text) == joined.decode("utf-8")
    assert r.offsets.tolist() == [sum(len(t) for t in r.token_text[:i]) for i in range(r.n)]


def test_split_characters_keep_their_own_bytes(llama):
    r = score_text(llama, "🦊", k=1)
    fox = "🦊".encode()
    assert [b for b in r.token_bytes if len(b) == 1 and b[0] >= 0x80] == [bytes([c]) for c in fox]
    # the display text puts the whole character on the token that completes it
    texts = r.token_text
    assert texts.count("🦊") == 1 and "\ufffd" not in "".join(texts)


def test_byte_level_split_emoji(gpt2):
    r = score_text(gpt2, "x 🦊", k=1)
    assert any(len(b) and not _valid(b) for b in r.token_bytes)  # at least one partial-character token
    assert "".join(r.token_text) == "x 🦊"


def _valid(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


@pytest.mark.parametrize(
    ("piece", "byte_level", "expected"),
    [
        ("Ġthe", True, b" the"),
        ("ĊĊ", True, b"\n\n"),
        ("ðŁ", True, b"\xf0\x9f"),
        ("▁the", False, b" the"),
        ("<0x0A>", False, b"\n"),
        ("<0xF0>", False, b"\xf0"),
        (None, True, b""),
    ],
)
def test_piece_bytes(piece, byte_level, expected):
    assert piece_bytes(piece, byte_level) == expected
