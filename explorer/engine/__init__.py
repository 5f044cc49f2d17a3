"""The only package that imports torch and transformers: load, score, generate."""

from explorer.engine.generation import Done, Step, collect, generate, stream, with_seed
from explorer.engine.loading import DEFAULT_MODEL
from explorer.engine.model import Engine
from explorer.engine.scoring import score_ids, score_text
from explorer.engine.select import load_any, plan

__all__ = [
    "DEFAULT_MODEL",
    "Done",
    "Engine",
    "Step",
    "collect",
    "generate",
    "load_any",
    "plan",
    "score_ids",
    "score_text",
    "stream",
    "with_seed",
]
