"""Bodies recorded from a real vLLM 0.32.0 (tests/data/vllm/) open in the page: every token shows, every number is
the body's, and (slow tier) every number equals a plain forward pass of the default model. The vllm tier
(tests/test_vllm_bodies.py) checks that these files still match what the server answers."""

from __future__ import annotations

import contextlib
import gzip
import json
import math
import re
import shutil
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.errors import ExplorerError
from explorer.export.read.documents import MAX_FILE_BYTES, open_document
from tests.helpers.recorded import (
    DATA,
    NAMES,
    all_files,
    assert_opens_as_recorded,
    body,
    json_paths,
    positions,
    raw,
    request_of,
)


def test_the_recorded_set_is_what_the_recorder_makes_and_small():
    assert sorted(p.name for p in all_files()) == NAMES
    assert sum(p.stat().st_size for p in all_files()) < 1.5 * 2**20
    assert (DATA / "README.md").exists()


@pytest.mark.parametrize("name", NAMES)
def test_every_recorded_body_opens_number_by_number(name):
    assert_opens_as_recorded(name, raw(name))


def test_the_known_bug_a_prompt_logprobs_body_without_prompt_token_ids_opens():
    """vLLM sends `prompt_token_ids` only with `return_token_ids`: the ids come off `prompt_logprobs`' keys."""
    plain = open_document(raw("completions.prompt-logprobs.json"))
    with_ids = open_document(raw("completions.prompt-logprobs.token-ids.json")).results[0]
    r = plain.results[0]
    assert r.token_ids[1:5].tolist() == with_ids.token_ids[1:5].tolist() == body(
        "completions.prompt-logprobs.token-ids.json")["choices"][0]["prompt_token_ids"][1:]  # fmt: skip
    assert r.token_text[0] == "[?]" and with_ids.token_text[0] == "The"
    assert r.token_text[1:] == with_ids.token_text[1:]
    np.testing.assert_array_equal(r.logprobs, with_ids.logprobs)
    assert r.ranks.tolist() == with_ids.ranks.tolist()
    assert any("no `prompt_token_ids`" in n and "[?]" in n for n in plain.notes)
    echo = open_document(raw("completions.echo.json"))  # an echo gives the first token's text
    assert echo.results[0].token_text[:5] == with_ids.token_text[:5] and echo.results[0].n_prompt == 5
    assert any("echoed" in n for n in echo.notes)
    chat = open_document(raw("chat.prompt-logprobs.json")).results[0]
    assert chat.n_prompt == len(body("chat.prompt-logprobs.token-ids.json")["prompt_token_ids"])


@pytest.mark.parametrize("stream, whole", [("completions.stream.sse", "completions.json"),
                                           ("completions.stream.token-ids.sse", "completions.token-ids.json"),
                                           ("completions.stream.echo.sse", "completions.echo.token-ids.json"),
                                           ("chat.stream.sse", "chat.json")])  # fmt: skip
def test_a_stream_opens_as_the_body_of_the_same_request(stream, whole):
    """The SSE text as received and the JSON list of its chunks both read as the non-stream body reads."""
    a, b = open_document(raw(stream)), open_document(raw(whole))
    listed = open_document(json.dumps(body(stream)))
    for o in (a, listed):
        r, w = o.results[0], b.results[0]
        assert r.token_text == w.token_text and r.n_prompt == w.n_prompt and r.finish_reason == w.finish_reason
        np.testing.assert_allclose(r.logprobs, w.logprobs, atol=1e-6)
        np.testing.assert_allclose(r.top_logprobs, w.top_logprobs, atol=1e-6)
    assert "stream" in a.notes[0] and "chunks" in listed.notes[0]


