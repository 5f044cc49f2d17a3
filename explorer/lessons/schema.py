"""Lessons as files: a small YAML or JSON document a teacher writes, checked field by field, expanded into steps.

A lesson (`title`, optional `about` and `model`, then `steps`); each entry of `steps` is one of:

- `kind: guess`: `text` is revealed word by word; `start` words (default 3) are shown first, then each of the next
  `blanks` words (default: all the rest, at most MAX_STEPS) is one step whose blank the students guess.
- `kind: sample`: `prompt`; each student draws next words from the model at `temperature` (default 1.0; the teacher
  can change it during the step).
- `kind: choose`: `prompt` and two or more `choices`; each student picks the one they think the model finds likeliest.

`reveal` (on the lesson or on a step; a step's wins): `teacher` (the default) keeps the word to come and the model's
side hidden until the teacher's *Show the next word*; `at-once` shows each student their result as they answer (for
self-paced use). A sample step hides nothing: its draws are the model's side.
Any entry may carry a `note` (one line, at most MAX_NOTE characters) for the teacher: shown on the teacher's page
beside its step, never to a student (what the model does there that a teacher should know before the room sees it).
A `guess` entry's note goes with its first blank; to note a later blank, give that blank an entry of its own (the
same `text`, its `start`, `blanks: 1`).

Any mistake is an ExplorerError naming the field (`steps[1].choices`) and its line in the file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from explorer.errors import ExplorerError
from explorer.rules.sampler import LESSON_TEMPERATURE, default

KINDS = ("guess", "sample", "choose")
FIELDS = {
    "guess": {"kind", "text", "start", "blanks", "reveal", "note"},
    "sample": {"kind", "prompt", "temperature", "reveal", "note"},
    "choose": {"kind", "prompt", "choices", "reveal", "note"},
}
TOP_FIELDS = {"title", "about", "model", "steps", "reveal"}
REVEALS = ("teacher", "at-once")  # who shows a step's word and the model's side: the teacher, or each answer at once
MAX_STEPS = 40  # steps of a lesson, all entries expanded
MAX_TEXT = 2000  # characters of a text or prompt
MAX_CHOICES = 8
MAX_CHOICE = 40  # characters of a choice
MAX_NOTE = 200  # characters of a step's note for the teacher
MAX_BYTES = 64_000  # a lesson file
MAX_NODES = 5_000  # scalars, lists and mappings in a lesson file: 40 steps of 8 choices and a note are under 700
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's where built (a tenth of the time; nests 1,000 deep)
NODE_EVENTS = (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent, yaml.AliasEvent)
TEMPERATURE = LESSON_TEMPERATURE  # what a step's temperature may be (explorer/rules/sampler.py owns it)
BUILTIN = ("guess-next-word", "temperature", "bias")


@dataclass(frozen=True)
class Step:
    """One step of a room: the text before the blank and what the students do there."""

    kind: str  # "guess", "sample" or "choose"
    context: str  # the text the students see before the blank
    actual: str | None = None  # guess: the word that really comes next
    choices: tuple[str, ...] = ()  # choose: the words offered
    temperature: float = default("temperature")  # sample: the temperature the draws start at (the model's own)
    reveal: str = "teacher"  # "teacher": hidden until the teacher reveals it; "at-once": each answer's result at once
    note: str = ""  # for the teacher only: what the model does at this step that they should know


@dataclass(frozen=True)
class Lesson:
    title: str
    steps: tuple[Step, ...]
    about: str = ""
    model: str | None = None
    name: str = ""  # the built-in's name, or "" for a teacher's own

    def to_dict(self) -> dict:
        return {"title": self.title, "about": self.about, "name": self.name, "n_steps": len(self.steps)}


@dataclass
class _Doc:
    """The parsed document and, for every field path, the line it starts on (1-based)."""

    data: Any
    lines: dict[str, int] = field(default_factory=dict)

    def bad(self, path: str, msg: str) -> ExplorerError:
        where = f" (line {self.lines[path]})" if path in self.lines else ""
        name = f"`{path}`" if path else "the lesson"
        return ExplorerError(f"Lesson: {name}{where}: {msg}", param="lesson", code="invalid_lesson")


def _lines(node: yaml.Node, path: str, out: dict[str, int], seen: set[int]) -> None:
    """Each field path of a composed YAML node tree -> its line; a node met again (an alias) is not walked again,
    so a file of nested aliases costs its own size, never their expansion."""
    out[path] = node.start_mark.line + 1
    if id(node) in seen:
        return
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            key = str(k.value)
            _lines(v, f"{path}.{key}" if path else key, out, seen)
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            _lines(v, f"{path}[{i}]", out, seen)


def parse(text: str | bytes) -> _Doc:
    """A lesson file's text (YAML or JSON) -> its data and field lines; a syntax error names its line."""
    try:
        return _parse(text)
    except RecursionError:
        raise ExplorerError(
            "Lesson: the file nests lists or mappings too deep to read: a lesson needs 4 levels.",
            param="lesson",
            code="invalid_lesson",
        ) from None


