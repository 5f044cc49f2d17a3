"""TokenScores -> JSON of a vLLM `RequestOutput` (`LLM.generate` with `SamplingParams(logprobs=k, prompt_logprobs=k)`)."""

from __future__ import annotations

from explorer.export.entries import position_entry, prompt_logprobs
from explorer.results.scores import TokenScores


def completion_output(r: TokenScores, index: int) -> dict:
    """`outputs[i]`: per generated token `{id: Logprob}`, sampled token first."""
    asked = r.output_k is not None
    return {
        "index": index,
        "text": r.completion_text,
        "token_ids": r.token_ids[r.n_prompt :].tolist(),
        "cumulative_logprob": r.cumulative_logprob if asked else None,
        "logprobs": [position_entry(r, pos) for pos in range(r.n_prompt, r.n)] if asked else None,
        "finish_reason": r.finish_reason or "length",
    }


def export(results: TokenScores | list[TokenScores], *, request_id: str = "0") -> dict:
    results = results if isinstance(results, list) else [results]
    r0 = results[0]
    return {
        "request_id": request_id,
        "prompt": r0.prompt_text,
        "prompt_token_ids": r0.token_ids[: r0.n_prompt].tolist(),
        "prompt_logprobs": prompt_logprobs(r0),
        "outputs": [completion_output(r, i) for i, r in enumerate(results)],
        "finished": True,
    }
