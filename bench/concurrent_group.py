"""The `concurrent` bench group: many clients at once against our server (a second process, `python -m explorer
serve`, EXPLORER_WORKERS=8), A and B in one run on the same model folder:

- generation: 8 clients x R requests of 64 greedy tokens with `logprobs: 5` (`ignore_eos`, so every request is 64
  tokens) at once, against (a) the same requests one at a time through the same server, (b) on the default model,
  the same server with the llama.cpp engine on its GGUF (8 at once and one at a time) and, where bench/llama_server.py
  finds one, llama.cpp's own server with `--parallel 8` on the same GGUF (its default threads; generation only: it
  has no `prompt_logprobs`; 8 at once and one at a time, so its own gain from batching is in the same run), and
  llama_decode's own gain from 8 rows a step over one (bench/gguf_group.py's decode_ceiling: the most any scheduler
  can reach on this machine and GGUF), and (c) where `make test-vllm`'s venv exists (and BENCH_VLLM is not 0), the
  real vLLM on the same folder;
- scoring: 8 clients x R requests scoring 222 tokens (`prompt_logprobs: 5`, `max_tokens: 1`), against the same
  one at a time (and vLLM where it runs).
Each side reports tokens/s, p50/p95 latency and the server's CPU seconds per request (from /proc), and the
batch's rows per step where the server says it (not over HTTP: left out).
"""

from __future__ import annotations

import os
import statistics
import sys
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
PROMPTS = [
    "The capital of France is",
    "Once upon a time, in a small village,",
    "def fibonacci(n):",
    "The three laws of motion are",
    "My favourite recipe for bread",
    "In 1969, the first people to walk on the Moon",
    "Photosynthesis is the process by which",
    "Dear students, today we will learn",
]
PARAGRAPH = (
    "Language models assign a probability to every token of a text, given the tokens before it. "
    "Reading those numbers token by token shows where a model was confident and where it was surprised: "
    "names, numbers and the first words of a sentence are often the hardest to predict, while the ends of "
    "common phrases are nearly certain. Teachers use this to show how prediction works, and researchers "
    "use it to compare models, to find memorised text, and to study how people read. "
)


def _stat(pid: int) -> list[str]:
    """The fields of /proc/`pid`/stat after the command's name (state first)."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of process `pid`, its threads and its child processes, live or reaped (vLLM's
    engine core runs in a child of its API server: counting the server alone gave vLLM 0.014 s a request)."""
    parents: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                parents.setdefault(int(_stat(int(d))[1]), []).append(int(d))
            except (OSError, IndexError):  # gone meanwhile
                continue
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            fields = _stat(p)
        except OSError:
            continue
        total += sum(int(v) for v in fields[11:15])  # its own, and its reaped children's
        todo.extend(parents.get(p, []))
    return total / os.sysconf("SC_CLK_TCK")


def _gen_body(model: str, prompt: str) -> dict:
    return {"model": model, "prompt": prompt, "max_tokens": 64, "temperature": 0, "logprobs": 5, "ignore_eos": True}


def _score_body(model: str, text: str) -> dict:
    return {"model": model, "prompt": text, "max_tokens": 1, "temperature": 0, "prompt_logprobs": 5}


def _one(client: httpx.Client, url: str, body: dict) -> tuple[float, int]:
    """(seconds, tokens counted) of one completion request."""
    t = time.perf_counter()
    r = client.post(url + "/completions", json=body, timeout=900)
    r.raise_for_status()
    out = r.json()
    usage = out["usage"]
    n = usage["completion_tokens"] if body["max_tokens"] > 1 else usage["prompt_tokens"]
    return time.perf_counter() - t, n


