"""The engine parts behind the page: chunked prefill (progress, stop, memory), the document start, one
generated step seen raw and processed, and chat turns. Numbers against plain log_softmax + gather."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
import torch

from explorer.engine import generate, score_ids, score_text
from explorer.engine.analyses.step_view import step_view
from explorer.engine.passes import bounds
from explorer.engine.passes.scoring import score_blocks
from explorer.engine.text.turns import chat_turns
from explorer.errors import ExplorerError
from explorer.results.scores import TokenScores
from explorer.rules.sampler import SamplerSettings
from tests.helpers.reference import assert_matches_reference, ref_logprobs
from tests.helpers.shapes import recorded


@pytest.fixture(scope="module")
def long_ids(long_gpt2):
    return (long_gpt2.encode("fox jumps over the lazy dog. ") * 200)[:1000]


# ---- chunked prefill ------------------------------------------------------------------------
@pytest.mark.parametrize("prefill", [1, 7, 64, 999, 5000])
def test_chunked_prefill_equals_one_pass_and_the_reference(long_gpt2, long_ids, prefill):
    ids = long_ids if prefill > 1 else long_ids[:40]  # one position a block: a short text keeps it quick
    one = score_ids(long_gpt2, ids, k=5, prefill=10**6)
    part = score_ids(long_gpt2, ids, k=5, prefill=prefill)
    np.testing.assert_allclose(part.logprobs[1:], one.logprobs[1:], atol=1e-4)
    np.testing.assert_allclose(part.entropy[1:], one.entropy[1:], atol=1e-4)
    assert (part.ranks == one.ranks).all() and (part.top_ids[1:] == one.top_ids[1:]).all()
    sample = list(range(1, len(ids), max(1, len(ids) // 25)))
    assert_matches_reference(part, ref_logprobs(long_gpt2.model, ids), sample)


def test_a_progress_event_per_block(long_gpt2, long_ids):
    events = [(done, len(rows)) for done, rows in score_blocks(long_gpt2, long_ids, k=3, prefill=128)]
    assert len(events) == math.ceil((len(long_ids) - 1) / 128)
    assert [d for d, _ in events] == [min(128 * (i + 1), len(long_ids) - 1) for i in range(len(events))]
    assert sum(m for _, m in events) == len(long_ids) - 1


def test_one_token_text_has_no_block(gpt2):
    assert list(score_blocks(gpt2, gpt2.encode("T"), k=3)) == []
    r = score_ids(gpt2, gpt2.encode("T"), k=3)
    assert r.n == 1 and not r.scored.any()


class Stopped(Exception):
    pass


def test_stop_ends_the_work_within_one_block(long_gpt2, long_ids, monkeypatch):
    """A stop requested while block 3 computes: that block finishes, no block starts after it."""
    calls, stop = [], {"at": None}
    body = long_gpt2.body

    def counting_body(*args, **kw):
        calls.append(1)
        if len(calls) == 3:
            stop["at"] = len(calls)  # the stop arrives while this block runs
        return body(*args, **kw)

    def check():
        if stop["at"] is not None:
            raise Stopped

    monkeypatch.setattr(long_gpt2, "body", counting_body)
    with pytest.raises(Stopped), bounds.stopping(check):
        for _ in score_blocks(long_gpt2, long_ids, k=3, prefill=64):
            pass
    assert len(calls) - stop["at"] == 0  # blocks computed after the stop
    assert math.ceil((len(long_ids) - 1) / 64) > 3 + 1  # there were blocks left to skip


def test_peak_memory_does_not_grow(long_gpt2, long_ids):
    """The largest tensor of a chunked pass is no larger than the largest of one pass (attention included)."""

    def largest(prefill):
        _, rec = recorded(score_ids, long_gpt2, long_ids, k=20, prefill=prefill)
        return max(math.prod(s) for s in rec.shapes)

    assert largest(128) <= largest(10**6)


# ---- the document start ---------------------------------------------------------------------------
def test_document_start_scores_the_first_token(gpt2):
    text = "The quick brown fox"
    assert not gpt2.adds_bos and gpt2.special_tokens()[0] == "<|endoftext|>"
    r = score_text(gpt2, text, k=5, start="<|endoftext|>")
    doc = gpt2.tokenizer.convert_tokens_to_ids("<|endoftext|>")
    assert r.context_start == 1 and r.token_ids.tolist() == [doc, *gpt2.encode(text)]
    assert not r.scored[0] and r.scored[1:].all()
    assert_matches_reference(r, ref_logprobs(gpt2.model, r.token_ids.tolist()), range(1, r.n))
    assert score_text(gpt2, text, k=5, start="eos").token_ids.tolist() == r.token_ids.tolist()
    plain = score_text(gpt2, text, k=5)
    assert plain.context_start == 0 and plain.n == r.n - 1


def test_document_start_changes_nothing_where_the_tokenizer_adds_a_bos(llama):
    assert llama.adds_bos
    for mode in ("none", "bos", "eos", "</s>"):
        assert llama.context_start_ids(mode) == []
    assert score_text(llama, "fox", k=2, start="eos").context_start == 0


@pytest.mark.parametrize("mode", ["<nope>", "<script>", "x" * 200])
def test_unknown_document_start_is_a_clear_error(gpt2, mode):
    with pytest.raises(ExplorerError, match="special tokens") as err:
        gpt2.context_start_ids(mode)
    assert err.value.param == "context_start" and len(str(err.value)) < 300


def test_context_start_round_trips_and_stays_out_of_old_files(gpt2):
    r = score_text(gpt2, "fox jumps", k=3, start="<|endoftext|>")
    d = json.loads(json.dumps(r.to_dict()))
    assert d["context_start"] == 1 and TokenScores.from_dict(d).context_start == 1
    assert "context_start" not in score_text(gpt2, "fox jumps", k=3).to_dict()
    del d["context_start"]
    assert TokenScores.from_dict(d).context_start == 0


def test_cli_context_start(gpt2_dir):
    run = [sys.executable, "-m", "explorer", "score", "--model", gpt2_dir, "--device", "cpu", "--text", "fox jumps"]
    p = subprocess.run(
        [*run, "--format", "native", "--context-start", "<|endoftext|>"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    body = json.loads(p.stdout)
    assert body["context_start"] == 1 and body["logprobs"][1] is not None
    p = subprocess.run([*run, "--context-start", "<nope>"], capture_output=True, text=True, timeout=120, check=False)
    assert p.returncode == 2 and p.stderr.strip().splitlines()[-1].startswith("error: Unknown context start")


# ---- one generated step, raw and processed --------------------------------------------------------
@pytest.mark.parametrize(
    "kw", [{"temperature": 0.8, "top_k": 3}, {"temperature": 1.3, "top_p": 0.6}, {"temperature": 0}]
)
def test_step_view_is_the_same_step_seen_twice(gpt2, kw):
    s = SamplerSettings(max_tokens=4, logprobs=10, mode="processed", seed=3, **kw)
    r = generate(gpt2, gpt2.encode("The lazy"), s)[0]
    lp_rows = ref_logprobs(gpt2.model, r.token_ids.tolist())
    for pos in range(r.n_prompt, r.n):
        v = step_view(gpt2, r, pos, k=10)
        assert abs(v.processed.logprobs[0] - r.logprobs[pos]) < 1e-4  # what the run recorded (processed)
        raw = lp_rows[pos - 1]
        assert abs(v.raw.logprobs[0] - float(raw[r.token_ids[pos]])) < 1e-4  # the model's own, independently
        np.testing.assert_allclose(
            v.raw.top_logprobs[0], torch.sort(raw, descending=True).values[:10].numpy(), atol=1e-4
        )
        kept = np.isfinite(v.processed.top_logprobs[0]).sum()
        if kw.get("top_k"):
            assert v.kept == 3 and kept == 3 and v.cut.sum() == 10 - 3
        if kw.get("temperature") == 0:
            assert v.greedy and not v.changed and not v.cut.any()
        assert 0 < v.kept_raw_mass <= 1 + 1e-6


def test_step_view_refuses_prompt_positions(gpt2):
    r = generate(gpt2, gpt2.encode("The lazy"), SamplerSettings(max_tokens=2, temperature=0, logprobs=3))[0]
    with pytest.raises(ExplorerError, match="not a generated token"):
        step_view(gpt2, r, 0)


# ---- chat turns --------------------------------------------------------------------------------------
def test_chat_turns_start_at_their_role_markers(gpt2):
    msgs = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Bye"},
    ]
    ids, turns = chat_turns(gpt2, msgs)
    assert ids == gpt2.encode_chat(msgs)
    assert [role for _, role in turns] == ["system", "user", "assistant", "user", "assistant"]
    markers = [gpt2.tokenizer.convert_ids_to_tokens(ids[p]) for p, _ in turns]
    assert markers == ["<|system|>", "<|user|>", "<|assistant|>", "<|user|>", "<|assistant|>"]
