"""TokenScores -> vLLM shapes: `prompt_logprobs` entries, and a completions body carrying them per choice."""

from __future__ import annotations

import numpy as np

from explorer.export import openai_completion
from explorer.export.common import envelope, num, nums, token_str, top_pairs, usage
from explorer.result import TokenScores


def _lp(logprob: float, rank: int, piece: bytes) -> dict:
    return {"logprob": num(logprob), "rank": int(rank), "decoded_token": token_str(piece)}


def position_entry(r: TokenScores, pos: int, texts: dict[int, str] | None = None) -> dict[str, dict] | None:
    """`{id: {logprob, rank, decoded_token}}`: the actual token first, then the top-k (k or k+1 keys).

    `texts` caches id -> decoded token across positions (the full vocabulary is large).
    """
    if not r.scored[pos]:
        return None
    actual = int(r.token_ids[pos])
    out = {str(actual): _lp(r.logprobs[pos], r.ranks[pos], r.token_bytes[pos])}
    if r.top_k(pos) == -1 and r.full_logprobs is not None:
        row = r.full_logprobs[pos]  # (V,)
        order = np.argsort(-row, kind="stable")
        texts = texts if texts is not None else {}
        for rank, (i, lp) in enumerate(zip(order.tolist(), nums(row[order])), start=1):
            if i != actual:
                t = texts.get(i)
                if t is None:
                    t = texts[i] = token_str(r.pieces[i])
                out[str(i)] = {"logprob": lp, "rank": rank, "decoded_token": t}
        return out
    for rank, (i, lp) in enumerate(top_pairs(r, pos), start=1):
        if i != actual:
            out[str(i)] = _lp(lp, rank, r.pieces[i])
    return out


def prompt_logprobs(r: TokenScores) -> list[dict | None] | None:
    """One entry per prompt token, entry 0 null; None when the prompt was not scored."""
    if r.prompt_k is None:
        return None
    texts: dict[int, str] = {}
    return [position_entry(r, pos, texts) for pos in range(r.n_prompt)]


def export(results: TokenScores | list[TokenScores], *, created: int | None = None, id_: str | None = None,
           with_logprobs: bool | None = None) -> dict:
    """Completions body whose choices carry `prompt_logprobs` and `prompt_token_ids` (hosted vLLM APIs)."""
    results = results if isinstance(results, list) else [results]
    body = envelope("text_completion", results[0].model, created, id_, "cmpl")
    choices = []
    for i, r in enumerate(results):
        wl = r.output_k is not None if with_logprobs is None else with_logprobs
        c = openai_completion.choice(r, i, echo=False, with_logprobs=wl)
        c["prompt_logprobs"] = prompt_logprobs(r)
        c["prompt_token_ids"] = r.token_ids[: r.n_prompt].tolist()
        choices.append(c)
    body["choices"] = choices
    body["usage"] = usage(results)
    return body
