"""One home for what the tests share (tests/helpers/), read off the source with `ast`:

- at tests/ top level sit only test modules, tests/conftest.py (fixtures and hooks) and the package's __init__.py;
- no module under tests/ imports from a test module or from tests/conftest.py (pytest gives fixtures by name);
- no module under tests/ imports a `_private` name from another module: a rule a test needs is public somewhere.
"""

from __future__ import annotations

import ast

from tests.helpers.repo import ROOT

TESTS = ROOT / "tests"
TOP_LEVEL_OK = {"__init__.py", "conftest.py"}
# (importing file, module, name) still allowed, each with its reason
PRIVATE_OK = {
    # the test checks the compiled and the eager divergence kernel against each other: which one runs is the
    # module's own choice, so the name stays private to everything but that test
    ("tests/test_compare.py", "explorer.engine.analyses.compare", "_kernel"),
}


def strays(names: list[str]) -> list[str]:
    """The .py files of tests/ top level (by name) that are neither a test module nor conftest/__init__."""
    return sorted(n for n in names if n.endswith(".py") and not n.startswith("test_") and n not in TOP_LEVEL_OK)


def bad_imports(source: str, rel: str) -> list[str]:
    """Each import in `source` (the file at `rel`, wherever it stands) of a private name, of a test module or of
    tests/conftest.py, as 'path:line: why'."""
    out = []
    for node in ast.walk(ast.parse(source, filename=rel)):
        if isinstance(node, ast.ImportFrom) and node.module:
            mods, names = [node.module], [(node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            mods, names = [a.name for a in node.names], []
        else:
            continue
        for mod in mods:
            last = mod.split(".")[-1]
            if mod.startswith("tests.") and (last.startswith("test_") or last == "conftest"):
                out.append((node.lineno, f"imports {mod} (shared code belongs in tests/helpers/)"))
        for mod, name in names:
            if name.startswith("_") and not name.startswith("__") and (rel, mod, name) not in PRIVATE_OK:
                out.append((node.lineno, f"imports the private {mod}.{name} (make it public where it lives)"))
    return [f"{rel}:{line}: {why}" for line, why in sorted(out)]


def all_bad_imports() -> list[str]:
    out = []
    for path in sorted(TESTS.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        out += bad_imports(path.read_text(encoding="utf-8"), rel)
    return out


def test_the_tests_top_level_holds_only_test_modules_and_conftest():
    names = [p.name for p in TESTS.glob("*.py")]
    assert "conftest.py" in names and any(n.startswith("test_") for n in names)  # the scan sees the folder
    assert strays(names) == [], "move shared code into tests/helpers/"


def test_no_test_imports_a_private_name_a_test_module_or_conftest():
    assert all_bad_imports() == []


def test_the_checks_catch_each_kind():
    assert strays(["test_a.py", "conftest.py", "__init__.py", "browser.py", "data"]) == ["browser.py"]
    src = (
        "from tests.conftest import LiveServer\n"
        "import tests.test_api\n"
        "def f():\n    from tests.helpers.tiny import _save, save, __doc__\n"
        "from explorer.engine.analyses.compare import _kernel\n"
    )
    found = bad_imports(src, "tests/test_x.py")
    assert [f.split(": ", 1)[0] for f in found] == ["tests/test_x.py:1", "tests/test_x.py:2"] + [
        "tests/test_x.py:4",
        "tests/test_x.py:5",
    ], found
    assert "tests.helpers.tiny._save" in found[2] and "explorer.engine.analyses.compare._kernel" in found[3]
    assert bad_imports(src.splitlines()[-1], "tests/test_compare.py") == []  # the one allowed, where allowed
