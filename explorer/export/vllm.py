"""TokenScores -> vLLM shapes: `prompt_logprobs` entries, and a completions body carrying them per choice."""

from __future__ import annotations

from explorer.export.common import Deferred, as_list, envelope, nums, response, token_str, usage
from explorer.result import TokenScores


def position_entry(
    r: TokenScores, pos: int, k: int | None = None, texts: dict[int, str] | None = None
) -> dict[str, dict] | None:
    """`{id: {logprob, rank, decoded_token}}`: the actual token first, then the top-k (k or k+1 keys).

    k: default as asked at `pos`; -1: the whole vocabulary. `texts` caches id -> decoded token across positions.
    """
    if not r.scored[pos]:
        return None
    texts = texts if texts is not None else {}

    actual = int(r.token_ids[pos])

    def text(i: int) -> str:  # the token's own text, the EOS's too ("<|im_end|>"), as vLLM writes it
        t = texts.get(i)
        if t is None:
            t = texts[i] = token_str(r.pieces[i])
        return t

    out = {
        str(actual): {
            "logprob": nums(r.logprobs[pos : pos + 1])[0],
            "rank": int(r.ranks[pos]),
            "decoded_token": text(actual),
        }
    }
    kk = r.top_k(pos) if k is None else k
    ids, lps = r.rows.top(pos, kk)
    if r.top_ranks is not None and 0 <= kk <= r.top_ids.shape[1]:  # listed ids (logprob_token_ids): their true ranks
        ranks = r.top_ranks[pos, : len(ids)].tolist()
    else:
        ranks = list(range(1, len(ids) + 1))
    for rank, i, lp in zip(ranks, ids.tolist(), nums(lps) if len(ids) else []):
        if i != actual:
            out[str(i)] = {"logprob": lp, "rank": rank, "decoded_token": text(i)}
    return out


def prompt_logprobs(r: TokenScores, k: int | None = None) -> list[dict | None] | None:
    """One entry per prompt token, entry 0 null; None when the prompt was not scored. k: default as asked."""
    if r.prompt_k is None:
        return None
    texts: dict[int, str] = {}
    return [position_entry(r, pos, k, texts) for pos in range(r.n_prompt)]


def prompt_logprobs_value(r: TokenScores, k: int | None = None):
    """`prompt_logprobs(r, k)`, or for the full vocabulary (k = -1) a Deferred that writes it position by position."""
    if k == -1 and r.prompt_k is not None:
        from explorer.export import vllm_stream

        return Deferred(lambda: vllm_stream.prompt_logprobs_chunks(r, k))
    return prompt_logprobs(r, k)


def export(
    results: TokenScores | list[TokenScores],
    *,
    created: int | None = None,
    id_: str | None = None,
    with_logprobs: bool | None = None,
) -> dict:
    """Completions body whose choices carry `prompt_logprobs` and `prompt_token_ids` (hosted vLLM APIs)."""
    from explorer.export import openai_completion

    results = as_list(results)
    head = envelope("text_completion", results[0].model, created, id_, "cmpl")
    choices = []
    for i, r in enumerate(results):
        wl = r.output_k is not None if with_logprobs is None else with_logprobs
        o = openai_completion.Options(logprobs=(r.output_k or 0) if wl else None, return_token_ids=True)
        c = openai_completion.choice(r, i, o)
        c["prompt_logprobs"] = prompt_logprobs(r)
        choices.append(c)
    return response(head, choices, usage(results, len(results)))  # n samples of one prompt
