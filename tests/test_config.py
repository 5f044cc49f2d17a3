"""One configuration, read once (explorer/config.py): the environment is read there and nowhere else in explorer/,
every variable is a field with its help, docs/settings.md is written from the fields, README.md and docs/ name no
variable the code does not read, and the CLI's flags win over the variables without touching the environment."""

from __future__ import annotations

import ast
import importlib.util
import os
import re
from dataclasses import fields

import pytest

from explorer import config
from explorer.config import Config, EngineOptions, Limits, RoomLimits, current, use
from explorer.errors import ExplorerError
from tests.helpers.repo import ROOT, repo_files

CONFIG = "explorer/config.py"
ENTRY_POINTS = ("app.py", "explorer/cli/__init__.py")  # they may hand the environment over (they do not today)
NAME = re.compile(r"\bEXPLORER_[A-Z0-9_]*[A-Z0-9]\b")
FAMILY = re.compile(r"\bEXPLORER_[A-Z0-9_]+_\*")  # `EXPLORER_ROOMS_*`: every variable of a family
TEST_ONLY = {"EXPLORER_SCREENS", "EXPLORER_CHROMIUM", "EXPLORER_VLLM_URL", "EXPLORER_VLLM_VENV"}  # the tests' own
TEST_ONLY |= {"EXPLORER_LMEVAL_VENV", "EXPLORER_NOTEBOOK_MODEL"}
ENVIRON = ("environ", "environb", "getenv", "putenv", "unsetenv")  # os's ways to the process environment


def environment_reads(source: str, filename: str) -> list[int]:
    """Lines of `source` that touch the process environment: `os.environ`, `environ` imported from os, `getenv`."""

    def reads(node: ast.AST) -> bool:
        if isinstance(node, ast.ImportFrom):
            return node.module == "os" and any(a.name in ENVIRON for a in node.names)
        return isinstance(node, ast.Attribute) and node.attr in ENVIRON

    return sorted({node.lineno for node in ast.walk(ast.parse(source, filename=filename)) if reads(node)})


def test_the_environment_is_read_only_by_the_configuration():
    hits = []
    for path in [*repo_files("explorer/**/*.py"), ROOT / "app.py"]:
        rel = path.relative_to(ROOT).as_posix()
        if rel in (CONFIG, *ENTRY_POINTS):
            continue
        hits += [f"{rel}:{line}" for line in environment_reads(path.read_text(encoding="utf-8"), rel)]
    assert not hits, f"read the setting through explorer.config (a field of Config), not the environment: {hits}"


def test_the_scan_finds_each_way_of_reading():
    for source in (
        "import os\nx = os.environ.get('A')",
        "import os\nx = os.getenv('A')",
        "from os import environ\nx = environ['A']",
        "import os as o\no.environ.setdefault('A', '1')",
    ):
        assert environment_reads(source, "x.py"), source
    assert not environment_reads("import os\nx = os.path.join('a', 'b')", "x.py")


# ---- every variable a field, every field documented -------------------------------------------------------------
def setting_fields():
    return [f for cls in (Config, EngineOptions, Limits, RoomLimits) for f in fields(cls) if f.metadata.get("env")]


def test_every_setting_names_its_variable_and_says_what_it_does():
    seen = set()
    for f in setting_fields():
        env, help = f.metadata["env"], f.metadata["help"]
        assert env not in seen, f"{env} is read by two fields"
        seen.add(env)
        assert help.strip() and "\n" not in help, f"{f.name} ({env}) needs one line of help"
    assert seen == set(config.VARIABLES)


