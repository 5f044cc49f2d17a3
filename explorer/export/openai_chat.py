"""TokenScores -> OpenAI Chat Completions body (`logprobs: true`, `top_logprobs: k`).

OpenAI's semantics: `top_logprobs` is the true top-k in descending order (the
sampled token appears only if it ranks within k); `[]` when k was not asked.
"""

from __future__ import annotations

from explorer.export.common import envelope, num, token_str, top_pairs, usage
from explorer.result import TokenScores


def entry(token: bytes, logprob: float) -> dict:
    return {"token": token_str(token), "logprob": num(logprob), "bytes": list(token)}


def content_logprobs(r: TokenScores, top_logprobs: int | None) -> list[dict]:
    """One entry per generated token of the message content."""
    out = []
    for pos in range(r.n_prompt, r.n):
        e = entry(r.token_bytes[pos], r.logprobs[pos])
        k = top_logprobs or 0
        e["top_logprobs"] = [entry(r.pieces[i], lp) for i, lp in top_pairs(r, pos)[:k]]
        out.append(e)
    return out


def choice(r: TokenScores, index: int, logprobs: bool, top_logprobs: int | None) -> dict:
    return {"index": index, "finish_reason": r.finish_reason or "length",
            "message": {"role": "assistant", "content": r.completion_text, "refusal": None},
            "logprobs": {"content": content_logprobs(r, top_logprobs), "refusal": None} if logprobs else None}


def export(results: TokenScores | list[TokenScores], *, logprobs: bool = True, top_logprobs: int | None = None,
           created: int | None = None, id_: str | None = None) -> dict:
    """Chat body; `top_logprobs` defaults to the k the result was generated with."""
    results = results if isinstance(results, list) else [results]
    if top_logprobs is None and logprobs:
        top_logprobs = results[0].output_k or 0
    body = envelope("chat.completion", results[0].model, created, id_, "chatcmpl")
    body["choices"] = [choice(r, i, logprobs, top_logprobs) for i, r in enumerate(results)]
    body["usage"] = usage(results)
    return body
