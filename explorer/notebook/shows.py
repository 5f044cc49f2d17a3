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


def _view(name: str, inline: bool) -> Presenter:
    """A presenter that draws the result with explorer.notebook.views.`name` (a notebook fragment when `inline`, whose
    CSS is scoped to it; else a whole file)."""

    def present(result: Any) -> str:
        import explorer.notebook.views as views

        if name == "words_page":  # WordScores: the token scores and the words, drawn together
            return views.words_page(result.scores, result.words, result.lead, inline=inline)
        return getattr(views, name)(result, inline=inline)

    present.__name__ = f"{name}_inline" if inline else name
    return present


VIEWS = {
    "word_scores.WordScores": "words_page",
    "compare.Comparison": "compare_page",
    "answers.Answers": "answers_page",
    "attribution.Attribution": "why_page",
    "lens.LensGrid": "lens_page",
    "branch.BranchTree": "branch_page",
    "batch.Batch": "batch_page",
    "lookup.Lookups": "lookup_page",
    "word_table.WordTable": "word_table_page",
    "hidden.HiddenStates": "hidden_page",
}  # each tool view's result type -> its drawing in explorer/notebook/views.py


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
        "lens.LensGrid": "lens_frame",
        "branch.BranchTree": "branch_frame",
        "lookup.Lookups": "lookup_frame",
        "hidden.HiddenStates": "hidden_frame",
    }.items():
        provide(R + kind, "to_pandas", _frame(name))
    for kind, name in VIEWS.items():
        provide(R + kind, "to_html", _view(name, inline=False))
        provide(R + kind, "_repr_html_", _view(name, inline=True))


register()
