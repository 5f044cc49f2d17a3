"""TokenScores -> OpenAI / vLLM Completions body (`logprobs: int`), echo form for scoring, and stream chunks.

Keys and their order are a real vLLM 0.32 server's (checked key by key in the `vllm` test tier): a choice is
index, text, logprobs, finish_reason, stop_reason, token_ids, prompt_logprobs, prompt_token_ids, routed_experts
(the last five always present, null unless asked); its logprobs are text_offset, token_logprobs, tokens,
top_logprobs. `top_logprobs[i]` holds the actual token first, then the top-k (vLLM's order). A token that
ended the generation (EOS, a stop id) is written as its token text, as vLLM does, though it adds no text.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.export.common import as_list, envelope, num, response, token_str, usage
from explorer.export.hidden_states import Shape, choice_states
from explorer.export.vllm_stream import prompt_logprobs_value
from explorer.results.scores import TokenScores
from explorer.results.stats import stats_block


@dataclass(frozen=True)
class Options:
    """What a completions request asked for, beyond the results themselves."""

    echo: bool = False
    logprobs: int | None = None  # k of each position's top_logprobs; None: no logprobs
    prompt_logprobs: int | None = None  # vLLM: the prompt's entries beside each choice
    echo_k: int | None = None  # with echo: the prompt_logprobs k the echoed entries are cut from (vLLM)
    return_token_ids: bool = False  # vLLM: token_ids and prompt_token_ids
    tokens_as_ids: bool = False  # vLLM `return_tokens_as_token_ids`: "token_id:{id}" for every token string
    n: int = 1  # choices per prompt (usage counts each prompt once)
    text_stats: bool = False  # extension (this project): each choice's text statistics of its scored prompt
    hidden_states: Shape | None = None  # `return_hidden_states`: how each result's states are written; None: not asked


def token_label(r: TokenScores, pos: int, token_id: int, tokens_as_ids: bool) -> str:
    """How a token is written in logprobs: its text, or token_id:N."""
    if tokens_as_ids:
        return f"token_id:{token_id}"
    return token_str(r.pieces.get(token_id, b"") if token_id != int(r.token_ids[pos]) else r.token_bytes[pos])


def top_dict(r: TokenScores, pos: int, k: int, tokens_as_ids: bool = False) -> dict[str, float | None]:
    """`top_logprobs[i]`: the actual token first, then the top-k by text; ids that decode alike collapse."""
    actual = int(r.token_ids[pos])
    top = {token_label(r, pos, actual, tokens_as_ids): num(r.logprobs[pos])}
    for i, lp in r.top(pos, k):
        top.setdefault(token_label(r, pos, i, tokens_as_ids), num(lp))
    return top


def completion_logprobs(
    r: TokenScores,
    echo: bool,
    k: int | None = None,
    offset: int = 0,
    tokens_as_ids: bool = False,
    prompt_k: int | None = None,
) -> dict:
    """The four parallel lists; offsets count characters from the start of the returned text (vLLM), plus `offset`.

    k: alternatives per position (default: as asked when the result was made); prompt_k: the `prompt_logprobs`
    k when both it and `logprobs` are asked: an echoed position then holds the first k + 1 keys of its
    `prompt_logprobs` entry, as vLLM builds it.
    """
    start = 0 if echo else r.n_prompt
    base = 0 if echo else int(r.offsets[r.n_prompt]) if r.n > r.n_prompt else 0
    tokens: list[str] = []
    lps: list[float | None] = []
    tops: list[dict[str, float | None] | None] = []
    offs: list[int] = []
    for pos in range(start, r.n):
        tokens.append(token_label(r, pos, int(r.token_ids[pos]), tokens_as_ids))
        offs.append(int(r.offsets[pos]) - base + offset)
        if not r.scored[pos]:
            lps.append(None)
            tops.append(None)
            continue
        lps.append(num(r.logprobs[pos]))
        if pos < r.n_prompt and prompt_k is not None and k is not None:
            # vLLM: the position's prompt_logprobs entry (actual first, then the top prompt_k), cut to k + 1 keys
            tops.append(dict(list(top_dict(r, pos, prompt_k, tokens_as_ids).items())[: k + 1]))
        else:
            tops.append(top_dict(r, pos, r.top_k(pos) if k is None else k, tokens_as_ids))
    return {"text_offset": offs, "token_logprobs": lps, "tokens": tokens, "top_logprobs": tops}


def choice(r: TokenScores, index: int, o: Options) -> dict:
    """One choice, every vLLM key present (and `text_stats`, then `hidden_states`, when asked)."""
    text = (r.prompt_text if o.echo else "") + r.completion_text
    out: dict = {
        "index": index,
        "text": text,
        "logprobs": completion_logprobs(r, o.echo, o.logprobs, tokens_as_ids=o.tokens_as_ids, prompt_k=o.echo_k)
        if o.logprobs is not None
        else None,
        "finish_reason": r.finish_reason or "length",
        "stop_reason": r.stop_reason,
        "token_ids": r.token_ids[r.n_prompt :].tolist() if o.return_token_ids else None,
        "prompt_logprobs": prompt_logprobs_value(r, o.prompt_logprobs) if o.prompt_logprobs is not None else None,
        "prompt_token_ids": r.token_ids[: r.n_prompt].tolist() if o.return_token_ids else None,
        "routed_experts": None,  # vLLM: the experts a mixture-of-experts model routed through (null for others)
    }
    if o.text_stats:
        out["text_stats"] = stats_block(r)
    if o.hidden_states is not None:
        out["hidden_states"] = choice_states(r, o.hidden_states)
    return out


def export(
    results: TokenScores | list[TokenScores],
    *,
    echo: bool | None = None,
    logprobs: int | str | None = "asked",
    options: Options | None = None,
    created: int | None = None,
    id_: str | None = None,
) -> dict:
    """Completions body of choices grouped `options.n` per prompt; a scoring result (no generated tokens) is the echo form.

    Without `options`: logprobs as asked when the results were made (a download of a result).
    """
    results = as_list(results)
    if options is None:
        echo = results[0].output_k is None if echo is None else echo
        options = Options(echo=echo, logprobs=_k(results[0], logprobs), n=len(results))  # n samples of one prompt
    head = envelope("text_completion", results[0].model, created, id_, "cmpl")
    choices = [choice(r, i, options) for i, r in enumerate(results)]
    return response(head, choices, usage(results, options.n))


def _k(r: TokenScores, logprobs: int | str | None) -> int | None:
    if not isinstance(logprobs, str):  # anything but "asked": the k given
        return logprobs
    # "asked" of a scored prompt with no k recorded: its tokens' own logprobs, 0 alternatives (None would be `null`)
    return r.output_k if r.output_k is not None else (r.prompt_k or 0)


@dataclass(frozen=True)
class Piece:
    """What one stream chunk of a choice says beside its logprobs: its text and where it starts, how the choice
    ended (on its last chunk), the ids asked for, and how its entries are written."""

    text: str = ""
    offset: int = 0  # characters of the choice's text before `text`
    finish_reason: str | None = None
    stop_reason: int | str | None = None
    token_ids: list[int] | None = None  # vLLM `return_token_ids`: this chunk's generated ids
    prompt_token_ids: list[int] | None = None  # on a choice's first chunk
    echo: bool = False  # the result is the prompt and the first token, the prompt's entries first
    tokens_as_ids: bool = False  # vLLM `return_tokens_as_token_ids`
    prompt_k: int | None = None  # with echo: the prompt_logprobs k of the echoed entries (prompt_k alternatives)


def chunk(head: dict, index: int, r: TokenScores | None, piece: Piece) -> dict:
    """A stream chunk of choice `index`: the generated token(s) of `r` (None: no logprobs) and `piece`'s text."""
    p = piece
    lp = (
        completion_logprobs(r, echo=p.echo, offset=p.offset, tokens_as_ids=p.tokens_as_ids, prompt_k=p.prompt_k)
        if r is not None
        else None
    )
    return {
        **head,
        "choices": [
            {
                "index": index,
                "text": p.text,
                "logprobs": lp,
                "finish_reason": p.finish_reason,
                "stop_reason": p.stop_reason,
                "prompt_token_ids": p.prompt_token_ids,
                "token_ids": p.token_ids,
            }
        ],
    }