def test_offline_outputs_saved_either_way_open_alike_and_match_the_server():
    """`json.dumps(outputs, default=vars)` and a hand-made dict of the same run read alike, and equal the server's
    prompt_logprobs for the same prompt (to 1e-4: the offline engine batches differently)."""
    a, b = (open_document(raw(n)).results[0] for n in ("offline.vars.json", "offline.dict.json"))
    assert a.to_dict() == b.to_dict() and a.n_prompt == 5 and a.output_k is not None
    served = open_document(raw("completions.prompt-logprobs.token-ids.json")).results[0]
    assert a.token_ids.tolist() == served.token_ids.tolist() and a.ranks[:5].tolist() == served.ranks[:5].tolist()
    np.testing.assert_allclose(a.logprobs[:5], served.logprobs[:5], atol=1e-4)
    np.testing.assert_allclose(a.top_logprobs[:5, :5], served.top_logprobs[:5, :5], atol=1e-4)


def test_a_gzipped_full_vocabulary_body_gives_entropy_and_ranks():
    doc = body("offline.full-vocab.json.gz")[0]
    r = open_document(raw("offline.full-vocab.json.gz")).results[0]
    for j, d in enumerate(doc["prompt_logprobs"]):
        if d is None:
            continue
        lp = np.array([v["logprob"] for v in d.values()], np.float64)
        assert len(d) == 49_152 and abs(float(r.entropy[j]) + float((np.exp(lp) * lp).sum())) < 1e-4
        best = sorted(d.items(), key=lambda kv: -kv[1]["logprob"])[: r.top_ids.shape[1]]
        assert r.top_ids[j].tolist() == [int(k) for k, _ in best]
        assert r.ranks[j] == d[str(doc["prompt_token_ids"][j])]["rank"]


@pytest.mark.parametrize(
    "data, why",
    [
        (b'data: {"choices": [}\n\n', "event before line 2 is not JSON"),
        (b'data: {"error": {"message": "boom"}}\n\ndata: [DONE]\n', "error from the server: boom"),
        (b"data: [DONE]\n", "holds no chunks"),
        (b"data: {}\n\nhello\n", "line 3 of the stream is not `data: ...`"),
        (b'data: {"object": "chat.completion.chunk", "choices": [{"delta": []}]}\n\n', "`delta` must be"),
        (gzip.compress(b"x" * (MAX_FILE_BYTES + 10)), "larger than 32 MB once decompressed"),
        (b"\x1f\x8b not gzip", "does not decompress"),
        (json.dumps({"error": {"message": "Requested prompt logprobs of 49152"}}).encode(), "an error answer"),
        (b"[1, 2]", "a stream's chunks or vLLM offline outputs"),
        (json.dumps([{"choices": [{"text": 1}]}]).encode(), "no logprobs"),
    ],
)
def test_a_bad_stream_or_archive_is_one_clear_message(data, why):
    with pytest.raises(ExplorerError, match=r"^This file could not be opened: .*" + re.escape(why)):
        open_document(data)


def test_a_zlib_bomb_stops_at_the_limit():
    z = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip framing
    bomb = z.compress(b"\0" * (MAX_FILE_BYTES * 4)) + z.flush()
    assert len(bomb) < 200_000
    with pytest.raises(ExplorerError, match="once decompressed"):
        open_document(bomb)


LEAF = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6)
VALUE = st.recursive(LEAF, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3),
                     max_leaves=6)  # fmt: skip
SMALL = [n for n in NAMES if not n.endswith(".gz")]


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(SMALL), st.data(), VALUE)
def test_fuzz_a_recorded_body_with_one_field_changed_is_opened_or_one_clear_message(name, data, value):
    doc = body(name)
    where = data.draw(st.sampled_from([q for q in json_paths(doc, 4) if q]))
    node = doc
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    if name.endswith(".sse"):
        text = "".join(f"data: {json.dumps(c)}\n\n" for c in doc) + "data: [DONE]\n\n"
    else:
        text = json.dumps(doc)
    with contextlib.suppress(ExplorerError):
        open_document(text.encode())


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([n for n in SMALL if n.endswith(".sse")]), st.data())
def test_fuzz_a_recorded_stream_cut_or_spliced_is_opened_or_one_clear_message(name, data):
    lines = raw(name).decode().split("\n")
    i = data.draw(st.integers(0, len(lines) - 1))
    j = data.draw(st.integers(i, len(lines)))
    junk = data.draw(st.sampled_from(["", "data:", "data: {", "event: x", ": ping", "data: [DONE]", "x", "\r"]))
    with contextlib.suppress(ExplorerError):
        open_document("\n".join([*lines[:i], junk, *lines[j:]]).encode())


