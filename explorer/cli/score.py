"""`logprob-explorer score`: every token's logprob, rank, top-k and entropy of a text (or of token ids), as the JSON
shape `--format` names (the exporters' registry, explorer.export)."""

from __future__ import annotations

import argparse

from explorer.cli.args import (
    backend_of,
    check_out,
    html_arg,
    ids_arg,
    k_arg,
    load_engine,
    model_args,
    source_text,
    write_html,
)
from explorer.errors import ExplorerError
from explorer.export import names as export_names

FORMATS = export_names(generated=False)  # the exporters' registry decides


def add_parser(sub) -> None:
    sc = sub.add_parser("score", help="score a text or a list of token ids")
    model_args(sc)
    src = sc.add_mutually_exclusive_group(required=True)
    src.add_argument("--text")
    src.add_argument("--text-file")
    src.add_argument("--ids", type=ids_arg, help="comma-separated token ids, scored exactly as given")
    sc.add_argument(
        "--logprobs", type=k_arg, default=5, help="top-k alternatives per token, 0..20, or -1 for the full vocabulary"
    )
    sc.add_argument("--format", choices=FORMATS, default="vllm")
    sc.add_argument("--binary-out", help="with --logprobs -1: also write the full distributions as float16 .npy here")
    sc.add_argument(
        "--context-start",
        default="none",
        metavar="none|document|TOKEN|ID",
        help="put this before the text so its first token is scored too: document (bos and eos mean the same): "
        "the token the model was trained to see at a document's start (SmolLM2's <|endoftext|>); or a special "
        "token by its text or id; nothing changes where the tokenizer adds a BOS itself (default: none)",
    )
    sc.add_argument(
        "--lookup",
        action="append",
        metavar="TEXT_OR_ID",
        help="(repeatable, with --format native) also the "
        "logprob and rank of this token id or text at every position, as a `lookup` list",
    )
    sc.add_argument(
        "--stats",
        action="store_true",
        help="(with --format native) also the text statistics (GLTR, Min-K%%, Min-K%%++, Fast-DetectGPT: "
        "scores, not verdicts) as a `stats` block, and each position's `varentropy`",
    )
    sc.add_argument(
        "--min-k", type=float, default=20.0, metavar="PERCENT", help="k of Min-K%% and Min-K%%++ (default 20)"
    )
    sc.add_argument(
        "--hidden-states",
        metavar="LAYERS",
        help="instead of the scores, write the residual stream at every token to --out (an .npz: states "
        "[tokens, layers, hidden], layers, hook_names, token_ids, positions); LAYERS like 0,6,-1,final_norm "
        "(Hugging Face's numbering, negative from the end) or all; torch engine only",
    )
    sc.add_argument("--out", help="write the JSON here instead of stdout (with --hidden-states: the .npz)")
    html_arg(sc)


def _check(a: argparse.Namespace) -> str:
    """Every check that needs no model; returns the text (or '' for --ids)."""
    from explorer.rules.sampler import check_k

    check_k(a.logprobs, "logprobs", allow_full=True)
    if a.binary_out and a.logprobs != -1:
        raise ExplorerError("--binary-out writes full-vocabulary rows: add --logprobs -1.", param="binary_out")
    check_out(a.out, "--out")
    check_out(a.binary_out, "--binary-out")
    check_out(a.html, "--html")
    if a.lookup:
        from explorer.results.lookup import check_queries

        check_queries(a.lookup, a.format, backend_of(a))
    if a.stats:
        from explorer.results.stats import check_k_percent

        if a.format != "native":
            raise ExplorerError("--stats writes a block of the native JSON: add --format native.", param="stats")
        check_k_percent(a.min_k)
    if a.ids is not None and a.context_start.lower() != "none":
        raise ExplorerError(
            "--context-start applies to --text: with --ids, put the start token's id first.", param="context_start"
        )
    if a.hidden_states is not None:
        layers_arg(a.hidden_states)
        if not a.out or not a.out.endswith(".npz"):
            raise ExplorerError("--hidden-states writes an .npz file: add --out states.npz.", param="out")
        if a.binary_out or a.lookup or a.stats:
            raise ExplorerError(
                "--hidden-states writes the states only: drop --binary-out, --lookup and --stats.",
                param="hidden_states",
            )
    return source_text(a, "score")


def layers_arg(value: str) -> list | None:
    """--hidden-states LAYERS: "0,6,-1,final_norm" -> [0, 6, -1, "final_norm"]; "all" -> None (every layer)."""
    if value.strip().lower() == "all":
        return None
    out: list = []
    for part in value.split(","):
        x = part.strip()
        if x == "final_norm":
            out.append(x)
        elif x.isascii() and x.lstrip("-").isdigit():
            out.append(int(x))
        else:
            raise ExplorerError(
                f"--hidden-states {value!r}: give layer numbers and final_norm, comma-separated, like "
                "0,6,-1,final_norm (or all).",
                param="hidden_states",
            )
    return out


def write_states(a: argparse.Namespace, engine, text: str) -> int:
    """--hidden-states: the states of the text (or ids) to --out as an .npz; the exit status."""
    import sys

    from explorer.engine.analyses.hidden import local_engine, read_states
    from explorer.engine.passes.scoring import text_ids
    from explorer.export.hidden_states import npz

    here = local_engine(engine, "hidden_states")
    ids = a.ids if a.ids is not None else text_ids(here, text, a.context_start)[0]
    h = read_states(here, ids, layers_arg(a.hidden_states), param="hidden_states")
    with open(a.out, "wb") as f:
        f.write(npz(h))
    print(f"wrote {a.out}: states {list(h.shape)} ({', '.join(h.hook_names)})", file=sys.stderr)
    return 0


def run(a: argparse.Namespace) -> dict | int:
    # 1. check everything that needs no model, before it loads
    text = _check(a)
    from explorer.engine import score_ids, score_text
    from explorer.export import export
    from explorer.export.native import full_vocab_npy

    # 2. load it and score
    engine = load_engine(a, a.model)
    if a.hidden_states is not None:
        return write_states(a, engine, text)
    r = (
        score_ids(engine, a.ids, a.logprobs)
        if a.ids is not None
        else score_text(engine, text, a.logprobs, start=a.context_start)
    )
    # 3. the view, the full distributions, the body, and the looked-up tokens
    write_html(a.html, r)
    if a.binary_out:
        with open(a.binary_out, "wb") as f:
            f.write(full_vocab_npy(r))
    if a.stats:
        from explorer.export.native import export as native_export

        body = native_export(r, stats=True, k_percent=a.min_k)
    else:
        body = export(a.format, r)
    if a.lookup:
        from explorer.engine.analyses.lookup import lookup

        body["lookup"] = [x.to_dict() for x in lookup(engine, r.token_ids.tolist(), a.lookup)]
    return body
