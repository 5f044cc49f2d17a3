"""Command line: `logprob-explorer score|generate|serve|...`. JSON to stdout (or --out), messages to stderr.

score, generate and serve live here; every other command is a module in explorer/commands/ listed in COMMANDS.
"""

from __future__ import annotations

import argparse
import os
import sys

from explorer.errors import ExplorerError
from explorer.export import names as export_names

SCORE_FORMATS = export_names(generated=False)  # the exporters' registry decides
GEN_FORMATS = export_names()
COMMANDS: list[str] = [  # modules of explorer/commands/, one line each
    "explorer.commands.lens",
    "explorer.commands.compare",
    "explorer.commands.why",
    "explorer.commands.words",
]


def k_arg(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {value!r}") from None


def ids_arg(value: str) -> list[int]:
    try:
        return [int(v) for v in value.replace(" ", "").split(",") if v != ""]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--ids takes comma-separated integers like 1,2,3, got {value!r}") from None


def model_args(p: argparse.ArgumentParser, many: bool = False) -> None:
    if many:
        p.add_argument(
            "--model",
            action="append",
            help="hub id or local folder; repeat to serve several (the first is the "
            "default; or EXPLORER_MODELS=a,b,c; default: SmolLM2-135M-Instruct)",
        )
    else:
        p.add_argument(
            "--model",
            default=os.environ.get("EXPLORER_MODEL"),
            help="hub id or local folder (default: SmolLM2-135M-Instruct)",
        )
    p.add_argument("--device", default=os.environ.get("EXPLORER_DEVICE"), help="auto (default), cpu, cuda, cuda:N, mps")
    p.add_argument(
        "--dtype",
        default=os.environ.get("EXPLORER_DTYPE"),
        help="auto (bf16 on GPU, float32 on CPU), float32, bfloat16, float16",
    )
    p.add_argument(
        "--engine",
        default=os.environ.get("EXPLORER_ENGINE"),
        help="auto (default: llama.cpp for a .gguf, and for the default model on a CPU-only machine), torch, llama.cpp",
    )
    p.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="run the model repository's own code (only for authors you trust)",
    )
    p.add_argument(
        "--backend",
        default=os.environ.get("EXPLORER_BACKEND"),
        help="a vLLM / OpenAI-compatible /v1 URL to use as the engine (or EXPLORER_BACKEND)",
    )
    p.add_argument(
        "--backend-key", default=os.environ.get("EXPLORER_BACKEND_KEY"), help="its API key (or EXPLORER_BACKEND_KEY)"
    )
    p.add_argument(
        "--backend-tokenizer",
        default=os.environ.get("EXPLORER_BACKEND_TOKENIZER"),
        help="a local folder or hub id of the served model's tokenizer (exact token bytes; default: the folder the "
        "server names as the model's root, else the model id, when either loads here), or `server`: tokenize on the "
        "server (its /tokenize and /detokenize)",
    )
    p.add_argument(
        "--max-logprobs",
        type=int,
        default=None,
        help="most top-k alternatives a request may ask (default 20, or EXPLORER_MAX_LOGPROBS; -1: no cap)",
    )


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="logprob-explorer",
        description="Score a text or generate from a prompt, with every token's logprob, rank, top-k and entropy.",
    )
    sub = ap.add_subparsers(dest="command", required=True)

    sc = sub.add_parser("score", help="score a text or a list of token ids")
    model_args(sc)
    src = sc.add_mutually_exclusive_group(required=True)
    src.add_argument("--text")
    src.add_argument("--text-file")
    src.add_argument("--ids", type=ids_arg, help="comma-separated token ids, scored exactly as given")
    sc.add_argument(
        "--logprobs", type=k_arg, default=5, help="top-k alternatives per token, 0..20, or -1 for the full vocabulary"
    )
    sc.add_argument("--format", choices=SCORE_FORMATS, default="vllm")
    sc.add_argument("--binary-out", help="with --logprobs -1: also write the full distributions as float16 .npy here")
    sc.add_argument(
        "--context-start",
        default="none",
        metavar="none|bos|eos|TOKEN",
        help="put this document-start token before the text so its first token is scored too "
        "(bos, eos or one of the model's special tokens, e.g. '<|endoftext|>'); nothing changes where the "
        "tokenizer adds a BOS itself (default: none)",
    )
    sc.add_argument(
        "--lookup",
        action="append",
        metavar="TEXT_OR_ID",
        help="(repeatable, with --format native) also the "
        "logprob and rank of this token id or text at every position, as a `lookup` list",
    )
    sc.add_argument("--out", help="write the JSON here instead of stdout")

    g = sub.add_parser("generate", help="generate from a prompt")
    model_args(g)
    g.add_argument("--prompt", required=True)
    g.add_argument("--chat", action="store_true", help="send the prompt as a user message through the chat template")
    g.add_argument("--system", help="system message (with --chat)")
    g.add_argument("--max-tokens", type=int, default=32)
    g.add_argument("--temperature", type=float, default=1.0, help="0 = greedy")
    g.add_argument("--top-p", type=float, default=1.0)
    g.add_argument("--top-k", type=int, default=0, help="0 = off")
    g.add_argument("--seed", type=int)
    g.add_argument("--n", type=int, default=1, help="independent samples")
    g.add_argument("--stop", nargs="+", default=[])
    g.add_argument("--logprobs", type=k_arg, default=5, help="top-k per generated token, 0..20")
    g.add_argument("--prompt-logprobs", type=k_arg, help="also score the prompt: top-k 0..20, or -1")
    g.add_argument(
        "--logprobs-mode",
        choices=("raw", "processed"),
        default="raw",
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
    g.add_argument("--format", choices=GEN_FORMATS, default="openai-completion")
    g.add_argument("--out")

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
    for mod in _commands().values():
        mod.add_parser(sub)
    return ap


def _commands() -> dict:
    import importlib

    return {m.rsplit(".", 1)[1]: importlib.import_module(m) for m in COMMANDS}


def write(body: dict | str, out: str | None) -> None:
    """`body` as JSON (a str, such as CSV, as it is) to `out` or stdout."""
    from explorer.export import dumps

    text = body.removesuffix("\n") if isinstance(body, str) else dumps(body)
    if out:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        print(f"wrote {out}", file=sys.stderr)
    else:
        sys.stdout.write(text + "\n")


def read_text(a) -> str:
    """The text of --text, or of --text-file read as UTF-8."""
    if not getattr(a, "text_file", None):
        return a.text
    try:
        with open(a.text_file, "rb") as f:
            raw = f.read()
    except OSError as err:
        raise ExplorerError(f"Cannot read --text-file {a.text_file!r}: {err.strerror}.") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ExplorerError(
            f"--text-file {a.text_file!r} is not UTF-8 (bad byte at offset {err.start}): convert it to UTF-8."
        ) from None


def check_text(text: str, flag: str) -> str:
    """`text` as given, when it is valid Unicode (a terminal can pass bytes that are not UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise ExplorerError(
            f"{flag} holds something that is not valid UTF-8 text at character {err.start}: "
            "pass UTF-8 text (or use --ids).",
            param=flag.lstrip("-"),
        ) from None
    return text


def check_out(path: str | None, flag: str) -> None:
    if path:
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise ExplorerError(f"{flag} {path!r}: the folder {folder!r} does not exist; create it or write elsewhere.")


def _check_score(a) -> str:
    """Every check of `score` that needs no model; returns the text (or '' for --ids)."""
    from explorer.settings import check_k

    check_k(a.logprobs, "logprobs", allow_full=True)
    if a.binary_out and a.logprobs != -1:
        raise ExplorerError("--binary-out writes full-vocabulary rows: add --logprobs -1.", param="binary_out")
    check_out(a.out, "--out")
    check_out(a.binary_out, "--binary-out")
    if a.lookup:
        from explorer.results.lookup import check_queries

        check_queries(a.lookup, a.format, getattr(a, "backend", None))
    if a.ids is not None and a.context_start.lower() != "none":
        raise ExplorerError(
            "--context-start applies to --text: with --ids, put the start token's id first.", param="context_start"
        )
    return source_text(a, "score")


def source_text(a, verb: str) -> str:
    """The checked text of --text / --text-file ('' with --ids, checked non-empty); `verb` says what the command does."""
    if a.ids is not None:
        if not a.ids:
            raise ExplorerError("--ids is empty: give comma-separated token ids like 1,2,3.", param="ids")
        return ""
    text = check_text(read_text(a), "--text")
    if not text:
        raise ExplorerError(f"The text is empty: type or paste some text to {verb}.", param="prompt", code="empty_text")
    return text


def _check_generate(a):
    """Every check of `generate` that needs no model; returns the settings."""
    from explorer.settings import SamplerSettings

    if a.system is not None and not a.chat:
        raise ExplorerError("--system only applies with --chat: add --chat or drop --system.", param="system")
    if not a.prompt:
        raise ExplorerError("The prompt is empty: type a prompt to continue.", param="prompt", code="empty_text")
    check_text(a.prompt, "--prompt")
    if a.system:
        check_text(a.system, "--system")
    check_out(a.out, "--out")
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


def _score(a, engine, text: str) -> dict:
    from explorer.engine import score_ids, score_text
    from explorer.export import export
    from explorer.export.native import full_vocab_npy

    r = (
        score_ids(engine, a.ids, a.logprobs)
        if a.ids is not None
        else score_text(engine, text, a.logprobs, start=a.context_start)
    )
    if a.binary_out:
        with open(a.binary_out, "wb") as f:
            f.write(full_vocab_npy(r))
    body = export(a.format, r)
    if a.lookup:
        from explorer.engine.lookup import lookup

        body["lookup"] = [x.to_dict() for x in lookup(engine, r.token_ids.tolist(), a.lookup)]
    return body


def _generate(a, engine, s) -> dict:
    from explorer.engine import generate
    from explorer.export import export

    if a.chat:
        msgs = ([{"role": "system", "content": a.system}] if a.system else []) + [{"role": "user", "content": a.prompt}]
        ids = engine.encode_chat(msgs)
    else:
        ids = engine.encode(a.prompt)
    if a.branch_at is not None:
        from explorer.engine.branch import generate_then_branch

        return export(a.format, [generate_then_branch(engine, ids, s, a.branch_at, a.branch_token)[1]])
    return export(a.format, generate(engine, ids, s))


def load_engine(a, model: str | None):
    """The engine the arguments ask for: a served model with --backend, else the model loaded here."""
    if getattr(a, "backend", None):
        from explorer.engine.remote import RemoteEngine

        return RemoteEngine(a.backend, model, a.backend_key, a.backend_tokenizer)
    from explorer.engine import load_any

    return load_any(model, a.device, a.dtype, a.trust_remote_code, engine=getattr(a, "engine", None))


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    if getattr(a, "max_logprobs", None) is not None:
        os.environ["EXPLORER_MAX_LOGPROBS"] = str(a.max_logprobs)
    try:
        if a.command == "serve":
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
        if a.command not in ("score", "generate"):
            body = _commands()[a.command].run(a)
            write(body, getattr(a, "out", None))
            return 0
        checked = _check_score(a) if a.command == "score" else _check_generate(a)  # before the model loads
        engine = load_engine(a, a.model)
        body = _score(a, engine, checked) if a.command == "score" else _generate(a, engine, checked)
        write(body, a.out)
        return 0
    except ExplorerError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # writing --out / --binary-out
        print(f"error: {err.strerror or err}: {getattr(err, 'filename', '') or ''}".rstrip(": "), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
