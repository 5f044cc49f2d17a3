"""The only package that imports torch and transformers: load, score, generate."""

from explorer.engine.interface import Forward, ModelEngine
from explorer.engine.local.loading import DEFAULT_MODEL
from explorer.engine.local.torch_engine import TorchEngine
from explorer.engine.passes.events import Done, Step
from explorer.engine.passes.generation import collect, generate, stream, with_seed
from explorer.engine.passes.many import score_prompts
from explorer.engine.passes.scoring import score_ids, score_text
from explorer.engine.select import EngineSpec, load, plan

__all__ = [
    "DEFAULT_MODEL",
    "Done",
    "EngineSpec",
    "Forward",
    "ModelEngine",
    "Step",
    "TorchEngine",
    "collect",
    "generate",
    "load",
    "plan",
    "score_ids",
    "score_prompts",
    "score_text",
    "stream",
    "with_seed",
]
