"""Streamed vLLM `prompt_logprobs`: the same JSON as `vllm.prompt_logprobs`, key order and numbers included."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.engine import score_text
from explorer.export import vllm_stream
from explorer.export.common import nums
from explorer.export.vllm import prompt_logprobs
from explorer.export.vllm_stream import number_texts, prompt_logprobs_chunks
from explorer.results.scores import TokenScores
from tests.helpers.samples import generated_chat, scored_prompt

KS = (None, 0, 3, -1)
NINF = -np.inf

# raw bytes that stress the JSON strings: quotes, backslash, newline, control bytes, invalid UTF-8, emoji (whole and
# cut), U+2028, an encoded surrogate (invalid UTF-8), non-ASCII, empty
PIECES = [
    b'"quoted"',
    b"back\\slash",
    b"new\nline",
    b"\xff\xfe",
    b"\xf0\x9f\x91\x8b",
    b"\xf0\x9f",
    b"\t\x00\x1fctl",
    b"</script>",
    b"\xe2\x80\xa8",
    b" the",
    b"\xed\xa0\x80",
    b"caf\xc3\xa9",
    b"",
]


def scores(
    full: np.ndarray, ids: list[int], pieces: list[bytes], prompt_k: int | None, width: int, n_prompt: int | None = None
) -> TokenScores:
    """TokenScores of full rows `full` (n, V) for tokens `ids`: row 0 unscored, ranks and top-`width` derived."""
    n, v = full.shape
    full = full.astype(np.float32).copy()
    full[0] = np.nan
    ids_ = np.array(ids, np.int64)
    lp = full[np.arange(n), ids_]  # (n,)
    ranks = np.where(np.isnan(lp), 0, (full >= lp[:, None]).sum(-1))  # (n,)
    order = np.argsort(-np.nan_to_num(full, nan=NINF), axis=-1, kind="stable")[:, :width]  # (n, width)
    top_lp = np.take_along_axis(full, order, -1)
    order[0], top_lp[0] = -1, NINF
    return TokenScores(
        model="demo",
        token_ids=ids_,
        token_bytes=[pieces[i] for i in ids],
        n_prompt=n if n_prompt is None else n_prompt,
        logprobs=lp,
        ranks=ranks,
        entropy=np.where(np.isnan(lp), np.nan, 1.0).astype(np.float32),
        top_ids=order,
        top_logprobs=top_lp,
        pieces=dict(enumerate(pieces)),
        prompt_k=prompt_k,
        full_logprobs=full,
        vocab_size=v,
    )


def hand_made(prompt_k: int | None = -1, width: int = 2) -> TokenScores:
    """5 positions over the 13 PIECES: ties, -inf (also as the actual token), -0.0, a subnormal, inexact decimals."""
    full = np.array(
        [
            [0.0] * 13,
            [-1.5, -1.5, -0.5, NINF, -2.25, -1.5, -3.0, -0.5, -9.75, NINF, -4.0, -1e-05, -0.1],
            [-0.1, -0.1, -0.1, -0.1, -2.0, -2.0, -0.0, -3.4028235e38, -1e-45, -0.3, -0.7, -1.1, -5.0],
            [
                -12.345678,
                -0.6931472,
                -2.3025851,
                -1.0986123,
                -1.0986123,
                NINF,
                NINF,
                -7.0,
                -7.0,
                -7.0,
                -0.25,
                -8.5,
                -6.0,
            ],
            [-3.0, -3.0, -3.0, -3.0, -3.0, -3.0, -3.0, -3.0, -3.0, -3.0, -3.0, -3.0, -3.0],
        ]
    )
    return scores(full, [0, 3, 1, 7, 12], PIECES, prompt_k, width)  # actual: unscored, -inf, a tie, a tie, all tied


def assert_same(r: TokenScores, k: int | None) -> list[bytes]:
    """The chunks parse to `prompt_logprobs(r, k)`: same keys in the same order, same numbers to the last bit."""
    chunks = list(prompt_logprobs_chunks(r, k))
    assert all(isinstance(c, bytes) and c for c in chunks)
    for c in chunks:
        c.decode("utf-8")  # every chunk ends at an entry, so each decodes on its own
    got = json.loads(b"".join(chunks), object_pairs_hook=list)
    want = json.loads(json.dumps(prompt_logprobs(r, k)), object_pairs_hook=list)
    assert json.dumps(got) == json.dumps(want)  # pairs lists keep key order; repr keeps every float bit and -0.0
    return chunks


@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("prompt_k", [-1, 2, None])
def test_hand_made_full_rows(prompt_k, k):
    assert_same(hand_made(prompt_k), k)


@pytest.mark.parametrize("k", [*KS, 1, 2, 5, 13, 40])
def test_hand_made_k_around_the_stored_width(k):
    assert_same(hand_made(2, width=2), k)
    assert_same(hand_made(-1, width=0), k)


@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("sample", [scored_prompt, generated_chat])
def test_samples_without_full_rows(sample, k):
    assert_same(sample(), k)


def test_edges_not_scored_empty_one_token():
    assert b"".join(prompt_logprobs_chunks(generated_chat())) == b"null"  # prompt not scored
    assert b"".join(prompt_logprobs_chunks(scores(np.zeros((1, 3)), [1], PIECES[:3], -1, 2, n_prompt=0), -1)) == b"[]"
    assert b"".join(prompt_logprobs_chunks(scores(np.zeros((1, 3)), [1], PIECES[:3], -1, 2), -1)) == b"[null]"


def test_one_position_per_chunk_when_chunks_are_small(monkeypatch):
    monkeypatch.setattr(vllm_stream, "CHUNK", 1)
    r = hand_made()
    chunks = assert_same(r, -1)
    assert len(chunks) == r.n_prompt + 1  # a chunk per position, then the closing bracket


@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("score_k", [-1, 2])
def test_tiny_model(gpt2, score_k, k):
    r = score_text(gpt2, "fox jumps", k=score_k)
    assert r.n_prompt >= 3 and (r.full_logprobs is not None) == (score_k == -1)
    assert_same(r, k)


@pytest.mark.parametrize(("where", "bad"), [("full", np.nan), ("top", np.nan), ("full", np.inf), ("actual", np.inf)])
def test_nan_or_inf_in_a_scored_row_raises_before_any_byte(where, bad):
    r = hand_made(prompt_k=-1)
    {"full": r.full_logprobs[2], "top": r.top_logprobs[2], "actual": r.logprobs[2:3]}[where][-1] = bad
    for k in KS:
        with pytest.raises(ValueError, match="NaN or \\+inf"):
            next(iter(prompt_logprobs_chunks(r, k)))


def test_nan_in_an_unscored_row_is_fine():
    r = hand_made()
    assert np.isnan(r.full_logprobs[0]).all()
    assert_same(r, -1)


# ---- properties (hypothesis) ---------------------------------------------------------------------------------------

logprob = st.one_of(
    st.sampled_from([0.0, -0.0, -0.5, -1.5, -1e-05, NINF]),
    st.floats(-1e4, 0.0, width=32),
    st.floats(width=32, allow_nan=False, allow_infinity=False),
)


@st.composite
def random_scores(draw) -> TokenScores:
    v, n = draw(st.integers(1, 12)), draw(st.integers(1, 4))
    full = np.array(draw(st.lists(st.lists(logprob, min_size=v, max_size=v), min_size=n, max_size=n)), np.float32)
    ids = draw(st.lists(st.integers(0, v - 1), min_size=n, max_size=n))
    pieces = draw(st.lists(st.one_of(st.binary(max_size=5), st.sampled_from(PIECES)), min_size=v, max_size=v))
    width = draw(st.integers(0, v))
    return scores(full, ids, pieces, draw(st.sampled_from([-1, width, None])), width, draw(st.integers(0, n)))


@settings(max_examples=150, deadline=None)
@given(random_scores(), st.sampled_from([None, 0, 1, 3, 12, 13, -1]))
def test_random_rows_match(r, k):
    assert_same(r, k)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(width=32, allow_nan=False).filter(lambda x: x != np.inf), max_size=20))
def test_number_texts_parse_to_nums(values):
    a = np.array(values, np.float32)
    assert [float(t) for t in number_texts(a)] == nums(a)


def test_number_texts_parse_to_nums_on_random_bit_patterns():
    bits = np.random.default_rng(0).integers(0, 2**32, 200_000, dtype=np.uint64).astype(np.uint32)
    a = bits.view(np.float32)
    a = a[~np.isnan(a) & (a != np.inf)]
    got = np.array([float(t) for t in number_texts(a)])
    assert np.array_equal(got, np.array(nums(a)))
