"""One owner for each sampler rule (#56): greedy, the temperature ranges, the defaults and `check_k` are defined in
explorer/rules/sampler.py only; everything else asks it. Read off the source with `ast`, so a second definition
fails here the day it is written."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

import pytest

from explorer.rules import sampler as rules
from explorer.rules.sampler import GREEDY_BELOW, SamplerSettings, is_greedy

ROOT = Path(__file__).resolve().parents[1]
OWNER = "explorer/rules/sampler.py"
OWN_DEFS = {"check_k", "is_greedy"}  # functions only the owner defines


def _names(node: ast.AST) -> str:
    """The words an expression is made of: names, attributes and string keys (`s.get("temperature")`), lowercased."""
    out = []
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.append(n.id)
        elif isinstance(n, ast.Attribute):
            out.append(n.attr)
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            out.append(n.value)
        elif isinstance(n, ast.keyword) and n.arg:
            out.append(n.arg)
    return " ".join(out).lower()


def _number(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool)


def _is_temperature(node: ast.AST) -> bool:
    """Whether an operand reads a temperature: a name or attribute `temperature`, `.get("temperature")` (a bare `t`
    is too often a length to tell apart)."""
    return "temperature" in _names(node)


def second_owners(source: str, path: str) -> list[str]:
    """Each place in `source` that defines a sampler rule of its own: a greedy test (a temperature compared with a
    number), a temperature range (two numbers given with a temperature), `def check_k` / `def is_greedy`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        where = f"{path}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in OWN_DEFS:
            found.append(f"{where}: a second `def {node.name}`")
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_temperature(x) for x in sides) and any(_number(x) for x in sides):
                found.append(f"{where}: a temperature compared with a number (use rules.sampler.is_greedy)")
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if "temperature" in " ".join(_names(t) for t in targets) and sum(map(_number, ast.walk(node.value))) >= 2:
                found.append(f"{where}: a temperature range of its own")
        elif isinstance(node, ast.Call):
            numbers = [a for a in node.args if _number(a)]
            words = " ".join(_names(k) for k in node.keywords) + " " + _names(node.func)
            if len(numbers) >= 2 and "temperature" in words:
                found.append(f"{where}: a temperature slider or range with numbers of its own")
    return found


def explorer_sources() -> list[Path]:
    return sorted(p for p in (ROOT / "explorer").rglob("*.py") if p.relative_to(ROOT).as_posix() != OWNER)


def test_no_module_defines_a_sampler_rule_of_its_own():
    found = [f for p in explorer_sources() for f in second_owners(p.read_text(), p.relative_to(ROOT).as_posix())]
    assert not found, "sampler rules defined outside " + OWNER + ":\n" + "\n".join(found)


@pytest.mark.parametrize(
    "snippet",
    [
        'if s.get("temperature") == 0:\n    pass',
        "greedy = r.temperature != 0",
        "if temperature <= 0:\n    pass",
        "ok = settings.temperature < 1e-5",
        "TEMPERATURE = (0.05, 5.0)",
        "temperature: float = ranged(Range(0.0, 2.0, 0.05, 0.7))",
        'x = gr.Slider(0, 2, value=1, label="Temperature")',
        "x = Range(0.0, 2.0, 0.05, 0.7, elem_id='temperature')",
        "def check_k(value, param):\n    return value",
        "def is_greedy(t):\n    return t == 0",
    ],
)
def test_the_scan_finds_each_kind_of_second_definition(snippet):
    assert second_owners(snippet, "x.py"), snippet


@pytest.mark.parametrize(
    "snippet",
    [
        "if is_greedy(s.temperature):\n    pass",
        "t = st.temperature\nsame = t == st.temperature",
        "TEMPERATURE = LESSON_TEMPERATURE",
        "x = at_model_temperature().widget('Temperature', scale=3)",
        "if k <= 0:\n    pass",
    ],
)
def test_the_scan_lets_a_use_of_the_rules_pass(snippet):
    assert not second_owners(snippet, "x.py"), snippet


def test_greedy_is_the_engines_threshold():
    """is_greedy: below vLLM's 1e-5, the same answer SamplerSettings.greedy gives; None (no sampler) is not."""
    for t, want in [(0.0, True), (GREEDY_BELOW / 2, True), (GREEDY_BELOW, False), (0.05, False), (1.0, False)]:
        assert is_greedy(t) is want
        assert SamplerSettings(temperature=t).greedy is want
    assert is_greedy(None) is False


def test_every_knob_lies_inside_the_engines_range():
    """A slider never offers what the engine refuses: each knob's lo..hi (and default) inside its field's range."""
    ranges = {name: (lo, hi, lo_open) for name, lo, hi, lo_open, _ in rules.numbers()}
    for name, k in rules.knobs().items():
        lo, hi, lo_open = ranges[name]
        for x in (k.lo, k.hi, k.default):
            assert (lo < x if lo_open else lo <= x) and x <= hi, (name, x)
        assert SamplerSettings(**{name: k.default}) is not None
    lo, hi, _ = ranges["temperature"]
    assert lo <= rules.LESSON_TEMPERATURE[0] and rules.LESSON_TEMPERATURE[1] <= hi
    assert not is_greedy(rules.LESSON_TEMPERATURE[0])  # a class never draws greedily


def test_the_derived_fields_are_settings_fields():
    """The API's sampler fields, the page's controls and the remote's body are SamplerSettings' by name and
    default: a field marked there is everywhere, with nothing copied."""
    from explorer.api.schemas import ChatRequest, CompletionRequest
    from explorer.engine.remote.stream import generation_body
    from explorer.ui.sampler import Sampler

    names = {f.name for f in dataclasses.fields(SamplerSettings)}
    for model in (CompletionRequest, ChatRequest):
        for name in rules.wire_fields():
            assert model.model_fields[name].default == rules.default(name), (model, name)
    assert set(Sampler.names()) == set(rules.page_fields()) <= names
    for name, r in Sampler.sliders().items():
        k = rules.knobs()[name]
        assert (r.lo, r.hi, r.step, r.default) == (k.lo, k.hi, k.step, k.default)
    body = generation_body("m", [1, 2], SamplerSettings(seed=3), 0)
    assert {n for n in rules.wire_fields() if n not in ("seed", "n")} <= set(body)
    assert "n" in inspect.signature(SamplerSettings).parameters
