"""`make gpu-check` (bench/gpu_check.py): without a GPU it says what it skipped and exits 0; its steps run (on the
CPU, small) and their figures hold the bounds they state."""

from __future__ import annotations

import importlib.util
import json

import pytest

from tests.helpers.repo import ROOT


def gpu_check():
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "bench" / "gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_without_a_gpu_it_says_what_it_skipped(monkeypatch, capsys):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert gpu_check().main([]) == 0
    out = capsys.readouterr().out
    assert "skipped" in out and "bfloat16" in out and "--device cpu --small" in out


@pytest.mark.slow
def test_its_steps_run_and_hold_their_bounds(tmp_path):
    out = tmp_path / "gpu.json"
    assert gpu_check().main(["--device", "cpu", "--small", "--out", str(out)]) == 0
    f = json.loads(out.read_text())
    assert f["parity"]["f32_device_vs_cpu_max_abs"] == 0.0  # the CPU against itself: the check compares like things
    assert 0 < f["parity"]["bf16_vs_f32_max_abs"] <= 0.1 and f["within_bounds"] is True
    assert f["speed"]["score_vs_bare"] > 0 and f["speed"]["gen_tok_s"] > 0


def test_the_zerogpu_step_runs_the_tier_and_reads_whether_its_cuda_test_ran(monkeypatch):
    """On a GPU the check runs `pytest -m zerogpu` in a fresh process: its command, and what it reads of the output
    (a skip saying "needs a real CUDA device" means the device was not behind it)."""
    import subprocess

    module = gpu_check()
    seen: list = []

    def fake(cmd, **kw):
        seen.append(cmd)
        out = "SKIPPED [1] tests/test_zerogpu.py:123: needs a real CUDA device\n30 passed, 1 skipped in 60s\n"
        return subprocess.CompletedProcess(cmd, 0, out, "")

    monkeypatch.setattr(subprocess, "run", fake)
    got = module.zerogpu_tier()
    assert seen and seen[0][-5:] == ["-m", "zerogpu", "-p", "no:cacheprovider", "tests"]
    assert got == {"returncode": 0, "summary": "30 passed, 1 skipped in 60s", "cuda_test_ran": False}
    monkeypatch.setattr(subprocess, "run", lambda cmd, **kw: subprocess.CompletedProcess(cmd, 1, "1 failed\n", ""))
    assert module.zerogpu_tier() == {"returncode": 1, "summary": "1 failed", "cuda_test_ran": True}
