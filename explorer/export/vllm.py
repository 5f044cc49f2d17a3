"""TokenScores -> vLLM's completions body carrying `prompt_logprobs` per choice (hosted vLLM APIs).

The entries themselves are `entries.position_entry` / `entries.prompt_logprobs` (named here too, as before).
"""

from __future__ import annotations

from explorer.export.common import as_list, envelope, response, usage
from explorer.export.entries import position_entry, prompt_logprobs
from explorer.export.openai_completion import Options as CompletionOptions
from explorer.export.openai_completion import choice as completion_choice
from explorer.export.vllm_stream import prompt_logprobs_value
from explorer.results.scores import TokenScores

__all__ = ["export", "position_entry", "prompt_logprobs", "prompt_logprobs_value"]


def export(
    results: TokenScores | list[TokenScores],
    *,
    created: int | None = None,
    id_: str | None = None,
    with_logprobs: bool | None = None,
) -> dict:
    """Completions body whose choices carry `prompt_logprobs` and `prompt_token_ids` (hosted vLLM APIs)."""
    results = as_list(results)
    head = envelope("text_completion", results[0].model, created, id_, "cmpl")
    choices = []
    for i, r in enumerate(results):
        wl = r.output_k is not None if with_logprobs is None else with_logprobs
        # logprobs forced on (`with_logprobs`) for a result only scored (output_k None): the entries, with 0 alternatives
        o = CompletionOptions(logprobs=(r.output_k or 0) if wl else None, return_token_ids=True)
        c = completion_choice(r, i, o)
        c["prompt_logprobs"] = prompt_logprobs(r)
        choices.append(c)
    return response(head, choices, usage(results, len(results)))  # n samples of one prompt
