"""What a decode loop yields: a Step per token, then Done (work stops through bounds.py's `check()`)."""

from __future__ import annotations

from dataclasses import dataclass

from explorer.results.scores import Rows


@dataclass
class Step:
    token_id: int
    rows: Rows  # this token's numbers: one row
    text: str  # characters this token completes
    start: int  # character offset of `text` in the generated text

    @property
    def logprob(self) -> float:
        return float(self.rows.logprobs[0])


@dataclass
class Done:
    finish_reason: str  # "stop" | "length"
    text: str  # the generated text, cut at a stop string
    prompt_rows: Rows | None  # prompt positions 1.. when asked
    stop_reason: str | int | None = None  # the stop string or stop token id that ended it (None for EOS / length)
    stop_token: bool = False  # the last token ended the generation and adds nothing to the text
