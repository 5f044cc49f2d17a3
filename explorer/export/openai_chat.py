"""TokenScores -> OpenAI Chat Completions body (`logprobs: true`, `top_logprobs: k`) and stream chunks.

OpenAI's semantics: `top_logprobs` is the true top-k in descending order (the
sampled token appears only if it ranks within k); `[]` when k was not asked.
`content` has one entry per token of the message (no entry for the EOS token that
ended it, which `usage` still counts). vLLM's keys, in vLLM's order: each choice
carries stop_reason and token_ids; the response carries prompt_logprobs and
prompt_token_ids beside `choices` (null unless asked).
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.export.common import as_list, envelope, num, response, token_str, usage
from explorer.export.hidden_states import Shape, choice_states
from explorer.export.vllm_stream import prompt_logprobs_value
from explorer.results.scores import TokenScores

MESSAGE_NULLS = {"annotations": None, "audio": None, "function_call": None, "reasoning": None}  # vLLM sends these


@dataclass(frozen=True)
class Options:
    logprobs: bool = True
    top_logprobs: int | None = None  # k of each entry's top_logprobs; None: as each result was generated (a download)
    prompt_logprobs: int | None = None
    return_token_ids: bool = False
    tokens_as_ids: bool = False
    echo_text: str = ""  # `echo`: the last (assistant) message's text, put before the completion
    hidden_states: Shape | None = None  # `return_hidden_states`: how each result's states are written; None: not asked


def entry(token: bytes, logprob: float, token_id: int | None = None) -> dict:
    """One {token, logprob, bytes}; with `token_id`, the token is written `token_id:N`."""
    return {
        "token": f"token_id:{token_id}" if token_id is not None else token_str(token),
        "logprob": num(logprob),
        "bytes": list(token),
    }


def content_logprobs(r: TokenScores, top_logprobs: int | None, tokens_as_ids: bool = False) -> list[dict]:
    """One entry per generated token of the message content, each with its top-k (`top_logprobs` None: the k the
    result was generated with, `TokenScores.top`'s default: 0 for a result that was only scored)."""
    out = []
    end = r.n - 1 if r.stop_token else r.n
    for pos in range(r.n_prompt, end):
        tid = int(r.token_ids[pos])
        e = entry(r.token_bytes[pos], r.logprobs[pos], tid if tokens_as_ids else None)
        top = r.top(pos, top_logprobs)
        if r.top_ranks is not None:  # listed ids (logprob_token_ids): the sampled token first, then those asked
            # but the sampled one, which vLLM does not list twice
            top = [(tid, float(r.logprobs[pos])), *((i, lp) for i, lp in r.top(pos) if i != tid)]
        e["top_logprobs"] = [entry(r.pieces[i], lp, i if tokens_as_ids else None) for i, lp in top]
        out.append(e)
    return out


def choice(r: TokenScores, index: int, o: Options) -> dict:
    """One choice, vLLM's keys (and `hidden_states` after them, when asked)."""
    out = {
        "index": index,
        "message": {"role": "assistant", "content": o.echo_text + r.completion_text, "refusal": None, **MESSAGE_NULLS},
        "logprobs": {"content": content_logprobs(r, o.top_logprobs, o.tokens_as_ids), "refusal": None}
        if o.logprobs
        else None,
        "finish_reason": r.finish_reason or "length",
        "stop_reason": r.stop_reason,
        "token_ids": r.token_ids[r.n_prompt :].tolist() if o.return_token_ids else None,
        "routed_experts": None,
    }
    if o.hidden_states is not None:
        out["hidden_states"] = choice_states(r, o.hidden_states)
    return out


def export(
    results: TokenScores | list[TokenScores],
    *,
    options: Options | None = None,
    created: int | None = None,
    id_: str | None = None,
) -> dict:
    """Chat body of n samples of one conversation."""
    results = as_list(results)
    o = options or Options()
    head = envelope("chat.completion", results[0].model, created, id_, "chatcmpl")
    r0 = results[0]
    return response(
        head,
        [choice(r, i, o) for i, r in enumerate(results)],
        usage(results, len(results)),  # n samples of one conversation: its prompt counts once
        prompt_logprobs=prompt_logprobs_value(r0, o.prompt_logprobs) if o.prompt_logprobs is not None else None,
        prompt_token_ids=r0.token_ids[: r0.n_prompt].tolist() if o.return_token_ids else None,
        prompt_text=None,  # vLLM: the templated prompt, with `return_prompt_text`-like options only (null here)
    )


def role_chunk(head: dict, index: int, echo_text: str = "", prompt_token_ids: list[int] | None = None) -> dict:
    """The first chunk of a streamed choice (with `echo`, the echoed text; with return_token_ids, the prompt ids)."""
    return {
        **head,
        "choices": [
            {
                "index": index,
                "delta": {"role": "assistant", "content": echo_text},
                "logprobs": None,
                "finish_reason": None,
            }
        ],
        "prompt_token_ids": prompt_token_ids,
        "prompt_text": None,
    }


@dataclass(frozen=True)
class Piece:
    """What one stream chunk of a choice says beside its logprobs: its text, how the choice ended (on its last
    chunk), the ids asked for, and how its entries are written."""

    text: str | None = ""  # None: an empty delta
    top_logprobs: int | None = None  # k of each entry's top_logprobs; None: as the result was generated
    finish_reason: str | None = None
    stop_reason: int | str | None = None
    token_ids: list[int] | None = None  # vLLM `return_token_ids`: this chunk's generated ids
    tokens_as_ids: bool = False  # vLLM `return_tokens_as_token_ids`


def chunk(head: dict, index: int, r: TokenScores | None, piece: Piece) -> dict:
    """A stream chunk: the generated token(s) of `r` with their entries (None: no logprobs), and the finish on the last."""
    p = piece
    lp = {"content": content_logprobs(r, p.top_logprobs, p.tokens_as_ids), "refusal": None} if r is not None else None
    delta = {"content": p.text} if p.text is not None else {}
    c = {"index": index, "delta": delta, "logprobs": lp, "finish_reason": p.finish_reason}
    if p.finish_reason is not None:  # vLLM: stop_reason on the choice's last chunk only
        c["stop_reason"] = p.stop_reason
    return {**head, "choices": [{**c, "token_ids": p.token_ids}]}
