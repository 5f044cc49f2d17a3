"""The import rules of docs/architecture.md, read off the source with `ast` (top-level imports, imports inside
functions, and `importlib.import_module` / `__import__` of a constant name):

- torch and transformers only in explorer/engine/ (and in tests/ and bench/);
- gradio only in explorer/ui/ and explorer/server.py (and in tests/ and bench/);
- explorer/export/ and explorer/render/ import nothing from explorer but explorer.results (the result types),
  explorer.errors, explorer.rules, explorer.floats and their own package;
- at most six modules at explorer/'s top (TOP), every other one in a package named for its role;
- the packages stand on floors (FLOORS: faces, presenters, serving, engine, results, base) and no import runs from a
  lower floor to a higher one; with no import cycle, the arrows all run down or across a floor;
- no module outside explorer/ui/ names a file of the page's package (a path through "ui", read without an import):
  what the page and a lower floor both read lives in explorer/static/, below both.
"""

from __future__ import annotations

import ast
from itertools import pairwise
from pathlib import Path

from tests.helpers.repo import ROOT, repo_files

EXEMPT = ("tests/", "bench/")  # tests and benchmarks may import anything
ENGINE_ONLY = ("torch", "transformers")
PRESENTERS = ("explorer/export/", "explorer/render/")
# the result types (explorer/results/: the central TokenScores and one small type per view, all numpy, no torch)
# and the shared rules beside them: packages and modules, never a list of files
RESULT_LAYER = ("explorer.results", "explorer.errors", "explorer.rules", "explorer.floats")


def python_files() -> list[str]:
    """Every .py file of the repository (no virtualenv, caches or build output), as paths from the root."""
    return [path.relative_to(ROOT).as_posix() for path in repo_files("*.py")]


def _package(rel: str) -> str:
    """The dotted package a file's relative imports start from: explorer/export/vllm.py -> explorer.export."""
    return ".".join(Path(rel).with_suffix("").parts[:-1])


