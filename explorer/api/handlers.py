"""What the `/v1` routes do with a request, HTTP aside: validate it against the limits, call the engine, and
shape the body with `explorer.export` (routes.py frames it; streaming.py shapes the `stream: true` chunks)."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any

from explorer.api import hidden
from explorer.api.runner import HERE, Runner, Work
from explorer.api.schemas import ChatRequest, CompletionRequest
from explorer.engine import generate, score_ids, score_prompts
from explorer.engine.analyses.hidden import generate_states, score_states
from explorer.engine.kernels.listed import listed_width
from explorer.errors import ExplorerError
from explorer.export import openai_chat, openai_completion
from explorer.export.native import full_vocab_npy
from explorer.results.hidden import Capture
from explorer.results.scores import TokenScores
from explorer.rules.sampler import Limits, SamplerSettings, check_number, max_logprobs
from explorer.serving.models import Models


def permission(created: int) -> dict:
    """The one `permission` object vLLM lists on each model card (fixed values: it grants what the API does)."""
    return {
        "id": f"modelperm-{uuid.uuid4().hex[:16]}",
        "object": "model_permission",
        "created": created,
        "allow_create_engine": False,
        "allow_sampling": True,
        "allow_logprobs": True,
        "allow_search_indices": False,
        "allow_view": True,
        "allow_fine_tuning": False,
        "organization": "*",
        "group": None,
        "is_blocking": False,
    }


def check_size(req, prompts: list[list[int]], limits: Limits, engine) -> None:
    """The request's cost against the server's limits, before any work (`n` in its own range first, as
    completions' settings check it, so that both routes say the same)."""
    check_number("n", req.n)
    choices = len(prompts) * req.n
    if choices > limits.max_choices:
        raise ExplorerError(
            f"This request asks for {choices} choices (prompts x n); this server allows {limits.max_choices} "
            "(EXPLORER_MAX_CHOICES): send fewer prompts or a smaller n.",
            param="n",
            code="too_many_choices",
        )
    for ids in prompts:
        limits.check_input(len(ids))
        engine.check_ids(ids)
    if req.prompt_logprobs == -1:
        total = sum(len(p) for p in prompts) * req.n
        cap = limits.full_vocab_max_prompt_tokens
        cap = min(cap, engine.capabilities.full_vocab_max_prompt_tokens or cap)  # 0: the engine says why it has none
        if total > cap:
            raise ExplorerError(
                f"`prompt_logprobs: -1` (full vocabulary) is limited to {cap} prompt tokens x n per request; this one has {total}. "
                "Shorten the prompt, lower n, or ask for a top-k.",
                param="prompt_logprobs",
                code="full_vocab_prompt_too_long",
            )


def within(cap: int, other: int) -> int:
    """The tighter of two top-k caps (-1: no cap)."""
    return other if cap == -1 else cap if other == -1 else min(cap, other)


def prompts_of(engine, prompt) -> list[list[int]]:
    """Token ids of each prompt: text is tokenized, ids are taken exactly as sent."""
    if isinstance(prompt, str):
        return [engine.encode(prompt)]
    if prompt and all(isinstance(p, int) for p in prompt):
        return [list(prompt)]
    if prompt and all(isinstance(p, str) for p in prompt):
        return [engine.encode(p) for p in prompt]
    if prompt and all(isinstance(p, list) for p in prompt):
        return [list(p) for p in prompt]
    raise ExplorerError(
        "`prompt` must be a string, a list of strings, or token ids.", param="prompt", code="invalid_value"
    )


@dataclass(frozen=True)
class Plan:
    """A `/v1` request as the engine runs it and the exporter writes it, made in one call at the edge
    (`completion_plan`, `chat_plan`) before any work: every value checked once, None kept as "not asked"."""

    prompts: list[list[int]]  # each prompt's token ids (chat: the one templated conversation)
    settings: SamplerSettings  # the one validated sampler, with its seed
    options: Any  # the exporter's Options: openai_completion.Options or openai_chat.Options
    hidden: hidden.Ask | None = None  # `return_hidden_states`; None: not asked
    listed: Any = None  # completions' `prompt_logprob_token_ids` (None: not asked)


def completion_plan(engine, req: CompletionRequest, limits: Limits) -> Plan:
    """A completions request's plan: prompts, settings and export options, every rule checked before any work."""
    req.check()
    s = req.to_settings()
    prompts = prompts_of(engine, req.prompt)
    check_size(req, prompts, limits, engine)
    limits.check_new_tokens(s.max_tokens, "max_tokens", engine.context)
    ask = req.hidden_ask
    return Plan(prompts, s, completion_options(req, s, ask), ask, req.prompt_logprob_token_ids)


def completion_options(req: CompletionRequest, s, ask: hidden.Ask | None = None) -> openai_completion.Options:
    listed = req.prompt_logprob_token_ids
    width = listed_width(listed) if listed else None
    echo_k = req.logprobs if req.echo else None
    return openai_completion.Options(
        echo=req.echo,
        logprobs=s.output_k if req.logprobs is not None else None,
        # echo with logprobs fills prompt_logprobs too (vLLM), with the prompt_logprobs k where both are asked
        prompt_logprobs=width if listed else req.prompt_logprobs if req.prompt_logprobs is not None else echo_k,
        echo_k=req.prompt_logprobs if echo_k is not None else None,
        return_token_ids=bool(req.return_token_ids),
        tokens_as_ids=bool(req.return_tokens_as_token_ids),
        n=s.n,
        text_stats=req.text_stats,
        hidden_states=ask.shape if ask is not None else None,
    )


def asked(prompts: list[list[int]], s) -> dict[str, int]:
    """The positions a request's work reads and the tokens it may generate (n samples of each prompt): what a ZeroGPU
    call asks for (explorer/api/runner.py)."""
    return {"tokens_in": sum(len(ids) for ids in prompts), "tokens_out": len(prompts) * s.n * s.max_tokens}


def completion_body(engine, req: CompletionRequest, limits: Limits, run: Runner = HERE) -> dict:
    p = completion_plan(engine, req, limits)
    prompts, s, ask = p.prompts, p.settings, p.hidden
    captures = None
    if ask is not None:
        new = [min(s.max_tokens, max(engine.context - len(ids), 0)) for ids in prompts]
        if hidden.forwarded(engine):  # a backend that computes them: the request goes there whole
            hidden.check_forwarded(ask, prompts, new, s.n, limits)
            return engine.forward("/v1/completions", req.model_dump(exclude_unset=True, by_alias=True))
        captures = hidden.plan(ask, engine, prompts, new, s.n, limits)
    results = run.call(engine, Work(completions, (prompts, s, p.listed, captures), **asked(prompts, s)))
    return openai_completion.export(results, options=p.options)


def completions(engine, prompts: list[list[int]], s, listed, captures: list[Capture] | None) -> list[TokenScores]:
    """n choices of each prompt, each with its `hidden_states` where `captures` (one per prompt) asks for them. Echo
    scoring (`max_tokens: 0`) of several prompts scores them together, several a forward pass where the engine
    batches texts (`score_prompts`: the numbers each gets alone)."""
    k = s.prompt_logprobs if s.prompt_logprobs is not None else 0
    if s.max_tokens == 0 and captures is None and listed is None:
        return [r for r in score_prompts(engine, prompts, k) for _ in range(s.n)]
    results: list[TokenScores] = []
    for i, ids in enumerate(prompts):
        capture = captures[i] if captures is not None else None
        if s.max_tokens == 0:  # echo scoring: the same scored prompt for every choice
            if capture is None:
                results += [score_ids(engine, ids, k=k, listed=listed)] * s.n
            else:  # the same forward passes give the logprobs and the states
                results += [score_states(engine, ids, k, capture, listed=listed)] * s.n
        else:
            results += generated(engine, ids, s, capture)
    return results


def generated(engine, ids: list[int], s, capture: Capture | None) -> list[TokenScores]:
    """n samples of prompt `ids`, each with its `hidden_states` where `capture` asks for them."""
    return generate(engine, ids, s) if capture is None else generate_states(engine, ids, s, capture)


def full_vocab_scores(engine, ids: list[int]) -> TokenScores:
    """The prompt scored with every position's full distribution."""
    return score_ids(engine, ids, k=-1)


def full_vocab_npy_body(engine, req, limits: Limits, run: Runner = HERE) -> bytes:
    """`Accept: application/x-npy` with `prompt_logprobs: -1`: the prompt's full distributions as float16 .npy."""
    if req.prompt_logprobs != -1:
        raise ExplorerError(
            "`Accept: application/x-npy` returns full-vocabulary rows: set `prompt_logprobs: -1`.",
            param="prompt_logprobs",
            code="invalid_value",
        )
    if req.hidden_ask is not None:  # a .npy body has no room for them
        raise ExplorerError(
            "`Accept: application/x-npy` answers the prompt's distributions only: drop `return_hidden_states`, or "
            "ask for JSON.",
            param="return_hidden_states",
            code="invalid_value",
        )
    if isinstance(req, ChatRequest):
        (ids,) = chat_plan(engine, req, limits).prompts
    else:
        prompts = completion_plan(engine, req, limits).prompts
        if len(prompts) != 1:
            raise ExplorerError("`Accept: application/x-npy` takes one prompt.", param="prompt", code="invalid_value")
        ids = prompts[0]
    return full_vocab_npy(run.call(engine, Work(full_vocab_scores, (ids,), tokens_in=len(ids))))


def chat_plan(engine, req: ChatRequest, limits: Limits) -> Plan:
    """A chat request's plan: the templated conversation's ids, settings and export options, checked before any
    work."""
    req.check()
    messages = req.chat_messages()
    ids = engine.encode_chat(
        messages,
        add_generation_prompt=req.add_generation_prompt,
        continue_final_message=req.continue_final_message,
        template_kwargs=req.chat_template_kwargs,
    )
    check_size(req, [ids], limits, engine)
    s = req.to_settings(limits.max_new_tokens(engine.context, len(ids)))
    if req.limit_given():
        limits.check_new_tokens(s.max_tokens, req.limit_param(), engine.context)
    ask = req.hidden_ask
    return Plan([ids], s, chat_options(req, s, messages, ask), ask)


def chat_options(req: ChatRequest, s, messages: list[dict], ask: hidden.Ask | None = None) -> openai_chat.Options:
    return openai_chat.Options(
        logprobs=bool(req.logprobs),
        top_logprobs=s.output_k,
        prompt_logprobs=req.prompt_k(),
        return_token_ids=bool(req.return_token_ids),
        tokens_as_ids=bool(req.return_tokens_as_token_ids),
        echo_text=req.echo_text(messages),
        hidden_states=ask.shape if ask is not None else None,
    )


def chat_body(engine, req: ChatRequest, limits: Limits, run: Runner = HERE) -> dict:
    p = chat_plan(engine, req, limits)
    (ids,), s, ask = p.prompts, p.settings, p.hidden
    capture = None
    if ask is not None:
        new = min(s.max_tokens, max(engine.context - len(ids), 0))
        if hidden.forwarded(engine):  # as completion_body
            hidden.check_forwarded(ask, [ids], [new], s.n, limits)
            return engine.forward("/v1/chat/completions", req.model_dump(exclude_unset=True, by_alias=True))
        (capture,) = hidden.plan(ask, engine, [ids], [new], s.n, limits)
    results = run.call(engine, Work(generated, (ids, s, capture), **asked([ids], s)))
    return openai_chat.export(results, options=p.options)


def card(models: Models, limits: Limits, name: str) -> dict:
    """`/v1/models` entry of a served model (vLLM's keys; the engine's numbers once it is loaded)."""
    engine = models.loaded(name)
    created = int(time.time())
    return {
        "id": name,
        "object": "model",
        "created": created,
        "owned_by": "logprob-explorer",
        "root": name,  # vLLM: the folder it loaded; here the served name (no server path is shown)
        "parent": None,
        "max_model_len": engine.context if engine else None,
        "permission": [permission(created)],
        "engine": models.engine_of(name),
        "vocab_size": engine.vocab_size if engine else None,
        "capabilities": {  # ours, within the engine's (a remote backend's caps)
            "full_vocab_max_prompt_tokens": min(
                limits.full_vocab_max_prompt_tokens,
                engine.capabilities.full_vocab_max_prompt_tokens if engine else limits.full_vocab_max_prompt_tokens,
            ),
            **hidden.caps(engine, limits),  # `return_hidden_states`: positions returned x n and bytes (0: not served)
            "max_logprobs": within(max_logprobs(), engine.capabilities.max_logprobs if engine else -1),
            "prompt_logprobs": True,
            **(
                {
                    "engine": engine.capabilities.kind,
                    "ranks": engine.capabilities.ranks,
                    "hidden_states": engine.capabilities.hidden_states,
                }
                if engine
                else {}
            ),
        },
    }


def model_list(models: Models, limits: Limits) -> dict:
    """`GET /v1/models`: every listed model's card, and the server's limits."""
    return {
        "object": "list",
        "data": [card(models, limits, name) for name in models.listed()],
        "limits": limits.report(),
    }
