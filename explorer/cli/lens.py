"""`logprob-explorer lens`: the plain logit lens of a text, as one JSON object (explorer.results.lens.LensGrid.to_dict)."""

from __future__ import annotations

import argparse

from explorer.cli.args import check_out, hidden_states_engine, ids_arg, k_arg, model_args, source_text


def add_parser(sub) -> None:

    p = sub.add_parser(
        "lens",
        help="logit lens: every layer's logprob, rank, entropy and top-k of each token",
        description="The residual stream after each layer read through the model's final norm and "
        "output layer (the plain logit lens). Layer 0 is the embeddings, layer L the model's own output.",
    )
    model_args(p)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--text")
    src.add_argument("--ids", type=ids_arg, help="comma-separated token ids, read exactly as given")
    p.add_argument("--logprobs", type=k_arg, default=5, help="top-k per layer and position, 0..20")
    p.add_argument("--out", help="write the JSON here instead of stdout")


def _check(a: argparse.Namespace) -> None:
    """Every check that needs no model."""
    from explorer.rules.sampler import check_k

    check_k(a.logprobs, "logprobs", allow_full=False)
    check_out(a.out, "--out")
    source_text(a, "read")


def run(a: argparse.Namespace) -> dict:
    _check(a)
    from explorer.engine.analyses.lens import lens_ids, lens_text

    engine, note = hidden_states_engine(a, a.model)  # the default GGUF: its torch twin (the note says so)
    grid = lens_ids(engine, a.ids, a.logprobs) if a.ids is not None else lens_text(engine, a.text, a.logprobs)
    grid.note = note
    return grid.to_dict()
