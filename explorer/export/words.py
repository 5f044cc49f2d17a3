"""The Words table as JSON or CSV: one row per word (results.words.word_rows), pure functions of the results."""

from __future__ import annotations

import csv
import io
import json

from explorer.results.scores import TokenScores
from explorer.results.words import WORD_COLUMNS, Words, first_word, shown_tokens, word_rows

REFERENCE = 'Pimentel & Meister 2024, "How to compute the probability of a word" (arXiv:2406.14561)'


def to_dict(r: TokenScores, w: Words, lead: int | None = None) -> dict:
    """{"model", "text", "corrected", "reference", "words": [row, ...]}; a row's numbers are None where unknown."""
    rows = word_rows(r, w, lead)
    base = r.context_start if lead is None else lead
    return {
        "model": r.model,
        "text": "".join(r.token_text[base:]),
        "corrected": w.corrected is not None,
        "reference": REFERENCE,
        "units": "logprob_* in nats (natural log); surprisal_*_bits in bits, surprisal_*_nats in nats",
        "document_start": "".join(r.token_text[:base]) or None,  # what the first word was scored after
        "words": rows,
    }


def to_json(r: TokenScores, w: Words, lead: int | None = None) -> str:
    return json.dumps(to_dict(r, w, lead), ensure_ascii=False, indent=1, allow_nan=False)


def to_csv(r: TokenScores, w: Words, lead: int | None = None) -> str:
    """CSV with a header of WORD_COLUMNS; `tokens` as the page shows them (results.text.token_label: `·` for a
    space, `↵` a newline, `<0xNN>` the bytes of a token that completes no character) joined by single spaces, and
    `token_ids` (the exact tokens) joined by spaces. The JSON keeps each token's exact text."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(WORD_COLUMNS), lineterminator="\n")
    writer.writeheader()
    first = first_word(r, w, lead)  # a row's `word` counts the text's words: its index in `w` less this
    for row in word_rows(r, w, lead):
        writer.writerow(
            {
                **{k: "" if v is None else v for k, v in row.items()},
                "tokens": shown_tokens(r, w, first + row["word"]),
                "token_ids": " ".join(str(i) for i in row["token_ids"]),
            }
        )
    return out.getvalue()
