"""A view of a result as one record: its tab, link, saved file, Python method and static-site page derive from it.

A registered view (explorer/notebook/registry.py) is a pure function of a result the page already holds (the
inspector's TokenScores): no model runs for it. Its record says what the rest of the app needs to show it:

- `id`, `title`, `group` (the page's group it sits in: "read", "many"; None: the top row) and `about` (the tab's
  Markdown above its controls);
- `options`: its settings (`Option`: name, label, default and range or choices); each becomes a control on the tab,
  a field of its link (`<id>_<name>`), a keyword argument of its `LM` method, and is checked here once;
- `compute(scores, **options)`: the analysis, returning the view's result (which carries `.model`);
- `body(result)`: its HTML (the tab's body and the saved file's), `data(result)`: its JSON, `table(result)`: its
  numbers as a DataFrame.

The page builds its tab and link from the record (explorer/ui/tabs/registered.py), `LM` gets a method named `method`
(default: the id) that scores a text (or takes a TokenScores) and computes the view, and `logprob-explorer site`
writes its page beside each input's. No gradio, no torch; importing it loads no renderer (LM imports it).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from explorer.errors import ExplorerError
from explorer.results.scores import TokenScores

if TYPE_CHECKING:
    import pandas as pd

GROUPS = ("read", "many")  # the page's groups (explorer/ui/layout.py): "Read a result", "Compare and many"
# a registered view's chart on the page (no BASE_CSS there): the saved file's chart rules with the colours inline
PAGE_CSS = """
.lx-registered { overflow-x: auto; }
.lx-registered svg.lx-chart { min-width: 560px; }
.lx-registered svg.lx-chart { width: 100%; max-width: 900px; height: auto; color: var(--body-text-color, #111827); }
.lx-registered svg.lx-chart text { fill: currentColor; font-size: 11px; }
.lx-registered svg.lx-chart .axis { stroke: var(--border-color-primary, #d1d5db); }
.lx-registered svg.lx-chart .line { fill: none; stroke: #2563eb; stroke-width: 1.5; }
.lx-registered svg.lx-chart .line.second { stroke: #e08214; }
.lx-registered svg.lx-chart .dot { fill: #2563eb; }
"""
Value = int | float | str | bool


@dataclass(frozen=True)
class Option:
    """One setting of a view: whole numbers and numbers within [low, high], a choice among `choices`, or a flag."""

    name: str
    label: str
    default: Value
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        """ "choice", "flag", "whole" or "number"."""
        if self.choices:
            return "choice"
        if isinstance(self.default, bool):
            return "flag"
        return "whole" if isinstance(self.default, int) else "number"

    def check(self, value: object) -> Value:
        """`value` when this option takes it, else an ExplorerError that says what it takes."""
        kind = self.kind
        if kind == "choice":
            if not isinstance(value, str) or value not in self.choices:
                raise ExplorerError(
                    f"`{self.name}` must be one of {', '.join(self.choices)}, got {value!r}.", param=self.name
                )
            return value
        if kind == "flag":
            if not isinstance(value, bool):
                raise ExplorerError(f"`{self.name}` must be True or False, got {value!r}.", param=self.name)
            return value
        whole = kind == "whole"
        if isinstance(value, float) and whole and value.is_integer():
            value = int(value)  # a slider's 3.0
        ok = isinstance(value, int) if whole else isinstance(value, (int, float)) and math.isfinite(value)
        if isinstance(value, bool) or not ok:
            raise ExplorerError(
                f"`{self.name}` must be a {'whole ' if whole else ''}number, got {value!r}.", param=self.name
            )
        assert isinstance(value, (int, float))
        lo, hi = -math.inf if self.low is None else self.low, math.inf if self.high is None else self.high
        if not lo <= value <= hi:
            raise ExplorerError(f"`{self.name}` (={value}) must be from {lo:g} to {hi:g}.", param=self.name)
        return value


@dataclass(frozen=True)
class View:
    """One registered view (see the module)."""

    id: str
    title: str
    group: str | None
    about: str
    compute: Callable[..., Any]  # (TokenScores, **options) -> the view's result (with .model)
    body: Callable[[Any], str]  # result -> HTML
    data: Callable[[Any], dict]  # result -> its JSON
    table: Callable[[Any], pd.DataFrame]  # result -> its numbers
    options: tuple[Option, ...] = ()
    css: str = ""  # the body's own CSS (the tab's and the file's)
    caption: str = "Every number"  # the table's caption in the saved file
    method: str = ""  # its LM method's name ('' = the id)
    defaults: dict[str, Value] = field(init=False, repr=False)

    def __post_init__(self):
        if not self.id.isidentifier() or self.id != self.id.lower():
            raise ValueError(f"a view's id is a lower-case identifier, got {self.id!r}")
        if self.group is not None and self.group not in GROUPS:
            raise ValueError(f"view {self.id!r}: group {self.group!r} is none of {GROUPS} (None: the top row)")
        object.__setattr__(self, "defaults", {o.name: o.check(o.default) for o in self.options})
        object.__setattr__(self, "method", self.method or self.id)

    def checked(self, options: Mapping[str, object]) -> dict[str, Value]:
        """Every option of the view, given (checked) or its default; an unknown one is an ExplorerError."""
        known = {o.name: o for o in self.options}
        unknown = sorted(set(options) - set(known))
        if unknown:
            names = ", ".join(known) or "none"
            raise ExplorerError(f"The {self.title} view has no option {unknown[0]!r} (its options: {names}).")
        return {**self.defaults, **{k: known[k].check(v) for k, v in options.items()}}

    def run(self, scores: TokenScores, **options: object) -> Any:
        """The view of `scores` with `options` (checked)."""
        if not isinstance(scores, TokenScores):
            raise ExplorerError(
                f"The {self.title} view reads a TokenScores (lm.score(...)), got {type(scores).__name__}."
            )
        return self.compute(scores, **self.checked(options))

    def html(self, result: Any) -> str:
        """The view's body as the page shows it: its chart and CSS (no table: the tab's own table holds it)."""
        return f'<div class="lx-registered lx-{self.id}"><style>{PAGE_CSS}{self.css}</style>{self.body(result)}</div>'

    def shown_table(self, result: Any) -> pd.DataFrame:
        """The table as the tab shows it: floats to 4 decimals, token text made visible (`·` a space, `↵` a new
        line), as the saved file's table writes them."""
        from explorer.notebook.views import TEXT_COLUMNS
        from explorer.render.text import visible

        frame = self.table(result)
        shown = {c: frame[c].map(lambda t: visible(str(t))) for c in TEXT_COLUMNS if c in frame.columns}
        return frame.assign(**shown).round(4)

    def page(self, result: Any) -> str:
        """The view as one self-contained HTML file (its download, its static-site page): body, table, JSON."""
        from explorer.notebook.views import document, table_html  # pandas and the renderers: when a file is made

        body = self.body(result) + table_html(self.table(result), self.caption)
        return document(self.title, result.model, body, self.css, self.data(result))

    def json(self, result: Any) -> str:
        """The view's JSON as its file holds it."""
        from explorer.export import dumps

        return dumps(self.data(result))


def lm_method(view: View) -> Callable[..., Any]:
    """`LM.<view.method>(text, context_start=False, **options)`: `text` scored as `LM.score` scores it (or a
    TokenScores already at hand), then the view computed on it."""

    def method(self: Any, text: str | Sequence[int] | TokenScores, context_start: bool | str = False, **options: Any):
        checked = view.checked(options)  # the options before the model runs
        scores = text if isinstance(text, TokenScores) else self.score(text, k=0, context_start=context_start)
        return view.compute(scores, **checked)

    params = [
        inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter("text", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter("context_start", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=False),
        *(inspect.Parameter(o.name, inspect.Parameter.KEYWORD_ONLY, default=o.default) for o in view.options),
    ]
    method.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    method.__name__ = method.__qualname__ = view.method
    method.__qualname__ = f"LM.{view.method}"
    settings = "; ".join(f"`{o.name}`: {o.label} (default {o.default!r})" for o in view.options)
    method.__doc__ = (
        f"The {view.title} view of `text` (a text or token ids, scored as `score` scores them, `context_start` "
        f"as there; or a TokenScores): as the page's {view.title} tab shows it. {view.about}"
        + (f"\n\nOptions: {settings}." if settings else "")
    )
    return method
