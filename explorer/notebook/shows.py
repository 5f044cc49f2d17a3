"""The result types' notebook methods, registered (explorer/results/shown.py): `r.to_pandas()`, `r.to_html()`,
`r._repr_html_()` (Jupyter's view) ... of each result call the presenter named here.

Importing this module registers them and imports nothing heavy: each presenter imports its module (pandas, the
renderers) when it is first called, so `import explorer` stays light.
"""

from __future__ import annotations

import os
from typing import Any

from explorer.results.shown import Presenter, provide

R = "explorer.results."


def _token_frame(r: Any) -> Any:
    from explorer.notebook.frames import token_frame

    return token_frame(r)


def _json_text(r: Any, shape: str = "native") -> str:
    from explorer.notebook.files import json_text

    return json_text(r, shape)


def _csv_text(r: Any) -> str:
    from explorer.notebook.files import csv_text

    return csv_text(r)


def _page_html(r: Any, metric: str = "logprob") -> str:
    from explorer.notebook.page import page_html

    return page_html(r, metric)


def _save_html(r: Any, path: str | os.PathLike[str], metric: str = "logprob") -> str:
    from explorer.notebook.files import save_html

    return save_html(r, path, metric)


def _view_html(r: Any) -> str:
    from explorer.notebook.page import view_html

    return view_html(r)


def _words_dict(w: Any) -> dict:
    from explorer.export.words import to_dict

    return to_dict(w.scores, w.words, w.lead)


def _words_csv(w: Any) -> str:
    from explorer.export.words import to_csv

    return to_csv(w.scores, w.words, w.lead)


def _word_frame(w: Any) -> Any:
    from explorer.notebook.frames import word_frame

    return word_frame(w.scores, w.words, w.lead)


def _frame(name: str) -> Any:
    """A presenter that calls explorer.notebook.frames.`name` on the result."""

    def present(result: Any) -> Any:
        import explorer.notebook.frames as frames

        return getattr(frames, name)(result)

    present.__name__ = name
    return present


def register() -> None:
    """Fill explorer/results/shown.py's table (again: it is idempotent)."""
    scores = R + "scores.TokenScores"
    methods: dict[str, Presenter] = {
        "to_pandas": _token_frame,
        "to_json": _json_text,
        "to_csv": _csv_text,
        "to_html": _page_html,
        "save_html": _save_html,
        "_repr_html_": _view_html,
    }
    for method, fn in methods.items():
        provide(scores, method, fn)
    words = R + "word_scores.WordScores"
    provide(words, "to_dict", _words_dict)
    provide(words, "to_csv", _words_csv)
    provide(words, "to_pandas", _word_frame)
    for kind, name in {
        "compare.Comparison": "comparison_frame",
        "attribution.Attribution": "attribution_frame",
        "batch.Batch": "batch_frame",
        "answers.Answers": "answers_frame",
    }.items():
        provide(R + kind, "to_pandas", _frame(name))


register()
