"""Benchmarks: the cost of logprob capture as ratios against a baseline run in the same process.

    python bench/run.py [--model M] [--device D] [--quick] [--json]

Each timed figure alternates A and B after a warm-up and reports the median of
the per-pair ratios (and the minimum). The `api` group is absolute: the real
server in a thread of this process, one 64-token full-vocabulary JSON request
(MB/s, the process's RSS growth) and GET /v1/models latency while one runs.
`--json` prints one object whose keys are the figure names, each a number.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import weakref
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

from explorer.engine import Engine, generate, score_ids  # noqa: E402
from explorer.export import dumps, vllm  # noqa: E402
from explorer.export.native import full_vocab_npy  # noqa: E402
from explorer.settings import SamplerSettings  # noqa: E402


def sync(engine):
    if engine.device.type == "cuda":
        torch.cuda.synchronize()


def timed(engine, fn) -> float:
    sync(engine)
    t = time.perf_counter()
    fn()
    sync(engine)
    return time.perf_counter() - t


def paired(engine, a, b, pairs: int) -> dict:
    """Median and minimum of time(a) / time(b) over alternating pairs, after one warm-up each."""
    a(), b()
    ratios = []
    for i in range(pairs):
        if i % 2:
            tb, ta = timed(engine, b), timed(engine, a)
        else:
            ta, tb = timed(engine, a), timed(engine, b)
        ratios.append(ta / tb)
    return {"median": statistics.median(ratios), "min": min(ratios), "pairs": pairs}


class LiveBytes(TorchDispatchMode):
    """Peak bytes of tensors allocated while active (CPU or GPU): storages counted once, freed on death."""

    def __init__(self):
        super().__init__()
        self.live, self.peak, self.refs = 0, 0, {}

    def _drop(self, key, nbytes):
        self.refs[key] -= 1
        if self.refs[key] == 0:
            del self.refs[key]
            self.live -= nbytes

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else [out]:
            if isinstance(t, torch.Tensor):
                st = t.untyped_storage()
                key = st.data_ptr()
                if key not in self.refs:
                    self.refs[key] = 0
                    self.live += st.nbytes()
                    self.peak = max(self.peak, self.live)
                self.refs[key] += 1
                weakref.finalize(t, self._drop, key, st.nbytes())
        return out


def peak_bytes(engine, fn) -> int:
    if engine.device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        fn()
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() - base
    with LiveBytes() as m:
        fn()
    return m.peak


def ids_of(engine, n: int) -> list[int]:
    """n token ids of plain English text (repeated as needed; at most the model's context)."""
    n = min(n, engine.context)
    text_ids = engine.encode("The quick brown fox jumps over the lazy dog. " * (n // 8 + 1))
    return (text_ids * (n // len(text_ids) + 1))[:n]


@torch.inference_mode()
def score_figures(engine, quick: bool) -> dict:
    ids = ids_of(engine, 512)
    x = torch.tensor([ids], device=engine.device)
    bare = lambda: engine.model(input_ids=x).logits  # noqa: E731
    ours = lambda: score_ids(engine, ids, k=20)  # noqa: E731  (results on the host)
    r = paired(engine, ours, bare, 5 if quick else 11)
    return {"score_overhead": r["median"], "score_overhead_min": r["min"]}


@torch.inference_mode()
def gen_figures(engine, quick: bool) -> dict:
    prompt = engine.encode("The capital of France is")
    steps = min(32 if quick else 64, engine.context - len(prompt))
    x = torch.tensor([prompt], device=engine.device)
    gc = engine.model.generation_config
    eos, engine.eos_ids = engine.eos_ids, set()  # generate exactly `steps` tokens on both sides
    gen_eos, gc.eos_token_id = gc.eos_token_id, None
    try:
        s = SamplerSettings(max_tokens=steps, temperature=0, logprobs=20)
        ours = lambda: generate(engine, prompt, s)  # noqa: E731
        kw = dict(max_new_tokens=steps, do_sample=False, pad_token_id=0)
        hf = lambda: engine.model.generate(x, **kw)  # noqa: E731

        def hf_scores():
            out = engine.model.generate(x, **kw, output_scores=True, return_dict_in_generate=True)
            return engine.model.compute_transition_scores(out.sequences, out.scores, normalize_logits=True).cpu()

        same = ours()[0].token_ids.tolist() == hf()[0].tolist()
        pairs = 5 if quick else 9
        a = paired(engine, ours, hf, pairs)
        b = paired(engine, ours, hf_scores, pairs)
    finally:
        engine.eos_ids, gc.eos_token_id = eos, gen_eos
    return {"gen_overhead": a["median"], "gen_overhead_min": a["min"], "gen_vs_hf_scores": b["median"],
            "gen_vs_hf_scores_min": b["min"], "gen_same_tokens": float(same), "gen_steps": steps}


@torch.inference_mode()
def memory_figures(engine, quick: bool) -> dict:
    ids = ids_of(engine, 2048)
    n = len(ids)
    x = torch.tensor([ids], device=engine.device)
    body = peak_bytes(engine, lambda: engine.body(x))
    ours = peak_bytes(engine, lambda: score_ids(engine, ids, k=20))
    matrix = n * engine.vocab_size * 4
    return {"score_mem_ratio": max(0, ours - body) / matrix, "score_mem_positions": n}


@torch.inference_mode()
def chunk_figures(engine, quick: bool) -> dict:
    ids = ids_of(engine, 128 if quick else 256)
    runs = [score_ids(engine, ids, k=20, chunk=c) for c in (1, 64, len(ids))]
    diff = max(float(np.nanmax(np.abs(r.logprobs - runs[-1].logprobs))) for r in runs)
    same = all((r.ranks == runs[-1].ranks).all() and (r.top_ids == runs[-1].top_ids).all() for r in runs)
    return {"chunk_invariance": diff, "chunk_ids_ranks_identical": float(same)}


@torch.inference_mode()
def full_vocab_figures(engine, quick: bool) -> dict:
    ids = ids_of(engine, 9 if quick else 33)
    r = score_ids(engine, ids, k=-1)
    t = time.perf_counter()
    js = dumps({"prompt_logprobs": [vllm.position_entry(r, 1)]})
    json_s = time.perf_counter() - t
    reps = 20
    t = time.perf_counter()
    for _ in range(reps):
        blob = full_vocab_npy(r)
    bin_s = (time.perf_counter() - t) / reps
    positions = int(r.scored.sum())
    return {"full_vocab_json_mb_per_pos": len(js.encode()) / 1e6, "full_vocab_json_s_per_pos": json_s,
            "full_vocab_bin_kb_per_pos": len(blob) / positions / 1024, "full_vocab_bin_bytes_per_pos": (len(blob) - 128) / positions,
            "full_vocab_bin_mbps": len(blob) / bin_s / 1e6, "vocab_size": engine.vocab_size}


def render_figures(engine, quick: bool) -> dict:
    from dataclasses import replace

    from explorer.render.charts import curves, rank_histogram
    from explorer.render.heatmap import heatmap_html
    from explorer.render.tables import token_table

    base = score_ids(engine, ids_of(engine, 500), k=20)
    reps = 10
    tile = lambda a: np.concatenate([a] * reps)  # noqa: E731
    big = replace(base, token_ids=tile(base.token_ids), token_bytes=base.token_bytes * reps, n_prompt=base.n * reps,
                  logprobs=tile(base.logprobs), ranks=tile(base.ranks), entropy=tile(base.entropy),
                  top_ids=tile(base.top_ids), top_logprobs=tile(base.top_logprobs))
    html = heatmap_html(big, "probability")
    t = time.perf_counter()
    heatmap_html(big, "rank"), curves(big), rank_histogram(big), token_table(big)
    ms = (time.perf_counter() - t) * 1000
    return {"html_bytes_per_token": len(html.encode()) / big.n, "render_ms_5k": ms}


class LiveServer:
    """The real app (web UI + /v1 API) serving `engine` on a loopback port, in a daemon thread of this process."""

    def __init__(self, engine):
        import socket
        import threading

        import uvicorn

        from explorer.runtime import Models
        from explorer.server import build_app

        models = Models([engine.name], allow_hub=False)
        models.add(engine)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/v1"
        self.server = uvicorn.Server(uvicorn.Config(build_app(models), host="127.0.0.1", port=port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        for _ in range(400):
            if self.server.started:
                break
            time.sleep(0.05)
        if not self.server.started:
            raise RuntimeError("the bench server did not start")

    def stop(self):
        self.server.should_exit = True
        self.thread.join(timeout=10)


class RssPeak:
    """Peak resident memory of this process above its level on entry, in bytes (sampled every `every` s by a thread)."""

    def __init__(self, every: float = 0.01):
        import threading

        import psutil

        self.proc, self.every, self.stop = psutil.Process(), every, threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self):
        while not self.stop.wait(self.every):
            self.peak = max(self.peak, self.proc.memory_info().rss)
            self.samples += 1

    def __enter__(self):
        self.base = self.peak = self.proc.memory_info().rss
        self.samples = 0
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        self.peak = max(self.peak, self.proc.memory_info().rss)
        self.growth = self.peak - self.base


def stream_bytes(url: str, body: dict) -> tuple[int, float]:
    """(JSON bytes received, seconds from send to last byte) of one uncompressed completions request."""
    import httpx

    n, t = 0, time.perf_counter()
    with httpx.stream("POST", f"{url}/completions", json=body, headers={"Accept-Encoding": "identity"}, timeout=600) as r:
        r.raise_for_status()
        for chunk in r.iter_raw():
            n += len(chunk)
    return n, time.perf_counter() - t


def probe_models(url: str, every: float, done) -> list[float]:
    """Latencies (s) of GET /models, one every `every` s until `done` is set (at least one)."""
    import httpx

    out = []
    with httpx.Client(timeout=60) as c:
        while True:
            t = time.perf_counter()
            c.get(f"{url}/models").raise_for_status()
            out.append(time.perf_counter() - t)
            if done.wait(every):
                return out


def probe_under_load(url: str, body: dict, every: float) -> list[float]:
    """Latencies (s) of GET /models, one every `every` s while `body` streams from another thread."""
    import threading

    done = threading.Event()

    def load():
        try:
            stream_bytes(url, body)
        finally:
            done.set()

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    out = probe_models(url, every, done)
    worker.join()
    return out


def api_figures(engine, quick: bool) -> dict:
    """Full-vocabulary JSON through the live API: throughput, the process's RSS growth, /models latency meanwhile."""
    ids = ids_of(engine, 64)
    body = {"model": engine.name, "prompt": ids, "max_tokens": 0, "echo": True, "prompt_logprobs": -1}
    srv = LiveServer(engine)
    try:
        stream_bytes(srv.url, {**body, "prompt": ids[:2]})  # warm-up: first-request imports and caches
        runs, growth, samples = [], [], 0
        for _ in range(3 if quick else 5):  # the first one's growth is the largest: later ones reuse freed memory
            with RssPeak() as m:
                runs.append(stream_bytes(srv.url, body))
            growth.append(m.growth)
            samples += m.samples
        seconds = statistics.median(s for _, s in runs)
        latencies = []
        for _ in range(1 if quick else 3):  # ~10 probes spread over a request as long as the ones above
            latencies += probe_under_load(srv.url, body, seconds / 12)
    finally:
        srv.stop()
    return {"full_vocab_api_mbps": statistics.median(n / s for n, s in runs) / 1e6,
            "full_vocab_api_mb": runs[0][0] / 1e6, "full_vocab_api_s": seconds, "full_vocab_api_positions": len(ids),
            "full_vocab_api_peak_mb": max(growth) / 1e6, "full_vocab_api_rss_samples": samples,
            "api_latency_under_load_ms": max(latencies) * 1000, "api_latency_samples": len(latencies)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=None, help="default: SmolLM2-135M-Instruct")
    ap.add_argument("--device", default=None)
    ap.add_argument("--dtype", default=None)
    ap.add_argument("--quick", action="store_true", help="fewer pairs and steps (under two minutes on a 2-core CPU)")
    ap.add_argument("--json", action="store_true", help="print one JSON object of figures")
    ap.add_argument("--only", nargs="*", help="run only these groups: score gen memory chunk full render api")
    a = ap.parse_args(argv)
    engine = Engine.load(a.model, a.device, a.dtype)
    groups = {"score": score_figures, "gen": gen_figures, "memory": memory_figures, "chunk": chunk_figures,
              "full": full_vocab_figures, "render": render_figures, "api": api_figures}
    out = {"model": engine.name, "device": str(engine.device), "dtype": str(engine.dtype).replace("torch.", ""),
           "params_m": sum(p.numel() for p in engine.model.parameters()) / 1e6, "torch": torch.__version__,
           "threads": torch.get_num_threads()}
    t0 = time.perf_counter()
    for name, fn in groups.items():
        if a.only and name not in a.only:
            continue
        res = fn(engine, a.quick)
        out.update(res)
        if not a.json:
            print(f"{name:7s} " + "  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in res.items()), flush=True)
    out["bench_seconds"] = time.perf_counter() - t0
    if a.json:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
