"""The old module paths, kept on purpose: each module that moved to a package named for its role (#56) still imports
by its old name, warns that it moved, and is the very module it moved to (its names the same objects)."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pytest

import explorer
from tests.helpers.repo import ROOT

# the old paths people's code may use, and a public name each must still give
PUBLIC = {
    "explorer.lm": "LM",
    "explorer.models": "Models",
    "explorer.settings": "SamplerSettings",
    "explorer.links": "ViewState",
}


def _fresh_import(old: str):
    """Import `old` as a first import would (any earlier import of it forgotten), catching its warnings."""
    sys.modules.pop(old, None)
    parent, _, leaf = old.rpartition(".")
    if leaf in vars(sys.modules[parent]):
        delattr(sys.modules[parent], leaf)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    return module, [w for w in caught if issubclass(w.category, DeprecationWarning)]


@pytest.mark.parametrize("old", sorted(explorer.MOVED))
def test_an_old_path_imports_warns_and_is_the_moved_module(old):
    new = explorer.MOVED[old]
    module, warned = _fresh_import(old)
    assert module is importlib.import_module(new)
    assert [str(w.message).split(":")[0] for w in warned] == [f"{old} moved to {new}"]
    assert warned[0].filename == __file__  # the warning points at the code that imported the old path
    if old in PUBLIC:
        name = PUBLIC[old]
        assert getattr(module, name) is getattr(importlib.import_module(new), name)


def test_a_from_import_of_an_old_path_gives_the_same_objects():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from explorer.lm import LM, load
        from explorer.settings import VERSION, SamplerSettings

    from explorer.rules.sampler import SamplerSettings as moved

    assert (LM, load, SamplerSettings) == (explorer.LM, explorer.load, moved) and explorer.__version__ == VERSION


def test_every_old_path_is_gone_from_the_tree_and_every_new_one_is_there():
    """A file left at an old path would be imported instead (the path finder comes first), without a warning."""
    for old, new in explorer.MOVED.items():
        assert not (ROOT / (old.replace(".", "/") + ".py")).exists(), old
        assert (ROOT / (new.replace(".", "/") + ".py")).exists(), new


def test_an_unknown_name_is_still_an_import_error():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("explorer.no_such_module")


def test_importing_an_old_path_in_a_fresh_process_warns_once():
    code = "import warnings; warnings.simplefilter('always'); import explorer.settings, explorer.settings"
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stderr
    assert err.count("DeprecationWarning: explorer.settings moved to explorer.rules.sampler") == 1, err
