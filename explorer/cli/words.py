"""`logprob-explorer words`: per-word surprisal for reading-time studies, one row per word.

Each word (explorer/results/words.py's segmentation) with its character span, tokens, the usual summed surprisal and
the corrected one (Pimentel & Meister 2024: the word's probability includes that the next token starts a new word),
in bits and nats. The body is `explorer.export.words.to_dict` (`--format json`) or `to_csv` (`--format csv`).
"""

from __future__ import annotations

import argparse

from explorer.errors import ExplorerError

FORMATS = ("json", "csv")


def add_parser(sub) -> None:
    from explorer.cli.args import model_args

    p = sub.add_parser(
        "words",
        help="per-word surprisal: summed over the word's tokens, and corrected for where the word ends",
        description="One row per word: text, character span, tokens, summed surprisal, corrected surprisal "
        "(Pimentel & Meister 2024, 'How to compute the probability of a word'), in bits and nats. Needs the full "
        "next-token distribution, so a model loaded here (not --backend).",
    )
    model_args(p)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--text")
    src.add_argument("--text-file")
    p.add_argument(
        "--context-start",
        default="none",
        metavar="none|bos|eos|TOKEN",
        help="put this document-start token before the text so its first word is scored too (bos, eos or one of "
        "the model's special tokens); nothing changes where the tokenizer adds a BOS itself (default: none: the "
        "first word has no score)",
    )
    p.add_argument("--format", choices=FORMATS, default="json")
    p.add_argument("--out", help="write the result here instead of stdout")


def run(a: argparse.Namespace) -> dict | str:
    from explorer.cli.args import check_out, load_engine, source_text
    from explorer.engine.word_ends import score_text_words
    from explorer.export.words import to_csv, to_dict
    from explorer.results.words import leading, with_ends, words

    a.ids = None  # source_text reads --text / --text-file
    text = source_text(a, "split into words")
    check_out(a.out, "--out")
    if a.backend:  # refused before any request: a served model gives no distribution after the text
        raise ExplorerError(
            "words needs the full next-token distribution at every position and after the text's last token, "
            "which a served model does not give: use a model loaded here (drop --backend).",
            param="backend",
        )
    engine = load_engine(a, a.model)
    r, ends = score_text_words(engine, text, k=1, start=a.context_start)
    w = with_ends(words(r), ends)
    lead = leading(ends.special)
    return to_csv(r, w, lead) if a.format == "csv" else to_dict(r, w, lead)
