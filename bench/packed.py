"""oneDNN's packed linear layers (explorer/engine/local/packed.py) against PyTorch's own F.linear, on one model folder in one
process: the same model loaded twice, EXPLORER_ONEDNN=0 (A, as before) and packed (B), alternating after a warm-up.

Three loads: scoring a 222-token text with top-5 (`score`), one generation of 64 greedy tokens (`gen`), 8 of them
in one Batch (`batch8`, a full batch's decode steps). Prints tokens/s, the median of the per-pair ratios B / A and
the largest logprob difference between A and B.

    python bench/packed.py [--model FOLDER] [--pairs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from bench.batched_decode import TEXT, batched, serial
from bench.concurrent_group import PARAGRAPH
from explorer.engine import TorchEngine
from explorer.rules.sampler import SamplerSettings


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None, help="default: the default model's folder (float32)")
    ap.add_argument("--pairs", type=int, default=3)
    a = ap.parse_args()
    os.environ["EXPLORER_ONEDNN"] = "0"
    plain = TorchEngine.load(a.model, device="cpu", dtype="float32")
    os.environ["EXPLORER_ONEDNN"] = "1"
    packed = TorchEngine.load(a.model, device="cpu", dtype="float32")
    print(f"{packed.name}: {packed.packed_mb:.0f} MB of weights packed (A: {plain.packed_mb:.0f})")
    text = plain.encode(PARAGRAPH * 3)[:223]
    words = TEXT.split()
    prompts = [plain.encode(" ".join(words[: 3 + 2 * i])) for i in range(8)]
    s = SamplerSettings(max_tokens=64, temperature=0, logprobs=5, ignore_eos=True)
    loads = {
        "score": (222, lambda e: [e.score(text, 5).rows.logprobs[1:]]),
        "gen": (64, lambda e: serial(e, prompts[:1], s)),
        "batch8": (8 * 64, lambda e: batched(e, prompts, s)),
    }
    for e in (plain, packed):  # warm-up
        loads["score"][1](e), serial(e, prompts[:1], SamplerSettings(max_tokens=4, temperature=0, logprobs=5))
    for name, (n, fn) in loads.items():
        rates: dict[str, list[float]] = {"A": [], "B": []}
        diff = 0.0
        for _ in range(a.pairs):
            out = {}
            for side, e in (("A", plain), ("B", packed)):
                t = time.perf_counter()
                out[side] = fn(e)
                rates[side].append(n / (time.perf_counter() - t))
            diff = max(
                [diff] + [float(np.abs(np.asarray(x) - np.asarray(y)).max()) for x, y in zip(out["A"], out["B"])]
            )
        ratio = statistics.median(b / x for x, b in zip(rates["A"], rates["B"]))
        each = {k: ", ".join(f"{r:.1f}" for r in v) for k, v in rates.items()}
        print(f"  {name}: F.linear {statistics.median(rates['A']):.1f} tokens/s ({each['A']}); packed "
              f"{statistics.median(rates['B']):.1f} ({each['B']}); B/A median {ratio:.2f}x; "
              f"largest logprob difference {diff:.2e}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
