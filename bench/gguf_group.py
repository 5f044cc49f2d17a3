"""The `gguf` bench group: the llama.cpp engine against llama.cpp's own server and against the torch engine.

- gguf_gen_vs_llamacpp: our tokens/s (greedy, 64 tokens, top-20 logprobs, through our /v1/completions) over
  llama.cpp's server's (the same request with 20 probabilities, its /v1/completions), the same GGUF file, at each
  side's default threads (ours: llamacpp.default_threads(); theirs: no -t), A and B alternating (target >= 0.85);
  the same with _t1 and _t2 at 1 and 2 threads each (one client, all in one run); gguf_gen_same_tokens and
  gguf_gen_logprob_maxdiff say whether the two answers agree; gguf_server names the server used
  (see bench/llama_server.py).
- gguf_score_tok_s_ratio: the llama.cpp engine's tokens/s over the torch engine's, scoring 512 tokens with top-20.
- gguf_score_mem_ratio: resident-memory growth scoring 4,096 tokens / one float32 [4096, V] matrix.

`decode_ceiling` (the concurrent group's llamacpp_decode_8v1): llama.cpp's own llama_decode, in this process, on the
batch's context (explorer/engine/llamacpp/sequences.py's Decoder), tokens/s with 8 rows a step over 1 row a step: the most
any scheduler can gain from batching on this machine and GGUF, before a single statistic is computed.
"""

from __future__ import annotations

import socket
import statistics
import subprocess
import time

import httpx

from explorer.engine import score_ids
from explorer.engine.llamacpp import engine as llamacpp
from explorer.engine.llamacpp.gguf import default_file
from explorer.engine.local.loading import DEFAULT_MODEL

