"""logprob-explorer: see what a language model expected, token by token."""

from __future__ import annotations

import os

from explorer.errors import ExplorerError
from explorer.notebook.lm import LM, load
from explorer.results.scores import TokenScores
from explorer.rules.sampler import VERSION as __version__

__all__ = ["LM", "ExplorerError", "TokenScores", "__version__", "load", "open"]


def open(path: str | os.PathLike[str]) -> TokenScores:
    """The TokenScores held by a session file (its first result), native JSON, a captured vLLM / OpenAI body, an
    HTML view made by `save_html` / `to_html` or a Compare view's file (its result A) (explorer.notebook.files
    .open_file); an ExplorerError naming the file when it holds none (the other tool tabs' files among them)."""
    from explorer.notebook.files import open_file

    return open_file(path)
