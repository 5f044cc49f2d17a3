"""`make gpu-check`: what a machine with a GPU checks first, in a few minutes, with what travels in the tree.

Where no CUDA device is found it says so, lists what it would have run, and exits 0. Where one is:

1. the device: torch's version, the GPU's name and memory;
2. the torch engine's numbers on the GPU against the CPU's, float32, on a tiny random Llama (every logprob within
   1e-4 nats, every rank equal up to ties), and bfloat16 on the GPU against float32 there (within 0.1 nats: bfloat16
   keeps 8 bits of mantissa);
3. a random Llama of about 0.5B parameters in bfloat16 (no weights come from the hub on such a machine: the
   default model's tokenizer where it is installed, else the tests' tiny one): scoring 512 tokens and generating 64
   through the engine against a bare transformers forward / greedy loop in the same run (the engine's overhead as a
   ratio, as bench/run.py measures it on the CPU);
4. on CUDA, the ZeroGPU tier (`pytest -m zerogpu`) with the real device behind it (tests/test_zerogpu.py: the worker
   test that skips on a CPU runs here).

It writes its figures to bench/results-gpu-<date>.json (or --out) for bench/RESULTS.md. `--device cpu --small` runs
the same steps on the CPU with small sizes: a dry run of this script, not a GPU figure.

    python bench/gpu_check.py [--device cuda] [--out FILE] [--small]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PLAN = [
    "the device: torch, the GPU's name and memory",
    "float32 on the GPU against the CPU on a tiny random Llama (logprobs within 1e-4 nats, ranks equal)",
    "bfloat16 against float32 on the GPU (within 0.1 nats)",
    "a ~0.5B random Llama in bfloat16: scoring 512 tokens and generating 64, the engine against bare transformers",
    "the ZeroGPU tier (pytest -m zerogpu) with the real CUDA device behind it: its worker test runs instead of skipping",
]
ZEROGPU_S = 240  # the tier's own limit within the check's 8 minutes


def zerogpu_tier() -> dict:
    """`pytest -m zerogpu` as a subprocess (the `spaces` package's fork wants a fresh process): its summary line, exit
    status and whether the test that needs a CUDA device ran rather than skipped."""
    import os
    import subprocess

    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False"}
    cmd = [sys.executable, "-m", "pytest", "-q", "-rs", "-m", "zerogpu", "-p", "no:cacheprovider", "tests"]
    try:
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=ZEROGPU_S)
    except subprocess.TimeoutExpired:
        return {"returncode": None, "summary": f"stopped after {ZEROGPU_S} s", "cuda_test_ran": False}
    lines = done.stdout.strip().splitlines()
    return {
        "returncode": done.returncode,
        "summary": lines[-1] if lines else done.stderr.strip()[-300:],
        "cuda_test_ran": "needs a real CUDA device" not in done.stdout,
    }


def tokenizer():
    """The default model's tokenizer where installed (its real vocabulary), else the tests' tiny byte-level one."""
    from transformers import AutoTokenizer

    try:
        from explorer.config import engine_options
        from explorer.engine.local.loading import converted_default_dir

        folder = converted_default_dir(engine_options().cache)
        return AutoTokenizer.from_pretrained(str(folder)), "SmolLM2's tokenizer (49,152 tokens)"
    except Exception:  # noqa: BLE001 - no default model here: the tests' own
        from tests.helpers.tiny import byte_level_tokenizer

        return byte_level_tokenizer(), "the tests' tiny byte-level tokenizer"


def random_llama(tok, hidden: int, layers: int, seed: int = 0):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    heads = max(hidden // 64, 2)
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=hidden,
        intermediate_size=int(hidden * 2.75) // 16 * 16,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=max(heads // 4, 1),
        max_position_embeddings=2048,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(cfg)
    with torch.no_grad():
        model.lm_head.weight.mul_(30 / max(hidden / 32, 1) ** 0.5)  # distributions that are not flat
    return model


def saved(model, tok, folder: Path) -> str:
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return str(folder)


def parity(folder: str, device: str, text: str) -> dict:
    """Scores on `device` against the CPU (float32) and bfloat16 against float32 on `device`."""
    import numpy as np

    from explorer.engine import TorchEngine, score_text

    runs = {}
    for where, dtype in (("cpu", "float32"), (device, "float32"), (device, "bfloat16")):
        e = TorchEngine.load(folder, device=where, dtype=dtype, compile=False)
        r = score_text(e, text, k=5)
        runs[(where, dtype)] = (r.logprobs[1:].astype(np.float64), r.ranks[1:])
    (lp_cpu, rk_cpu), (lp_dev, rk_dev) = runs[("cpu", "float32")], runs[(device, "float32")]
    lp_bf, _ = runs[(device, "bfloat16")]
    return {
        "positions": len(lp_cpu),
        "f32_device_vs_cpu_max_abs": float(np.max(np.abs(lp_dev - lp_cpu))),
        "f32_ranks_equal_fraction": float(np.mean(rk_dev == rk_cpu)),
        "bf16_vs_f32_max_abs": float(np.max(np.abs(lp_bf - lp_dev))),
        "bounds": {"f32": 1e-4, "bf16": 0.1},
    }


def timed(fn, repeats: int) -> float:
    import torch

    fn()  # warm-up
    out = []
    for _ in range(repeats):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def speed(folder: str, device: str, n_score: int, n_gen: int, repeats: int) -> dict:
    """The engine's scoring and greedy generation against bare transformers, in the same process."""
    import torch

    from explorer.engine import TorchEngine, generate, score_ids
    from explorer.rules.sampler import SamplerSettings

    e = TorchEngine.load(folder, device=device, dtype="bfloat16", compile=False)
    ids = [int(i) for i in torch.randint(5, e.vocab_size, (n_score,), generator=torch.Generator().manual_seed(0))]
    x = torch.tensor([ids], device=e.device)

    @torch.inference_mode()
    def bare_score():
        torch.log_softmax(e.model(x).logits.float(), -1)

    @torch.inference_mode()
    def bare_greedy():
        e.model.generate(x[:, :16], max_new_tokens=n_gen, min_new_tokens=n_gen, do_sample=False)

    s = SamplerSettings(max_tokens=n_gen, temperature=0, logprobs=5, ignore_eos=True)
    ours_score = timed(lambda: score_ids(e, ids, k=5), repeats)
    ours_gen = timed(lambda: generate(e, ids[:16], s), repeats)
    base_score, base_gen = timed(bare_score, repeats), timed(bare_greedy, repeats)
    params = sum(p.numel() for p in e.model.parameters())
    return {
        "params_millions": round(params / 1e6, 1),
        "score_tokens": n_score,
        "score_s": round(ours_score, 4),
        "score_bare_s": round(base_score, 4),
        "score_vs_bare": round(ours_score / base_score, 2),
        "gen_tokens": n_gen,
        "gen_tok_s": round(n_gen / ours_gen, 1),
        "gen_bare_tok_s": round(n_gen / base_gen, 1),
        "gen_vs_bare": round(base_gen / ours_gen, 2),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default=None, help="default: cuda where there is one")
    ap.add_argument("--out", default=None, help=f"default: bench/results-gpu-{date.today()}.json")
    ap.add_argument("--small", action="store_true", help="small sizes: a dry run of the script (on the CPU)")
    a = ap.parse_args(argv)
    import torch

    device = a.device or ("cuda" if torch.cuda.is_available() else None)
    if device is None:
        print("gpu-check: no CUDA device here (torch.cuda.is_available() is False): skipped. On a GPU it runs:")
        for i, step in enumerate(PLAN, 1):
            print(f"  {i}. {step}")
        print("A dry run on this CPU: python bench/gpu_check.py --device cpu --small")
        return 0
    figures: dict = {"date": str(date.today()), "device": device, "torch": torch.__version__}
    if device.startswith("cuda"):
        p = torch.cuda.get_device_properties(0)
        figures["gpu"] = {"name": p.name, "memory_gb": round(p.total_memory / 2**30, 1)}
    tok, which = tokenizer()
    figures["tokenizer"] = which
    text = "The quick brown fox jumps over the lazy dog. " * (2 if a.small else 8)
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        tiny = saved(random_llama(tok, 64, 2, seed=1), tok, Path(tmp) / "tiny")
        figures["parity"] = parity(tiny, device, text)
        hidden, layers = (128, 2) if a.small else (1280, 24)
        big = saved(random_llama(tok, hidden, layers), tok, Path(tmp) / "big")
        figures["speed"] = speed(big, device, 64 if a.small else 512, 8 if a.small else 64, 2 if a.small else 5)
        figures["speed"]["model"] = f"a random Llama, hidden {hidden}, {layers} layers, {which}, bfloat16"
    if device.startswith("cuda"):  # on the CPU dry run the tier is CI's own (make test)
        figures["zerogpu"] = zerogpu_tier()
    figures["seconds"] = round(time.perf_counter() - t, 1)
    ok = figures["parity"]["f32_device_vs_cpu_max_abs"] <= 1e-4 and figures["parity"]["bf16_vs_f32_max_abs"] <= 0.1
    ok = ok and figures.get("zerogpu", {}).get("returncode", 0) == 0
    figures["within_bounds"] = ok
    out = Path(a.out or ROOT / "bench" / f"results-gpu-{date.today()}.json")
    out.write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))
    print(f"gpu-check: {'within' if ok else 'OUTSIDE'} the bounds; figures in {out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
