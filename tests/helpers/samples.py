"""Hand-built TokenScores (no model): the examples of the shapes reference, for golden JSON."""

from __future__ import annotations

import numpy as np

from explorer.results.scores import TokenScores

NAN = np.nan
NINF = -np.inf


def scored_prompt() -> TokenScores:
    """'The sky is' scored with k=2: ' sky' is outside the top-2 (rank 311)."""
    pieces = {464: b"The", 8071: b" sky", 11: b",", 374: b" is", 574: b" was"}
    return TokenScores(
        model="demo",
        token_ids=np.array([464, 8071, 374]),
        token_bytes=[b"The", b" sky", b" is"],
        n_prompt=3,
        logprobs=np.array([NAN, -7.25, -0.41], np.float32),
        ranks=np.array([0, 311, 1]),
        entropy=np.array([NAN, 5.5, 1.25], np.float32),
        top_ids=np.array([[-1, -1], [11, 374], [374, 574]]),
        top_logprobs=np.array([[NINF, NINF], [-1.02, -1.88], [-0.41, -1.6]], np.float32),
        pieces=pieces,
        prompt_k=2,
        vocab_size=50000,
    )


def generated_chat() -> TokenScores:
    """A reply 'Hi 👋' whose emoji is split over two tokens, top-2, processed mode with a filtered entry."""
    pieces = {
        9: b"<|user|>",
        10: b"Hello",
        72: b"Hi",
        73: b"Hello",
        500: b" \xf0\x9f",
        501: b"\x91\x8b",
        502: b"!",
        503: b" there",
    }
    return TokenScores(
        model="demo",
        token_ids=np.array([9, 10, 72, 500, 501]),
        token_bytes=[b"<|user|>", b"Hello", b"Hi", b" \xf0\x9f", b"\x91\x8b"],
        n_prompt=2,
        logprobs=np.array([NAN, NAN, -0.0123, -0.61, -0.0004], np.float32),
        ranks=np.array([0, 0, 1, 1, 1]),
        entropy=np.array([NAN, NAN, 0.08, 1.1, 0.01], np.float32),
        top_ids=np.array([[-1, -1], [-1, -1], [72, 73], [500, 503], [501, 502]]),
        top_logprobs=np.array(
            [[NINF, NINF], [NINF, NINF], [-0.0123, -4.52], [-0.61, -0.9], [-0.0004, NINF]], np.float32
        ),
        pieces=pieces,
        mode="processed",
        sampler={"temperature": 0.7, "seed": 1},
        prompt_k=None,
        output_k=2,
        finish_reason="stop",
        vocab_size=600,
    )
