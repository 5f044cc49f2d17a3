"""How a result is shown in Python: the table of presenters its notebook methods call (`to_pandas`, `to_html`,
`_repr_html_`, ...), filled by the package that draws them (explorer/notebook/shows.py, which importing `explorer`,
and so importing any module of it, runs first).

The result types stay free of presentation imports: a method is one line, `return show(self, "to_pandas")`, and
its presenter is whatever the presenters' package registered for that type and method. Results import nothing
above them; the presenters import the results and register themselves here, so no import runs back up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from explorer.errors import ExplorerError

Presenter = Callable[..., Any]
PRESENTERS: dict[tuple[str, str], Presenter] = {}  # ("module.Type", method) -> presenter(result, *args, **kwargs)


def type_name(cls: type) -> str:
    """The key a type is registered under: its module and name ("explorer.results.scores.TokenScores")."""
    return f"{cls.__module__}.{cls.__qualname__}"


def provide(kind: str, method: str, presenter: Presenter) -> None:
    """Register `presenter` as what `method` of results of type `kind` ("module.Type") returns; a later call for
    the same pair replaces it."""
    PRESENTERS[(kind, method)] = presenter


def presenter(result: object, method: str) -> Presenter | None:
    """The presenter registered for `method` of `result`'s type or the nearest of its bases; None when none is."""
    for cls in type(result).__mro__:
        found = PRESENTERS.get((type_name(cls), method))
        if found is not None:
            return found
    return None


def show(result: object, method: str, *args: Any, **kwargs: Any) -> Any:
    """`method` of `result` as its presenter makes it; an ExplorerError when none is registered."""
    found = presenter(result, method)
    if found is None:
        raise ExplorerError(
            f"{type(result).__name__}.{method}() has no presenter registered: import explorer first (its notebook "
            "package registers them).",
            param=method,
        )
    return found(result, *args, **kwargs)