def _load(url: str, bodies: list[list[dict]], pid: int | None) -> dict:
    """Each inner list is one client's requests, in order; all clients at once. Figures of the run."""
    lat: list[float] = []
    tokens = [0]
    lock = threading.Lock()
    errors: list[str] = []

    def client(reqs):
        with httpx.Client() as c:
            for body in reqs:
                try:
                    s, n = _one(c, url, body)
                except Exception as err:  # noqa: BLE001 - counted and reported
                    errors.append(str(err)[:200])
                    continue
                with lock:
                    lat.append(s)
                    tokens[0] += n

    cpu0 = _cpu_s(pid) if pid else 0.0
    t0 = time.perf_counter()
    threads = [threading.Thread(target=client, args=(r,)) for r in bodies]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    n = sum(len(r) for r in bodies)
    lat.sort()
    out = {
        "tok_s": tokens[0] / wall,
        "p50_s": statistics.median(lat) if lat else float("nan"),
        "p95_s": lat[min(len(lat) - 1, int(0.95 * len(lat)))] if lat else float("nan"),
        "errors": len(errors),
    }
    if pid:
        out["cpu_s_per_request"] = (_cpu_s(pid) - cpu0) / n
    return out


def _ours(folder: str, workers: int, *args: str):
    sys.path.insert(0, str(ROOT))
    from tests.helpers.servers import ServerProcess

    # the app's defaults but the batch size (the tests' servers skip torch.compile of the statistics: a faster start)
    env = {"EXPLORER_WORKERS": str(workers), "EXPLORER_QUEUE": "64", "EXPLORER_COMPILE": "auto"}
    return ServerProcess(folder, env=env, args=args)


def _ours_llamacpp(clients: int, rounds: int) -> dict:
    """The llama.cpp engine (the default model's GGUF, as `python app.py` serves it) under the same load."""
    from explorer.engine.llamacpp.gguf import default_file

    gguf = default_file()
    if gguf is None:
        return {}
    srv = _ours(str(gguf), clients, "--engine", "llama.cpp")
    try:
        model = httpx.get(srv.url + "/v1/models").json()["data"][0]["id"]
        out = _side("llamacpp", srv.url + "/v1", model, srv.proc.pid, clients, rounds, serial=True)
    finally:
        srv.stop()
    out["llamacpp_gen_vs_serial"] = _ratio(out["llamacpp_gen_tok_s"], out["llamacpp_serial_gen_tok_s"])
    sys.path.insert(0, str(ROOT))
    from bench.gguf_group import decode_ceiling

    out.update(decode_ceiling(clients))  # what llama_decode itself gains from `clients` rows a step, here
    if f"llamacpp_decode_{clients}v1" in out:  # the share of that ceiling the server's batching reaches
        out["llamacpp_gen_vs_serial_of_ceiling"] = _ratio(
            out["llamacpp_gen_vs_serial"], out[f"llamacpp_decode_{clients}v1"]
        )
    from bench import llama_server
    from bench.gguf_group import LlamaServer

    found = llama_server.find()
    if found is None:
        out["llamaserver"] = "none: run python bench/llama_server.py to build it"
        return out
    peer = LlamaServer(str(found[0]), str(gguf), None, parallel=clients)
    try:
        out.update(_side("llamaserver", peer.url, "default", peer.proc.pid, clients, rounds, serial=True, score=False))
    finally:
        peer.stop()
    out["llamaserver_gen_vs_serial"] = _ratio(out["llamaserver_gen_tok_s"], out["llamaserver_serial_gen_tok_s"])
    out["llamacpp_gen_vs_llamaserver"] = _ratio(out["llamacpp_gen_tok_s"], out["llamaserver_gen_tok_s"])
    return out


def _vllm(folder: str):
    if os.environ.get("BENCH_VLLM") == "0":
        return None
    sys.path.insert(0, str(ROOT))
    try:
        from tests.helpers.vllm_peer import VENV, Unavailable, VllmServer
    except ImportError:
        return None
    if not (VENV / "bin" / "python").exists():  # never installed here: make test-vllm makes it (minutes)
        print(f"concurrent: no vLLM (no venv at {VENV}: make test-vllm makes one)", file=sys.stderr)
        return None
    try:
        return VllmServer(folder, [folder])
    except Unavailable as why:
        print(f"concurrent: no vLLM ({why})", file=sys.stderr)
        return None


