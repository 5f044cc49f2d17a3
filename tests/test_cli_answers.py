"""`logprob-explorer answers`, run as a user would: the JSON's numbers equal the engine's and a fresh scoring pass
(exp of the summed token logprobs, 1e-5); a quiz's JSON and CSV; bad input is one line, status 2."""

from __future__ import annotations

import csv
import io
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from explorer.engine.analyses.answers import score_answers
from explorer.engine.passes.scoring import score_ids

PROMPT = "The capital of France is"


def run(*args: str, timeout: int = 180) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "explorer", "answers", *args], capture_output=True, text=True, timeout=timeout
    )


def test_answers_json(gpt2, gpt2_dir):
    p = run("--model", gpt2_dir, "--prompt", PROMPT, "--answer", " Paris| paris", "--answer", " London")
    assert p.returncode == 0, p.stderr[-3000:]
    body = json.loads(p.stdout)
    assert body["format"] == "logprob-explorer/answers"
    want = score_answers(gpt2, PROMPT, [[" Paris", " paris"], [" London"]])
    prompt = body["prompt_ids"]
    total = 0.0
    for a, w in zip(body["answers"], want.answers):
        assert a["logprob"] == pytest.approx(w.logprob, abs=1e-5)
        assert a["probability"] == pytest.approx(w.probability, abs=1e-5)
        for v in a["variants"]:
            ids = v["token_ids"]
            r = score_ids(gpt2, prompt + ids, 0)
            fresh = float(np.sum(r.logprobs[len(prompt) :].astype(np.float64)))
            assert math.exp(v["logprob"]) == pytest.approx(math.exp(fresh), abs=1e-5)
        total += a["probability"]
    assert [a["normalised"] for a in body["answers"]] == pytest.approx(
        [a["probability"] / total for a in body["answers"]]
    )


def test_quiz_json_and_csv(gpt2_dir, tmp_path):
    path = tmp_path / "quiz.jsonl"
    rows = [{"question": f"Is {i} even? Answer:", "choices": [" yes| Yes", " no"], "answer": i % 2} for i in range(4)]
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    p = run("--model", gpt2_dir, "--quiz", str(path))
    assert p.returncode == 0, p.stderr[-3000:]
    body = json.loads(p.stdout)
    right = [int(np.argmax(q["normalised"])) == q["right"] for q in body["questions"]]
    assert body["accuracy"] == pytest.approx(np.mean(right)) and body["n"] == 4
    p = run("--model", gpt2_dir, "--quiz", str(path), "--table", "csv")
    assert p.returncode == 0, p.stderr[-3000:]
    table = list(csv.DictReader(io.StringIO(p.stdout)))
    assert [int(r["correct"]) for r in table] == [int(x) for x in right]


@pytest.mark.parametrize(
    "args, words",
    [
        (("--answer", " a"), "Give --prompt"),
        (("--prompt", "x", "--answer", " a| a"), "each variant once"),
        (("--prompt", "x", "--table", "csv", "--answer", " a"), "--table writes a quiz"),
        (("--quiz", "/nonexistent/q.jsonl"), "--quiz"),
        (("--quiz", "/nonexistent/q.jsonl", "--prompt", "Q:"), "put {question}"),
    ],
)
def test_bad_input(gpt2_dir, args, words):
    p = run("--model", gpt2_dir, *args)
    assert p.returncode == 2 and words in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_quiz_not_utf8(gpt2_dir, tmp_path):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes('{"question": "G\u00e9n\u00e8ve?", "choices": [" a", " b"], "answer": 0}'.encode("latin-1"))
    p = run("--model", gpt2_dir, "--quiz", str(path))
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 2 and "Traceback" not in p.stderr and len(lines) == 1, p.stderr
    assert lines[0].startswith("error:") and "not UTF-8 (bad byte at offset 15)" in lines[0], p.stderr
