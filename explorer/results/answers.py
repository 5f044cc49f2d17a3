"""Answer sets: which answer the model prefers after a prompt, each answer a set of variants (numpy only).

The engine fills it (explorer.engine.analyses.answers). In nats:
    variant logprob   = sum of log p(token | prompt, earlier tokens of the variant)   (the whole continuation)
    answer logprob    = logsumexp of its variants' logprobs        (the mass of " Paris", " paris", ...)
    probability       = exp(answer logprob)                        (raw: the rest of the mass is elsewhere)
    normalised        = probability / sum of the set's probabilities
A quiz is a list of questions, each such a set with one right answer: accuracy, and calibration of the
predicted answer's normalised probability in equal-width bins, ECE = sum_b |B|/N * |acc(B) - conf(B)|.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from explorer.errors import ExplorerError
from explorer.floats import list_to_json, value_from_json
from explorer.floats import to_json as _num
from explorer.results.shown import show

if TYPE_CHECKING:
    import pandas as pd

FORMAT = "logprob-explorer/answers"
QUIZ_FORMAT = "logprob-explorer/quiz"
FORMAT_VERSION = 1
BINS = 10  # the reliability diagram's equal-width bins over [0, 1]


def logsumexp(x: np.ndarray) -> float:
    """log(sum(exp(x))) of (n,) nats, -inf for an empty or all -inf array."""
    x = np.asarray(x, np.float64)
    if x.size == 0 or not np.isfinite(x).any():
        return -np.inf
    m = float(np.max(x[np.isfinite(x)]))
    return m + float(np.log(np.sum(np.exp(x - m))))


@dataclass(eq=False)
class Variant:
    text: str  # as typed, leading space kept
    token_ids: np.ndarray  # (L,) int64, the variant's own tokens after the prompt's
    token_text: list[str]  # L strings, the characters each token completes
    token_logprobs: np.ndarray  # (L,) float64, log p(token | prompt + the variant's earlier tokens), nats
    tokenized: str = "joint"  # "joint": ids of tokenize(prompt + text) after the prompt's; "alone": text by itself

    @property
    def logprob(self) -> float:
        return float(np.sum(self.token_logprobs))

    def to_dict(self) -> dict:
        return {
            "text": self.text,
            "token_ids": self.token_ids.tolist(),
            "tokens": list(self.token_text),
            "token_logprobs": list_to_json(self.token_logprobs),
            "logprob": _num(self.logprob),
            "probability": float(np.exp(self.logprob)),
            "tokenized": self.tokenized,
        }

    @classmethod
    def from_dict(cls, d: dict) -> Variant:
        return cls(
            text=d["text"],
            token_ids=np.array(d["token_ids"], np.int64),
            token_text=list(d["tokens"]),
            token_logprobs=np.array([value_from_json(v) for v in d["token_logprobs"]], np.float64),
            tokenized=d.get("tokenized", "joint"),
        )


@dataclass(eq=False)
class Answer:
    variants: list[Variant]
    label: str = ""  # how it is shown: the first variant's text unless named

    @property
    def name(self) -> str:
        return self.label or (self.variants[0].text if self.variants else "")

    @property
    def logprob(self) -> float:
        """logsumexp of the variants' logprobs, nats."""
        return logsumexp(np.array([v.logprob for v in self.variants]))

    @property
    def probability(self) -> float:
        return float(np.exp(self.logprob))


@dataclass(eq=False)
class Answers:
    model: str
    prompt: str
    prompt_ids: np.ndarray  # (P,) int64
    answers: list[Answer]

    @property
    def logprobs(self) -> np.ndarray:
        """(A,) float64, each answer's logprob, nats."""
        return np.array([a.logprob for a in self.answers], np.float64)

    @property
    def probabilities(self) -> np.ndarray:
        """(A,) raw probabilities (their sum is the set's share of the model's mass)."""
        return np.exp(self.logprobs)

    @property
    def normalised(self) -> np.ndarray:
        """(A,) probabilities over the set, summing to 1 (uniform when every answer is impossible)."""
        lp = self.logprobs
        if not np.isfinite(lp).any():
            return np.full(len(lp), 1.0 / max(len(lp), 1))
        return np.exp(lp - logsumexp(lp))

    @property
    def best(self) -> int:
        """Index of the most likely answer (the first of ties)."""
        return int(np.argmax(self.normalised))

    def to_dict(self) -> dict:
        norm = self.normalised
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "model": self.model,
            "prompt": self.prompt,
            "prompt_ids": self.prompt_ids.tolist(),
            "best": self.best,
            "answers": [
                {
                    "answer": a.name,
                    "label": a.label,
                    "logprob": _num(a.logprob),
                    "probability": a.probability,
                    "normalised": float(norm[i]),
                    "variants": [v.to_dict() for v in a.variants],
                }
                for i, a in enumerate(self.answers)
            ],
        }

    def to_html(self) -> str:
        """The Answers view as one self-contained HTML file (the tab's *Download view*): no script, no request."""
        return show(self, "to_html")

    def _repr_html_(self) -> str:
        """Jupyter's view: the Answers view, drawn (explorer.notebook.views), its CSS scoped to it."""
        return show(self, "_repr_html_")

    def to_pandas(self) -> pd.DataFrame:
        """One row per answer: logprob (nats), probability, normalised probability, best, variants (explorer.notebook.frames.answers_frame)."""
        return show(self, "to_pandas")

    @classmethod
    def from_dict(cls, d: dict) -> Answers:
        return cls(
            model=d["model"],
            prompt=d["prompt"],
            prompt_ids=np.array(d["prompt_ids"], np.int64),
            answers=[Answer([Variant.from_dict(v) for v in a["variants"]], a.get("label", "")) for a in d["answers"]],
        )