# ---- the page: every token shows -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def page_share(gpt2):
    from explorer.serving.models import Models
    from explorer.ui.layout import page

    def loader(spec):
        raise ExplorerError("not loading in this test")

    models = Models(["tiny-gpt2"], allow_hub=False, loader=loader)
    models.add(gpt2)
    return page(models)


@pytest.mark.parametrize("name", NAMES)
def test_the_page_shows_every_token_of_a_recorded_body(page_share, name):
    from gradio.utils import get_upload_folder

    from explorer.render.text import chip_html

    folder = get_upload_folder()
    import os

    os.makedirs(folder, exist_ok=True)
    path = shutil.copy(DATA / name, os.path.join(folder, f"recorded-{name}"))
    p = page_share
    out = p.share.open_file(path, "tiny-gpt2", "logprob", "1, 10, 100, 1000", 10)
    want, _ = positions(name)
    html = out[p.inspector.heatmap]
    chips = re.findall(r'data-pos="(\d+)"[^>]*>(.*?)</span><wbr>', html)
    assert [int(i) for i, _ in chips] == list(range(len(want)))
    r = out[p.inspector.result][0]
    assert [c for _, c in chips] == [chip_html(t) for t in r.token_text]
    assert "Opened" in out[p.share.note] and "without running a model" in out[p.share.note]


# ---- slow tier: the numbers are the default model's --------------------------------------------------------------
@pytest.fixture(scope="module")
def local_runs(smollm):
    """Per request: the default model's token ids (its tokenizer, then greedy decoding, as temperature 0 does)
    and the (T-1, V) log_softmax of its logits over them."""
    import torch

    from tests.helpers.reference import ref_logprobs

    tok, runs = smollm.tokenizer, {}

    def run(kind, prompt, new):
        if kind == "chat":
            ids = tok.encode(
                tok.apply_chat_template(prompt, add_generation_prompt=True, tokenize=False), add_special_tokens=False
            )
        else:
            ids = tok.encode(prompt)
        n_prompt = len(ids)
        with torch.no_grad():
            for _ in range(new):
                ids.append(int(smollm.model(torch.tensor([ids])).logits[0, -1].argmax()))
                if ids[-1] in smollm.eos_ids:
                    break
        return ids, n_prompt, ref_logprobs(smollm.model, ids)

    def get(name):
        key = json.dumps(request_of(name))
        if key not in runs:
            runs[key] = run(*request_of(name))
        return runs[key]

    return get


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_recorded_numbers_equal_a_local_forward_pass(smollm, local_runs, name):
    """Plain torch log_softmax + gather on the model's logits, to 1e-4: logprobs, ranks (where the body gives
    them), and the alternatives' logprobs; the ids the body gives (or implies by its text) are the local ones."""
    from tests.helpers.reference import assert_rank_close

    r = open_document(raw(name)).results[0]
    ids, n_prompt, lp = local_runs(name)
    start = n_prompt - r.n_prompt  # a body without the prompt starts at the first generated token
    assert start in (0, n_prompt) and r.n - r.n_prompt == len(ids) - n_prompt  # the same tokens generated
    for j in range(r.n):
        pos = start + j
        assert r.token_bytes[j] in (smollm.vocab[ids[pos]], b"[?]", f"[{ids[pos]}]".encode()), j  # text, else id
        if pos == 0 or math.isnan(r.logprobs[j]):
            continue
        row = lp[pos - 1]
        assert abs(float(row[ids[pos]]) - float(r.logprobs[j])) < 1e-4, j
        if r.ranks[j]:
            assert_rank_close(int(r.ranks[j]), row, ids[pos], eps=1e-4)
        k = int((r.top_ids[j] >= 0).sum())
        top = torch_sorted(row)[:k]
        np.testing.assert_allclose(r.top_logprobs[j, :k], top, atol=1e-4)


def torch_sorted(row) -> np.ndarray:
    return row.sort(descending=True).values.numpy()
