"""One thread runs the process's parallel CPU work (explorer/engine/local/team.py): every forward pass, output layer and
llama.cpp decode runs on it, whichever thread asks, as that thread would run it (grad mode, inference mode, the
request's bounds); torch runs on one thread everywhere else, so libgomp keeps no second pool of workers."""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import torch

from explorer.engine import generate, score_ids
from explorer.engine.local import team
from explorer.engine.passes import bounds
from explorer.errors import ExplorerError
from explorer.rules.sampler import Limits, SamplerSettings

pytestmark = pytest.mark.skipif(not team.ON, reason="EXPLORER_TEAM=0")


def test_run_is_the_callers_call_on_one_thread():
    seen = set()

    def job(x, *, y):
        seen.add(threading.current_thread().name)
        return x + y, torch.get_num_threads(), team.run(threading.current_thread)  # nested: inline

    with ThreadPoolExecutor(4) as pool:
        out = list(pool.map(lambda i: team.run(job, i, y=10), range(8)))
    assert [o[0] for o in out] == list(range(10, 18))
    assert seen == {"explorer-team"} and {o[2].name for o in out} == {"explorer-team"}
    assert {o[1] for o in out} == {team.THREADS}  # the team runs torch on every core
    assert torch.get_num_threads() == 1  # here (and in any other thread): one
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(torch.get_num_threads).result() == 1


def test_run_keeps_the_callers_modes_and_bounds_and_raises_its_errors():
    def modes():
        return torch.is_grad_enabled(), torch.is_inference_mode_enabled()

    assert team.run(modes) == (True, False)
    with torch.no_grad():
        assert team.run(modes) == (False, False)
    with torch.inference_mode():
        assert team.run(modes) == (False, True)
    with bounds.within(bounds.Bound(Limits(), deadline=0.0)), pytest.raises(ExplorerError, match="longer than"):
        team.run(bounds.check)  # the caller's deadline, passed already

    def fails():
        raise ValueError("from the team")

    with pytest.raises(ValueError, match="from the team"):
        team.run(fails)
    assert team.run(lambda: 7) == 7  # and the team goes on


def test_every_forward_pass_runs_on_the_team_whatever_thread_asks(gpt2):
    """The model's forward passes and its output layer, for scoring and generation asked from two threads."""
    where = []
    hooks = [
        m.register_forward_hook(lambda *_: where.append(threading.current_thread().name))
        for m in (gpt2.model, gpt2.model.get_output_embeddings())
    ]
    ids = gpt2.encode("The cat sat on the mat and looked at the door.")
    s = SamplerSettings(max_tokens=4, temperature=0, logprobs=3)
    try:
        with ThreadPoolExecutor(2) as pool:
            scored, made = pool.submit(score_ids, gpt2, ids, 3), pool.submit(generate, gpt2, ids, s)
            scored, made = scored.result(), made.result()[0]
    finally:
        for h in hooks:
            h.remove()
    assert where and set(where) == {"explorer-team"}
    assert np.allclose(scored.logprobs, score_ids(gpt2, ids, 3).logprobs, atol=1e-6, equal_nan=True)  # position 0: nan
    assert list(made.token_ids) == list(generate(gpt2, ids, s)[0].token_ids)


def test_attributions_gradients_run_on_the_team(gpt2, monkeypatch):
    """Integrated gradients: every batch's forward and backward pass (the backward on the caller's thread ran on
    one core)."""
    import captum._utils.gradient as grad

    from explorer.engine.analyses.attribution import attribute

    where, real = [], grad.compute_gradients

    def spy(*args, **kwargs):
        where.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(grad, "compute_gradients", spy)
    r = score_ids(gpt2, gpt2.encode("The cat sat on the mat."), 3)
    a = attribute(gpt2, r, len(r.token_ids) - 1, method="ig", steps=4)
    assert where and set(where) == {"explorer-team"}
    assert np.isfinite(a.values).all()


def test_every_llama_cpp_decode_runs_on_the_team(tiny_gguf, monkeypatch):
    import llama_cpp

    where, real = [], llama_cpp.llama_decode

    def decode(ctx, batch):
        where.append(threading.current_thread().name)
        return real(ctx, batch)

    monkeypatch.setattr(llama_cpp, "llama_decode", decode)
    ids = tiny_gguf.encode("hello world, hello")
    with ThreadPoolExecutor(1) as pool:
        pool.submit(generate, tiny_gguf, ids, SamplerSettings(max_tokens=3, temperature=0)).result()
    assert where and set(where) == {"explorer-team"}


