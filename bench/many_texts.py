"""Many short texts against minicons (#54): texts per second, side by side on the same sentences, and 100,000 texts
through `logprob-explorer batch` in bounded memory.

Sides, each a subprocess on the same thread count (OMP_NUM_THREADS and torch.set_num_threads), run alternately
`--rounds` times (medians, and the median of the per-round ratios ours / minicons):
- `seq`: ours `lm.score_many(texts, stats=False)` (the sums: what minicons gives) and `seq_full` (every statistic:
  ranks, entropy, the text statistics) against minicons 0.3.39
  `scorer.IncrementalLMScorer(folder).sequence_score(batch of 32)`;
- `words`: ours `lm.word_table(texts, context_start="bos")` (per-word surprisal, summed and corrected) against
  minicons' `word_score_tokenized(batch of 32, str.split, bow_correction=True, bos_token=True)`.
Models: the tiny GPT-2 the tests build (tests/helpers/tiny.py) and SmolLM2-135M through torch (the default GGUF
de-quantized by transformers: our torch twin; minicons reads the same weights from the converted folder).
minicons runs in a venv of its own (.minicons-venv: python3 -m venv .minicons-venv &&
.minicons-venv/bin/pip install torch==2.13.0 && .minicons-venv/bin/pip install minicons==0.3.39).

Then `--big` short texts through `python -m explorer batch FILE --format csv --sums-only --out ...` on the tiny
GPT-2: wall time and the child's peak RSS (wait4).

    python bench/many_texts.py [--threads 1] [--rounds 3] [--n 1000] [--big 100000] [--skip-smollm] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MINICONS = ROOT / ".minicons-venv" / "bin" / "python"
BATCH = 32  # minicons' batch

SUBJECTS = ["The cat", "A teacher", "My neighbour", "The old man", "A small bird", "The students", "Her brother",
            "The doctor", "Our team", "The child", "A farmer", "The author"]  # fmt: skip
VERBS = ["saw", "wrote about", "walked past", "thought of", "found", "painted", "talked to", "waited for", "liked",
         "remembered"]  # fmt: skip
OBJECTS = ["the river", "a long letter", "the city", "its reflection", "the quiet morning", "an empty house",
           "the red car", "a strange dog", "the garden", "the last train", "a friend", "the market"]  # fmt: skip
ENDS = [".", " yesterday.", " again.", " in the rain.", " after lunch.", " at night."]


def sentences(n: int, seed: int = 0) -> list[str]:
    """n short sentences (5-12 words), the same for every side."""
    rng = random.Random(seed)
    return [f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}{rng.choice(ENDS)}" for _ in range(n)]


# ---- the workers (one subprocess each; minicons' in its own venv) ---------------------------------------------------
def _ours(model: str, task: str, texts: list[str]) -> float:
    sys.path.insert(0, str(ROOT))
    from explorer.engine import TorchEngine
    from explorer.notebook.lm import LM

    lm = LM(TorchEngine.load(None if model == "default" else model, device="cpu", dtype="float32"))

    def once(part: list[str]) -> None:
        if task == "words":
            lm.word_table(part, context_start="bos")
        else:
            lm.score_many(part, stats=task == "seq_full")

    once(texts[:64])  # warm-up
    t = time.perf_counter()
    once(texts)
    return time.perf_counter() - t


def _minicons(model: str, task: str, texts: list[str]) -> float:
    from minicons import scorer

    lm = scorer.IncrementalLMScorer(model, "cpu")

    def once(part: list[str]) -> None:
        for a in range(0, len(part), BATCH):
            batch = part[a : a + BATCH]
            if task == "words":
                lm.word_score_tokenized(batch, str.split, bow_correction=True, bos_token=True)
            else:
                lm.sequence_score(batch)

    once(texts[:64])
    t = time.perf_counter()
    once(texts)
    return time.perf_counter() - t


def worker(side: str, model: str, task: str, n: int, threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    texts = sentences(n)
    seconds = (_ours if side == "ours" else _minicons)(model, task, texts)
    print(json.dumps({"seconds": seconds, "texts": n, "threads": torch.get_num_threads()}))


# ---- the driver ----------------------------------------------------------------------------------------------------
def _run(side: str, model: str, task: str, n: int, threads: int) -> float:
    python = sys.executable if side == "ours" else str(MINICONS)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT))
    cmd = [python, str(Path(__file__).resolve()), "--worker", side, model, task, str(n), "--threads", str(threads)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{side} {task} failed:\n{out.stderr[-3000:]}")
    d = json.loads(out.stdout.strip().splitlines()[-1])
    return d["texts"] / d["seconds"]


def compare(name: str, ours_model: str, their_model: str, tasks: list[str], a: argparse.Namespace) -> dict:
    """Each task: ours and minicons alternately, `rounds` times; texts/s medians and the per-round ratio."""
    out: dict = {}
    for task in tasks:
        theirs_task = "seq" if task == "seq_full" else task
        ours, theirs = [], []
        for _ in range(a.rounds):
            ours.append(_run("ours", ours_model, task, a.n, a.threads))
            theirs.append(_run("minicons", their_model, theirs_task, a.n, a.threads))
            print(f"{name} {task}: ours {ours[-1]:.1f} texts/s, minicons {theirs[-1]:.1f}", flush=True)
        ratios = [o / t for o, t in zip(ours, theirs)]
        out[task] = {
            "ours_texts_per_s": ours,
            "minicons_texts_per_s": theirs,
            "ours_median": statistics.median(ours),
            "minicons_median": statistics.median(theirs),
            "ratio_median": statistics.median(ratios),
        }
        print(f"{name} {task}: ratio {out[task]['ratio_median']:.2f}x (median of {a.rounds})", flush=True)
    return out


def big(model_dir: str, n: int, threads: int, folder: str) -> dict:
    """n short texts through `python -m explorer batch --format csv --sums-only`: seconds and peak RSS (MB)."""
    path = Path(folder) / "big.txt"
    path.write_text("\n".join(sentences(n, seed=1)), encoding="utf-8")
    out = Path(folder) / "big.csv"
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "explorer", "batch", str(path), "--model", model_dir, "--device", "cpu",
           "--format", "csv", "--sums-only", "--out", str(out)]  # fmt: skip
    t = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    seconds = time.perf_counter() - t
    err = p.stderr.read().decode() if p.stderr else ""
    if status != 0:
        raise RuntimeError(f"batch failed: {err[-2000:]}")
    with open(out, encoding="utf-8") as f:
        rows = sum(1 for _ in f) - 1
    rss_mb = usage.ru_maxrss / 1024  # KB on Linux
    print(f"big: {rows} texts in {seconds:.0f} s ({rows / seconds:.0f} texts/s), peak RSS {rss_mb:.0f} MB", flush=True)
    return {"texts": rows, "seconds": seconds, "texts_per_s": rows / seconds, "peak_rss_mb": rss_mb}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", nargs=4, metavar=("SIDE", "MODEL", "TASK", "N"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--big", type=int, default=100_000, help="texts through `batch` (0: skip)")
    ap.add_argument("--skip-smollm", action="store_true")
    ap.add_argument("--skip-tiny", action="store_true")
    ap.add_argument("--tasks", default="seq,seq_full,words", help="comma-separated: seq, seq_full, words")
    ap.add_argument("--out", help="write the figures here as JSON")
    a = ap.parse_args()
    if a.worker:
        side, model, task, n = a.worker
        worker(side, model, task, int(n), a.threads)
        return 0
    if not MINICONS.exists():
        print(f"no minicons venv at {MINICONS}: see this file's docstring", file=sys.stderr)
        return 2
    sys.path.insert(0, str(ROOT))
    from tests.helpers.tiny import byte_level_tokenizer, save, tiny_gpt2

    load = os.getloadavg()
    result: dict = {"threads": a.threads, "texts": a.n, "rounds": a.rounds, "load_before": load}
    with tempfile.TemporaryDirectory() as folder:
        tok = byte_level_tokenizer()
        tiny = save(tiny_gpt2(tok, seed=0, scale=20), tok, Path(folder) / "tiny-gpt2")
        tasks = a.tasks.split(",")
        if not a.skip_tiny:
            result["tiny_gpt2"] = compare("tiny-gpt2", tiny, tiny, tasks, a)
        if not a.skip_smollm:
            from explorer.config import engine_options
            from explorer.engine.local.loading import converted_default_dir

            folder_hf = str(converted_default_dir(engine_options().cache))
            result["smollm2_135m"] = compare("SmolLM2-135M", "default", folder_hf, tasks, a)
        if a.big:
            result["big"] = big(tiny, a.big, a.threads, folder)
    result["load_after"] = os.getloadavg()
    if a.out:
        Path(a.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
