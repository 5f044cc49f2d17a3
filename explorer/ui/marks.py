"""Marks for a result: which of its tokens are markers (special tokens) and where chat turns start."""

from __future__ import annotations

from weakref import WeakKeyDictionary

from explorer.engine import ModelEngine
from explorer.render.heatmap import Marks

_SPECIAL: WeakKeyDictionary = WeakKeyDictionary()  # engine -> its special ids, computed once


def special_ids(engine: ModelEngine) -> frozenset[int]:
    """Ids of the model's special tokens (template markers, BOS/EOS, document separators)."""
    if engine not in _SPECIAL:
        tok = engine.tokenizer
        _SPECIAL[engine] = frozenset(int(tok.convert_tokens_to_ids(t)) for t in engine.special_tokens()) | frozenset(
            engine.eos_ids
        )
    return _SPECIAL[engine]


def marks_of(engine: ModelEngine, turns: list[tuple[int, str]] | None = None) -> Marks:
    """Marks of a result from `engine`: its special tokens, and the chat `turns` (first position, role)."""
    return Marks(special_ids(engine), tuple(turns or ()))