def _statistics_threads(eng, monkeypatch) -> list[str]:
    """The threads that score a text and a generation's prompt on `eng` compute their blocks' statistics on, each
    request from a thread of its own (named "request")."""
    from explorer.engine.local import forward

    where, real = [], forward.row_stats

    def spy(logits, *args, **kwargs):
        if logits.shape[0] > 1:  # a block of positions (a decode step's one row is the batch's or beside it)
            where.append(threading.current_thread().name)
        return real(logits, *args, **kwargs)

    monkeypatch.setattr(forward, "row_stats", spy)
    ids = eng.encode("The cat sat on the mat and looked at the door.")
    s = SamplerSettings(max_tokens=1, temperature=0, prompt_logprobs=3)
    with ThreadPoolExecutor(1, "request") as pool:
        scored = pool.submit(score_ids, eng, ids, 3).result()
        made = pool.submit(generate, eng, ids, s).result()[0]
    np.testing.assert_allclose(made.logprobs[1 : len(ids)], scored.logprobs[1:], atol=1e-5)
    return where


@pytest.mark.parametrize("which", ["gpt2", "gguf_on_every_core"])
def test_a_texts_statistics_run_on_the_team(which, request, monkeypatch):
    """Scoring's statistics over every position (and a generation's prompt numbers), both engines: on the
    request's own thread, on one core, 8 texts scored at once ran slower than one at a time."""
    if which == "gguf_on_every_core":
        from explorer.engine.llamacpp.engine import LlamaCppEngine

        tiny = request.getfixturevalue("tiny_gguf")
        eng = LlamaCppEngine(tiny.path, "tiny-gguf-team", device="cpu", threads=team.THREADS)
    else:
        eng = request.getfixturevalue(which)
    where = _statistics_threads(eng, monkeypatch)
    assert len(where) >= 2 and set(where) == {"explorer-team"}


def test_a_llama_cpp_engine_on_fewer_threads_computes_its_numbers_on_one(tiny_gguf, monkeypatch):
    """A llama.cpp engine asked for fewer threads than the team's (EXPLORER_THREADS=1 on 2 cores) computes its
    statistics on the caller's thread, where torch runs on one: on the team, torch's workers spun on beside its
    one-thread decode and cost 3.2 ms a step against a bare decode's 19 (0.9 ms so); its decodes stay on the
    team."""
    if tiny_gguf.threads >= team.THREADS:
        pytest.skip("one core here: the team computes on one thread too")
    where = _statistics_threads(tiny_gguf, monkeypatch)
    assert len(where) >= 2 and all(name.startswith("request") for name in where), set(where)


def test_the_views_block_statistics_run_on_the_team(gpt2, gpt2_b, monkeypatch):
    """The logit lens, compare (its divergences too) and word ends: each block's output layer and statistics on the
    team, as scoring's. On the request's own thread, on one core, a lens of 120 tokens of SmolLM2 took 1.44x as long
    on 2 cores (bench/RESULTS.md, 2026-12-04, evening)."""
    from explorer.engine.analyses import compare, lens
    from explorer.engine.local import forward
    from explorer.engine.passes import word_ends

    where, real, real_div = [], forward.row_stats, compare.divergences

    def spy(logits, *args, **kwargs):
        if logits.shape[0] > 1:  # a block of positions
            where.append(threading.current_thread().name)
        return real(logits, *args, **kwargs)

    def div_spy(*args, **kwargs):
        where.append(threading.current_thread().name)
        return real_div(*args, **kwargs)

    monkeypatch.setattr(forward, "row_stats", spy)
    monkeypatch.setattr(compare, "divergences", div_spy)
    ids = gpt2.encode("The cat sat on the mat and looked at the door.")
    views = [(lens.lens_ids, (gpt2, ids, 3)), (compare.compare_ids, (gpt2, gpt2_b, ids, 3))]
    views.append((word_ends.score_words, (gpt2, ids, 3)))
    with ThreadPoolExecutor(1) as pool:  # a request's own thread
        for fn, args in views:
            where.clear()
            pool.submit(fn, *args).result()
            assert where and set(where) == {"explorer-team"}, (fn.__name__, set(where))


def _in_child(out) -> None:
    out.put((team.run(threading.current_thread).name, team.run(lambda: 2 + 2)))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_gets_its_own_team():
    """ZeroGPU runs a Space's GPU work in a forked process: the parent's team thread is not there."""
    import multiprocessing

    team.run(lambda: None)  # the parent's team is running
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    child = ctx.Process(target=_in_child, args=(out,))
    child.start()
    child.join(60)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive, "the child waited for a team thread that is not there"
    assert out.get(timeout=5) == ("explorer-team", 4)


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="no interval timer here")
def test_an_interrupted_caller_is_interrupted_once_the_work_is_done():
    """Ctrl-C in a notebook while the team decodes: the caller's lock on the model is not let go mid-decode."""
    finished = []

    def slow():
        time.sleep(0.6)
        finished.append(True)

    def interrupt(*_):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.1)
        with pytest.raises(KeyboardInterrupt):
            team.run(slow)
        assert finished == [True]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
