"""TokenScores -> OpenAI Chat Completions body (`logprobs: true`, `top_logprobs: k`) and stream chunks.

OpenAI's semantics: `top_logprobs` is the true top-k in descending order (the
sampled token appears only if it ranks within k); `[]` when k was not asked.
"""

from __future__ import annotations

from explorer.export import vllm
from explorer.export.common import as_list, envelope, num, token_str, usage
from explorer.result import TokenScores


def entry(token: bytes, logprob: float) -> dict:
    return {"token": token_str(token), "logprob": num(logprob), "bytes": list(token)}


def content_logprobs(r: TokenScores, top_logprobs: int | None) -> list[dict]:
    """One entry per generated token of the message content, each with its top-k."""
    out = []
    for pos in range(r.n_prompt, r.n):
        e = entry(r.token_bytes[pos], r.logprobs[pos])
        e["top_logprobs"] = [entry(r.pieces[i], lp) for i, lp in r.top(pos, top_logprobs or 0)]
        out.append(e)
    return out


def choice(r: TokenScores, index: int, logprobs: bool, top_logprobs: int | None, prompt_logprobs: int | None = None) -> dict:
    c = {"index": index, "finish_reason": r.finish_reason or "length",
         "message": {"role": "assistant", "content": r.completion_text, "refusal": None},
         "logprobs": {"content": content_logprobs(r, top_logprobs), "refusal": None} if logprobs else None}
    if prompt_logprobs is not None:
        c["prompt_logprobs"] = vllm.prompt_logprobs_value(r, prompt_logprobs)
        c["prompt_token_ids"] = r.token_ids[: r.n_prompt].tolist()
    return c


def export(results: TokenScores | list[TokenScores], *, logprobs: bool = True, top_logprobs: int | None = None,
           prompt_logprobs: int | None = None, created: int | None = None, id_: str | None = None) -> dict:
    """Chat body of n samples of one conversation; `top_logprobs` defaults to the k the result was generated with."""
    results = as_list(results)
    if top_logprobs is None and logprobs:
        top_logprobs = results[0].output_k or 0
    body = envelope("chat.completion", results[0].model, created, id_, "chatcmpl")
    body["choices"] = [choice(r, i, logprobs, top_logprobs, prompt_logprobs) for i, r in enumerate(results)]
    body["usage"] = usage(results)
    return body


def role_chunk(head: dict, index: int) -> dict:
    """The first chunk of a streamed choice."""
    return {**head, "choices": [{"index": index, "delta": {"role": "assistant", "content": ""}, "logprobs": None,
                                 "finish_reason": None}]}


def chunk(head: dict, index: int, r: TokenScores | None, text: str | None, top_logprobs: int | None,
          finish_reason: str | None) -> dict:
    """A stream chunk: the generated token(s) of `r` with their entries (None: no logprobs), or the finish."""
    lp = {"content": content_logprobs(r, top_logprobs), "refusal": None} if r is not None else None
    delta = {"content": text} if text is not None else {}
    return {**head, "choices": [{"index": index, "delta": delta, "logprobs": lp, "finish_reason": finish_reason}]}
