"""The set-up the README promises: `make setup` builds the llama.cpp engine from what pyproject.toml asks for."""

from __future__ import annotations

import re

import tomllib

from tests.helpers.repo import ROOT


def test_the_makefile_builds_the_llamacpp_pyproject_asks_for():
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["llamacpp"]
    built = re.search(r"^LLAMACPP := (.+)$", (ROOT / "Makefile").read_text(), re.M)
    assert built is not None and [built.group(1).strip()] == extra
