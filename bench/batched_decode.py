"""Batched decoding against one request after another, on one model in one process (explorer/engine/batching/slots.py).

    python bench/batched_decode.py [--model M] [--rows 8] [--tokens 64] [--pairs 3]

`rows` greedy requests (prompts of different lengths, top-5 logprobs, EOS ignored so each makes `tokens` tokens):
A runs them one after another through `generate`, B as one DecodeBatch. A and B alternate after a warm-up; prints the
median tokens/s of each, the median of the per-pair ratios B / A, and the largest logprob difference between them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

from explorer.engine import TorchEngine, generate
from explorer.engine.batching.slots import DecodeBatch
from explorer.rules.sampler import SamplerSettings

TEXT = "The capital of France is Paris. The capital of Italy is Rome. Logprobs tell you what the model expected. "


def serial(engine, prompts, s) -> list[np.ndarray]:
    """Each request alone: its generated tokens' logprobs."""
    out = []
    for ids in prompts:
        r = generate(engine, ids, s)[0]
        out.append(r.logprobs[r.n_prompt :])
    return out


def batched(engine, prompts, s) -> list[np.ndarray]:
    """All requests in one DecodeBatch: each one's generated tokens' logprobs."""
    batch = DecodeBatch(engine)
    slots = [batch.add(ids, s, want_prompt=False) for ids in prompts]
    got: dict[int, list[float]] = {id(sl): [] for sl in slots}
    while len(batch):
        for sl, tok in batch.step():
            got[id(sl)].append(float(tok.rows.logprobs[0]))
    return [np.array(got[id(sl)], np.float32) for sl in slots]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None)
    ap.add_argument("--rows", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--pairs", type=int, default=3)
    a = ap.parse_args()
    engine = TorchEngine.load(a.model, device="cpu")
    words = TEXT.split()
    prompts = [engine.encode(" ".join(words[: 3 + 2 * i])) for i in range(a.rows)]
    s = SamplerSettings(max_tokens=a.tokens, temperature=0, logprobs=5, ignore_eos=True)
    n = a.rows * a.tokens
    serial(engine, prompts[:1], s), batched(engine, prompts[:2], s)  # warm-up
    rates: dict[str, list[float]] = {"serial": [], "batched": []}
    diff = 0.0
    for _ in range(a.pairs):
        results = {}
        for name, fn in (("serial", serial), ("batched", batched)):
            t = time.perf_counter()
            results[name] = fn(engine, prompts, s)
            rates[name].append(n / (time.perf_counter() - t))
        diff = max([diff] + [float(np.abs(x - y).max()) for x, y in zip(results["serial"], results["batched"])])
    ratio = statistics.median(b / s for s, b in zip(rates["serial"], rates["batched"]))
    print(f"{engine.name}: {a.rows} x {a.tokens} greedy tokens, top-5 logprobs, {a.pairs} pairs")
    for name, r in rates.items():
        print(f"  {name}: median {statistics.median(r):.1f} tokens/s  (each: {', '.join(f'{x:.1f}' for x in r)})")
    print(f"  batched / serial: median {ratio:.2f}x; largest logprob difference {diff:.2e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
