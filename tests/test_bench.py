"""bench/run.py runs end to end (on a tiny model) and prints every figure as a number."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # compiles / runs the bench script: the full tier only

FIGURES = [
    "score_overhead",
    "gen_overhead",
    "gen_vs_hf_scores",
    "score_mem_ratio",
    "chunk_invariance",
    "full_vocab_json_mb_per_pos",
    "full_vocab_bin_kb_per_pos",
    "full_vocab_bin_mbps",
    "html_bytes_per_token",
    "render_ms_5k",
    "full_vocab_api_mbps",
    "full_vocab_api_peak_mb",
    "api_latency_under_load_ms",
    "lens_ms_per_layer_token",
    "branch_reuse",
    "compare_overhead",
    "compare_mem_ratio",
    "why_occlusion_vs_score",
    "why_occlusion_detail_vs_score",
    "why_ig_ms_per_step",
    "why_ig_step_vs_score",
    "why_occlusion_512_s",
    "remote_overhead",
    "ours_gen_vs_serial",
    "ours_score_vs_serial",
    "ours_gen_cpu_s_per_request",
]


def test_bench_quick_json(gpt2_dir):
    script = Path(__file__).resolve().parents[1] / "bench" / "run.py"
    p = subprocess.run(
        [sys.executable, str(script), "--model", gpt2_dir, "--device", "cpu", "--quick", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "BENCH_VLLM": "0"},  # no real vLLM on the tiny model (minutes to start)
    )
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    for name in FIGURES:
        assert isinstance(out[name], (int, float)) and math.isfinite(out[name]), name
    assert out["chunk_ids_ranks_identical"] == 1.0 and out["gen_same_tokens"] == 1.0
    assert out["ours_gen_errors"] == out["ours_score_errors"] == 0 and out["ours_gen_vs_serial"] > 0
    assert out["full_vocab_bin_bytes_per_pos"] == 2 * out["vocab_size"]  # float16 rows in vocabulary order
    assert 0 < out["branch_reuse"] < 0.5 and out["branch_positions_computed"] < out["branch_text_positions"]
    assert (
        out["why_occlusion_vs_score"] > 1 and out["why_positions"] == 64
    )  # every token left out costs more than one pass
