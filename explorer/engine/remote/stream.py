"""The remote engine's generation request (a streamed /v1/completions call with token ids as tokens) and the
numbers read off each streamed token: the sampled token first, then the top-k or the asked ids, as vLLM sends them."""

from __future__ import annotations

import numpy as np

from explorer.errors import ExplorerError
from explorer.floats import value_from_json
from explorer.results.scores import Rows
from explorer.rules.sampler import SamplerSettings, wire_fields


def top_row(tid: int, value, pairs: dict[int, float], s: SamplerSettings) -> Rows:
    """A generated token's row from vLLM's entries (the sampled token first, then the top-k: k or k + 1 of them)."""
    k = s.top_entries
    ranked = sorted(pairs.items(), key=lambda x: -x[1])
    alts = ranked[:k] if k > 0 else []
    rank = next((n for n, (i, _) in enumerate(ranked, start=1) if i == tid), 0) if k > 0 else 0
    return Rows(
        np.array([num(value)], np.float32),
        np.array([rank if rank <= k else 0], np.int64),  # beyond the top-k: not known
        np.array([np.nan], np.float32),
        np.array([[i for i, _ in alts] + [-1] * (k - len(alts))], np.int64),
        np.array([[v for _, v in alts] + [-np.inf] * (k - len(alts))], np.float32),
    )


def listed_row(tid: int, value, pairs: dict[int, float], listed: tuple[int, ...]) -> Rows:
    """A generated token's row for `logprob_token_ids`: every asked id (vLLM sends the sampled token first, then
    each asked id once), in the order asked, as the local engine keeps them; their ranks are not sent (0)."""
    asked = list(dict.fromkeys(listed))
    missing = [i for i in asked if i not in pairs]
    if missing:
        raise ExplorerError(
            f"The backend sent no logprob for the asked token id {missing[0]}.", code="backend_bad_answer"
        )
    values = np.array([pairs[i] for i in asked], np.float32)
    return Rows(
        np.array([num(value)], np.float32),
        np.zeros(1, np.int64),
        np.array([np.nan], np.float32),
        np.array([asked], np.int64),
        values[None],
        None,
        np.zeros((1, len(asked)), np.int64),
    )


def num(v) -> float:
    """A logprob off vLLM's wire (a number; None raises): -9999.0 or less is -inf (`floats.value_from_json`)."""
    return value_from_json(float(v), clamped=True)


def generation_body(model: str, ids: list[int], s: SamplerSettings, sample: int) -> dict:
    body = {
        "model": model,
        "prompt": list(ids),
        "max_tokens": s.max_tokens,
        **{name: getattr(s, name) for name in wire_fields() if name not in ("seed", "n")},  # the sampler's own
        "stream": True,
        "logprobs": 0 if s.logprob_ids else s.top_entries,  # vLLM: listed ids need `logprobs` set
        "return_tokens_as_token_ids": True,
        "return_token_ids": True,
        "n": 1,  # one sample per call (its own seed)
    }
    if s.seed is not None:
        body["seed"] = (s.seed + sample) % 2**63
    if s.stop:
        body["stop"] = list(s.stop)
    if s.stop_token_ids:
        body["stop_token_ids"] = list(s.stop_token_ids)
    if s.logprob_ids:
        body["logprob_token_ids"] = list(s.logprob_ids)
    return body
