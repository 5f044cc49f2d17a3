"""The release people install: the wheel built from this tree (`pip wheel`), installed alone into a clean virtual
environment, serves the default model with the page's static files, the lesson pages and the built-in lessons.

Offline and without a second copy of the large dependencies: the clean environment has only the wheel in its own
site-packages, and this environment's site-packages after it through a `.pth` line (a folder a `.pth` file adds is
not a site folder, so the editable install of this tree there is not run: the package comes from the wheel)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import httpx
import pytest

import explorer
from explorer.lessons.schema import BUILTIN
from tests.helpers.reference import ref_logprobs
from tests.helpers.repo import ROOT
from tests.helpers.servers import ServerProcess

pytestmark = pytest.mark.slow

TEXT = "The capital of France is Paris"


# the package's files besides its modules (.wasm: the live page's wllama)
DATA = {".html", ".js", ".css", ".yaml", ".wasm"}


def _run(*cmd: str, cwd: Path) -> str:
    """`cmd`'s output, run without this tree on the path (the tests run with it first)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[str, Path, Path]:
    """(the clean environment's python, its site-packages, a folder outside the tree to run it in), with the wheel
    installed: built from a copy of the tree (a build writes its own folders beside the sources), with this
    environment's setuptools (no download)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    shutil.copytree(ROOT / "explorer", source / "explorer", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    _run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "-w",
        str(work),
        str(source),
        cwd=work,
    )
    wheel = next(work.glob("logprob_explorer-*.whl"))
    _run(sys.executable, "-m", "venv", "--without-pip", str(work / "venv"), cwd=work)
    python = str(work / "venv" / "bin" / "python")
    site = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=work).strip())
    _run(sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--target", str(site), str(wheel), cwd=work)
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python, site, work


def test_the_wheel_holds_the_package_and_its_files(installed):
    python, site, work = installed
    code = (
        "import json, explorer; from importlib import metadata; "
        "print(json.dumps([explorer.__file__, explorer.__version__, metadata.version('logprob-explorer')]))"
    )
    file, version, told = json.loads(_run(python, "-c", code, cwd=work))
    assert Path(file).is_relative_to(site), file  # the wheel's copy, not this tree's
    assert version == told == explorer.__version__  # written once: the wheel's metadata reads it
    files = {p.relative_to(ROOT).as_posix() for p in (ROOT / "explorer").rglob("*") if p.suffix in DATA}
    copied = {p.relative_to(site).as_posix() for p in (site / "explorer").rglob("*") if p.suffix in DATA}
    assert files and files <= copied, files - copied  # every page, script, style and lesson of the tree


def test_the_installed_wheel_serves_the_default_model(installed, smollm):
    python, _, work = installed
    # the torch engine, whose numbers transformers computes here too (the default GGUF's, llama.cpp's on a CPU-only
    # machine, are checked against llama.cpp's own in tests/test_llamacpp.py)
    args = ("--engine", "torch", "--dtype", "float32")
    srv = ServerProcess(None, env={"PYTHONPATH": None}, args=args, python=python, cwd=str(work))
    try:
        get = lambda path: httpx.get(srv.url + path, timeout=60)  # noqa: E731
        assert get("/").status_code == 200
        config = get("/config").json()  # the page's components, its script and style inside
        heatmap = (ROOT / "explorer" / "static" / "heatmap.js").read_text("utf-8")
        assert any(c.get("props", {}).get("js_on_load") == heatmap for c in config["components"])
        assert (ROOT / "explorer" / "static" / "page.css").read_text("utf-8") in config["css"]
        lessons = get("/lessons").json()["data"]
        assert [x["name"] for x in lessons] == list(BUILTIN) and all(x["n_steps"] > 0 for x in lessons)
        start = get("/lesson")
        style = (ROOT / "explorer" / "lessons" / "page" / "style.css").read_text("utf-8")
        assert start.status_code == 200 and style in start.text
        room = httpx.post(srv.url + "/rooms", json={"lesson": BUILTIN[0]}, timeout=60)
        assert room.status_code == 200, room.text
        code = room.json()["room"]
        assert get(f"/lesson/{code}").status_code == get(f"/lesson/{code}/teacher").status_code == 200
        assert get(f"/rooms/{code}").status_code == 200
        body = {"prompt": TEXT, "max_tokens": 0, "echo": True, "logprobs": 1}
        lp = httpx.post(srv.url + "/v1/completions", json=body, timeout=120).json()["choices"][0]["logprobs"]
        ids = smollm.encode(TEXT)
        ref = ref_logprobs(smollm.model, ids)  # the transformers model's own log_softmax, in this process
        want = [float(ref[p - 1, ids[p]]) for p in range(1, len(ids))]
        assert len(lp["token_logprobs"]) == len(ids) and lp["token_logprobs"][0] is None
        assert max(abs(a - b) for a, b in zip(lp["token_logprobs"][1:], want)) < 1e-3
    finally:
        srv.stop()
