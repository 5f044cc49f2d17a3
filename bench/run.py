"""Benchmarks: the cost of logprob capture as ratios against a baseline run in the same process.

    python bench/run.py [--model M] [--device D] [--quick] [--json]

Each timed figure alternates A and B after a warm-up and reports the median of
the per-pair ratios (and the minimum). The `api` group is absolute: the real
server in a thread of this process, one 64-token full-vocabulary JSON request
(MB/s, the process's RSS growth) and GET /v1/models latency while one runs.
`--json` prints one object whose keys are the figure names, each a number. The `gguf` group (bench/gguf_group.py)
runs the llama.cpp engine against llama.cpp's own server and the torch engine, on the default model only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import weakref
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from bench.concurrent_group import concurrent_figures
from bench.gguf_group import gguf_figures
from explorer.engine import TorchEngine, generate, score_ids
from explorer.export import dumps, vllm
from explorer.export.native import full_vocab_npy
from explorer.rules.sampler import SamplerSettings


def sync(engine):
    if engine.device.type == "cuda":
        torch.cuda.synchronize()


def timed(engine, fn) -> float:
    sync(engine)
    t = time.perf_counter()
    fn()
    sync(engine)
    return time.perf_counter() - t


def paired(engine, a, b, pairs: int, warm: bool = True) -> dict:
    """Median and minimum of time(a) / time(b) over alternating pairs, after one warm-up each (`warm`: the caller
    warmed them up some cheaper way), and the median seconds of each side."""
    if warm:
        a(), b()
    ratios, times = [], []
    for i in range(pairs):
        if i % 2:
            tb, ta = timed(engine, b), timed(engine, a)
        else:
            ta, tb = timed(engine, a), timed(engine, b)
        ratios.append(ta / tb)
        times.append((ta, tb))
    return {
        "median": statistics.median(ratios),
        "min": min(ratios),
        "pairs": pairs,
        "a_s": statistics.median(t[0] for t in times),
        "b_s": statistics.median(t[1] for t in times),
    }


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
    from explorer.engine.local import team

    def job() -> int:  # on the team's thread, where the passes and statistics run (a dispatch mode is per thread)
        with LiveBytes() as m:
            fn()
        return m.peak

    return team.run(job)


def ids_of(engine, n: int) -> list[int]:
    """n token ids of plain English text (repeated as needed; at most the model's context)."""
    n = min(n, engine.context)
    text_ids = engine.encode("The quick brown fox jumps over the lazy dog. " * (n // 8 + 1))
    return (text_ids * (n // len(text_ids) + 1))[:n]


@torch.inference_mode()
def score_figures(engine, quick: bool) -> dict:
    ids = ids_of(engine, 512)
    x = torch.tensor([ids], device=engine.device)
    bare = lambda: engine.compute(engine.model, input_ids=x).logits  # noqa: E731  (on the model's thread, as ours)
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
        hf = lambda: engine.compute(engine.model.generate, x, **kw)  # noqa: E731  (on the model's thread, as ours)

        def hf_scores():
            out = engine.compute(engine.model.generate, x, **kw, output_scores=True, return_dict_in_generate=True)
            return engine.model.compute_transition_scores(out.sequences, out.scores, normalize_logits=True).cpu()

        same = ours()[0].token_ids.tolist() == hf()[0].tolist()
        pairs = 5 if quick else 9
        a = paired(engine, ours, hf, pairs)
        b = paired(engine, ours, hf_scores, pairs)
    finally:
        engine.eos_ids, gc.eos_token_id = eos, gen_eos
    return {
        "gen_overhead": a["median"],
        "gen_overhead_min": a["min"],
        "gen_vs_hf_scores": b["median"],
        "gen_vs_hf_scores_min": b["min"],
        "gen_same_tokens": float(same),
        "gen_steps": steps,
    }


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
    return {
        "full_vocab_json_mb_per_pos": len(js.encode()) / 1e6,
        "full_vocab_json_s_per_pos": json_s,
        "full_vocab_bin_kb_per_pos": len(blob) / positions / 1024,
        "full_vocab_bin_bytes_per_pos": (len(blob) - 128) / positions,
        "full_vocab_bin_mbps": len(blob) / bin_s / 1e6,
        "vocab_size": engine.vocab_size,
    }


def render_figures(engine, quick: bool) -> dict:
    from dataclasses import replace

    from explorer.render.charts import curves, rank_histogram
    from explorer.render.heatmap import heatmap_html
    from explorer.render.tables import token_table

    base = score_ids(engine, ids_of(engine, 500), k=20)
    reps = 10
    tile = lambda a: np.concatenate([a] * reps)  # noqa: E731
    big = replace(
        base,
        token_ids=tile(base.token_ids),
        token_bytes=base.token_bytes * reps,
        n_prompt=base.n * reps,
        logprobs=tile(base.logprobs),
        ranks=tile(base.ranks),
        entropy=tile(base.entropy),
        top_ids=tile(base.top_ids),
        top_logprobs=tile(base.top_logprobs),
    )
    html = heatmap_html(big, "probability")
    t = time.perf_counter()
    heatmap_html(big, "rank"), curves(big), rank_histogram(big), token_table(big)
    ms = (time.perf_counter() - t) * 1000
    return {"html_bytes_per_token": len(html.encode()) / big.n, "render_ms_5k": ms}


@torch.inference_mode()
def lens_figures(engine, quick: bool) -> dict:
    """Milliseconds per (layer, position) cell of the logit lens (median of 3 runs), its time over scoring the same
    text (L+1 output layers against one), and its extra peak memory over the body with its hidden states, in
    float32 [positions, V] matrices."""
    from explorer.engine.analyses.lens import lens_ids

    ids = ids_of(engine, 64 if quick else 256)
    lens_ids(engine, ids[:8], k=20)  # warm-up (and the final-norm check)
    times = [timed(engine, lambda: lens_ids(engine, ids, k=20)) for _ in range(3)]
    vs_score = paired(engine, lambda: lens_ids(engine, ids, k=20), lambda: score_ids(engine, ids, k=20), 3)
    layers = engine.model.config.num_hidden_layers + 1
    x = torch.tensor([ids], device=engine.device)
    body = peak_bytes(engine, lambda: engine.model.base_model(input_ids=x, output_hidden_states=True, use_cache=False))
    ours = peak_bytes(engine, lambda: lens_ids(engine, ids, k=20))
    return {
        "lens_ms_per_layer_token": statistics.median(times) * 1000 / (layers * (len(ids) - 1)),
        "lens_positions": len(ids),
        "lens_layers": layers,
        "lens_vs_score": vs_score["median"],
        "lens_mem_ratio": max(0, ours - body) / (len(ids) * engine.vocab_size * 4),
    }


@torch.inference_mode()
def branch_figures(engine, quick: bool) -> dict:
    """Positions computed for one branch / positions of the whole branched text (the prefix comes from the kept cache)."""
    from explorer.engine.analyses.branch import Prefixes, branch, generate_kept

    prompt = ids_of(engine, 64 if quick else 256)
    gen_tokens, branch_tokens = (16, 8) if quick else (32, 16)
    s = SamplerSettings(max_tokens=gen_tokens, temperature=0.8, seed=1, logprobs=20)
    eos, engine.eos_ids = engine.eos_ids, set()  # exactly the asked number of tokens on every run
    prefixes = Prefixes(engine.name)
    try:
        r = generate_kept(engine, prefixes, prompt, s)
        at = len(prompt) + gen_tokens // 2
        token = int(r.top_ids[at, 1])  # the runner-up at a generated position
        seen, real = [], engine.body
        engine.body = lambda ids, past=None, cache=False, last=False: (
            seen.append(ids.shape[1]) or real(ids, past, cache, last=last)
        )
        try:
            t = time.perf_counter()
            b = branch(engine, prefixes, r.token_ids[:at].tolist(), token, replace(s, max_tokens=branch_tokens), k=20)
            branch_s = time.perf_counter() - t
        finally:
            del engine.body
        t = time.perf_counter()
        generate(engine, b.ids[: at + 1], replace(s, max_tokens=branch_tokens))
        scratch_s = time.perf_counter() - t
    finally:
        engine.eos_ids = eos
    return {
        "branch_reuse": sum(seen) / len(b.ids),
        "branch_positions_computed": sum(seen),
        "branch_text_positions": len(b.ids),
        "branch_vs_scratch_time": branch_s / scratch_s,
    }


class LiveServer:
    """The real app (web UI + /v1 API) serving `engine` on a loopback port, in a daemon thread of this process."""

    def __init__(self, engine):
        import socket
        import threading

        import uvicorn

        from explorer.server import build_app
        from explorer.serving.models import Models

        models = Models([engine.name], allow_hub=False)
        models.add(engine)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/v1"
        self.server = uvicorn.Server(
            uvicorn.Config(build_app(models), host="127.0.0.1", port=port, log_level="warning")
        )
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
    with httpx.stream(
        "POST", f"{url}/completions", json=body, headers={"Accept-Encoding": "identity"}, timeout=600
    ) as r:
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
    return {
        "full_vocab_api_mbps": statistics.median(n / s for n, s in runs) / 1e6,
        "full_vocab_api_mb": runs[0][0] / 1e6,
        "full_vocab_api_s": seconds,
        "full_vocab_api_positions": len(ids),
        "full_vocab_api_peak_mb": max(growth) / 1e6,
        "full_vocab_api_rss_samples": samples,
        "api_latency_under_load_ms": max(latencies) * 1000,
        "api_latency_samples": len(latencies),
    }


@torch.inference_mode()
def compare_figures(engine, quick: bool) -> dict:
    """Two-model comparison (the model against itself: the cost of two models of its size) / two bare forwards, and
    / two scoring passes (the divergences' own cost); its extra peak memory over the two bodies alone, per one f32 [T, V]."""
    from explorer.engine.analyses.compare import compare_ids

    ids = ids_of(engine, 512)
    x = torch.tensor([ids], device=engine.device)
    bare = lambda: (engine.compute(engine.model, input_ids=x).logits, engine.compute(engine.model, input_ids=x).logits)  # noqa: E731
    ours = lambda: compare_ids(engine, engine, ids, k=20)  # noqa: E731  (both results and the divergences on the host)
    r = paired(engine, ours, bare, 5 if quick else 11)
    scores = lambda: (score_ids(engine, ids, k=20), score_ids(engine, ids, k=20))  # noqa: E731  (the same minus the divergences)
    s = paired(engine, ours, scores, 5 if quick else 11)
    long = ids_of(engine, 2048)
    xl = torch.tensor([long], device=engine.device)
    bodies = peak_bytes(engine, lambda: (lambda h: (h, engine.body(xl)))(engine.body(xl)))  # both hidden states alive
    peak = peak_bytes(engine, lambda: compare_ids(engine, engine, long, k=20))
    matrix = len(long) * engine.vocab_size * 4
    return {
        "compare_overhead": r["median"],
        "compare_overhead_min": r["min"],
        "compare_vs_two_scores": s["median"],
        "compare_mem_ratio": max(0, peak - bodies) / matrix,
        "compare_mem_positions": len(long),
    }


def why_figures(engine, quick: bool) -> dict:
    """Attribution of one token (the last of a 256-token context + the target; 64 with --quick) against one scoring
    pass of the same text (score_ids, k=20), A and B alternating: occlusion over every token (detail 0) and with the
    faces' default detail (DETAIL units alone, the text before them in a few spans); integrated gradients (32 steps,
    8 a backward pass) per step. Then occlusion of a 512-token context at detail DETAIL, in seconds (the page stops
    an action at 300 s, 60 s on a public server)."""
    from explorer.engine.analyses.attribution import DETAIL, attribute

    ids = ids_of(engine, (64 if quick else 256) + 1)
    r, pos, pairs = score_ids(engine, ids, k=1), len(ids) - 1, 1 if quick else 2
    score = lambda: score_ids(engine, ids, k=20)  # noqa: E731
    score()
    for method in ("occlusion", "ig"):  # warm-up on a short prefix (a full-size run costs a minute or more)
        attribute(engine, score_ids(engine, ids[:24], k=1), 23, method=method, detail=0, steps=4)
    every = paired(engine, lambda: attribute(engine, r, pos, detail=0), score, pairs, warm=False)
    near = paired(engine, lambda: attribute(engine, r, pos, detail=DETAIL), score, pairs, warm=False)
    steps, chunk = 32, 8
    ig = paired(
        engine, lambda: attribute(engine, r, pos, method="ig", steps=steps, chunk=chunk), score, pairs, warm=False
    )
    long = ids_of(engine, 513)
    rl = score_ids(engine, long, k=1)
    long_s = timed(engine, lambda: attribute(engine, rl, len(long) - 1, detail=DETAIL))
    return {
        "why_occlusion_vs_score": every["median"],
        "why_occlusion_vs_score_min": every["min"],
        "why_occlusion_detail_vs_score": near["median"],
        "why_occlusion_detail_vs_score_min": near["min"],
        "why_ig_step_vs_score": ig["median"] / steps,
        "why_ig_ms_per_step": ig["a_s"] * 1000 / steps,
        "why_score_ms": statistics.median([every["b_s"], near["b_s"], ig["b_s"]]) * 1000,
        "why_occlusion_s": every["a_s"],
        "why_occlusion_detail_s": near["a_s"],
        "why_ig_s": ig["a_s"],
        "why_positions": pos,
        "why_detail": DETAIL,
        "why_occlusion_512_s": long_s,
        "why_long_positions": len(long) - 1,
    }


def remote_figures(engine, quick: bool, backend: str | None = None) -> dict:
    """A scoring call through the remote engine (request + parsing into the result type) / the same raw HTTP request
    made with httpx (and its JSON parsed), against `backend` or our own server serving this engine; A and B alternate."""
    import httpx

    from explorer.engine import score_ids
    from explorer.engine.remote.engine import RemoteEngine

    srv = None if backend else LiveServer(engine)
    try:
        url = backend or srv.url  # the bench server's url is its /v1 base
        remote = RemoteEngine(url, None if backend else engine.name)  # its tokenizer: the model id's, when it loads
        ids = ids_of(engine, 64)
        body, _ = remote.score_body(ids, 5)
        client = httpx.Client(timeout=600)

        def via_engine():
            score_ids(remote, ids, k=5)

        def raw():
            client.post(url + "/completions", json=body).json()

        r = paired_plain(via_engine, raw, 3 if quick else 7)
    finally:
        if srv is not None:
            srv.stop()
    return {
        "remote_overhead": r["median"],
        "remote_overhead_min": r["min"],
        "remote_full_vocab": int(body["prompt_logprobs"] == -1),
    }


def hidden_figures(engine, quick: bool) -> dict:
    """`return_hidden_states` of every layer (0..L and final_norm, float32) at 16 prompt tokens (the default cap;
    twice that for the generation, whose positions returned are its prompt's and its own),
    through the API's handler, over the same request without it: scoring (`echo`, `max_tokens: 0`) and a greedy
    16-token generation (which then decodes on its own thread, outside the batch); and the scoring's extra peak
    memory over the states' own bytes."""
    from explorer.api.handlers import completion_body
    from explorer.api.schemas import CompletionRequest, parse
    from explorer.rules.sampler import Limits

    ids = ids_of(engine, 16)
    limits = replace(Limits(), hidden_states_max_tokens=2 * len(ids))  # the cap counts the positions returned:
    # the generation's are its 16 prompt tokens and the 16 it makes
    spec = {"return_hidden_states": {"layers": [*range(engine.n_layers + 1), "final_norm"]}}
    score = {"prompt": ids, "max_tokens": 0, "echo": True, "logprobs": 5}
    gen = {"prompt": ids, "max_tokens": 16, "temperature": 0, "logprobs": 5}

    def call(body: dict):
        return lambda: completion_body(engine, parse(CompletionRequest, body), limits)

    pairs = 5 if quick else 11
    s = paired(engine, call({**score, **spec}), call(score), pairs)
    g = paired(engine, call({**gen, **spec}), call(gen), pairs)
    states = len(ids) * (engine.n_layers + 2) * engine.hidden_size * 4
    extra = peak_bytes(engine, call({**score, **spec})) - peak_bytes(engine, call(score))
    return {
        "hidden_score_overhead": s["median"],
        "hidden_score_overhead_min": s["min"],
        "hidden_gen_overhead": g["median"],
        "hidden_gen_overhead_min": g["min"],
        "hidden_score_ms": s["b_s"] * 1000,
        "hidden_states_bytes": states,
        "hidden_mem_over_states": max(0, extra) / states,
    }


def paired_plain(a, b, pairs: int) -> dict:
    """Median and min of per-pair time ratios a/b (wall clock), A and B alternating after one warm-up each."""
    a(), b()
    ratios = []
    for _ in range(pairs):
        t = time.perf_counter()
        a()
        ta = time.perf_counter() - t
        t = time.perf_counter()
        b()
        ratios.append(ta / (time.perf_counter() - t))
    return {"median": statistics.median(ratios), "min": min(ratios)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=None, help="default: SmolLM2-135M-Instruct")
    ap.add_argument("--device", default=None)
    ap.add_argument("--dtype", default=None)
    ap.add_argument("--quick", action="store_true", help="fewer pairs and steps (under two minutes on a 2-core CPU)")
    ap.add_argument("--json", action="store_true", help="print one JSON object of figures")
    ap.add_argument(
        "--only",
        nargs="*",
        help="run only these groups: score gen memory chunk full render api lens branch compare why hidden remote "
        "gguf concurrent",
    )
    ap.add_argument(
        "--backend",
        default=None,
        help="for `remote`: a /v1 URL to measure against (default: our own server, in process)",
    )
    a = ap.parse_args(argv)
    engine = TorchEngine.load(a.model, a.device, a.dtype)
    groups = {
        "score": score_figures,
        "gen": gen_figures,
        "memory": memory_figures,
        "chunk": chunk_figures,
        "full": full_vocab_figures,
        "render": render_figures,
        "api": api_figures,
        "lens": lens_figures,
        "branch": branch_figures,
        "compare": compare_figures,
        "why": why_figures,
        "hidden": hidden_figures,
        "remote": lambda e, q: remote_figures(e, q, a.backend),
        "gguf": lambda e, q: gguf_figures(e, q, a.model, paired_plain, LiveServer, ids_of, RssPeak),
        "concurrent": lambda e, q: concurrent_figures(e, q, a.model if a.model and os.path.isdir(a.model) else None),
    }
    out = {
        "model": engine.name,
        "device": str(engine.device),
        "dtype": str(engine.dtype).replace("torch.", ""),
        "params_m": sum(p.numel() for p in engine.model.parameters()) / 1e6,
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
    }
    t0 = time.perf_counter()
    for name, fn in groups.items():
        if a.only and name not in a.only:
            continue
        res = fn(engine, a.quick)
        out.update(res)
        if not a.json:
            print(
                f"{name:7s} "
                + "  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in res.items()),
                flush=True,
            )
    out["bench_seconds"] = time.perf_counter() - t0
    if a.json:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
