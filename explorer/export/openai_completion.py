"""TokenScores -> OpenAI / vLLM Completions body (`logprobs: int`), echo form for scoring, and stream chunks."""

from __future__ import annotations

from explorer.export import vllm
from explorer.export.common import as_list, envelope, num, token_str, usage
from explorer.result import TokenScores


def top_dict(r: TokenScores, pos: int, k: int) -> dict[str, float]:
    """`top_logprobs[i]`: text -> logprob of the top-k; ids that decode alike collapse; the actual token always present."""
    top: dict[str, float] = {}
    for i, lp in r.top(pos, k):
        top.setdefault(token_str(r.pieces[i]), num(lp))
    top[token_str(r.token_bytes[pos])] = num(r.logprobs[pos])
    return top


def completion_logprobs(r: TokenScores, echo: bool, k: int | None = None, offset: int = 0) -> dict:
    """The four parallel lists; offsets count characters from the start of the returned text (vLLM), plus `offset`.

    k: alternatives per position (default: as asked when the result was made).
    """
    start = 0 if echo else r.n_prompt
    base = 0 if echo else int(r.offsets[r.n_prompt]) if r.n > r.n_prompt else 0
    tokens, lps, tops, offs = [], [], [], []
    for pos in range(start, r.n):
        tokens.append(token_str(r.token_bytes[pos]))
        offs.append(int(r.offsets[pos]) - base + offset)
        if not r.scored[pos]:
            lps.append(None)
            tops.append(None)
            continue
        lps.append(num(r.logprobs[pos]))
        tops.append(top_dict(r, pos, r.top_k(pos) if k is None else k))
    return {"tokens": tokens, "token_logprobs": lps, "top_logprobs": tops, "text_offset": offs}


def choice(r: TokenScores, index: int, echo: bool, logprobs: int | None, prompt_logprobs: int | None = None) -> dict:
    """One choice; `logprobs=None`: no logprobs; `prompt_logprobs` (vLLM): the prompt's entries and ids beside it."""
    text = (r.prompt_text if echo else "") + r.completion_text
    c = {"index": index, "text": text,
         "logprobs": completion_logprobs(r, echo, logprobs) if logprobs is not None else None,
         "finish_reason": r.finish_reason or "length"}
    if prompt_logprobs is not None:
        c["prompt_logprobs"] = vllm.prompt_logprobs_value(r, prompt_logprobs)
        c["prompt_token_ids"] = r.token_ids[: r.n_prompt].tolist()
    return c


def export(results: TokenScores | list[TokenScores], *, echo: bool | None = None, logprobs: int | None | str = "asked",
           prompt_logprobs: int | None = None, n: int = 1, created: int | None = None, id_: str | None = None) -> dict:
    """Completions body of choices grouped n per prompt; a scoring result (no generated tokens) is the echo form.

    logprobs: the k of each choice's logprobs (None: no logprobs; default: as asked when the results were made).
    """
    results = as_list(results)
    if echo is None:
        echo = results[0].output_k is None
    body = envelope("text_completion", results[0].model, created, id_, "cmpl")
    body["choices"] = [choice(r, i, echo, _k(r, logprobs), prompt_logprobs) for i, r in enumerate(results)]
    body["usage"] = usage(results, n)
    return body


def _k(r: TokenScores, logprobs: int | None | str) -> int | None:
    if logprobs != "asked":
        return logprobs
    return r.output_k if r.output_k is not None else (r.prompt_k or 0)


def chunk(head: dict, index: int, r: TokenScores | None, text: str, offset: int, finish_reason: str | None) -> dict:
    """A stream chunk: the generated token(s) of `r` (None: no logprobs), its text starting at `offset`."""
    lp = completion_logprobs(r, echo=False, offset=offset) if r is not None else None
    return {**head, "choices": [{"index": index, "text": text, "logprobs": lp, "finish_reason": finish_reason}]}