def _gen_settings():
    spec = importlib.util.spec_from_file_location("gen_settings", ROOT / "docs" / "gen_settings.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_settings_md_is_generated_from_the_code():
    gen = _gen_settings()
    assert (ROOT / "docs" / "settings.md").read_text(encoding="utf-8") == gen.render(), (
        "docs/settings.md is out of date: run .venv/bin/python docs/gen_settings.py"
    )
    for name in config.VARIABLES:  # and every variable the code reads is in the docs
        assert f"`{name}`" in gen.render(), name


def documented_names() -> dict[str, set[str]]:
    """Each EXPLORER_* variable README.md and docs/*.md name -> the files naming it (families as `PREFIX_*`)."""
    found: dict[str, set[str]] = {}
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for name in [*NAME.findall(text), *FAMILY.findall(text)]:
            found.setdefault(name, set()).add(doc.name)
    return found


def test_the_docs_name_only_variables_the_code_reads():
    unknown = {
        name: sorted(where)
        for name, where in documented_names().items()
        if not (
            name in config.VARIABLES or (name.endswith("_*") and any(v.startswith(name[:-1]) for v in config.VARIABLES))
        )
    }
    assert not unknown, f"README.md / docs/ name variables no field of explorer/config.py reads: {unknown}"


def test_the_code_names_only_variables_it_reads():
    """A message or a comment in explorer/ that names a variable names one a field reads."""
    unknown = set()
    for path in repo_files("explorer/**/*.py"):
        unknown |= {n for n in NAME.findall(path.read_text(encoding="utf-8")) if n not in config.VARIABLES}
    assert not unknown - TEST_ONLY, sorted(unknown)


# ---- reading ------------------------------------------------------------------------------------------------------
def test_from_env_reads_each_part():
    c = Config.from_env(
        {
            "EXPLORER_MODELS": "a, b,,",
            "EXPLORER_PORT": "8000",
            "EXPLORER_DEVICE": "cpu",
            "EXPLORER_THREADS": "3",
            "EXPLORER_COMPILE": "off",
            "EXPLORER_MAX_TOKENS": "100",
            "EXPLORER_MAX_LOGPROBS": "-1",
            "EXPLORER_ROOMS_MAX": "7",
            "EXPLORER_LESSONS": "/lessons",
            "EXPLORER_API_KEY": "sekret",
        }
    )
    assert c.models == ("a", "b") and c.served == ["a", "b"] and c.port == 8000
    assert (c.engine.device, c.engine.threads, c.engine.compile) == ("cpu", 3, False)
    assert (c.limits.max_tokens, c.limits.max_logprobs, c.rooms.rooms, c.rooms.lessons) == (100, -1, 7, "/lessons")
    assert c.api_key == "sekret" and "sekret" not in repr(c), "a secret stays out of logs"
    assert Config.from_env({}) == Config(), "nothing set: the defaults"
    assert Config.from_env({"EXPLORER_PORT": " "}) == Config(), "blank: unset"


def test_a_space_is_public_and_listens_on_every_address():
    space = Config.from_env({"SPACE_ID": "someone/app"})
    assert space.public and space.limits == config.PUBLIC_LIMITS and space.host == "0.0.0.0"
    assert space.rooms == config.PUBLIC_ROOMS and not space.allow_hub()
    off = Config.from_env({"SPACE_ID": "someone/app", "EXPLORER_PUBLIC": "0", "EXPLORER_HOST": "127.0.0.1"})
    assert not off.public and off.limits == Limits() and off.host == "127.0.0.1"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"EXPLORER_MAX_LOGPROBS": "many"}, "EXPLORER_MAX_LOGPROBS='many' must be a whole number"),
        ({"EXPLORER_MAX_LOGPROBS": "-2"}, "must be -1 (no cap) or at least 0"),
        ({"EXPLORER_MAX_SECONDS": "-1"}, "EXPLORER_MAX_SECONDS='-1' must not be negative"),
        ({"EXPLORER_HIDDEN_STATES": "maybe"}, "EXPLORER_HIDDEN_STATES='maybe' must be 1 or 0"),
        ({"EXPLORER_MAX_LOADED_MODELS": "two"}, "EXPLORER_MAX_LOADED_MODELS='two' must be a whole number"),
        ({"EXPLORER_ROOMS_MAX": "0"}, "EXPLORER_ROOMS_MAX must be more than 0"),
        ({"EXPLORER_THREADS": "all"}, "EXPLORER_THREADS='all' must be a whole number"),
    ],
)
def test_a_bad_value_names_its_variable(env, message):
    with pytest.raises(ExplorerError) as err:
        Config.from_env(env)
    assert message in str(err.value)