PROMPT = "The capital of France is"
STEPS = 64


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """llama.cpp's server on `file` with `threads` threads and `parallel` slots of 2,048 positions each, on a
    loopback port, ready when made; its weights repacked or not as our engine's (llamacpp.repacking)."""

    def __init__(self, path: str, file: str, threads: int | None, parallel: int = 1):
        port = _free_port()
        cmd = [path, "-m", file, "-c", str(2048 * parallel), "-np", str(parallel)]
        cmd += ["-t", str(threads), "-tb", str(threads)] if threads else []  # None: its own default
        cmd += [] if llamacpp.repacking() else ["--no-repack"]
        cmd += ["--host", "127.0.0.1", "--port", str(port)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{port}/v1"
        for _ in range(600):
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError("llama.cpp's server did not start")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


def _completion(client: httpx.Client, url: str, model: str) -> tuple[list[int], list[float]]:
    """(token ids, logprobs) of the greedy completion: our completions shape, or llama.cpp's `logprobs.content`."""
    body = {"model": model, "prompt": PROMPT, "max_tokens": STEPS, "temperature": 0, "logprobs": 20}
    r = client.post(url + "/completions", json={**body, "ignore_eos": True, "return_token_ids": True}).json()
    ch = r["choices"][0]
    if "content" in ch["logprobs"]:  # llama.cpp's server
        return [e["id"] for e in ch["logprobs"]["content"]], [e["logprob"] for e in ch["logprobs"]["content"]]
    return ch["token_ids"], ch["logprobs"]["token_logprobs"]


def gen_vs_server(file: str, name: str, threads: int | None, pairs: int, live_server) -> dict:
    """Our /v1/completions (the llama.cpp engine) against llama.cpp's server, A and B alternating; threads None:
    each side's default."""
    from bench import llama_server

    found = llama_server.find()
    if found is None:
        return {"gguf_server": "none: run python bench/llama_server.py to build it"}
    ours = llamacpp.LlamaCppEngine(file, name, device="cpu", threads=threads)  # None: default_threads()
    theirs, srv = LlamaServer(found[0], file, threads), live_server(ours)
    client = httpx.Client(timeout=600)
    try:
        a, b = _completion(client, srv.url, name), _completion(client, theirs.url, "x")  # warm-up, and the answers
        times: dict[str, list[float]] = {"ours": [], "theirs": []}
        for i in range(pairs):  # A and B alternating, each pair in both orders
            for who in ("ours", "theirs") if i % 2 else ("theirs", "ours"):
                t = time.perf_counter()
                _completion(client, *((srv.url, name) if who == "ours" else (theirs.url, "x")))
                times[who].append(time.perf_counter() - t)
    finally:
        srv.stop()
        theirs.stop()
        ours.close()
    ratios = [tb / ta for ta, tb in zip(times["ours"], times["theirs"])]
    same = a[0] == b[0]
    diff = max(abs(x - y) for x, y in zip(a[1], b[1])) if same else float("nan")
    return {
        "gguf_gen_vs_llamacpp": statistics.median(ratios),
        "gguf_gen_vs_llamacpp_min": min(ratios),
        "gguf_gen_tok_s": STEPS / statistics.median(times["ours"]),
        "gguf_server_tok_s": STEPS / statistics.median(times["theirs"]),
        "gguf_gen_same_tokens": float(same),
        "gguf_gen_logprob_maxdiff": diff,
        "gguf_server": f"{found[1]}: {llama_server.version_of(found[0])}",
        "gguf_threads": ours.threads,
    }


def score_vs_torch(torch_engine, file: str, threads: int, pairs: int, paired_plain, ids_of, rss_peak) -> dict:
    """The llama.cpp engine's scoring tokens/s over the torch engine's (512 tokens, top-20); its memory on 4,096."""
    ours = llamacpp.LlamaCppEngine(file, torch_engine.name, device="cpu", threads=threads)
    try:
        ids = ids_of(torch_engine, 512)
        r = paired_plain(lambda: score_ids(torch_engine, ids, k=20), lambda: score_ids(ours, ids, k=20), pairs)
        long = ids_of(torch_engine, 4096)
        score_ids(ours, long[:600], k=20)  # warm: buffers of one block exist before the measurement
        with rss_peak() as m:
            score_ids(ours, long, k=20)
    finally:
        ours.close()
    return {
        "gguf_score_tok_s_ratio": r["median"],
        "gguf_score_tok_s_ratio_min": r["min"],
        "gguf_score_mem_ratio": m.growth / (len(long) * ours.vocab_size * 4),
    }


def decode_ceiling(rows: int = 8, steps: int = 40, rounds: int = 3) -> dict:
    """Bare llama_decode on the default GGUF at the engine's default threads: tokens/s with `rows` rows a step and
    with one, alternating `rounds` times (medians), and their ratio; {} where llama.cpp or the GGUF is missing."""
    from explorer.engine.llamacpp.sequences import Decoder, fill

    file = default_file()
    if file is None or not llamacpp.available():
        return {}
    engine = llamacpp.LlamaCppEngine(str(file), device="cpu")
    dec = Decoder(engine, rows, 256, engine.threads)
    lc = dec._lc
    try:

        def tok_s(n: int) -> float:
            dec.clear()
            for seq in range(n):  # a 16-token prompt in each sequence
                fill(dec.batch, [(100 + j, j, seq, False) for j in range(16)])
                engine.compute(lc.llama_decode, dec.ctx, dec.batch)
            dec.use(n)
            times = []
            for step in range(steps):
                fill(dec.batch, [(200 + step, 16 + step, seq, True) for seq in range(n)])
                t = time.perf_counter()
                if engine.compute(lc.llama_decode, dec.ctx, dec.batch) != 0:  # on the team, as the engine's
                    raise RuntimeError("llama_decode failed")
                times.append(time.perf_counter() - t)
            return n / statistics.median(times[4:])

        one, many = [], []
        for _ in range(rounds):
            one.append(tok_s(1))
            many.append(tok_s(rows))
    finally:
        dec.close()
        engine.close()
    a, b = statistics.median(one), statistics.median(many)
    return {"llamacpp_decode_1row_tok_s": a, f"llamacpp_decode_{rows}rows_tok_s": b, f"llamacpp_decode_{rows}v1": b / a}


def gguf_figures(engine, quick: bool, model: str | None, paired_plain, live_server, ids_of, rss_peak) -> dict:
    """The group's figures; {"gguf_skipped": 1} unless the bench runs the default model and llama.cpp is here."""
    file = default_file()
    if model not in (None, DEFAULT_MODEL) or file is None or not llamacpp.available():
        return {"gguf_skipped": 1}
    threads = llamacpp.default_threads()
    pairs = 3 if quick else 7
    out = gen_vs_server(file, engine.name, None, 2 * pairs, live_server)  # each side's default threads
    for t in (1, 2):  # one client at 1 and 2 threads each
        fig = gen_vs_server(file, engine.name, t, 2 * pairs, live_server)
        out.update(
            {f"{k}_t{t}": v for k, v in fig.items() if k.startswith(("gguf_gen_vs", "gguf_gen_tok", "gguf_server_tok"))}
        )
    out.update(score_vs_torch(engine, file, threads, pairs, paired_plain, ids_of, rss_peak))
    return out
