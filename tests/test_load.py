"""A classroom on loopback: 32 students at once, half on the page's Gradio routes (`/score`, then `/generate`),
half on `/v1` (the real `openai` client: a paragraph scored with `echo`, then 32 generated tokens). Nothing is lost,
nothing is mixed between requests (each answer equals its request run alone), the generations decode together,
and the server's memory is flat over a second round. A small queue answers 429 beyond what it is set to hold."""

from __future__ import annotations

import json
import re
import time

import httpx
import numpy as np
import pytest

from explorer.engine import TorchEngine, generate, score_ids
from explorer.rules.sampler import Limits, SamplerSettings
from tests.helpers.servers import LiveServer, before_each_pass
from tests.helpers.threads import at_once

pytestmark = pytest.mark.slow

STUDENTS, TOKENS = 32, 32
ATOL = 1e-5 + 5e-7  # and the page rounds its logprobs to 6 decimals
PARAGRAPH = "Every token of a text has a probability under the model, given the tokens before it. "


def _rss_mb() -> float:
    """The memory this process holds: collected garbage, and the C allocator's free pages given back first (glibc
    keeps them per thread arena, and 32 students' threads fill new arenas: freed memory, not a leak)."""
    import ctypes
    import ctypes.util
    import gc

    gc.collect()
    libc = ctypes.util.find_library("c")
    if libc and hasattr(ctypes.CDLL(libc), "malloc_trim"):
        ctypes.CDLL(libc).malloc_trim(0)
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def _page_data(html: str) -> dict:
    """The page's data blob out of the heatmap's HTML (explorer/render/page_data.py)."""
    text = re.search(r'<div class="lx-data" hidden>(.*?)</div>', html, re.S).group(1)
    return json.loads(text)


def _prompt(i: int) -> str:
    return f"Student {i} asks: what comes after {i}?"


def _page_student(url: str, i: int) -> dict:
    from gradio_client import Client

    c = Client(url + "/", verbose=False)
    scored = _page_data(c.predict(PARAGRAPH + str(i), "probability", "1, 10, 100, 1000", 5, api_name="/score")[0])
    names = c.view_api(return_format="dict", print_info=False)["named_endpoints"]["/generate"]["parameters"]
    values = {"prompt": _prompt(i), "max_tokens": TOKENS, "temperature": 0.8, "seed": i}
    args = [values.get(p["parameter_name"], p["parameter_default"]) for p in names]
    made = _page_data(c.predict(*args, api_name="/generate")[0])
    return {"score": scored, "gen": made}


def _api_student(url: str, model: str, i: int) -> dict:
    import openai

    c = openai.OpenAI(base_url=url + "/v1", api_key="none", max_retries=0, timeout=300)
    scored = c.completions.create(model=model, prompt=PARAGRAPH + str(i), max_tokens=0, echo=True, logprobs=1)
    made = c.completions.create(model=model, prompt=_prompt(i), max_tokens=TOKENS, temperature=0.8, seed=i, logprobs=2)
    return {"score": scored, "gen": made}


def _round(srv: LiveServer, model: str) -> list:
    def student(i):
        return _page_student(srv.url, i) if i % 2 == 0 else _api_student(srv.url, model, i)

    return at_once([lambda i=i: student(i) for i in range(STUDENTS)], timeout=600)


def _check(alone: TorchEngine, answers: list) -> None:
    for i, a in enumerate(answers):
        assert a is not None and not isinstance(a, Exception), (i, a)
        text = PARAGRAPH + str(i)
        want_score = score_ids(alone, alone.encode(text), 5)
        want_gen = generate(
            alone, alone.encode(_prompt(i)), SamplerSettings(max_tokens=TOKENS, temperature=0.8, seed=i)
        )[0]
        if i % 2 == 0:
            assert a["score"]["ids"] == want_score.token_ids.tolist(), i
            np.testing.assert_allclose(a["score"]["lp"][1:], want_score.logprobs[1:], atol=ATOL, rtol=0)
            assert a["gen"]["ids"] == want_gen.token_ids.tolist(), i  # its own prompt, its own seeded tokens
            n = want_gen.n_prompt
            np.testing.assert_allclose(a["gen"]["lp"][n:], want_gen.logprobs[n:], atol=ATOL, rtol=0)
        else:
            lp = a["score"].choices[0].logprobs
            np.testing.assert_allclose(lp.token_logprobs[1:], want_score.logprobs[1:], atol=ATOL, rtol=0)
            got = a["gen"].choices[0]
            n = want_gen.n_prompt
            assert len(got.logprobs.tokens) == len(want_gen.token_ids) - n, i
            np.testing.assert_allclose(got.logprobs.token_logprobs, want_gen.logprobs[n:], atol=ATOL, rtol=0)


def test_a_classroom_at_once_gets_each_answer_as_alone(gpt2_dir):
    alone = TorchEngine.load(gpt2_dir, device="cpu", name="class-alone")
    served = TorchEngine.load(gpt2_dir, device="cpu", name="classroom")
    srv = LiveServer(served, limits=Limits(workers=8, queue=64))
    try:
        first = _round(srv, served.name)
        _check(alone, first)
        assert served.scheduler is not None and served.scheduler.widest >= 4, served.scheduler.widest
        after_first = _rss_mb()
        second = _round(srv, served.name)
        _check(alone, second)
        grown = _rss_mb() - after_first
        assert grown < 60, f"the server's memory grew by {grown:.0f} MB over a second round of {STUDENTS} students"
    finally:
        srv.stop()


def test_beyond_the_queue_is_a_429_and_the_rest_are_answered(gpt2_dir, monkeypatch):
    engine = TorchEngine.load(gpt2_dir, device="cpu", name="small-queue")
    before_each_pass(monkeypatch, engine, lambda: time.sleep(0.02))  # long enough that the requests overlap
    srv = LiveServer(engine, limits=Limits(workers=2, queue=2))

    def ask(i):
        body = {"model": engine.name, "prompt": _prompt(i), "max_tokens": 24, "temperature": 0, "ignore_eos": True}
        r = httpx.post(srv.url + "/v1/completions", json=body, timeout=120)
        return r.status_code, r.json()

    try:
        codes = at_once([lambda i=i: ask(i) for i in range(10)])
    finally:
        srv.stop()
    ok = [b for c, b in codes if c == 200]
    busy = [b for c, b in codes if c == 429]
    assert len(codes) == 10 and len(ok) + len(busy) == 10
    assert 4 <= len(ok) <= 10 and busy, codes  # 2 computing + 2 waiting at least; the rest told to retry
    assert all(b["error"]["code"] == "server_busy" for b in busy)
    assert all(b["usage"]["completion_tokens"] == 24 for b in ok)