def _score_text(url: str, model: str, want: int = 222) -> str:
    """Words of PARAGRAPH, as many as make at most `want` tokens (fewer where the model reads fewer)."""
    card = httpx.get(url + "/models").json()["data"][0]
    want = min(want, int(card.get("max_model_len") or want) - 2)
    words = (PARAGRAPH * 4).split(" ")
    root = url.removesuffix("/v1")
    lo, hi = 1, len(words)
    while lo < hi:  # the most words within `want` tokens
        mid = (lo + hi + 1) // 2
        r = httpx.post(root + "/tokenize", json={"model": model, "prompt": " ".join(words[:mid])})
        r.raise_for_status()
        lo, hi = (mid, hi) if len(r.json()["tokens"]) <= want else (lo, mid - 1)
    return " ".join(words[:lo])


def _side(
    prefix: str, url: str, model: str, pid: int | None, clients: int, rounds: int, serial: bool, score: bool = True
) -> dict:
    gen = [[_gen_body(model, PROMPTS[(c + r) % len(PROMPTS)]) for r in range(rounds)] for c in range(clients)]
    _load(url, [[_gen_body(model, "Hi")]], None)  # warm-up
    out = {f"{prefix}_gen_{k}": v for k, v in _load(url, gen, pid).items()}
    texts: list[list[dict]] = []
    if score:
        text = _score_text(url, model)
        texts = [[_score_body(model, text) for _ in range(rounds)] for _ in range(clients)]
        out.update({f"{prefix}_score_{k}": v for k, v in _load(url, texts, pid).items()})
    if serial:  # the same requests, one at a time
        flat = [[b for reqs in gen for b in reqs]]
        out.update({f"{prefix}_serial_gen_{k}": v for k, v in _load(url, flat, pid).items()})
    if serial and score:
        flat = [[b for reqs in texts for b in reqs]]
        out.update({f"{prefix}_serial_score_{k}": v for k, v in _load(url, flat, pid).items()})
    return out


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def concurrent_figures(engine, quick: bool, folder: str | None = None) -> dict:
    """The group's figures on the model folder `folder` (default: the default model's converted folder)."""
    from explorer.config import engine_options
    from explorer.engine.local.loading import converted_default_dir

    converted = str(converted_default_dir(engine_options().cache))
    folder = folder or converted
    clients, rounds = 8, 1 if quick else 3
    out: dict = {"concurrent_clients": clients, "concurrent_rounds": rounds}
    srv = _ours(folder, clients)
    try:
        model = httpx.get(srv.url + "/v1/models").json()["data"][0]["id"]
        out.update(_side("ours", srv.url + "/v1", model, srv.proc.pid, clients, rounds, serial=True))
    finally:
        srv.stop()
    out["ours_gen_vs_serial"] = _ratio(out["ours_gen_tok_s"], out["ours_serial_gen_tok_s"])
    out["ours_score_vs_serial"] = _ratio(out["ours_score_tok_s"], out["ours_serial_score_tok_s"])
    if folder == converted:
        out.update(_ours_llamacpp(clients, rounds))
    peer = _vllm(folder)
    if peer is not None:
        try:
            pid = getattr(getattr(peer, "proc", None), "pid", None)
            out.update(_side("vllm", peer.url + "/v1", folder, pid, clients, rounds, serial=False))
        finally:
            peer.stop()
        out["ours_gen_vs_vllm"] = _ratio(out["ours_gen_tok_s"], out["vllm_gen_tok_s"])
        out["ours_score_vs_vllm"] = _ratio(out["ours_score_tok_s"], out["vllm_score_tok_s"])
    return out