def test_flags_win_over_variables_and_leave_the_environment_alone(monkeypatch):
    from explorer.cli import parser

    monkeypatch.setenv("EXPLORER_MAX_LOGPROBS", "7")
    monkeypatch.setenv("EXPLORER_DEVICE", "cpu")
    monkeypatch.setenv("EXPLORER_BACKEND", "http://here/v1")
    a = parser().parse_args(["score", "--text", "x", "--max-logprobs", "3", "--dtype", "float32"])
    c = Config.from_args(a)
    assert (c.limits.max_logprobs, c.engine.device, c.engine.dtype, c.backend) == (
        3,
        "cpu",
        "float32",
        "http://here/v1",
    )
    assert os.environ["EXPLORER_MAX_LOGPROBS"] == "7"
    served = Config.from_args(parser().parse_args(["serve", "--model", "a", "--model", "b", "--public", "--port", "1"]))
    assert served.served == ["a", "b"] and served.public and served.limits.public and served.port == 1
    assert served.limits.max_tokens == config.PUBLIC_LIMITS.max_tokens and served.rooms == config.PUBLIC_ROOMS
    with pytest.raises(ExplorerError, match="--max-logprobs"):
        Config.from_args(parser().parse_args(["score", "--text", "x", "--max-logprobs", "-5"]))


def test_the_cli_runs_under_its_flags_and_restores_what_was_in_force(monkeypatch, capsys):
    """`--max-logprobs` reaches the request's checks through the Config, and only while the command runs."""
    from explorer.cli import main

    monkeypatch.delenv("EXPLORER_MAX_LOGPROBS", raising=False)
    code = main(["score", "--text", "the fox", "--logprobs", "5", "--max-logprobs", "2", "--model", "none-such"])
    assert code == 2 and "at most 2" in capsys.readouterr().err  # refused before any model loads
    assert "EXPLORER_MAX_LOGPROBS" not in os.environ and current().limits.max_logprobs == 20


def test_current_follows_the_environment_until_an_entry_point_hands_one_over(monkeypatch):
    monkeypatch.setenv("EXPLORER_QUEUE", "5")
    assert current().limits.queue == 5
    monkeypatch.setenv("EXPLORER_QUEUE", "6")
    assert current().limits.queue == 6
    mine = Config(port=1)
    with use(mine):
        monkeypatch.setenv("EXPLORER_QUEUE", "9")
        assert current() is mine and config.engine_options() is mine.engine
    assert current().limits.queue == 9


def test_forwarding_headers_are_trusted_from_the_proxies_named_or_a_spaces_own(monkeypatch):
    from explorer.cli import parser

    assert Config.from_env({}).proxies == ()  # nothing named: no peer's X-Forwarded-* is believed
    assert Config.from_env({"SPACE_ID": "u/s"}).proxies == config.SPACE_PROXY
    named = {"EXPLORER_FORWARDED_ALLOW_IPS": " 10.0.0.2, 10.0.1.0/24,", "SPACE_ID": "u/s"}
    assert Config.from_env(named).proxies == ("10.0.0.2", "10.0.1.0/24")  # the operator's list wins on a Space too
    with pytest.raises(ExplorerError, match=r"EXPLORER_FORWARDED_ALLOW_IPS: 'proxy\.local' is not an address"):
        Config.from_env({"EXPLORER_FORWARDED_ALLOW_IPS": "proxy.local"})
    monkeypatch.setenv("EXPLORER_FORWARDED_ALLOW_IPS", "10.0.0.2")
    a = parser().parse_args(["serve", "--forwarded-allow-ips", "127.0.0.1,::1"])
    assert Config.from_args(a).forwarded_allow_ips == ("127.0.0.1", "::1")
    with pytest.raises(ExplorerError, match=r"--forwarded-allow-ips: '10\.0\.0\.300'"):
        Config.from_args(parser().parse_args(["serve", "--forwarded-allow-ips", "10.0.0.300"]))
