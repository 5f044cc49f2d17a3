"""`logprob-explorer why`, run as a user would: the JSON and CSV of an attribution, checked against the engine called
in this process and against occlusion computed here from plain scoring passes; bad input is one line, status 2."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from explorer.engine.analyses.attribution import DETAIL, FAR_SPANS, attribute
from explorer.engine.passes.scoring import score_ids, score_text

TEXT = "The capital of France is Paris. The capital of Italy is Rome."
WORDY = "The capital of Frances is Parisian. The capitals of Italy is Rome."  # the tiny Llama: words of many tokens


def run(*args: str, timeout: int = 180) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "explorer", "why", *args], capture_output=True, text=True, timeout=timeout
    )


def ok(*args: str) -> subprocess.CompletedProcess:
    p = run(*args)
    assert p.returncode == 0, p.stderr[-3000:]
    return p


def values(body: dict) -> np.ndarray:
    return np.array([np.nan if s["value"] is None else s["value"] for s in body["sources"]], np.float64)


def f_of(engine, ctx: list[int], target: int, contrast: int | None) -> float:
    """f = log p(target | ctx) [- log p(contrast | ctx)], from the full next-token distribution of one scoring pass."""
    lp = score_ids(engine, [*ctx, target], k=-1).full_logprobs[-1].astype(np.float64)
    return float(lp[target] - (lp[contrast] if contrast is not None else 0.0))


def occlusion_by_hand(engine, ids: list[int], pos: int, spans, target: int, contrast: int | None) -> np.ndarray:
    """value(u) = f(text) - f(text without unit u), each text scored from scratch (no shared cache)."""
    ctx = ids[:pos]
    f = f_of(engine, ctx, target, contrast)
    return np.array([f - f_of(engine, ctx[:a] + ctx[b:], target, contrast) for a, b in spans])


def test_occlusion_json_gpt2(gpt2_dir, gpt2):
    """--target picks ` Italy`, --contrast ` France` (one token): the JSON is the engine's, and each token's value is
    f minus f of the text without it."""
    r = score_text(gpt2, TEXT, 1)
    pos = r.token_text.index(" Italy")
    (contrast,) = gpt2.tokenize(" France", add_special_tokens=False)
    p = ok("--model", gpt2_dir, "--device", "cpu", "--text", TEXT, "--target", " Italy", "--contrast", " France")
    body = json.loads(p.stdout)
    assert body["format"] == "logprob-explorer/attribution" and body["method"] == "occlusion"
    assert body["target"] == {"position": pos, "token_id": int(r.token_ids[pos]), "text": " Italy"}
    assert body["contrast"] == {"token_id": contrast, "text": " France"}
    assert body["settings"]["units"] == "token" and body["settings"]["mode"] == "remove"
    assert [s["span"] for s in body["sources"]] == [[u, u + 1] for u in range(pos)]  # the text is under DETAIL
    here = attribute(gpt2, r, pos, contrast=contrast)
    np.testing.assert_allclose(values(body), here.values, rtol=0, atol=1e-6)
    assert body["f"] == pytest.approx(here.f, abs=1e-6)
    ids = r.token_ids.tolist()
    by_hand = occlusion_by_hand(gpt2, ids, pos, [(u, u + 1) for u in range(pos)], ids[pos], contrast)
    np.testing.assert_allclose(values(body), by_hand, rtol=0, atol=1e-4)
    assert body["f"] == pytest.approx(f_of(gpt2, ids[:pos], ids[pos], contrast), abs=1e-4)
    assert np.abs(by_hand).max() > 1e-3  # the check above compares numbers, not zeros


def test_csv_detail_and_negative_position(gpt2_dir, gpt2, tmp_path):
    """--position -1 is the last token; --detail 3 keeps the 3 nearest tokens alone and cuts the text before them
    into at most FAR_SPANS spans; the CSV has one row per source, with the engine's values."""
    out = tmp_path / "why.csv"
    args = ["--model", gpt2_dir, "--device", "cpu", "--text", TEXT, "--position", "-1", "--detail", "3"]
    p = ok(*args, "--format", "csv", "--out", str(out))
    assert p.stdout == "" and "wrote" in p.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    r = score_text(gpt2, TEXT, 1)
    here = attribute(gpt2, r, r.n - 1, detail=3)
    assert len(rows) == here.n == min(FAR_SPANS, r.n - 1 - 3) + 3
    assert [(int(w["start"]), int(w["end"])) for w in rows] == [tuple(s) for s in here.spans.tolist()]
    assert [(int(w["start"]), int(w["end"])) for w in rows[-3:]] == [
        (r.n - 4, r.n - 3),
        (r.n - 3, r.n - 2),
        (r.n - 2, r.n - 1),
    ]
    np.testing.assert_allclose([float(w["value"]) for w in rows], here.values, rtol=0, atol=1e-6)
    assert sorted(int(w["rank"]) for w in rows) == list(range(1, len(rows) + 1))
    ids = r.token_ids.tolist()
    far = [u for u, (a, b) in enumerate(here.spans.tolist()) if b - a > 1]  # merged spans, each left out whole
    assert len(far) >= 2
    by_hand = occlusion_by_hand(gpt2, ids, r.n - 1, [here.spans[u].tolist() for u in far], ids[-1], None)
    np.testing.assert_allclose([float(rows[u]["value"]) for u in far], by_hand, rtol=0, atol=1e-4)
    body = json.loads(ok(*args).stdout)  # the same as JSON
    assert len(body["sources"]) == len(rows) and body["target"]["position"] == r.n - 1 and body["contrast"] is None


