"""Several texts a llama_decode on the llama.cpp engine (explorer/engine/llamacpp/texts.py, #54): the same short
sentences scored by `score_prompts` (texts of one length together, a KV sequence each) and one at a time
(`score_ids`, the engine's own context), alternately `--rounds` times in one process on the default GGUF; the
median of the per-round ratios (alone / together) and the largest logprob difference between the two.

    python bench/llamacpp_texts.py [--n 96] [--rounds 3] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from explorer.engine import score_ids, score_prompts
from explorer.engine.llamacpp.engine import LlamaCppEngine
from explorer.engine.llamacpp.gguf import default_file

SUBJECTS = ["The cat", "A teacher", "My neighbour", "The old man", "A small bird", "The students"]
VERBS = ["sat on", "looked at", "wrote about", "ran past"]
OBJECTS = ["the table.", "the old barn.", "a red car.", "the river bank."]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=96)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()
    engine = LlamaCppEngine(default_file(), device="cpu", threads=a.threads)
    texts = [f"{s} {v} {o}" for s in SUBJECTS for v in VERBS for o in OBJECTS][: a.n]
    seqs = [engine.encode(t) for t in texts]
    score_prompts(engine, seqs[:4], 0)  # the texts' context made and warm
    ratios, worst, times = [], 0.0, {"together": [], "alone": []}
    for _ in range(a.rounds):
        t0 = time.perf_counter()
        together = score_prompts(engine, seqs, 0)
        t1 = time.perf_counter()
        alone = [score_ids(engine, s, k=0) for s in seqs]
        t2 = time.perf_counter()
        times["together"].append(t1 - t0)
        times["alone"].append(t2 - t1)
        ratios.append((t2 - t1) / (t1 - t0))
        worst = max(worst, *(float(np.abs(g.logprobs[1:] - s.logprobs[1:]).max()) for g, s in zip(together, alone)))
    print(json.dumps({
        "texts": len(seqs), "lengths": sorted({len(s) for s in seqs}), "threads": a.threads,
        "texts_per_s_together": len(seqs) / statistics.median(times["together"]),
        "texts_per_s_alone": len(seqs) / statistics.median(times["alone"]),
        "speedup_median": statistics.median(ratios), "max_abs_logprob_diff": worst,
    }, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