def _is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def imports(source: str, rel: str) -> list[tuple[int, str]]:
    """(line, module) of every import in `source` (the file at `rel`), wherever it stands."""
    found = []
    for node in ast.walk(ast.parse(source, filename=rel)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                up = _package(rel).split(".")
                up = up[: len(up) - node.level + 1]
                base = ".".join([*up, node.module] if node.module else up)
            else:
                base = node.module or ""
            for a in node.names:  # `from explorer import engine` imports the module explorer.engine
                sub = f"{base}.{a.name}"
                found.append((node.lineno, sub if base.split(".")[0] == "explorer" and _is_module(sub) else base))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                found.append((node.lineno, node.args[0].value))
    return found


def violations(rel: str, found: list[tuple[int, str]]) -> list[str]:
    """Each import of `found` (in the file at `rel`) that breaks a rule, as 'path:line imports X (why)'."""
    if rel.startswith(EXEMPT):
        return []
    out = []
    for line, module in found:
        top = module.split(".")[0]
        why = None
        if top in ENGINE_ONLY and not rel.startswith("explorer/engine/"):
            why = f"{top} belongs in explorer/engine/ only"
        elif top == "gradio" and not (rel.startswith("explorer/ui/") or rel == "explorer/server.py"):
            why = "gradio belongs in explorer/ui/ and explorer/server.py only"
        elif rel.startswith(PRESENTERS) and top == "explorer":
            own = "explorer." + rel.split("/")[1]
            if not any(module == ok or module.startswith(ok + ".") for ok in (*RESULT_LAYER, own)):
                why = f"{own} may import from explorer only {', '.join(RESULT_LAYER)} and {own}"
        if why:
            out.append(f"{rel}:{line} imports {module} ({why})")
    return out


def all_violations() -> list[str]:
    out = []
    for rel in python_files():
        out += violations(rel, imports((ROOT / rel).read_text(encoding="utf-8"), rel))
    return out


def _of_rule(words: str) -> list[str]:
    return [v for v in all_violations() if words in v]


def test_the_scan_sees_the_code():
    files = python_files()
    assert "explorer/engine/kernels/metrics.py" in files and "explorer/export/vllm.py" in files and "app.py" in files
    assert not any(f.startswith(".venv/") for f in files)
    assert any(
        m == "torch"
        for _, m in imports(
            (ROOT / "explorer/engine/kernels/metrics.py").read_text(), "explorer/engine/kernels/metrics.py"
        )
    )


def test_torch_and_transformers_only_in_the_engine():
    bad = _of_rule("belongs in explorer/engine/ only")
    assert not bad, "\n".join(bad)


def test_gradio_only_in_the_ui_and_the_server():
    bad = _of_rule("gradio belongs in")
    assert not bad, "\n".join(bad)


def test_export_and_render_import_only_the_results():
    bad = _of_rule("may import from explorer only")
    assert not bad, "\n".join(bad)


def test_the_rules_catch_each_kind_of_import():
    """The guard itself: each rule fires on a made-up file, wherever the import stands."""

    def check(rel: str, source: str) -> list[str]:
        return violations(rel, imports(source, rel))

    assert check("explorer/export/x.py", "import torch")
    assert check("explorer/serving/models.py", "def f():\n    from transformers import AutoModel\n")
    assert check("explorer/api/x.py", "import importlib\nimportlib.import_module('gradio')\n")
    assert check("explorer/cli.py", "def f():\n    import gradio as gr\n")
    assert check("explorer/render/x.py", "from explorer.engine import generate")
    assert check("explorer/render/x.py", "from explorer import engine")
    assert check("explorer/export/x.py", "from ..engine import scoring")
    assert check("explorer/export/x.py", "from explorer.render.text import escape")
    assert not check("explorer/engine/x.py", "import torch\nfrom transformers import AutoModel")
    assert not check("explorer/server.py", "def f():\n    import gradio as gr\n")
    assert not check("explorer/ui/tabs/x.py", "import gradio as gr")
    assert not check(
        "explorer/export/x.py",
        "from . import common\nfrom explorer.results.scores import TokenScores\n"
        "from explorer.rules.sampler import MAX_K\nfrom explorer.errors import ExplorerError",
    )
    assert not check("explorer/render/x.py", "from explorer.render.text import escape\nimport numpy, plotly")
    assert not check("tests/test_x.py", "import torch, gradio\nfrom explorer.engine import generate")


UNTIED = ("explorer/api/", "explorer/export/")  # packages whose modules import one another one way only


def import_graph(prefixes: tuple[str, ...], leave_out=lambda rel, tree: set()) -> dict[str, set[str]]:
    """module -> the modules of `prefixes` it imports (wherever the import stands: a function's counts too; a
    `from package import module` counts the package too), but for those on the lines `leave_out(rel, tree)` gives."""
    graph: dict[str, set[str]] = {}
    for rel in python_files():
        if rel.startswith(prefixes):
            name = rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
            source = (ROOT / rel).read_text(encoding="utf-8")
            skip = leave_out(rel, ast.parse(source, filename=rel))
            graph[name] = {m for line, m in imports(source, rel) if line not in skip}
            graph[name] |= {m for line, m in _from_packages(source, rel) if line not in skip}
    return {m: {t for t in targets if t in graph and t != m} for m, targets in graph.items()}


def _from_packages(source: str, rel: str) -> set[tuple[int, str]]:
    """(line, package) of each `from package import module`: importing it runs the package's `__init__` first."""
    found = set()
    for node in ast.walk(ast.parse(source, filename=rel)):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add((node.lineno, node.module))
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = stack[stack.index(v) :]
            del stack[stack.index(v) :]
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_api_and_export_have_no_import_cycle():
    found = cycles(import_graph(UNTIED))
    assert not found, "modules that import one another (move what they share into a module both import): " + "; ".join(
        " <-> ".join(c) for c in found
    )


def test_the_cycle_check_sees_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert not cycles({"a": {"b"}, "b": set()})


ENGINE = ("explorer/engine/",)


def test_the_engine_has_no_import_cycle():
    """Not even through an import inside a function: a rule two modules need lives in a third both import."""
    found = cycles(import_graph(ENGINE))
    assert not found, "engine modules that import one another: " + "; ".join(" <-> ".join(c) for c in found)


FRONT = "explorer"  # explorer/__init__.py: the package's front door (LM, load, open, TokenScores, __version__)
# The result types import no presenter, not even inside a method: their notebook methods (`to_pandas`, `to_html`,
# `_repr_html_`, ...) call the presenters that explorer/notebook registers in explorer/results/shown.py.
PRESENTER_PACKAGES = ("explorer.notebook", "explorer.render", "explorer.export", "explorer.ui")


def presenter_imports(rel: str, found: list[tuple[int, str]]) -> list[str]:
    """'path:line imports X' for each import in a file of explorer/results/ (`found`: its imports, wherever they
    stand) of a presenter or face package (PRESENTER_PACKAGES)."""
    if not rel.startswith("explorer/results/"):
        return []
    return [
        f"{rel}:{line} imports {m}"
        for line, m in found
        if any(m == p or m.startswith(p + ".") for p in PRESENTER_PACKAGES)
    ]


def test_the_results_import_no_presenter():
    bad = [
        v
        for rel in python_files()
        for v in presenter_imports(rel, imports((ROOT / rel).read_text(encoding="utf-8"), rel))
    ]
    assert not bad, "result types that import a presenter (register it in explorer/results/shown.py):\n" + "\n".join(
        bad
    )


def test_the_app_has_no_import_cycle():
    """Across all of explorer/, imports inside functions counted: a rule two modules need lives in a third both import.
    Left out: the front door (every module's import runs explorer/__init__ first, so it may import anything; in
    return no module takes a name from it but a submodule: test_no_module_reads_the_front_door), and nothing else:
    the result types' notebook methods import no presenter (test_the_results_import_no_presenter)."""
    graph = import_graph(("explorer/",))
    graph = {m: targets - {FRONT} for m, targets in graph.items() if m != FRONT}
    found = cycles(graph)
    assert not found, "modules that import one another: " + "; ".join(" <-> ".join(c) for c in found)


def test_the_presenter_check_sees_an_import_inside_a_method():
    """An import of a presenter in a result module counts wherever it stands: at the top or inside a method."""
    source = (
        "from explorer.notebook.frames import token_frame\n"
        "class R:\n"
        "    def to_pandas(self):\n        from explorer.notebook.frames import token_frame\n"
        "    def to_html(self):\n        from explorer.render.heatmap import heatmap_html\n"
        "    def summary(self):\n        from explorer.results.words import word_rows\n"
    )
    rel = "explorer/results/x.py"
    assert [v.split(" ")[0] for v in presenter_imports(rel, imports(source, rel))] == [
        "explorer/results/x.py:1",
        "explorer/results/x.py:4",
        "explorer/results/x.py:6",
    ]
    assert presenter_imports("explorer/render/x.py", imports(source, "explorer/render/x.py")) == []


TOP = ("__init__.py", "__main__.py", "errors.py", "floats.py", "config.py", "server.py")  # at most six
# the front door, `python -m explorer`, the one exception type, the float codec, the configuration, the composition root


def loose_modules(names: list[str]) -> list[str]:
    """The modules of `names` (the .py files at explorer/'s top) that are not TOP's: each belongs in a package."""
    return [n for n in sorted(names) if n not in TOP]


def test_the_top_holds_only_the_front_door_and_the_base():
    assert len(TOP) <= 6
    found = loose_modules([p.name for p in (ROOT / "explorer").glob("*.py")])
    assert not found, f"modules at explorer/'s top that belong in a package named for their role: {found}"


def test_the_top_check_sees_a_loose_module():
    assert loose_modules(["__init__.py", "config.py", "settings.py", "lm.py"]) == ["lm.py", "settings.py"]
    assert loose_modules(list(TOP)) == []


# The floors, highest first (docs/architecture.md draws them): a module imports from its own floor or the floors below,
# never from a higher one. The front door (explorer/__init__) stands above them all and is left out, as in the cycle
# check.
FLOORS = (
    ("faces", ("explorer.ui", "explorer.api", "explorer.cli", "explorer.server", "explorer.__main__")),
    ("presenters", ("explorer.export", "explorer.render", "explorer.notebook")),
    ("serving", ("explorer.serving", "explorer.lessons")),
    ("engine", ("explorer.engine",)),
    ("results", ("explorer.results",)),
    ("base", ("explorer.rules", "explorer.config", "explorer.floats", "explorer.errors", "explorer.static")),
)


def floor_of(module: str) -> int | None:
    """The floor `module` stands on, counted from the ground (base: 0), or None when FLOORS names none for it."""
    for height, (_, prefixes) in enumerate(reversed(FLOORS)):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return height
    return None


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """'a imports b (floor x below floor y)' for each import of `graph` that runs up a floor, and 'a has no floor'
    for each module FLOORS does not place (a new package gets its floor first)."""
    names = [name for name, _ in reversed(FLOORS)]
    out = [f"{m} has no floor (add its package to FLOORS)" for m in sorted(graph) if floor_of(m) is None]
    for m, targets in sorted(graph.items()):
        here = floor_of(m)
        for t in sorted(targets):
            there = floor_of(t)
            if here is not None and there is not None and there > here:
                out.append(f"{m} imports {t} (floor {names[here]} below floor {names[there]})")
    return out


def test_no_import_runs_up_a_floor():
    graph = import_graph(("explorer/",))
    graph = {m: targets - {FRONT} for m, targets in graph.items() if m != FRONT}
    assert len(graph) > 100  # the scan sees the package
    bad = upward_imports(graph)
    assert not bad, "imports that run back up (move the shared rule down to a floor both stand on):\n" + "\n".join(bad)


def test_the_floor_check_sees_an_upward_import():
    graph = {
        "explorer.engine.passes.scoring": {"explorer.serving.models", "explorer.results.scores"},
        "explorer.results.scores": {"explorer.notebook.frames", "explorer.floats"},
        "explorer.ui.tabs.score": {"explorer.rules.sampler", "explorer.api.handlers", "explorer.notebook.lm"},
        "explorer.helpers": {"explorer.errors"},
    }
    assert upward_imports(graph) == [
        "explorer.helpers has no floor (add its package to FLOORS)",
        "explorer.engine.passes.scoring imports explorer.serving.models (floor engine below floor serving)",
        "explorer.results.scores imports explorer.notebook.frames (floor results below floor presenters)",
    ]
    assert floor_of("explorer.rules.sampler") == 0 and floor_of("explorer.server") == len(FLOORS) - 1
    assert floor_of("explorer.serverless") is None  # a prefix is a whole package name


# explorer/ui/: the page, on the top floor; its files are its own (what a lower floor reads too is in explorer/static/)
PAGE_PACKAGE = "ui"


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants of `tree` (prose: it may name any file)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _path_parts(node: ast.AST) -> list[ast.expr]:
    """The parts a node lists one after another as a path could: a tuple's or list's items, a call's arguments
    (`joinpath("ui", "static")`, `os.path.join(d, "ui", "static")`), the operands of `a / "ui" / "static"`."""
    if isinstance(node, (ast.Tuple, ast.List)):
        return list(node.elts)
    if isinstance(node, ast.Call):
        return list(node.args)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and not isinstance(node.left, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return [*_path_parts(node.left), node.right]
    return []


def _text(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def page_file_reads(source: str, rel: str) -> list[str]:
    """'path:line names ...' for each place in a module of explorer/ outside explorer/ui/ that names a file or
    folder of the page's package without importing it: "ui" and a part after it (`("ui", "static")`,
    `joinpath("ui", "static", "wllama")`, `root / "ui" / "x.css"`), a path string through "ui/" (`"ui/static/page.css"`),
    or the package as a resource anchor (`resources.files("explorer.ui")`). Docstrings are prose and left out."""
    if not rel.startswith("explorer/") or rel.startswith(f"explorer/{PAGE_PACKAGE}/"):
        return []
    tree = ast.parse(source, filename=rel)
    prose, out = _docstrings(tree), []
    package = f"explorer.{PAGE_PACKAGE}"
    for node in ast.walk(tree):
        parts = [_text(p) for p in _path_parts(node)]
        if any(a == PAGE_PACKAGE and b for a, b in pairwise(parts)):
            out.append(f"{rel}:{node.lineno} names {PAGE_PACKAGE!r} and a part after it")
        func = getattr(node, "func", None)
        name = getattr(func, "attr", getattr(func, "id", None))
        if name == "files" and parts and (parts[0] == package or (parts[0] or "").startswith(package + ".")):
            out.append(f"{rel}:{node.lineno} reads the package {parts[0]!r}")
        text = _text(node)
        if text is not None and id(node) not in prose and f"/{PAGE_PACKAGE}/" in f"/{text}":
            out.append(f"{rel}:{node.lineno} names the path {text!r}")
    return list(dict.fromkeys(out))  # `a / "ui" / "b" / "c"` holds `a / "ui" / "b"`: one line, said once


def test_no_module_below_the_page_reads_its_files():
    """The page's package stands on the top floor: a module of a lower floor (or a face beside it) that reads one
    of its files depends on it as surely as an import would. What both read lives below both, in explorer/static/."""
    bad = [
        v
        for rel in python_files()
        if rel.startswith("explorer/")
        for v in page_file_reads((ROOT / rel).read_text(encoding="utf-8"), rel)
    ]
    assert not bad, "files of explorer/ui/ read from outside it (move them to explorer/static/):\n" + "\n".join(bad)


def test_the_page_file_check_sees_each_way_of_naming_one():
    rel = "explorer/notebook/page.py"
    assert page_file_reads('STATIC = ("ui", "static")\n', rel) == [f"{rel}:1 names 'ui' and a part after it"]
    old_live = 'src = resources.files("explorer").joinpath("ui", "static", "wllama")\n'
    assert page_file_reads(old_live, "explorer/notebook/live.py") == [
        "explorer/notebook/live.py:1 names 'ui' and a part after it"
    ]
    assert page_file_reads('p = os.path.join(here, "ui", "static")\n', rel)
    assert page_file_reads('p = Path(__file__).parent / "ui" / "static" / "page.css"\n', rel) == [
        f"{rel}:1 names 'ui' and a part after it"
    ]
    assert page_file_reads('js = f"{here}/ui/static/heatmap.js"\n', rel)
    assert page_file_reads('css = open("explorer/ui/static/page.css").read()\n', rel)
    assert page_file_reads('css = read_text("ui/theme.css")\n', "explorer/render/x.py")
    assert page_file_reads('root = importlib.resources.files("explorer.ui")\n', rel)
    assert page_file_reads('root = files("explorer.ui.static")\n', "explorer/server.py")
    # the page reads its own files; prose names any file; a word "ui" alone is no path
    assert not page_file_reads('STATIC = ("ui", "static")\n', "explorer/ui/theme.py")
    assert not page_file_reads('"""Read by explorer/ui/theme.py."""\ndef f():\n    """See ui/x."""\n', rel)
    assert not page_file_reads('kind = "ui"\nFACES = ("api", "ui")\nimport_module("explorer.ui.layout")\n', rel)
    assert not page_file_reads('css = read("page.css")\nroot = resources.files("explorer.static")\n', rel)
    assert not page_file_reads('STATIC = ("ui", "static")\n', "tests/test_x.py")


def front_door_reads(source: str, rel: str) -> list[str]:
    """'path:line takes X from explorer' for each `from explorer import X` where X is not a submodule."""
    out = []
    for node in ast.walk(ast.parse(source, filename=rel)):
        if isinstance(node, ast.ImportFrom) and node.module == FRONT and not node.level:
            out += [
                f"{rel}:{node.lineno} takes {a.name} from explorer"
                for a in node.names
                if not _is_module(f"explorer.{a.name}")
            ]
    return out


def test_no_module_reads_the_front_door():
    """explorer/__init__ imports the modules it re-exports; a module taking a name back from it (`from explorer import
    __version__`) would run into a half-made package: the name lives in the module the front door takes it from."""
    bad = [
        v
        for rel in python_files()
        if rel.startswith("explorer/") and rel != "explorer/__init__.py"
        for v in front_door_reads((ROOT / rel).read_text(), rel)
    ]
    assert not bad, "\n".join(bad)
    assert front_door_reads("from explorer import __version__, config\n", "explorer/x.py") == [
        "explorer/x.py:1 takes __version__ from explorer"
    ]


def private_imports(source: str, rel: str) -> list[str]:
    """'path:line imports _x from m' for each `from m import _x` of another explorer module (dunders are public)."""
    out = []
    for node in ast.walk(ast.parse(source, filename=rel)):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("explorer")):
            for a in node.names:
                if a.name.startswith("_") and not a.name.startswith("__"):
                    out.append(f"{rel}:{node.lineno} imports {a.name} from {node.module or '.'}")
    return out


def test_no_module_imports_a_private_name():
    """A name another module needs is public: importing `_x` means the rule it names has no home yet."""
    bad = [
        v
        for rel in python_files()
        if rel.startswith("explorer/")
        for v in private_imports((ROOT / rel).read_text(), rel)
    ]
    assert not bad, "\n".join(bad)


def test_the_private_import_check_sees_one():
    assert private_imports("from explorer.engine.passes.scoring import _head_block\n", "explorer/x.py")
    assert private_imports("def f():\n    from .scoring import _rows\n", "explorer/engine/x.py")
    assert not private_imports("from explorer import __version__\nfrom os import _exit\n", "explorer/x.py")
    assert not private_imports("from explorer.engine.passes.blocks import logits\n", "explorer/x.py")


ENGINE_TYPES = {"Forward", "Batching", "ModelEngine", "ForwardEngine", "TorchEngine", "LlamaCppEngine", "RemoteEngine"}
KINDS = {"local", "torch", "llama.cpp", "remote"}
KIND_OWNERS = ("explorer/engine/select.py", "explorer/engine/capabilities.py")  # the registry and the record
# (module, string) pairs whose comparison is not about an engine, each with its reason
NOT_ENGINE_KINDS = {
    (
        "explorer/serving/zerogpu.py",
        "torch",
    ): "the package a returned value's type comes from (no torch object may leave a GPU call), not an engine kind",
}


def _kind_names(side: ast.expr) -> set[str]:
    """The engine kinds' names a comparison's side spells: a string, or strings in a tuple, list or set."""
    items = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
    return {i.value for i in items if isinstance(i, ast.Constant) and i.value in KINDS}


def compares_kind(node: ast.Compare, rel: str) -> bool:
    """Whether `node` compares a value (==, !=, in, not in) with an engine kind's name, outside the allowed pairs."""
    if not any(isinstance(o, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for o in node.ops):
        return False
    names = set().union(*(_kind_names(s) for s in [node.left, *node.comparators]))
    return any((rel, name) not in NOT_ENGINE_KINDS for name in names)


def engine_dispatch(source: str, rel: str) -> list[str]:
    """'path:line ...' for each `isinstance(x, <an engine type>)` and, in explorer/ outside KIND_OWNERS (the engine
    registry and the capability record), each comparison with an engine kind's name: code asks the registry's
    named functions or the engine's capabilities, never which engine it is."""
    out = []
    for node in ast.walk(ast.parse(source, filename=rel)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance" and len(node.args) == 2:
            kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
            names = {getattr(k, "id", getattr(k, "attr", None)) for k in kinds}
            if names & ENGINE_TYPES:
                out.append(f"{rel}:{node.lineno} asks isinstance of {', '.join(sorted(names & ENGINE_TYPES))}")
        elif isinstance(node, ast.Compare) and rel not in KIND_OWNERS and compares_kind(node, rel):
            out.append(f"{rel}:{node.lineno} compares an engine kind's name")
    return out


def test_engines_are_told_apart_by_capability():
    bad = [
        v
        for rel in python_files()
        if rel.startswith("explorer/")
        for v in engine_dispatch((ROOT / rel).read_text(), rel)
    ]
    assert not bad, "\n".join(bad)


def test_the_dispatch_check_sees_each_kind():
    assert engine_dispatch("if isinstance(engine, Forward):\n    pass\n", "explorer/x.py")
    assert engine_dispatch("ok = isinstance(e, (int, interface.Batching))\n", "explorer/api/x.py")
    assert engine_dispatch("remote = caps.kind == 'remote'\n", "explorer/engine/analyses/x.py")
    assert not engine_dispatch("ok = isinstance(text, str)\n", "explorer/engine/x.py")
    assert not engine_dispatch("if kind == 'llama.cpp':\n    pass\n", "explorer/engine/select.py")
    assert engine_dispatch(
        "if self.engine == 'remote':\n    pass\n", "explorer/serving/models.py"
    )  # outside the engine too
    assert engine_dispatch("if 'torch' != kind:\n    pass\n", "explorer/ui/tabs/x.py")
    assert engine_dispatch("ok = kind in ('torch', 'llama.cpp')\n", "explorer/api/x.py")
    assert engine_dispatch("ok = kind not in {'remote'}\n", "explorer/cli/x.py")
    assert engine_dispatch(
        "if kind == 'torch':\n    pass\n", "explorer/serving/zerogpu.py.bak"
    )  # the pair is one module's
    assert not engine_dispatch("if type(v).__module__ == 'torch':\n    pass\n", "explorer/serving/zerogpu.py")
    assert not engine_dispatch("if engine.capabilities.forward:\n    pass\n", "explorer/engine/x.py")


SHARED = ("explorer/engine/kernels/", "explorer/engine/text/", "explorer/engine/passes/", "explorer/engine/analyses/")
IMPLEMENTATIONS = ("explorer.engine.local", "explorer.engine.llamacpp", "explorer.engine.remote")


def test_the_engine_folder_shows_its_parts():
    """Sub-packages named for their parts; at the top only the public names, the protocols, the capabilities and
    the choice of engine."""
    top = sorted(p.name for p in (ROOT / "explorer/engine").glob("*.py"))
    assert top == ["__init__.py", "capabilities.py", "interface.py", "select.py"], top


def test_the_shared_passes_and_analyses_import_no_engine_implementation():
    """kernels/, text/, passes/ and analyses/ ask the protocols (interface.py), never a concrete engine's module."""
    bad = [
        f"{rel}:{line} imports {module}"
        for rel in python_files()
        if rel.startswith(SHARED)
        for line, module in imports((ROOT / rel).read_text(encoding="utf-8"), rel)
        if module.startswith(IMPLEMENTATIONS)
    ]
    assert not bad, "\n".join(bad)


LONGEST = 60  # lines a function may take, its nested functions included (#42: no function over 60 lines)


def long_functions(source: str, rel: str) -> list[str]:
    """`rel:line name (n lines)` for each function of `source` longer than LONGEST lines."""
    return [
        f"{rel}:{f.lineno} {f.name} ({f.end_lineno - f.lineno + 1} lines)"
        for f in ast.walk(ast.parse(source))
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and (f.end_lineno or 0) - f.lineno + 1 > LONGEST
    ]


def test_no_function_in_the_app_is_over_sixty_lines():
    app = [rel for rel in python_files() if rel.startswith("explorer/")]
    assert len(app) > 100  # the scan sees the package
    found = [x for rel in app for x in long_functions((ROOT / rel).read_text(encoding="utf-8"), rel)]
    assert found == []


def test_the_length_check_sees_a_long_function():
    body = "".join(f"    x{i} = {i}\n" for i in range(LONGEST))
    assert long_functions("def short():\n" + "".join(body.splitlines(keepends=True)[:-1]), "a.py") == []
    assert long_functions(f"def long():\n{body}", "a.py") == ["a.py:1 long (61 lines)"]


MOST_POSITIONAL = 6  # parameters a function of the page takes by position, besides self / cls (#42: by name)


def positional_switchboards(source: str, rel: str) -> list[str]:
    """`rel:line name (n positional)` for each function of `source` that takes more than MOST_POSITIONAL parameters
    by position (self and cls not counted; keyword-only ones and **kwargs are by name)."""
    found = []
    for f in ast.walk(ast.parse(source)):
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names = [a.arg for a in (*f.args.posonlyargs, *f.args.args)]
            n = len(names) - (names[:1] in (["self"], ["cls"])) + (f.args.vararg is not None)
            if n > MOST_POSITIONAL:
                found.append(f"{rel}:{f.lineno} {f.name} ({n} positional)")
    return found


def test_no_handler_of_the_page_takes_its_inputs_by_position():
    """Gradio passes a handler its inputs by name (`inputs_kwargs`) where it takes more than a few: a handler of the
    page (explorer/ui/) has at most MOST_POSITIONAL positional parameters, and so has every helper beside it."""
    ui = [rel for rel in python_files() if rel.startswith("explorer/ui/")]
    assert len(ui) > 20  # the scan sees the page's modules
    found = [x for rel in ui for x in positional_switchboards((ROOT / rel).read_text(encoding="utf-8"), rel)]
    assert found == []


def test_the_positional_check_sees_a_switchboard():
    six = "a, b, c, d, e, f"
    assert positional_switchboards(f"class T:\n    def run(self, {six}, *, g, h, **kw): ...\n", "a.py") == []
    assert positional_switchboards(f"def f(cls, {six}): ...\n", "a.py") == []  # a first `cls` is not counted
    assert positional_switchboards(f"def run(self, {six}, g=None): ...\n", "a.py") == ["a.py:1 run (7 positional)"]
    assert positional_switchboards(f"def run(x, {six}): ...\n", "a.py") == ["a.py:1 run (7 positional)"]
    assert positional_switchboards(f"def run(self, {six}, *rest): ...\n", "a.py") == ["a.py:1 run (7 positional)"]
    nested = f"def build():\n    def handler({six}, g, /): ...\n"
    assert positional_switchboards(nested, "a.py") == ["a.py:2 handler (7 positional)"]