@pytest.mark.parametrize(
    ("method", "extra"),
    [
        ("ig", ["--steps", "8"]),
        ("gxi", []),
        ("attention", ["--layers", "2"]),
        ("occlusion", ["--mode", "replace"]),
    ],
)
def test_methods_words_llama(llama_dir, llama, method, extra):
    """Every method on the byte-fallback Llama (a BOS first), per word, with a contrast by id: the CLI gives what the
    engine gives in this process."""
    r = score_text(llama, WORDY, 1)
    pos = r.n - 1
    contrast = int(r.token_ids[pos - 2])  # a token of the text, not the target
    args = ["--model", llama_dir, "--device", "cpu", "--text", WORDY, "--position", str(pos), "--units", "word"]
    body = json.loads(ok(*args, "--method", method, "--contrast", f"#{contrast}", *extra).stdout)
    kw = {"ig": {"steps": 8}, "attention": {"layers": 2}, "occlusion": {"mode": "replace"}}.get(method, {})
    here = attribute(llama, r, pos, contrast=contrast, method=method, units="word", detail=DETAIL, **kw)
    assert body["method"] == method and body["contrast"]["token_id"] == contrast
    assert body["sources"][0]["text"] == "<s>" and body["sources"][0]["special"] is True
    assert [s["span"] for s in body["sources"]] == here.spans.tolist() and here.n < pos  # words, not tokens
    np.testing.assert_allclose(values(body), here.values, rtol=0, atol=1e-6)
    assert np.abs(here.values).max() > 1e-6
    if method == "ig":
        assert body["settings"]["steps"] == 8 and body["completeness_gap"] is not None
    if method == "occlusion":  # the text with one word's tokens replaced by the neutral token, scored here
        ids, n = r.token_ids.tolist(), body["settings"]["neutral_id"]
        u = next(u for u, (a, b) in enumerate(here.spans.tolist()) if b - a > 2)  # ` Parisian`: 5 tokens
        a, b = here.spans[u].tolist()
        f = f_of(llama, ids[:pos], ids[pos], contrast)
        f_u = f_of(llama, ids[:a] + [n] * (b - a) + ids[b:pos], ids[pos], contrast)
        assert body["sources"][u]["value"] == pytest.approx(f - f_u, abs=1e-4) and abs(f - f_u) > 1e-4


def test_occlusion_on_llamacpp(tiny_gguf_dir, tiny_gguf):
    """The llama.cpp engine (occlusion is its one method): by --ids, against the text scored without each token."""
    ids = tiny_gguf.encode(TEXT)
    gguf = os.path.join(tiny_gguf_dir, "gguf", "tiny-llama.gguf")
    p = ok("--model", gguf, "--ids", ",".join(map(str, ids)), "--position", "8", "--detail", "0")
    body = json.loads(p.stdout)
    assert body["token_ids"] == ids[:9]
    by_hand = occlusion_by_hand(tiny_gguf, ids, 8, [(u, u + 1) for u in range(8)], ids[8], None)
    np.testing.assert_allclose(values(body), by_hand, rtol=0, atol=1e-3)
    assert np.abs(by_hand).max() > 1e-2
    p = run("--model", gguf, "--ids", ",".join(map(str, ids)), "--position", "8", "--method", "ig")
    assert "Integrated gradients needs the model's hidden states" in last_line(p) and "occlusion works" in last_line(p)


