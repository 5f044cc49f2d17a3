"""What the CLI's commands share: the argument types and model flags, the checks of text and --out that need no
model, loading the engine, and writing the body to stdout or --out."""

from __future__ import annotations

import argparse
import os
import sys

from explorer.errors import ExplorerError


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
            help="hub id or local folder (default: SmolLM2-135M-Instruct, or EXPLORER_MODEL)",
        )
    p.add_argument("--device", help="auto (default), cpu, cuda, cuda:N, mps (or EXPLORER_DEVICE)")
    p.add_argument(
        "--dtype",
        help="auto (bf16 on GPU, float32 on CPU), float32, bfloat16, float16 (or EXPLORER_DTYPE)",
    )
    p.add_argument(
        "--engine",
        help="auto (default: llama.cpp for a .gguf, and for the default model on a CPU-only machine), torch, llama.cpp "
        "(or EXPLORER_ENGINE)",
    )
    p.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="run the model repository's own code (only for authors you trust)",
    )
    p.add_argument(
        "--backend",
        help="a vLLM / OpenAI-compatible /v1 URL to use as the engine (or EXPLORER_BACKEND)",
    )
    p.add_argument("--backend-key", help="its API key (or EXPLORER_BACKEND_KEY)")
    p.add_argument(
        "--backend-tokenizer",
        help="a local folder or hub id of the served model's tokenizer (or EXPLORER_BACKEND_TOKENIZER; exact token "
        "bytes; default: the folder the "
        "server names as the model's root, else the model id, when either loads here), or `server`: tokenize on the "
        "server (its /tokenize and /detokenize)",
    )
    p.add_argument(
        "--max-logprobs",
        type=int,
        default=None,
        help="most top-k alternatives a request may ask (default 20, or EXPLORER_MAX_LOGPROBS; -1: no cap)",
    )


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


def html_arg(parser) -> None:
    """`--html FILE`: the result's view (the heatmap, its card and detail) as one self-contained page."""
    parser.add_argument(
        "--html",
        metavar="FILE",
        help="also write the view as one self-contained HTML page here (no server needed to open it; "
        "the first sample where there are several)",
    )


def write_html(path: str | None, r) -> None:
    """The view of `r` (a TokenScores) written to `path` where --html asked for it (explorer.notebook.files)."""
    if path:
        from explorer.notebook.files import save_html

        save_html(r, path)


def check_out(path: str | None, flag: str) -> None:
    if path:
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise ExplorerError(f"{flag} {path!r}: the folder {folder!r} does not exist; create it or write elsewhere.")
        if os.path.isdir(path):
            raise ExplorerError(
                f"{flag} {path!r} is a folder: give a file name in it, like {os.path.join(path, 'out.json')!r}."
            )


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


def backend_of(a) -> str | None:
    """The served model's URL the command runs on: --backend, else EXPLORER_BACKEND (explorer.config)."""
    from explorer.config import current

    return getattr(a, "backend", None) or current().backend


def engine_spec(a, model: str | None):
    """The EngineSpec the arguments ask for (each flag not given: its variable, explorer.config): a served model
    with --backend, else the model loaded here."""
    from explorer.config import current

    config = current()  # the command line's (explorer.cli.main uses it while the command runs)
    model = model or config.model
    from explorer.engine.select import REMOTE, EngineSpec

    if config.backend:
        return EngineSpec(model, REMOTE, config.backend, config.backend_key, config.backend_tokenizer)
    options = config.engine
    return EngineSpec(
        model,
        options.kind,
        device=options.device,
        dtype=options.dtype,
        trust_remote_code=a.trust_remote_code,
        options=options,
    )


def load_engine(a, model: str | None):
    """The engine the arguments ask for (engine_spec), loaded."""
    from explorer.engine.select import load

    return load(engine_spec(a, model))


def hidden_states_engine(a, model: str | None):
    """(the engine for a view that needs hidden states and gradients, the note its numbers carry): the engine the
    arguments ask for when it has them, else the torch engine on the same weights (the default model's GGUF,
    de-quantized by transformers, as the page does); where neither can, the engine itself (the view says why)."""
    from explorer.engine.select import load, twin, twin_note

    spec = engine_spec(a, model)
    engine = load(spec)
    if engine.capabilities.hidden_states:
        return engine, ""
    kind = engine.capabilities.engine
    spec = twin(spec, kind)
    if spec is None:
        return engine, ""
    return load(spec), twin_note(kind)
