"""`logprob-explorer generate`: sample from a prompt with every generated token's logprob, rank, top-k and entropy,
as the JSON shape `--format` names; `--branch-at` / `--branch-token` continue from a token put in by hand."""

from __future__ import annotations

import argparse

from explorer.cli.args import check_out, check_text, html_arg, k_arg, load_engine, model_args, write_html
from explorer.errors import ExplorerError
from explorer.export import names as export_names
from explorer.rules.sampler import default  # SamplerSettings' defaults, the flags' own

FORMATS = export_names()


def add_parser(sub) -> None:
    g = sub.add_parser("generate", help="generate from a prompt")
    model_args(g)
    g.add_argument("--prompt", required=True)
    g.add_argument("--chat", action="store_true", help="send the prompt as a user message through the chat template")
    g.add_argument("--system", help="system message (with --chat)")
    g.add_argument("--max-tokens", type=int, default=default("max_tokens"))
    g.add_argument("--temperature", type=float, default=default("temperature"), help="0 = greedy")
    g.add_argument("--top-p", type=float, default=default("top_p"))
    g.add_argument("--top-k", type=int, default=default("top_k"), help="0 = off")
    g.add_argument("--seed", type=int)
    g.add_argument("--n", type=int, default=default("n"), help="independent samples")
    g.add_argument("--stop", nargs="+", default=[])
    g.add_argument("--logprobs", type=k_arg, default=default("logprobs"), help="top-k per generated token, 0..20")
    g.add_argument("--prompt-logprobs", type=k_arg, help="also score the prompt: top-k 0..20, or -1")
    g.add_argument(
        "--logprobs-mode",
        choices=("raw", "processed"),
        default=default("mode"),
        help="raw: the model's distribution; processed: after temperature/top-k/top-p",
    )
    g.add_argument(
        "--branch-at",
        type=int,
        metavar="POS",
        help="then put --branch-token at position POS of the result "
        "(prompt and generated tokens counted together), continue from there and print that branch",
    )
    g.add_argument("--branch-token", type=int, metavar="ID", help="the token id put at --branch-at")
    g.add_argument("--format", choices=FORMATS, default="openai-completion")
    g.add_argument("--out")
    html_arg(g)


def _check(a: argparse.Namespace):
    """Every check that needs no model; returns the settings."""
    from explorer.rules.sampler import SamplerSettings

    if a.system is not None and not a.chat:
        raise ExplorerError("--system only applies with --chat: add --chat or drop --system.", param="system")
    if not a.prompt:
        raise ExplorerError("The prompt is empty: type a prompt to continue.", param="prompt", code="empty_text")
    check_text(a.prompt, "--prompt")
    if a.system:
        check_text(a.system, "--system")
    check_out(a.out, "--out")
    check_out(a.html, "--html")
    if (a.branch_at is None) != (a.branch_token is None):
        raise ExplorerError(
            "--branch-at and --branch-token go together: give a position and a token id.", param="branch_at"
        )
    if a.branch_at is not None and (a.branch_at < 1 or a.branch_token < 0 or a.n != 1 or a.prompt_logprobs == -1):
        raise ExplorerError(
            "--branch-at takes a position >= 1 and --branch-token an id >= 0, with --n 1 and --prompt-logprobs 0..20.",
            param="branch_at",
        )
    return SamplerSettings(
        max_tokens=a.max_tokens,
        temperature=a.temperature,
        top_p=a.top_p,
        top_k=a.top_k,
        seed=a.seed,
        stop=tuple(a.stop),
        logprobs=a.logprobs,
        prompt_logprobs=a.prompt_logprobs,
        mode=a.logprobs_mode,
        n=a.n,
    )


def run(a: argparse.Namespace) -> dict:
    # 1. check everything that needs no model, before it loads
    s = _check(a)
    from explorer.engine import generate
    from explorer.export import export

    # 2. load it and encode the prompt (as a chat, with --chat)
    engine = load_engine(a, a.model)
    if a.chat:
        msgs = ([{"role": "system", "content": a.system}] if a.system else []) + [{"role": "user", "content": a.prompt}]
        ids = engine.encode_chat(msgs)
    else:
        ids = engine.encode(a.prompt)
    # 3. generate (and branch)
    if a.branch_at is not None:
        from explorer.engine.analyses.branch import generate_then_branch

        results = [generate_then_branch(engine, ids, s, a.branch_at, a.branch_token)[1]]
    else:
        results = generate(engine, ids, s)
    write_html(a.html, results[0])
    return export(a.format, results)