def _parse(text: str | bytes) -> _Doc:
    if isinstance(text, bytes):
        if len(text) > MAX_BYTES:
            raise ExplorerError(
                f"Lesson: the file is {len(text):,} bytes; a lesson may have at most {MAX_BYTES:,}.",
                param="lesson",
                code="invalid_lesson",
            )
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as err:
            raise ExplorerError(
                f"Lesson: the file is not UTF-8 text (byte {err.start}): save it as UTF-8.",
                param="lesson",
                code="invalid_lesson",
            ) from None
    if len(text.encode()) > MAX_BYTES:
        raise ExplorerError(
            f"Lesson: the file has more than {MAX_BYTES:,} bytes.", param="lesson", code="invalid_lesson"
        )
    if text.lstrip().startswith(("{", "[")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise ExplorerError(
                f"Lesson: not valid JSON at line {err.lineno}, column {err.colno}: {err.msg}.",
                param="lesson",
                code="invalid_lesson",
            ) from None
        _count_data(data)
        doc = _Doc(data)
        try:  # JSON is (nearly) YAML: its lines come from the same composer
            node = yaml.compose(text, Loader=LOADER)
        except (yaml.YAMLError, RecursionError):
            node = None
    else:
        try:
            _count(text)  # before anything is built: 64 KB of one-character fields is 30,000 nodes
            node, data = _parse_yaml(text)
        except yaml.YAMLError as err:
            mark, opened = getattr(err, "problem_mark", None), getattr(err, "context_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            if opened is not None and mark is not None and opened.line != mark.line:
                where += f" ({getattr(err, 'context', None) or 'what begins'} at line {opened.line + 1})"
            raise ExplorerError(
                f"Lesson: not valid YAML{where}: {getattr(err, 'problem', None) or err}.",
                param="lesson",
                code="invalid_lesson",
            ) from None
        doc = _Doc(data)
    if node is not None:
        _lines(node, "", doc.lines, set())
    return doc


def _too_many() -> ExplorerError:
    return ExplorerError(
        f"Lesson: the file has more than {MAX_NODES:,} fields and list items; a lesson needs far fewer: "
        "is it the right file?",
        param="lesson",
        code="invalid_lesson",
    )


def _count(text: str) -> None:
    """Refuse a YAML text of more than MAX_NODES nodes, counted from libyaml's events before any node is built."""
    n = 0
    for event in yaml.parse(text, Loader=LOADER):
        if isinstance(event, NODE_EVENTS):
            n += 1
            if n > MAX_NODES:
                raise _too_many()


def _count_data(data: Any) -> None:
    """The same bound on parsed JSON, counted before its lines are composed."""
    n, todo = 0, [data]
    while todo:
        item = todo.pop()
        n += 1
        if n > MAX_NODES:
            raise _too_many()
        if isinstance(item, dict):
            todo.extend(item.values())
            n += len(item)  # the keys
        elif isinstance(item, list):
            todo.extend(item)


def _parse_yaml(text: str) -> tuple[yaml.Node | None, Any]:
    """Compose a YAML text once: its node tree (for the field lines) and the data built from it."""
    loader = LOADER(text)
    try:
        node = loader.get_single_node()
        return node, (loader.construct_document(node) if node is not None else None)
    finally:
        loader.dispose()


def _text(doc: _Doc, obj: dict, key: str, path: str, most: int = MAX_TEXT, required: bool = True) -> str:
    value = obj.get(key)
    where = f"{path}.{key}" if path else key
    if value is None:
        if required:
            raise doc.bad(path, f"`{key}` is missing: add it.")
        return ""
    if not isinstance(value, str) or not value.strip():
        raise doc.bad(where, "must be non-empty text.")
    if len(value) > most:
        raise doc.bad(where, f"is {len(value):,} characters; at most {most:,}.")
    return " ".join(value.split())


def _int(doc: _Doc, obj: dict, key: str, path: str, default: int, lo: int, hi: int) -> int:
    value = obj.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise doc.bad(f"{path}.{key}", f"must be a whole number from {lo} to {hi}, got {shown(value)}.")
    return value


def shown(value: Any, most: int = 40) -> str:
    """A value as a message quotes it: text cut to `most` characters, a list or a mapping by its size (a file of
    nested aliases expands to millions of items: never written out)."""
    if isinstance(value, str):
        return repr(value) if len(value) <= most else repr(value[:most]) + "…"
    if isinstance(value, list):
        return f"a list of {len(value)} items"
    if isinstance(value, dict):
        return f"a mapping of {len(value)} fields"
    if value is None:
        return "nothing"
    return str(value)[:most]


def words_of(text: str) -> list[str]:
    return text.split()


def bare(word: str) -> str:
    """A word as guesses are compared with it: no punctuation around it, lower case ("Forest." -> "forest")."""
    return re.sub(r"^\W+|\W+$", "", word).lower()


def _reveal(doc: _Doc, obj: dict, path: str, default: str) -> str:
    """A lesson's or a step's `reveal`, checked (`default` where it has none)."""
    value = obj.get("reveal", default)
    if value not in REVEALS:
        where = f"{path}.reveal" if path else "reveal"
        raise doc.bad(where, f"must be one of {', '.join(REVEALS)}, got {shown(value)}.")
    return value


def _guess_steps(doc: _Doc, obj: dict, path: str) -> list[Step]:
    text = _text(doc, obj, "text", path)
    words = words_of(text)
    start = _int(doc, obj, "start", path, min(3, max(len(words) - 1, 1)), 1, max(len(words) - 1, 1))
    if len(words) < 2:
        raise doc.bad(f"{path}.text", "needs at least two words (one shown, one to guess).")
    left = len(words) - start
    blanks = _int(doc, obj, "blanks", path, min(left, MAX_STEPS), 1, left)
    note = _note(doc, obj, path)
    return [
        Step("guess", " ".join(words[: start + i]), words[start + i], note=note if i == 0 else "")
        for i in range(blanks)
    ]


def _note(doc: _Doc, obj: dict, path: str) -> str:
    """An entry's note for the teacher: one line of text (its line breaks folded), or "" without one."""
    return _text(doc, obj, "note", path, most=MAX_NOTE, required=False)


def _step(doc: _Doc, obj: Any, path: str, reveal: str = "teacher") -> list[Step]:
    """The steps one entry of `steps` expands into, each with its `reveal` (the entry's, else the lesson's)."""
    return [replace(s, reveal=_reveal(doc, obj, path, reveal)) for s in _entry(doc, obj, path)]


def _entry(doc: _Doc, obj: Any, path: str) -> list[Step]:
    if not isinstance(obj, dict):
        raise doc.bad(path, "each step must be a mapping with a `kind` (guess, sample or choose).")
    kind = obj.get("kind")
    if kind not in KINDS:
        raise doc.bad(
            f"{path}.kind" if "kind" in obj else path, f"`kind` must be one of {', '.join(KINDS)}, got {shown(kind)}."
        )
    unknown = sorted(set(map(str, obj)) - FIELDS[kind])
    if unknown:
        raise doc.bad(
            f"{path}.{unknown[0]}",
            f"a `{kind}` step has no field `{unknown[0]}` (its fields: {', '.join(sorted(FIELDS[kind]))}).",
        )
    if kind == "guess":
        return _guess_steps(doc, obj, path)
    prompt = _text(doc, obj, "prompt", path)
    if kind == "sample":
        t = obj.get("temperature", default("temperature"))
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not TEMPERATURE[0] <= t <= TEMPERATURE[1]:
            raise doc.bad(
                f"{path}.temperature", f"must be a number from {TEMPERATURE[0]} to {TEMPERATURE[1]}, got {shown(t)}."
            )
        return [Step("sample", prompt, temperature=float(t), note=_note(doc, obj, path))]
    choices = obj.get("choices")
    where = f"{path}.choices"
    if not isinstance(choices, list) or not 2 <= len(choices) <= MAX_CHOICES:
        raise doc.bad(where if "choices" in obj else path, f"`choices` must be a list of 2 to {MAX_CHOICES} words.")
    out = []
    for i, c in enumerate(choices):
        if (
            not isinstance(c, (str, int, float))
            or isinstance(c, bool)
            or not str(c).strip()
            or len(str(c)) > MAX_CHOICE
        ):
            raise doc.bad(f"{where}[{i}]", f"must be a word or short phrase of 1 to {MAX_CHOICE} characters.")
        c = " ".join(str(c).split())
        if c in out:
            raise doc.bad(f"{where}[{i}]", f"{shown(c)} is listed twice.")
        out.append(c)
    return [Step("choose", prompt, choices=tuple(out), note=_note(doc, obj, path))]


def check(doc: _Doc, name: str = "") -> Lesson:
    """The Lesson a parsed document describes, or the ExplorerError naming its first mistake."""
    data = doc.data
    if not isinstance(data, dict):
        raise ExplorerError(
            "Lesson: the file must be a mapping with `title` and `steps` (see docs/lessons.md, Writing a lesson file).",
            param="lesson",
            code="invalid_lesson",
        )
    unknown = sorted(set(map(str, data)) - TOP_FIELDS)
    if unknown:
        raise doc.bad(
            unknown[0], f"a lesson has no field `{unknown[0]}` (its fields: {', '.join(sorted(TOP_FIELDS))})."
        )
    title = _text(doc, data, "title", "", most=120)
    about = _text(doc, data, "about", "", required=False)
    model = data.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise doc.bad("model", "must be the name of a served model.")
    steps = data.get("steps")
    if not isinstance(steps, list) or not steps:
        raise doc.bad("steps" if "steps" in data else "title", "`steps` must be a non-empty list.")
    reveal = _reveal(doc, data, "", "teacher")
    out: list[Step] = []
    for i, s in enumerate(steps):
        out += _step(doc, s, f"steps[{i}]", reveal)
        if len(out) > MAX_STEPS:
            raise doc.bad(f"steps[{i}]", f"the lesson has more than {MAX_STEPS} steps: make it shorter.")
    return Lesson(title, tuple(out), about, model, name)


def load(text: str | bytes, name: str = "") -> Lesson:
    """A lesson from its file's text (YAML or JSON)."""
    return check(parse(text), name)


LESSON_FILES = ("*.yaml", "*.yml", "*.json")


def folder_names(folder: str | Path | None) -> dict[str, Path]:
    """The lesson files of a teacher's folder (EXPLORER_LESSONS), by name (the file's stem), built-ins' names aside."""
    if not folder or not Path(folder).is_dir():
        return {}
    files = sorted(f for pattern in LESSON_FILES for f in Path(folder).glob(pattern) if f.is_file())
    return {f.stem: f for f in files if f.stem not in BUILTIN}


def named(name: str, folder: str | Path | None = None) -> Lesson:
    """A built-in lesson, or one of the folder's files, by its name (never a path a request gives)."""
    files = folder_names(folder)
    if name in files:
        return from_path(files[name], name)
    if name not in BUILTIN:
        mine = f", or one of this server's: {', '.join(files)}" if files else ""
        raise ExplorerError(
            f"There is no lesson {shown(name)}: choose a built-in ({', '.join(BUILTIN)}){mine}, or give a lesson of "
            "your own.",
            param="lesson",
            code="invalid_value",
        )
    return builtin(name)


def from_value(value: Any, folder: str | Path | None = None) -> Lesson:
    """A lesson named (a built-in or a file of the server's folder), or given whole as a mapping (JSON)."""
    if isinstance(value, str):
        return named(value, folder)
    if isinstance(value, dict):
        return load(json.dumps(value))
    raise ExplorerError(
        f"`lesson` must be a built-in lesson's name ({', '.join(BUILTIN)}) or a lesson object.",
        param="lesson",
        code="invalid_value",
    )


def builtin(name: str) -> Lesson:
    if name not in BUILTIN:
        raise ExplorerError(
            f"There is no built-in lesson {shown(name)}: choose one of {', '.join(BUILTIN)}, or give a lesson of your own.",
            param="lesson",
            code="invalid_value",
        )
    return load(resources.files("explorer.lessons").joinpath(f"builtin/{name}.yaml").read_text("utf-8"), name)


def from_path(path: str | Path, name: str = "") -> Lesson:
    """A lesson file on this machine; a mistake's message names the file."""
    p = Path(path)
    if not p.is_file():
        raise ExplorerError(f"No lesson file at {str(p)!r}.", param="lesson", code="invalid_value")
    try:
        return load(p.read_bytes(), name or p.stem)
    except ExplorerError as err:
        raise ExplorerError(f"{p.name}: {err.message}", param=err.param, code=err.code) from None
