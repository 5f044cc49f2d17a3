"""`logprob-explorer serve`: the web app and the OpenAI-compatible API (explorer.server.serve). It writes no body:
its `run` returns the exit status."""

from __future__ import annotations

import argparse
import os

from explorer.cli.args import model_args


def add_parser(sub) -> None:
    sv = sub.add_parser("serve", help="run the web app and the OpenAI-compatible API")
    model_args(sv, many=True)
    sv.add_argument("--host", default=os.environ.get("EXPLORER_HOST", "127.0.0.1"))
    sv.add_argument("--port", type=int, default=int(os.environ.get("EXPLORER_PORT", "7860")))
    sv.add_argument("--share", action="store_true", default=os.environ.get("EXPLORER_SHARE") == "1")
    sv.add_argument("--auth", default=None, help="user:password: lock the page and the API (or EXPLORER_AUTH)")
    sv.add_argument(
        "--public",
        action="store_true",
        help="a public deployment: the listed models only, tighter limits, the API off unless EXPLORER_API_KEY is set "
        "(also EXPLORER_PUBLIC=1; on by default on a Hugging Face Space)",
    )


def run(a: argparse.Namespace) -> int:
    from explorer.server import serve

    return serve(
        models=a.model,
        device=a.device,
        dtype=a.dtype,
        host=a.host,
        port=a.port,
        share=a.share,
        backend=(a.backend, a.backend_key, a.backend_tokenizer) if a.backend else None,
        trust_remote_code=a.trust_remote_code,
        auth=a.auth,
        public=a.public,
        engine_kind=a.engine,
    )