def test_help_says_the_default_detail(capsys):
    """The parser imports no torch, so its help writes the engine's default detail as a number: it must be DETAIL."""
    from explorer.cli import parser

    with pytest.raises(SystemExit):
        parser().parse_args(["why", "--help"])
    assert f"(default: {DETAIL}, as on the page" in " ".join(capsys.readouterr().out.split())


def last_line(p: subprocess.CompletedProcess) -> str:
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    assert "Traceback" not in p.stderr
    line = p.stderr.strip().splitlines()[-1]
    assert line.startswith("error:"), p.stderr
    return line


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--position", "0"], "--position 0"),
        ([], "--position"),
        (["--position", "1", "--method", "shap"], "`method` must be one of"),
        (["--position", "1", "--units", "sentence"], "`units` must be one of"),
        (["--position", "1", "--method", "shap", "--steps", "8"], "`method` must be one of"),
        (["--position", "1", "--method", "ig", "--steps", "1"], "`steps` must be a whole number from 2"),
        (["--position", "1", "--steps", "8"], "--steps applies to --method ig"),
        (["--position", "1", "--detail", "-1"], "`detail` must be a whole number from 0"),
        (["--position", "1", "--mode", "blank"], "`mode` must be one of"),
        (["--position", "1", "--neutral", "#0"], "--neutral"),
        (["--position", "1", "--contrast", ""], "--contrast is empty"),
        (["--position", "1", "--contrast", "#x1"], "--contrast '#x1'"),
        (["--position", "1", "--out", "/nonexistent/dir/o.json"], "does not exist"),
    ],
)
def test_arguments_are_checked_before_the_model_loads(args, needle, capsys):
    """A model that does not exist: the argument's message comes first, so nothing was loaded (the CLI's own main,
    in this process: no model, so no process of its own is needed)."""
    from explorer.cli import main

    assert main(["why", "--model", "/nonexistent/model", "--text", TEXT, *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and needle in err[0], err


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--position", "16"], "--position 16 is outside the text: it has 16 tokens"),
        (["--position", "-16"], "--position -16 is outside"),
        (
            ["--position", "3", "--contrast", " Paris" * 40],
            "--contrast is 80 tokens ( Pa|ris| Pa|ris| Pa|ris| Pa|ris|…); at most 64",
        ),
        (["--position", "3", "--contrast", " France"], "--contrast ` France` is the target itself"),
        (["--position", "3", "--contrast", "#100000"], "--contrast #100000 is outside the vocabulary"),
        (["--position", "3", "--target", " Italy"], "--target ` Italy` is not the token at position 3"),
        (["--target", " Berlin"], "--target ` Berlin` is no token of the text"),
    ],
)
def test_bad_input_with_the_model(gpt2_dir, gpt2, args, needle):
    assert score_text(gpt2, TEXT, 1).n == 16 and len(gpt2.tokenize(" Paris", add_special_tokens=False)) == 2
    line = last_line(run("--model", gpt2_dir, "--device", "cpu", "--text", TEXT, *args))
    assert needle in line


@pytest.mark.parametrize(("units", "text", "pos"), [("word", TEXT, -1), ("token", TEXT + " " + TEXT, 17)])
def test_occlusion_of_a_last_unit_alone_in_its_block(gpt2, units, text, pos):
    """Word units (the last word is often of its own length) and token units at position 16k + 1 (the last block of 16
    is that one token): the unit right before the target, left out, leaves the cached text itself."""
    r = score_text(gpt2, text, 1)
    pos = pos % r.n
    here = attribute(gpt2, r, pos, units=units, detail=0)
    ids = r.token_ids.tolist()
    np.testing.assert_allclose(
        here.values, occlusion_by_hand(gpt2, ids, pos, here.spans.tolist(), ids[pos], None), atol=1e-4
    )
