"""The page's static files (its CSS, heatmap script, walkthrough, charts' text alternatives, the live page's script
and wllama): below every package that reads them, and the one place that knows their folder."""

from __future__ import annotations

from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable


def path(name: str) -> Traversable:
    """The file or folder `name` of the static files, as installed (importlib.resources: from a wheel too)."""
    return resources.files(__name__).joinpath(name)


@cache
def read(name: str) -> str:
    """The text of the static file `name`, read once (one source for the page, its HTML views and the live page)."""
    return path(name).read_text(encoding="utf-8")
