"""Engines take an EngineOptions (#42 item 3): `select.load(EngineSpec(options=...))` resolves them once and the
engine runs by them, whatever the environment says; the entry points holding a Config hand theirs down; no engine
module asks explorer.config for them deep inside; `engine_options()` parses the variables again only when one
changed."""

from __future__ import annotations

import ast
import os

import pytest

from explorer.config import Config, EngineOptions, engine_options, use
from explorer.engine.kernels.metrics import sums
from explorer.engine.select import EngineSpec, load
from tests.helpers.repo import ROOT, repo_files

# the modules of explorer/engine/ that may call engine_options(), and why
ASKS_THE_CONFIG = {
    "explorer/engine/local/options.py": "the one resolver: an EngineSpec's options, or an engine built directly",
    "explorer/engine/local/team.py": "EXPLORER_TEAM, read once at import: one team thread for the whole process",
}


def calls_engine_options(source: str, rel: str) -> list[str]:
    """'path:line' of each call of `engine_options` (by its name or as an attribute: `config.engine_options()`)."""
    out = []
    for node in ast.walk(ast.parse(source, filename=rel)):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if name == "engine_options":
                out.append(f"{rel}:{node.lineno}")
    return out


def test_no_engine_module_asks_the_config_for_its_options():
    files = [p.relative_to(ROOT).as_posix() for p in repo_files("*.py")]
    engine = [rel for rel in files if rel.startswith("explorer/engine/")]
    assert "explorer/engine/select.py" in engine and set(ASKS_THE_CONFIG) <= set(engine)  # the scan sees the code
    found = []
    for rel in engine:
        if rel not in ASKS_THE_CONFIG:
            found += calls_engine_options((ROOT / rel).read_text(), rel)
    assert found == [], "engines read their own `options` (explorer/engine/local/options.py resolves them): " + str(
        found
    )


def test_the_scan_catches_each_way_of_calling_it():
    by_name = "from explorer.config import engine_options\n\ndef f():\n    return engine_options().compile\n"
    by_attribute = "import explorer.config as c\n\nx = c.engine_options().threads\n"
    assert calls_engine_options(by_name, "explorer/engine/x.py") == ["explorer/engine/x.py:4"]
    assert calls_engine_options(by_attribute, "explorer/engine/x.py") == ["explorer/engine/x.py:3"]
    assert calls_engine_options("def f(options):\n    return options.compile\n", "explorer/engine/x.py") == []


def test_engine_options_are_parsed_again_only_when_a_variable_changed(monkeypatch):
    monkeypatch.setenv("EXPLORER_THREADS", "3")
    first = engine_options()
    monkeypatch.setenv("EXPLORER_QUEUE", "7")  # not an engine variable
    assert engine_options() is first and first.threads == 3
    monkeypatch.setenv("EXPLORER_THREADS", "5")
    assert engine_options().threads == 5
    monkeypatch.delenv("EXPLORER_THREADS")
    assert engine_options().threads == 0
    mine = Config(engine=EngineOptions(threads=9))
    with use(mine):
        assert engine_options() is mine.engine


def test_a_torch_engine_runs_by_its_options_not_the_environment(llama_dir, monkeypatch):
    monkeypatch.setenv("EXPLORER_COMPILE", "1")
    monkeypatch.setenv("EXPLORER_ONEDNN", "1")
    options = EngineOptions(compile=False, onednn=False)
    engine = load(EngineSpec(llama_dir, "torch", device="cpu", options=options))
    assert engine.options is options
    assert engine._sums_kernel is sums and engine._row_kernel is None  # eager: not compiled
    assert engine.packed_mb == 0  # F.linear, as stored


def test_without_options_an_engine_runs_by_the_environment(llama_dir, monkeypatch):
    monkeypatch.setenv("EXPLORER_ONEDNN", "0")
    engine = load(EngineSpec(llama_dir, "torch", device="cpu"))
    assert engine.options == engine_options() and not engine.options.onednn and engine.packed_mb == 0


def test_explicit_spec_fields_win_over_the_options(llama_dir):
    options = EngineOptions(compile=True, dtype="bfloat16", device="cpu")
    engine = load(EngineSpec(llama_dir, "torch", dtype="float32", compile=False, options=options))
    assert str(engine.dtype) == "torch.float32" and engine._sums_kernel is sums and engine.device.type == "cpu"


def test_a_llamacpp_engine_takes_threads_and_context_from_its_options(tiny_gguf_dir, monkeypatch):
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install llama-cpp-python)")
    monkeypatch.setenv("EXPLORER_THREADS", "2")
    monkeypatch.setenv("EXPLORER_CONTEXT", "128")
    options = EngineOptions(threads=1, context=64, compile=False)
    path = os.path.join(tiny_gguf_dir, "gguf", "tiny-llama.gguf")
    engine = load(EngineSpec(path, "llama.cpp", device="cpu", options=options))
    try:
        assert engine.options is options and engine.threads == 1 and engine.context == 64
    finally:
        engine.close()


def test_the_registry_loads_by_its_configs_options(llama_dir, monkeypatch):
    from explorer.serving.models import Models

    monkeypatch.setenv("EXPLORER_ONEDNN", "1")
    configured = Config(engine=EngineOptions(onednn=False, compile=False))
    models = Models([llama_dir], device="cpu", config=configured, allow_hub=False)
    engine = models.get()
    assert engine.options is configured.engine and engine.packed_mb == 0


def test_the_cli_hands_its_configs_options_to_the_engine(monkeypatch):
    from argparse import Namespace

    from explorer.cli.args import load_engine
    from explorer.engine import select

    asked: list[EngineSpec] = []
    monkeypatch.setattr(select, "load", lambda spec: asked.append(spec))
    mine = Config(engine=EngineOptions(kind="torch", threads=4))
    with use(mine):
        load_engine(Namespace(trust_remote_code=False), "some-model")
    assert asked[0].options is mine.engine and asked[0].kind == "torch"


def test_a_helper_called_without_options_follows_the_ones_in_force(tmp_path, monkeypatch):
    """loading's helpers, called with no cache or options (a bench script, a notebook), read EXPLORER_CACHE as an
    engine does; an explicit cache, "" (the home default) included, wins."""
    from explorer.engine.local.loading import cache_dir, converted_default_dir

    monkeypatch.setenv("EXPLORER_CACHE", str(tmp_path / "here"))
    assert cache_dir() == tmp_path / "here"
    assert converted_default_dir().parent == tmp_path / "here"
    assert cache_dir(str(tmp_path / "there")) == tmp_path / "there"
    assert cache_dir("") == cache_dir(EngineOptions().cache) != tmp_path / "here"
