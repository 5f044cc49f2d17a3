"""A chat conversation through the model's template, with where each turn starts among its tokens."""

from __future__ import annotations

from itertools import pairwise

from explorer.engine.interface import ModelEngine
from explorer.errors import ExplorerError


def chat_turns(engine: ModelEngine, messages: list[dict]) -> tuple[list[int], list[tuple[int, str]]]:
    """Token ids of `messages` ready for the reply, and (first position, role) of each turn.

    Turn i starts where the template of messages[:i] ends; the reply's own header (the generation
    prompt) is a last "assistant" turn. Templates whose shorter conversations are not a prefix of the
    whole one (rare) get no turn marks rather than wrong ones.
    """
    ids = engine.encode_chat(messages)
    try:
        prefixes = [engine.encode_chat(messages[:i], add_generation_prompt=False) for i in range(1, len(messages) + 1)]
    except ExplorerError:
        return ids, []
    if any(ids[: len(p)] != p for p in prefixes):
        return ids, []
    starts = [(0, messages[0]["role"])] + [(len(p), m["role"]) for p, m in zip(prefixes, messages[1:])]
    if len(prefixes[-1]) < len(ids):
        starts.append((len(prefixes[-1]), "assistant"))
    if any(b <= a for (a, _), (b, _) in pairwise(starts)):
        return ids, []
    return ids, _implicit_system(ids, starts)


def _implicit_system(ids: list[int], starts: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Split off a system turn the template adds by itself (SmolLM2, Qwen): the first turn's span then holds
    the token that opens every turn's header twice; the user's turn starts at its last occurrence."""
    if len(starts) < 2 or starts[0][1] == "system":
        return starts
    opener, end = ids[starts[-1][0]], starts[1][0]
    seen = [i for i in range(1, end) if ids[i] == opener]
    return [(0, "system"), (seen[-1], starts[0][1]), *starts[1:]] if seen else starts
