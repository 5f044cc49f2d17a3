"""WordScores: a text's words with the token scores they are sums of, what the Words view and its table need
together (explorer/results/words.py holds the segmentation and the corrected surprisal)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from explorer.results.scores import TokenScores
from explorer.results.shown import show
from explorer.results.words import Words, word_rows

if TYPE_CHECKING:
    import pandas as pd


@dataclass(eq=False)
class WordScores:
    scores: TokenScores  # the text's tokens, scored (a document start first when one was put before it)
    words: Words  # its words, with corrected logprobs when the end masses were computed
    lead: int = 0  # leading tokens that are a document start, not words of the text

    def rows(self) -> list[dict]:
        """One dict per word of the text (results.words.WORD_COLUMNS); numbers None where unknown."""
        return word_rows(self.scores, self.words, self.lead)

    def to_dict(self) -> dict:
        """The Words JSON, as `logprob-explorer words --format json` writes it (explorer.export.words.to_dict)."""
        return show(self, "to_dict")

    def to_csv(self) -> str:
        """The Words table as CSV, as `logprob-explorer words --format csv` writes it."""
        return show(self, "to_csv")

    def to_html(self) -> str:
        """The Words view as one self-contained HTML file (the tab's *Download view*): no script, no request."""
        return show(self, "to_html")

    def _repr_html_(self) -> str:
        """Jupyter's view: the Words view, drawn (explorer.notebook.views), its CSS scoped to it."""
        return show(self, "_repr_html_")

    def to_pandas(self) -> pd.DataFrame:
        """One row per word (WORD_COLUMNS), NaN where a number is unknown (explorer.notebook.frames.word_frame)."""
        return show(self, "to_pandas")
