"""vLLM's per-position logprob entries, `{id: {logprob, rank, decoded_token}}`, and the `prompt_logprobs` list of them.

A leaf of explorer/export (it imports only `common`): the completions, chat, vLLM and offline exporters and the
streamed writer all build their `prompt_logprobs` from here.
"""

from __future__ import annotations

from explorer.export.common import nums, token_str
from explorer.results.scores import TokenScores


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
