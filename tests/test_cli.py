"""The command line, run as a user would: JSON on stdout, one clear line on stderr for bad input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.helpers.cli import run


def test_score_vllm(gpt2_dir):
    p = run("score", "--model", gpt2_dir, "--device", "cpu", "--text", "The quick brown fox", "--logprobs", "3")
    assert p.returncode == 0, p.stderr
    body = json.loads(p.stdout)
    pl = body["choices"][0]["prompt_logprobs"]
    assert pl[0] is None and len(pl) == len(body["choices"][0]["prompt_token_ids"])


def test_score_ids_and_file(gpt2_dir, tmp_path):
    f = tmp_path / "t.txt"
    f.write_text("fox jumps", encoding="utf-8")
    out = tmp_path / "o.json"
    p = run("score", "--model", gpt2_dir, "--text-file", str(f), "--format", "openai-completion", "--out", str(out))
    assert p.returncode == 0, p.stderr
    assert json.loads(out.read_text())["choices"][0]["text"] == "fox jumps"
    p = run("score", "--model", gpt2_dir, "--ids", "5,6,7", "--format", "native")
    assert json.loads(p.stdout)["token_ids"] == [5, 6, 7]


def test_generate_chat_and_seed(gpt2_dir):
    args = [
        "generate",
        "--model",
        gpt2_dir,
        "--prompt",
        "Hi",
        "--chat",
        "--max-tokens",
        "6",
        "--seed",
        "3",
        "--temperature",
        "0.9",
        "--format",
        "openai-chat",
        "--logprobs",
        "2",
    ]
    a, b = run(*args), run(*args)
    assert a.returncode == 0, a.stderr
    assert json.loads(a.stdout)["choices"] == json.loads(b.stdout)["choices"]
    assert json.loads(a.stdout)["object"] == "chat.completion"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["score", "--text", "hi", "--logprobs", "21"], "at most 20"),
        (["score", "--text", ""], "empty"),
        (["score", "--text", "fox jumps " * 200], "reads at most"),
        (["generate", "--prompt", "hi", "--temperature", "-1"], "temperature"),
        (["generate", "--prompt", "hi", "--top-p", "0"], "top_p"),
        (["generate", "--prompt", "hi", "--prompt-logprobs", "99"], "prompt_logprobs"),
        (["score", "--text-file", "/nonexistent/x.txt"], "Cannot read"),
    ],
)
def test_bad_input_is_one_clear_line(gpt2_dir, args, needle):
    p = run(*args, "--model", gpt2_dir)
    assert p.returncode != 0
    assert "Traceback" not in p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert needle in last and last.startswith("error:")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["score", "--text", "hi", "--binary-out", "x.npy"], "--logprobs -1"),
        (["score", "--text", "hi", "--out", "/nonexistent/dir/o.json"], "does not exist"),
        (["generate", "--prompt", "hi", "--system", "be brief"], "--system only applies with --chat"),
        (["generate", "--prompt", "hi", "--stop", "x" * 300], "at most 256"),
    ],
)
def test_arguments_are_checked_before_the_model_loads(args, needle):
    """A model that does not exist: the argument's message comes first, so nothing was loaded."""
    p = run(*args, "--model", "/nonexistent/model")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert needle in p.stderr.strip().splitlines()[-1], p.stderr


def test_text_that_is_not_utf8(gpt2_dir, tmp_path):
    f = tmp_path / "latin1.txt"
    f.write_bytes("Grüße".encode("latin-1"))
    p = run("score", "--model", gpt2_dir, "--text-file", str(f))
    assert p.returncode == 2 and "Traceback" not in p.stderr and "not UTF-8" in p.stderr
    p = subprocess.run(
        [sys.executable, "-m", "explorer", "score", "--model", gpt2_dir, "--text", b"a\xffb"],
        capture_output=True,
        text=True,
        timeout=120,
    )  # bytes that are not UTF-8 on the command line
    assert p.returncode == 2 and "Traceback" not in p.stderr and "not valid UTF-8" in p.stderr


def test_one_token_prompt(gpt2_dir):
    p = run("score", "--model", gpt2_dir, "--ids", "5", "--format", "openai-completion")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["choices"][0]["logprobs"]["token_logprobs"] == [None]


def test_missing_and_wrong_models(tmp_path):
    p = run("score", "--model", str(tmp_path / "nope"), "--text", "hi")
    assert p.returncode != 0 and "Traceback" not in p.stderr and "not found" in p.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    p = run("score", "--model", str(empty), "--text", "hi")
    assert p.returncode != 0 and "config.json" in p.stderr and "Traceback" not in p.stderr


def test_not_a_causal_lm(tmp_path):
    from transformers import T5Config, T5Model

    T5Model(T5Config(vocab_size=50, d_model=16, d_kv=8, d_ff=32, num_layers=1, num_heads=2)).save_pretrained(tmp_path)
    p = run("score", "--model", str(tmp_path), "--text", "hi")
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert "is not a causal language model" in p.stderr


def test_html_writes_the_view_beside_the_json(gpt2_dir, tmp_path):
    """--html: the view as one self-contained page holding the very result the JSON describes (its native JSON),
    for score and for generate; a folder that does not exist is refused before the model loads."""
    from explorer.notebook.files import open_file

    page = tmp_path / "fox.html"
    p = run("score", "--model", gpt2_dir, "--text", "The quick brown fox", "--format", "native", "--html", str(page))
    assert p.returncode == 0, p.stderr
    shown, body = open_file(page), json.loads(p.stdout)
    assert shown.token_ids.tolist() == body["token_ids"] and "<script src" not in page.read_text(encoding="utf-8")
    assert [round(x, 5) for x in shown.logprobs[1:].tolist()] == [round(x, 5) for x in body["logprobs"][1:]]
    gen = tmp_path / "gen.html"
    args = ["generate", "--model", gpt2_dir, "--prompt", "Once upon", "--max-tokens", "5", "--temperature", "0"]
    p = run(*args, "--format", "vllm", "--html", str(gen))
    assert p.returncode == 0, p.stderr
    choice = json.loads(p.stdout)["choices"][0]
    assert open_file(gen).token_ids.tolist()[-len(choice["token_ids"]) :] == choice["token_ids"]
    p = run("score", "--model", gpt2_dir, "--text", "x", "--html", str(tmp_path / "no" / "x.html"))
    assert p.returncode != 0 and "--html" in p.stderr and "does not exist" in p.stderr
