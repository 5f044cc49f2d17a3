"""Exporters: golden JSON for every shape, and the checks of section 7 of the shapes reference on real outputs."""

from __future__ import annotations

import json
import math
import os
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from openai.types.chat import ChatCompletion

from explorer.engine import generate, score_text
from explorer.export import FORMATS, dumps, export, openai_chat, openai_completion, vllm, vllm_offline
from explorer.export.native import full_vocab_npy
from explorer.results.scores import TokenScores
from explorer.rules.sampler import SamplerSettings
from tests.helpers.exports import assert_generated_read_back, check_completion_logprobs, check_prompt_logprobs
from tests.helpers.reference import ref_logprobs
from tests.helpers.samples import generated_chat, scored_prompt

GOLDEN = Path(__file__).parent / "golden"
CASES = {
    "scored": (scored_prompt, ["openai-completion", "vllm", "vllm-offline", "native"]),
    "chat": (generated_chat, ["openai-completion", "openai-chat", "vllm", "vllm-offline", "native"]),
}


def _fixed(body: dict) -> dict:
    for key, val in (("id", "x"), ("created", 1)):
        if key in body:
            body[key] = val
    return body


@pytest.mark.parametrize(("case", "fmt"), [(c, f) for c, (_, fmts) in CASES.items() for f in fmts])
def test_golden(case, fmt):
    body = _fixed(export(fmt, CASES[case][0]()))
    path = GOLDEN / f"{case}.{fmt}.json"
    text = json.dumps(body, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{path.name} changed (UPDATE_GOLDEN=1 rewrites it after review)"


def test_native_round_trip(gpt2):
    for r in [scored_prompt(), generated_chat(), score_text(gpt2, "fox 🦊", k=-1)]:
        d = json.loads(dumps(r.to_dict()))
        back = TokenScores.from_dict(d)
        assert back.to_dict() == d
        assert back.token_bytes == r.token_bytes and back.pieces == r.pieces
        np.testing.assert_array_equal(back.top_logprobs, r.top_logprobs)
        if r.full_logprobs is not None:
            np.testing.assert_array_equal(back.full_logprobs, r.full_logprobs)


# ---- section 7 checks, on real model outputs -------------------------------------------


def test_completion_echo_and_vllm_checks(engine):
    k = 3
    r = score_text(engine, "The quick brown fox 🦊 jumps.", k=k)
    body = json.loads(dumps(openai_completion.export(r)))
    check_completion_logprobs(body["choices"][0]["logprobs"], k, echo=True)
    ids = r.token_ids.tolist()
    v = json.loads(dumps(vllm.export(r)))
    check_prompt_logprobs(v["choices"][0]["prompt_logprobs"], ids, k)
    assert v["choices"][0]["prompt_token_ids"] == ids
    assert v["usage"]["prompt_tokens"] == len(ids)
    # numbers agree with an independent computation
    lp = ref_logprobs(engine.model, ids)
    for pos in range(1, len(ids)):
        for key, val in v["choices"][0]["prompt_logprobs"][pos].items():
            assert abs(val["logprob"] - float(lp[pos - 1, int(key)])) < 1e-4


def test_full_vocab_prompt_logprobs(gpt2):
    r = score_text(gpt2, "fox jumps", k=-1)
    v = json.loads(dumps(vllm.export(r)))
    ids = r.token_ids.tolist()
    entries = v["choices"][0]["prompt_logprobs"]
    check_prompt_logprobs(entries, ids, -1)
    for e in entries[1:]:
        assert len(e) == gpt2.vocab_size
        assert math.isclose(sum(math.exp(x["logprob"]) for x in e.values()), 1.0, rel_tol=1e-3)
    blob = full_vocab_npy(r)
    assert len(blob) - 128 == 2 * gpt2.vocab_size * (r.n - 1)


def test_chat_body_validates_and_bytes_join(gpt2):
    ids = gpt2.encode_chat([{"role": "user", "content": "Emoji: 👋🙂 東京"}])
    for k in (0, 4):
        results = generate(gpt2, ids, SamplerSettings(max_tokens=15, temperature=1.0, seed=7, logprobs=k, n=2))
        body = json.loads(dumps(openai_chat.export(results, options=openai_chat.Options(top_logprobs=k))))
        ChatCompletion.model_validate(body)
        for ch in body["choices"]:
            content = ch["logprobs"]["content"]
            assert b"".join(bytes(e["bytes"]) for e in content) == ch["message"]["content"].encode()
            for e in content:
                tl = [t["logprob"] for t in e["top_logprobs"]]
                assert tl == sorted(tl, reverse=True) and len(tl) == k
            assert ch["logprobs"]["refusal"] is None and "tokens" not in ch["logprobs"]


def test_chat_without_top_logprobs_gives_empty_lists(gpt2):
    r = generate(gpt2, gpt2.encode("Hi"), SamplerSettings(max_tokens=4, temperature=0))
    body = openai_chat.export(r, options=openai_chat.Options(logprobs=True, top_logprobs=0))
    assert all(e["top_logprobs"] == [] for e in body["choices"][0]["logprobs"]["content"])


def test_chat_without_a_k_writes_each_results_own():
    """Options with no k (a download of a result): each entry has the k the result was generated with, and none for a
    result that was only scored: the result's own k, read where it is used, with no `or 0` standing in for it (#56)."""
    r = generated_chat()  # output_k 2
    own = openai_chat.export(r, created=1, id_="x")
    assert own == openai_chat.export(r, options=openai_chat.Options(top_logprobs=2), created=1, id_="x")
    assert [len(e["top_logprobs"]) for e in own["choices"][0]["logprobs"]["content"]] == [2, 2, 2]
    scored = replace(r, output_k=None)
    none = openai_chat.export(scored, created=1, id_="x")
    assert none == openai_chat.export(scored, options=openai_chat.Options(top_logprobs=0), created=1, id_="x")
    assert all(e["top_logprobs"] == [] for e in none["choices"][0]["logprobs"]["content"])
    assert "or 0" not in Path(openai_chat.__file__).read_text()


def test_vllm_offline_shape(gpt2):
    s = SamplerSettings(max_tokens=6, temperature=0.9, seed=2, logprobs=2, prompt_logprobs=2, n=2)
    results = generate(gpt2, gpt2.encode("The lazy dog"), s)
    body = json.loads(dumps(vllm_offline.export(results)))
    assert set(body) >= {"prompt", "prompt_token_ids", "prompt_logprobs", "outputs"}
    check_prompt_logprobs(body["prompt_logprobs"], body["prompt_token_ids"], 2)
    for out, r in zip(body["outputs"], results):
        assert out["token_ids"] == r.token_ids[r.n_prompt :].tolist()
        for tid, e in zip(out["token_ids"], out["logprobs"]):
            assert next(iter(e)) == str(tid) and len(e) in (2, 3)
        assert math.isclose(
            out["cumulative_logprob"],
            sum(e[str(t)]["logprob"] for t, e in zip(out["token_ids"], out["logprobs"])),
            abs_tol=1e-3,
        )


def test_every_format_is_strict_json(gpt2):
    r = generate(
        gpt2,
        gpt2.encode("fox"),
        SamplerSettings(max_tokens=5, temperature=0.5, top_k=3, seed=1, mode="processed", prompt_logprobs=3),
    )
    for fmt in FORMATS:
        text = json.dumps(export(fmt, r))  # allow_nan: a NaN or inf the exporter let through would be written
        json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
        assert_generated_read_back(export(fmt, r), r[0])  # and the strict writer's text holds the generated numbers


def test_native_round_trip_keeps_listed_ranks_and_stop(gpt2):
    """Results with logprob_token_ids (true ranks beside the listed ids) and a stop id survive the native JSON."""
    s = SamplerSettings(max_tokens=6, temperature=1.5, seed=7, logprobs=0, logprob_ids=(5, 17, 40), prompt_logprobs=2)
    r = generate(gpt2, gpt2.encode("The capital of"), s)[0]
    stop = int(r.token_ids[r.n_prompt + 1])
    r = generate(
        gpt2,
        gpt2.encode("The capital of"),
        SamplerSettings(**{**s.to_dict(), "stop": (), "stop_token_ids": (stop,), "logprob_ids": (5, 17, 40)}),
    )[0]
    assert r.top_ranks is not None and r.stop_reason == stop
    d = json.loads(dumps(r.to_dict()))
    back = TokenScores.from_dict(d)
    assert back.to_dict() == d
    np.testing.assert_array_equal(back.top_ranks, r.top_ranks)
    lp = ref_logprobs(gpt2.model, r.token_ids.tolist())
    for pos in range(r.n_prompt, r.n):
        for j, i in enumerate(r.top_ids[pos, :3].tolist()):
            assert r.top_ranks[pos, j] == int((lp[pos - 1] >= lp[pos - 1, i]).sum())