@dataclass(eq=False)
class Calibration:
    edges: np.ndarray  # (B + 1,) bin edges over [0, 1]
    count: np.ndarray  # (B,) int64 questions whose predicted answer's normalised probability falls in the bin
    confidence: np.ndarray  # (B,) float64 mean of that probability in the bin (NaN: empty bin)
    accuracy: np.ndarray  # (B,) float64 share of right predictions in the bin (NaN: empty bin)
    ece: float  # sum_b count_b / N * |accuracy_b - confidence_b|


def calibration(confidence: np.ndarray, right: np.ndarray, bins: int = BINS) -> Calibration:
    """Equal-width bins of `confidence` (N,) in [0, 1] (the last bin closed) with `right` (N,) bool: reliability and ECE."""
    conf = np.asarray(confidence, np.float64)
    ok = np.asarray(right, bool)
    edges = np.linspace(0.0, 1.0, bins + 1)
    b = np.clip(np.searchsorted(edges, conf, side="right") - 1, 0, bins - 1)  # (N,) bin of each question
    count = np.bincount(b, minlength=bins).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_conf = np.bincount(b, weights=conf, minlength=bins) / count
        mean_acc = np.bincount(b, weights=ok.astype(np.float64), minlength=bins) / count
    n = max(len(conf), 1)
    filled = count > 0
    ece = float(np.sum(count[filled] / n * np.abs(mean_acc[filled] - mean_conf[filled])))
    return Calibration(edges, count, mean_conf, mean_acc, ece)


@dataclass(eq=False)
class Question:
    question: str
    result: Answers  # the question's prompt (the question, through the template) and its choices
    right: int  # index of the right answer

    @property
    def predicted(self) -> int:
        return self.result.best

    @property
    def correct(self) -> bool:
        return self.predicted == self.right

    @property
    def confidence(self) -> float:
        """The predicted answer's normalised probability."""
        return float(self.result.normalised[self.predicted])


@dataclass(eq=False)
class Quiz:
    model: str
    questions: list[Question]
    template: str = "{question}"
    bins: int = BINS
    settings: dict = field(default_factory=dict)

    @property
    def n(self) -> int:
        return len(self.questions)

    @property
    def accuracy(self) -> float:
        """Share of questions whose most likely answer (argmax of the normalised) is the right one; NaN for none."""
        return float(np.mean([q.correct for q in self.questions])) if self.questions else float("nan")

    @property
    def calibration(self) -> Calibration:
        conf = np.array([q.confidence for q in self.questions], np.float64)
        return calibration(conf, np.array([q.correct for q in self.questions], bool), self.bins)

    def rows(self) -> list[dict]:
        """One row per question: the question, the choices' normalised probabilities, predicted, right, correct."""
        out = []
        for i, q in enumerate(self.questions):
            norm = q.result.normalised
            out.append(
                {
                    "index": i,
                    "question": q.question,
                    "choices": [a.name for a in q.result.answers],
                    "normalised": [float(p) for p in norm],
                    "probability": [float(p) for p in q.result.probabilities],
                    "predicted": q.predicted,
                    "right": q.right,
                    "correct": q.correct,
                    "confidence": q.confidence,
                }
            )
        return out

    def to_dict(self) -> dict:
        cal = self.calibration
        return {
            "format": QUIZ_FORMAT,
            "version": FORMAT_VERSION,
            "model": self.model,
            "template": self.template,
            "n": self.n,
            "accuracy": _num(self.accuracy),
            "ece": _num(cal.ece),
            "calibration": {
                "edges": cal.edges.tolist(),
                "count": cal.count.tolist(),
                "confidence": list_to_json(cal.confidence),
                "accuracy": list_to_json(cal.accuracy),
            },
            "questions": [dict(row, answers=q.result.to_dict()) for row, q in zip(self.rows(), self.questions)],
        }

    @classmethod
    def from_dict(cls, d: dict) -> Quiz:
        qs = [Question(q["question"], Answers.from_dict(q["answers"]), int(q["right"])) for q in d["questions"]]
        return cls(d["model"], qs, d.get("template", "{question}"), len(d["calibration"]["count"]))

    def to_csv(self) -> str:
        """One row per question: index, question, choices and their normalised probabilities, predicted, right.
        Choices (each named by its first variant) and their probabilities are separated by ` / `."""
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["index", "question", "choices", "normalised", "predicted", "right", "correct", "confidence"])
        for r in self.rows():
            norm = " / ".join(f"{p:.6g}" for p in r["normalised"])
            w.writerow(
                [r["index"], r["question"], " / ".join(r["choices"]), norm, r["choices"][r["predicted"]],
                 r["choices"][r["right"]], int(r["correct"]), repr(r["confidence"])]
            )  # fmt: skip
        return out.getvalue()

    def to_jsonl(self) -> str:
        """One JSON object per question (the rows of `rows()`), one a line."""
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self.rows())


