"""`logprob-explorer answers`: which answer the model prefers after a prompt, each answer a set of variants, as one
JSON object (explorer.results.answers.Answers.to_dict); with --quiz, a JSONL quiz's accuracy, calibration and
per-question distributions (Quiz.to_dict, or its table as CSV / JSONL with --table)."""

from __future__ import annotations

import argparse


def add_parser(sub) -> None:
    from explorer.cli.args import model_args

    p = sub.add_parser(
        "answers",
        help="answer sets: each answer's probability summed over its variants, raw and normalised over the set",
        description="Each --answer is one answer, its variants separated by `|` (a leading space is part of the "
        "token: ' Paris| paris'); its probability is the sum over its variants of the probability of the whole "
        "continuation. With --quiz FILE (JSONL: question, choices, answer) every question is scored so; --prompt is "
        "then an optional template holding {question}.",
    )
    model_args(p)
    p.add_argument("--prompt", help="the text the answers continue (with --quiz: a template with {question})")
    p.add_argument("--answer", action="append", default=[], help="one answer, variants separated by `|`; repeat")
    p.add_argument("--quiz", help="a JSONL file, one question a line: question, choices, answer")
    p.add_argument("--table", choices=("csv", "jsonl"), help="with --quiz: write the per-question table instead")
    p.add_argument("--out", help="write the output here instead of stdout")


def _check(a: argparse.Namespace) -> list[dict] | list[list[str]]:
    """Every check that needs no model: the answer set, or the quiz's questions."""
    from explorer.cli.args import check_out
    from explorer.engine.analyses.answers import check_answers
    from explorer.errors import ExplorerError
    from explorer.results.answers import quiz_text, read_quiz, split_variants

    check_out(a.out, "--out")
    if a.quiz:
        if a.answer:
            raise ExplorerError("--quiz brings its own choices: drop --answer, or drop --quiz.", param="answer")
        if a.prompt is not None and "{question}" not in a.prompt:
            raise ExplorerError(
                "With --quiz, --prompt is a template: put {question} where each question goes, or drop --prompt.",
                param="prompt",
            )
        try:
            with open(a.quiz, "rb") as f:
                raw = f.read()
        except OSError as e:
            raise ExplorerError(f"--quiz {a.quiz!r}: {e.strerror}; give a JSONL file that exists.") from None
        return read_quiz(quiz_text(raw, f"--quiz {a.quiz!r}"))
    if a.table:
        raise ExplorerError("--table writes a quiz's table: add --quiz FILE, or drop --table.", param="table")
    if a.prompt is None:
        raise ExplorerError("Give --prompt, the text the answers continue (or --quiz FILE).", param="prompt")
    sets = [split_variants(x) for x in a.answer]
    check_answers(sets)
    return sets


def run(a: argparse.Namespace) -> dict | str:
    checked = _check(a)
    from explorer.cli.args import load_engine
    from explorer.engine.analyses.answers import run_quiz, score_answers

    engine = load_engine(a, a.model)
    if not a.quiz:
        return score_answers(engine, a.prompt, checked).to_dict()  # type: ignore[arg-type]
    q = run_quiz(engine, checked, a.prompt or "{question}")  # type: ignore[arg-type]
    if a.table:
        return q.to_csv() if a.table == "csv" else q.to_jsonl()
    return q.to_dict()
