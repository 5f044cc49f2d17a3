"""logprob-explorer: see what a language model expected, token by token."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import warnings
from types import FrameType, ModuleType

from explorer.errors import ExplorerError
from explorer.notebook.lm import LM, load
from explorer.results.scores import TokenScores
from explorer.rules.sampler import VERSION as __version__

__all__ = ["LM", "ExplorerError", "TokenScores", "__version__", "load", "open"]

# The old module paths, kept on purpose: each module that moved to a package named for its role (#56) still
# imports by its old name, with a DeprecationWarning, as the very module it moved to (docs/architecture.md).
MOVED = {
    "explorer.bounds": "explorer.engine.passes.bounds",
    "explorer.links": "explorer.ui.links",
    "explorer.lm": "explorer.notebook.lm",
    "explorer.models": "explorer.serving.models",
    "explorer.reach": "explorer.serving.reach",
    "explorer.settings": "explorer.rules.sampler",
    "explorer.zerogpu": "explorer.serving.zerogpu",
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old module path of MOVED and loads it as the module it moved to, warning once."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        return importlib.util.spec_from_loader(name, self) if name in MOVED else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(
            f"{spec.name} moved to {MOVED[spec.name]}: import it from there (the old path goes in a later release)",
            DeprecationWarning,
            stacklevel=_caller_level(),
        )
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module it moved to is already made."""


def _caller_level() -> int:
    """The stack level of the code that imported, past this file and the import machinery (as `warnings` counts:
    the frames of importlib's bootstrap are not counted)."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and (frame.f_code.co_filename == __file__ or "importlib" in frame.f_code.co_filename):
        frame = frame.f_back
        if frame is not None and "_bootstrap" not in frame.f_code.co_filename:
            level += 1
    return level


def _install() -> None:
    """Right after the path finder (a real file of an old name would win) and before any other, such as an editable
    install's finder that would find the name in another checkout."""
    if not any(isinstance(f, _MovedModules) for f in sys.meta_path):
        after = [i for i, f in enumerate(sys.meta_path) if f is importlib.machinery.PathFinder]
        sys.meta_path.insert(after[0] + 1 if after else len(sys.meta_path), _MovedModules())


_install()


def open(path: str | os.PathLike[str]) -> TokenScores:
    """The TokenScores held by a session file (its first result), native JSON, a captured vLLM / OpenAI body, an
    HTML view made by `save_html` / `to_html` or a Compare view's file (its result A) (explorer.notebook.files
    .open_file); an ExplorerError naming the file when it holds none (the other tool tabs' files among them)."""
    from explorer.notebook.files import open_file

    return open_file(path)
