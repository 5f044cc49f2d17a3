"""What a Hugging Face Space reads: the README's front matter names the Gradio the tests ran and a Python version,
and requirements.txt (what the Space installs) asks for what pyproject.toml does."""

from __future__ import annotations

import re

import gradio
import tomllib
import yaml

from tests.helpers.repo import ROOT

SPACE_ONLY = {"spaces"}  # the Space's own package: not a dependency elsewhere
SDK = {"gradio"}  # the Space installs it from `sdk_version`


def front_matter() -> dict:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n", 2)[1])


def requirement(line: str) -> tuple[str, str]:
    spec = line.split("#", 1)[0].strip()
    name = re.match(r"[A-Za-z0-9_.-]+", spec).group(0).lower()
    return name, spec[len(name) :].strip()


def test_the_front_matter_pins_the_sdk_and_python():
    fm = front_matter()
    assert fm["sdk"] == "gradio" and str(fm["python_version"]).count(".") == 1
    assert str(fm["sdk_version"]).split(".")[0] == gradio.__version__.split(".")[0]
    assert re.fullmatch(r"\d+\.\d+\.\d+", str(fm["sdk_version"]))  # a whole version: a partial one fails to build


def test_requirements_ask_for_what_pyproject_does():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    want = dict(requirement(d) for d in deps if requirement(d)[0] not in SDK)
    lines = [x for x in (ROOT / "requirements.txt").read_text().splitlines() if x.strip() and not x.startswith("#")]
    got = dict(requirement(x) for x in lines)
    assert {k: v for k, v in got.items() if k not in SPACE_ONLY} == want
