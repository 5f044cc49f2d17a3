"""`logprob-explorer compare`: two models on one text, or one model after two prompts, as one JSON object.

Two models: `--model A --model-b B (--text T | --text-file F | --ids ...)`; one model, two prompts:
`--model A --prompt-a P --prompt-b Q (--text CONTINUATION | --text-file F)`. The body is
`explorer.results.compare.Comparison.to_dict()` (shape in docs/researchers.md).
"""

from __future__ import annotations

import argparse

from explorer.cli.args import (
    backend_of,
    check_out,
    check_text,
    ids_arg,
    k_arg,
    load_engine,
    model_args,
    source_text,
)


def add_parser(sub) -> None:

    p = sub.add_parser(
        "compare",
        help="two models on one text (or one model after two prompts), token by token",
        description="Per token: both logprobs, their difference (b minus a), both ranks, KL both ways and "
        "Jensen-Shannon between the two next-token distributions (nats). Models with different "
        "tokenizers are compared per character span, without divergences.",
    )
    model_args(p)
    p.add_argument("--model-b", help="the second model (hub id or local folder)")
    p.add_argument("--prompt-a", help="one model, two prompts: the first prompt (the text is then the continuation)")
    p.add_argument("--prompt-b", help="the second prompt (may be empty: '')")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--text")
    src.add_argument("--text-file")
    src.add_argument("--ids", type=ids_arg, help="comma-separated token ids (models with the same tokenizer)")
    p.add_argument("--logprobs", type=k_arg, default=5, help="top-k alternatives per token and model, 0..20")
    p.add_argument(
        "--stats",
        action="store_true",
        help="also Binoculars (model A observes, model B performs; two models with one tokenizer) as a `stats` "
        "block: a score, not a verdict",
    )
    p.add_argument("--out", help="write the JSON here instead of stdout")


def _check(a: argparse.Namespace) -> str:
    """Every check that needs no model; returns the text ('' for --ids)."""
    from explorer.errors import ExplorerError
    from explorer.rules.sampler import check_k

    check_k(a.logprobs, "logprobs", allow_full=False)
    check_out(a.out, "--out")
    if backend_of(a):
        raise ExplorerError(
            "compare reads both models' logits, so it needs them loaded here: drop --backend.", param="backend"
        )
    prompts = a.prompt_a is not None or a.prompt_b is not None
    if a.stats and (prompts or not a.model_b):
        raise ExplorerError("--stats (Binoculars) compares two models: give --model-b, not two prompts.", param="stats")
    if prompts:
        if a.prompt_a is None or a.prompt_b is None:
            raise ExplorerError(
                "Comparing two prompts needs both --prompt-a and --prompt-b (one may be '').", param="prompt_b"
            )
        if a.model_b:
            raise ExplorerError(
                "--prompt-a/--prompt-b compare one model after two prompts: drop --model-b.", param="model_b"
            )
        if a.ids is not None:
            raise ExplorerError(
                "With two prompts give the continuation as --text or --text-file, not --ids.", param="ids"
            )
        check_text(a.prompt_a, "--prompt-a")
        check_text(a.prompt_b, "--prompt-b")
    elif not a.model_b:
        raise ExplorerError(
            "Name the second model with --model-b (or compare two prompts with --prompt-a and --prompt-b).",
            param="model_b",
        )
    return source_text(a, "compare")


def run(a: argparse.Namespace) -> dict:
    text = _check(a)
    from explorer.engine.analyses.compare import compare_ids, compare_prompt_texts, compare_text

    ea = load_engine(a, a.model)
    if a.prompt_a is not None:
        return compare_prompt_texts(ea, a.prompt_a, a.prompt_b, text, a.logprobs).to_dict()
    eb = ea if a.model_b == a.model else load_engine(a, a.model_b)
    c = compare_ids(ea, eb, a.ids, a.logprobs) if a.ids is not None else compare_text(ea, eb, text, a.logprobs)
    body = c.to_dict()
    if a.stats:
        from explorer.results.stats import binoculars

        body["stats"] = {"statistics": [binoculars(c).to_dict()]}
    return body
