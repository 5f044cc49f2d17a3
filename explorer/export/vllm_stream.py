"""TokenScores -> vLLM `prompt_logprobs` as a stream of JSON bytes: a full-vocabulary request builds no giant dict.

The text parses to exactly `entries.prompt_logprobs(r, k)`: the same keys in the same order and the same numbers. It is
written compactly (no spaces), one position, or several narrow ones, per chunk. A full row (k = -1, or k wider than
the stored top-k) is joined from bytes made once: `,"<id>":{"logprob":` per id and `,"rank":<j>` per rank (per
vocabulary size), `,"decoded_token":<json string>}` per id (per call). Its logprob texts come from orjson, which writes
a float32's shortest round-trip digits: the values `common.nums` gives.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import lru_cache

import numpy as np
import orjson

from explorer.export.common import Deferred, token_str
from explorer.export.entries import position_entry, prompt_logprobs
from explorer.floats import NEG_INF_JSON
from explorer.results.scores import TokenScores

CHUNK = 1 << 16  # bytes: narrow positions are gathered up to this before a chunk goes out
NEG_INF = repr(NEG_INF_JSON).encode()
encode_str = json.encoder.encode_basestring  # exactly what json.dumps(s, ensure_ascii=False) writes for a str


def prompt_logprobs_value(r: TokenScores, k: int | None = None):
    """`prompt_logprobs(r, k)`, or for the full vocabulary (k = -1) a Deferred that writes it position by position."""
    if k == -1 and r.prompt_k is not None:
        return Deferred(lambda: prompt_logprobs_chunks(r, k))
    return prompt_logprobs(r, k)


def prompt_logprobs_chunks(r: TokenScores, k: int | None = None) -> Iterator[bytes]:
    """UTF-8 JSON of `prompt_logprobs(r, k)` (k: default as asked; -1: full vocabulary), a position or a few a chunk.

    Raises ValueError, before the first chunk, when a scored prompt row holds NaN or +inf.
    """
    if r.prompt_k is None:
        yield b"null"
        return
    check_rows(r)
    scored = r.scored  # (n,) bool
    texts: dict[int, str] = {}  # id -> decoded token, for narrow rows
    tails = None  # (V,) per-id bytes, for full rows; made on the first one
    buf, size = [b"["], 1
    for pos in range(r.n_prompt):
        kk = r.top_k(pos) if k is None else k
        if not scored[pos]:
            part = b"null"
        elif is_full(r, kk):
            tails = tails if tails is not None else decoded_tails(r)
            part = full_entry(r, pos, kk, tails)
        else:
            part = json.dumps(position_entry(r, pos, kk, texts), ensure_ascii=False, separators=(",", ":")).encode()
        if pos:
            buf.append(b",")
        buf.append(part)
        size += len(part) + 1
        if size >= CHUNK:
            yield b"".join(buf)
            buf, size = [], 0
    buf.append(b"]")
    yield b"".join(buf)


def check_rows(r: TokenScores) -> None:
    """Raise ValueError when a scored prompt position has NaN or +inf anywhere (a bug upstream; JSON has neither)."""
    for pos in np.flatnonzero(r.scored[: r.n_prompt]).tolist():
        rows = [r.logprobs[pos : pos + 1], r.top_logprobs[pos]]
        if r.full_logprobs is not None:
            rows.append(r.full_logprobs[pos])
        if any(np.isnan(a).any() or np.isposinf(a).any() for a in rows):
            raise ValueError(
                f"NaN or +inf reached an exporter at prompt position {pos}: a scored position has no number"
            )


def is_full(r: TokenScores, k: int) -> bool:
    """Whether row entries of k come off the full row (as `Rows.top` decides)."""
    return r.full_logprobs is not None and (k == -1 or k > r.top_ids.shape[1])


def full_entry(r: TokenScores, pos: int, k: int, tails: np.ndarray) -> bytes:
    """`{"<actual>":{...},"<id>":{...},...}` of `pos` off its full row: the actual token, then the top k (-1: all)."""
    assert r.full_logprobs is not None  # is_full said so
    row = r.full_logprobs[pos]  # (V,) float32, no NaN (check_rows)
    order = np.argsort(-row, kind="stable")  # (V,) ids by descending logprob, ties by id: as Rows.top
    order = order if k == -1 else order[:k]
    actual = int(r.token_ids[pos])
    keep = order != actual  # the actual token is written first, with its own rank
    ids = order[keep]  # (m,)
    parts = np.empty((len(ids) + 1, 4), dtype=object)  # per entry: head, logprob, rank, tail
    parts[0] = [
        b'{"%d":{"logprob":' % actual,
        number_texts(r.logprobs[pos : pos + 1])[0],
        b',"rank":%d' % int(r.ranks[pos]),
        tails[actual],
    ]
    parts[1:, 0] = heads(len(row))[ids]
    parts[1:, 1] = number_texts(row[ids])
    parts[1:, 2] = ranks(len(row))[: len(order)][keep]
    parts[1:, 3] = tails[ids]
    return b"".join(parts.ravel().tolist()) + b"}"


def number_texts(a: np.ndarray) -> np.ndarray:
    """(m,) object array of JSON numbers for float32 logprobs `a` (m,): shortest round-trip text, -inf -> -9999.0.

    NaN and +inf must be ruled out before (orjson writes them as null too).
    """
    a = np.ascontiguousarray(a, dtype=np.float32)
    out = np.empty(len(a), dtype=object)
    if len(a):
        out[:] = orjson.dumps(a, option=orjson.OPT_SERIALIZE_NUMPY)[1:-1].split(b",")
        out[np.isneginf(a)] = NEG_INF
    return out


@lru_cache(maxsize=4)
def heads(v: int) -> np.ndarray:
    """(v,) object array: `,"<id>":{"logprob":` for every id."""
    return np.array([b',"%d":{"logprob":' % i for i in range(v)], dtype=object)


@lru_cache(maxsize=4)
def ranks(v: int) -> np.ndarray:
    """(v,) object array: `,"rank":<j>` for j = 1..v."""
    return np.array([b',"rank":%d' % j for j in range(1, v + 1)], dtype=object)


def decoded_tails(r: TokenScores) -> np.ndarray:
    """(V,) object array: `,"decoded_token":<json string>}` for every id of the full rows."""
    assert r.full_logprobs is not None  # only called for full rows
    v = r.full_logprobs.shape[1]
    return np.array(
        [b',"decoded_token":%s}' % encode_str(token_str(r.pieces[i])).encode() for i in range(v)], dtype=object
    )
