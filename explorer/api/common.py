"""Request -> engine inputs, shared by the plain and the streaming routes."""

from __future__ import annotations

from explorer.engine import with_seed
from explorer.errors import ExplorerError
from explorer.settings import SamplerSettings


def settings_of(req, max_tokens: int, k: int | None, prompt_k: int | None) -> SamplerSettings:
    return with_seed(SamplerSettings(
        max_tokens=max_tokens, temperature=req.temperature, top_p=req.top_p, top_k=0 if req.top_k == -1 else req.top_k,
        seed=req.seed, stop=req.stops(), logprobs=k, prompt_logprobs=prompt_k, n=req.n))


def prompts_of(engine, prompt) -> list[list[int]]:
    if isinstance(prompt, str):
        return [engine.encode(prompt)]
    if prompt and all(isinstance(p, int) for p in prompt):
        return [list(prompt)]
    if prompt and all(isinstance(p, str) for p in prompt):
        return [engine.encode(p) for p in prompt]
    if prompt and all(isinstance(p, list) for p in prompt):
        return [list(p) for p in prompt]
    raise ExplorerError("`prompt` must be a string, a list of strings, or token ids.", param="prompt", code="invalid_value")