# ---- the faces' input: answer lines and quiz files --------------------------------------------------------------
def split_variants(line: str) -> list[str]:
    """One answer's variants from `a| b | c`: split at `|`, leading spaces kept (they are part of the token),
    trailing spaces dropped."""
    return [v.rstrip() for v in line.split("|")]


def parse_answers(text: str) -> list[list[str]]:
    """One answer a line, its variants separated by `|`; blank lines skipped."""
    return [split_variants(line) for line in text.splitlines() if line.strip()]


def _bad_quiz(msg: str) -> ExplorerError:
    return ExplorerError(msg, param="quiz", code="invalid_value")


def quiz_item(n: int, d: object) -> dict:
    """Line n's question: {question, choices: variant lists, answer: index}."""
    if not isinstance(d, dict) or not isinstance(d.get("question"), str) or not isinstance(d.get("choices"), list):
        raise _bad_quiz(f'Quiz line {n}: write an object with "question" (text), "choices" (a list) and "answer".')
    choices = [split_variants(c) if isinstance(c, str) else c for c in d["choices"]]
    if len(choices) < 2 or not all(isinstance(c, list) and c and all(isinstance(v, str) for v in c) for c in choices):
        raise _bad_quiz(f"Quiz line {n}: give at least two choices, each a text (variants split by `|`) or a list.")
    if "answer" not in d:
        raise _bad_quiz(f'Quiz line {n} has no "answer" key: add the right choice\'s index (0..{len(choices) - 1}).')
    a = d["answer"]
    # a text answer names the choice holding it among its variants: as written, else with spaces stripped
    text = a if isinstance(a, str) else None
    holds = [i for i, c in enumerate(choices) if text in c]
    holds += [i for i, c in enumerate(choices) if text is not None and text.strip() in [v.strip() for v in c]]
    if isinstance(a, int) and not isinstance(a, bool) and 0 <= a < len(choices):
        right = a
    elif holds:
        right = holds[0]
    else:
        raise _bad_quiz(
            f'Quiz line {n}: "answer" must be the right choice\'s index (0..{len(choices) - 1}) or one of its '
            f"variants, got {a!r}."
        )
    return {"question": d["question"], "choices": choices, "answer": right}


def quiz_text(raw: bytes, name: str) -> str:
    """A quiz file's bytes as UTF-8 text; `name` says which file (`--quiz 'q.jsonl'`, `The quiz file`)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _bad_quiz(f"{name} is not UTF-8 (bad byte at offset {err.start}): convert it to UTF-8.") from None


def json_lines(text: str, bad: Callable[[int, str], ExplorerError]) -> Iterator[tuple[int, object]]:
    """(line number, value) of each non-blank line of a JSONL text; `bad(n, why)` is raised for one that is not
    JSON."""
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield n, json.loads(line)
        except json.JSONDecodeError as e:
            raise bad(n, e.msg) from None


def read_quiz(text: str) -> list[dict]:
    """Questions of a JSONL quiz (one object a line: question, choices, answer), checked."""
    bad = lambda n, why: _bad_quiz(f"Quiz line {n} is not JSON ({why}): one JSON object a line.")  # noqa: E731
    out = [quiz_item(n, d) for n, d in json_lines(text, bad)]
    if not out:
        raise _bad_quiz("The quiz file has no questions: one JSON object a line.")
    return out
