"""TokenScores -> OpenAI / vLLM Completions body (`logprobs: int`), echo form for scoring."""

from __future__ import annotations

from explorer.export.common import envelope, num, token_str, top_pairs, usage
from explorer.result import TokenScores


def top_dict(pairs: list[tuple[bytes, float]], actual: bytes, actual_lp: float) -> dict[str, float]:
    """`top_logprobs[i]`: text -> logprob of the top-k; ids that decode alike collapse; the actual token always present."""
    top: dict[str, float] = {}
    for piece, lp in pairs:
        top.setdefault(token_str(piece), num(lp))
    top[token_str(actual)] = num(actual_lp)
    return top


def completion_logprobs(r: TokenScores, echo: bool) -> dict:
    """The four parallel lists; offsets count characters from the start of the returned text (vLLM)."""
    start = 0 if echo else r.n_prompt
    base = 0 if echo else int(r.offsets[r.n_prompt]) if r.n > r.n_prompt else 0
    tokens, lps, tops, offs = [], [], [], []
    for pos in range(start, r.n):
        text = token_str(r.token_bytes[pos])
        tokens.append(text)
        offs.append(int(r.offsets[pos]) - base)
        if not r.scored[pos]:
            lps.append(None)
            tops.append(None)
            continue
        lps.append(num(r.logprobs[pos]))
        tops.append(top_dict([(r.pieces[i], lp) for i, lp in top_pairs(r, pos)], r.token_bytes[pos], r.logprobs[pos]))
    return {"tokens": tokens, "token_logprobs": lps, "top_logprobs": tops, "text_offset": offs}


def choice(r: TokenScores, index: int, echo: bool, with_logprobs: bool = True) -> dict:
    text = (r.prompt_text if echo else "") + r.completion_text
    return {"index": index, "text": text, "logprobs": completion_logprobs(r, echo) if with_logprobs else None,
            "finish_reason": r.finish_reason or "length"}


def export(results: TokenScores | list[TokenScores], *, echo: bool | None = None, created: int | None = None,
           id_: str | None = None) -> dict:
    """Completions body; a scoring result (no generated tokens) is the echo form with null at 0."""
    results = results if isinstance(results, list) else [results]
    if echo is None:
        echo = results[0].output_k is None
    body = envelope("text_completion", results[0].model, created, id_, "cmpl")
    body["choices"] = [choice(r, i, echo) for i, r in enumerate(results)]
    body["usage"] = usage(results)
    return body
