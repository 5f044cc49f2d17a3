"""Command line: `logprob-explorer score|generate|serve|...`. JSON to stdout (or --out), messages to stderr.

Every command is a module of this package, listed in COMMANDS; explorer.cli.args holds what they share. A command
module has:
- `add_parser(sub)`: adds its subparser (use `explorer.cli.args.model_args`, `ids_arg`, `k_arg` for the shared flags);
- `run(a) -> dict | str`: checks its arguments (before loading any model), does the work, returns the JSON body
  (or a text such as CSV, written as it is), which the CLI writes to stdout or `--out`. Bad input raises
  ExplorerError (exit status 2, one line). A command that writes no body (`serve`) returns its exit status (an int).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from explorer.config import Config, use
from explorer.errors import ExplorerError

COMMANDS: list[str] = [  # the commands' modules, in the order `--help` lists them, one line each
    "explorer.cli.score",
    "explorer.cli.generate",
    "explorer.cli.serve",
    "explorer.cli.lens",
    "explorer.cli.compare",
    "explorer.cli.why",
    "explorer.cli.answers",
    "explorer.cli.words",
    "explorer.cli.batch",
    "explorer.cli.site",
]


def _commands() -> dict:
    """Command name -> its module."""
    return {m.rsplit(".", 1)[1]: importlib.import_module(m) for m in COMMANDS}


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="logprob-explorer",
        description="Score a text or generate from a prompt, with every token's logprob, rank, top-k and entropy.",
    )
    sub = ap.add_subparsers(dest="command", required=True)
    for mod in _commands().values():
        mod.add_parser(sub)
    return ap


def main(argv: list[str] | None = None) -> int:
    # 1. parse
    a = parser().parse_args(argv)
    # 2. run the command under the configuration its flags and the environment make (explorer.config: --max-logprobs
    # reaches the settings this way), checking its arguments before loading a model, and write its body
    try:
        config = Config.from_args(a)
        with use(config):
            body = _commands()[a.command].run(a)
            if isinstance(body, int):  # serve: its exit status
                return body
            from explorer.cli.args import write

            write(body, getattr(a, "out", None))
            return 0
    # 3. a mistake of the user's (or a file that cannot be written) is one line on stderr, exit status 2
    except ExplorerError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # writing --out / --binary-out
        print(f"error: {err.strerror or err}: {getattr(err, 'filename', '') or ''}".rstrip(": "), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
