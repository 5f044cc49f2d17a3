"""`logprob-explorer serve`: the web app and the OpenAI-compatible API (explorer.server.serve). It writes no body:
its `run` returns the exit status."""

from __future__ import annotations

import argparse

from explorer.cli.args import model_args


def add_parser(sub) -> None:
    sv = sub.add_parser("serve", help="run the web app and the OpenAI-compatible API")
    model_args(sv, many=True)
    sv.add_argument("--host", help="the address to listen on (default 127.0.0.1, or EXPLORER_HOST; 0.0.0.0 on a Space)")
    sv.add_argument("--port", type=int, help="default 7860 (or EXPLORER_PORT)")
    sv.add_argument("--share", action="store_true", help="a public link through Gradio's tunnel (or EXPLORER_SHARE=1)")
    sv.add_argument(
        "--forwarded-allow-ips",
        help="the proxies in front of this server, comma-separated addresses or networks (* any): only their "
        "X-Forwarded-* headers are believed (or EXPLORER_FORWARDED_ALLOW_IPS; a Space's own proxy without it)",
    )
    sv.add_argument("--auth", default=None, help="user:password: lock the page and the API (or EXPLORER_AUTH)")
    sv.add_argument(
        "--public",
        action="store_true",
        help="a public deployment: the listed models only, tighter limits, the API off unless EXPLORER_API_KEY is set "
        "(also EXPLORER_PUBLIC=1; on by default on a Hugging Face Space)",
    )


def run(a: argparse.Namespace) -> int:
    from explorer.config import current
    from explorer.server import serve

    return serve(current(), trust_remote_code=a.trust_remote_code)  # the CLI's configuration (explorer.cli.main)
