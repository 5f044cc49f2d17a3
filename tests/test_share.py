"""Links and session files: round trips, hostile links and files (a clear ExplorerError, never another exception),
imports of vLLM and OpenAI bodies checked number by number, and fuzzing that nothing in a link or a file loads a model
outside the allowed set."""

from __future__ import annotations

import contextlib
import json
import math
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.errors import ExplorerError
from explorer.export.read.documents import open_document
from explorer.ui.links import MAX_LINK_CHARS, ViewState, decode, encode, link_fields
from explorer.ui.sampler import Sampler
from tests.helpers.recorded import close, json_paths
from tests.helpers.share import (  # noqa: F401 - `built`: fixture
    GEN,
    JSON,
    SCRIPT,
    STATES,
    built,
    last,
    note_of,
    pack,
    page_values,
    restore,
    view,
    with_base,
)  # fmt: skip

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("tab", list(STATES))
def test_every_tab_round_trips(tab):
    s = STATES[tab]
    code = encode(s)
    assert code.startswith("2.") and len(code) < 400 and "=" not in code and "+" not in code and "/" not in code
    assert decode(code) == s
    src = decode(encode(with_base(s, text=SCRIPT, system=SCRIPT))).source  # its texts: the prompt's, the system's
    assert [getattr(src, f) for f in ("text", "system") if hasattr(src, f)] == [SCRIPT]


def test_a_few_pages_fit_and_a_longer_text_says_use_the_session_file():
    pages = " ".join(f"Sentence {i} of a long essay about the weather and the sea." for i in range(120))
    assert decode(encode(view(text=pages))).source.text == pages  # ~7,000 characters of text
    import random

    rnd = random.Random(0)
    noise = "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz0123456789 ") for _ in range(12_000))
    with pytest.raises(ExplorerError, match=r"too long for a link.*Download session"):
        encode(view(text=noise))


BAD = {
    "empty": "",
    "garbage": "hello world",
    "no version": "AAAA",
    "other version": "3." + pack({})[2:],
    "not base64": "1.!!!***",
    "truncated": encode(STATES["chat"])[:40],
    "huge": "1." + "A" * (MAX_LINK_CHARS + 10),
    "zip bomb": pack(None, b"[" + b"0," * 2_000_000 + b"0]"),
    "not json": pack(None, b"\xff\xfe not json"),
    "deep json": pack(None, b"[" * 100_000 + b"]" * 100_000),
    "a list": pack([1, 2]),
    "tab": pack({"tab": "lens2"}),
    "tab type": pack({"tab": 5}),
    "text type": pack({"text": ["a"]}),
    "k range": pack({"k": 99}),
    "k type": pack({"k": "10"}),
    "k bool": pack({"k": True}),
    "selected": pack({"selected": -1}),
    "thresholds": pack({"thresholds": [10, 1]}),
    "metric": pack({"metric": SCRIPT}),
    "temperature": pack({"tab": "generate", "sampler": {"temperature": 5}}),
    "temperature type": pack({"tab": "generate", "sampler": {"temperature": "hot"}}),
    "seed": pack({"tab": "generate", "sampler": {"seed": -1}}),
    "max tokens": pack({"sampler": {"max_tokens": 100_000}}),
    "mode": pack({"sampler": {"mode": SCRIPT}}),
    "stop": pack({"sampler": {"stop": "x"}}),
    "messages": pack({"tab": "chat", "messages": [["system", "x"]]}),
    "chat ends with assistant": pack({"tab": "chat", "messages": [["user", "x"], ["assistant", "y"]]}),
    "model type": pack({"model": {"source": "/etc"}}),
}


@pytest.mark.parametrize("name", list(BAD))
def test_hostile_links_are_one_clear_message(name):
    with pytest.raises(ExplorerError) as err:
        decode(BAD[name])
    assert str(err.value).startswith("This link is damaged or cut short: ")


def test_unknown_keys_are_ignored_and_script_is_only_text():
    v = decode(pack({"text": SCRIPT, "model": SCRIPT, "evil": {"__proto__": 1}, "start": SCRIPT[:60]}))
    assert v.source.text == SCRIPT and v.base.model == SCRIPT and v.tab == "score"


# ---- the page's handlers: links never load a model outside the allowed set, files never load one -------------------
def test_a_link_naming_a_model_not_served_is_refused_before_anything_loads(built):
    p, _models, calls = built
    calls.clear()
    for name in ["gpt2", "/etc/passwd", "../../models/x", "HuggingFaceTB/SmolLM2-1.7B", SCRIPT]:
        outs = restore(built, encode(view(model=name, text="hi")))
        assert "is not available here" in note_of(p, outs) and "<script>" not in note_of(p, outs)
    assert calls == []


def test_a_link_reruns_and_selects_its_token(built, gpt2):
    p, _, calls = built
    outs = restore(built, encode(view(model="tiny-gpt2", text="The quick brown fox", selected=2, k=3)))
    assert last(outs, p.inspector.selected) == 2 and 'data-pos="2"' in last(outs, p.inspector.detail)
    assert outs[0][p.tabs["score"].text] == "The quick brown fox" and calls == []


def test_a_bad_link_is_a_note_and_the_default_page(built):
    p = built[0]
    outs = restore(built, "1.%%%<b>x</b>")
    assert len(outs) == 1 and set(outs[0]) == {p.share.note}
    assert "damaged" in outs[0][p.share.note] and "<b>x" not in outs[0][p.share.note]


# real links of each tab, their model, text and token varied (3 tokens at most drawn, so a restore stays quick)
LINKS = st.builds(
    lambda s, model, text, selected: encode(with_base(s, model=model, text=text, selected=selected)),
    st.sampled_from(
        [with_base(s, sampler=replace(getattr(s.source, "sampler", Sampler()), max_tokens=3)) for s in STATES.values()]
    ),
    st.sampled_from(["tiny-gpt2", "", "gpt2", "../../models/x"]),
    st.text(max_size=40),
    st.integers(0, 40),
)


def test_fuzz_decode_and_restore_never_escape_nor_load_outside_the_list(built):
    """Random text, random bytes packed as a link, and real links: nothing loads outside the list. Each kind is drawn,
    and real links decode, so the check ran on links that reach the page's runs."""
    _p, models, calls = built
    seen: Counter = Counter()

    @settings(max_examples=150, deadline=None)
    @given(
        st.one_of(
            st.tuples(st.just("text"), st.text(max_size=300)),
            st.tuples(st.just("bytes"), st.binary(max_size=300).map(lambda b: pack(None, b))),
            st.tuples(st.just("link"), LINKS),
        )
    )
    def fuzz(case):
        kind, code = case
        try:
            decode(code)
            seen[kind, "decoded"] += 1
        except ExplorerError:
            seen[kind, "refused"] += 1
        restore(built, code)
        assert set(calls) <= set(models.names)

    fuzz()
    assert seen["text", "refused"] and seen["bytes", "refused"] and seen["link", "decoded"], seen


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from([*link_fields(), "x"]), JSON, max_size=8))
def test_fuzz_link_fields(built, d):
    _p, models, calls = built
    code = pack(d)
    with contextlib.suppress(ExplorerError):
        decode(code)
    restore(built, code)
    assert set(calls) <= set(models.names)


def _mutations(doc, draw_path, value):
    """`doc` with the leaf (or branch) at `draw_path` replaced by `value`."""
    node = doc
    for key in draw_path[:-1]:
        node = node[key]
    node[draw_path[-1]] = value
    return doc


GOLDENS = sorted(GOLDEN.glob("*.json"))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(GOLDENS), st.data(), JSON)
def test_fuzz_open_document_and_the_open_handler(built, tmp_path, path, data, value):
    p, _models, calls = built
    doc = json.loads(path.read_text())
    where = data.draw(st.sampled_from([q for q in json_paths(doc, 3) if q]))
    body = json.dumps(_mutations(doc, where, value)).encode()
    calls.clear()
    with contextlib.suppress(ExplorerError):
        open_document(body)
    f = tmp_path / "x.json"
    f.write_bytes(body)
    out = p.share.open_file(str(f), "tiny-gpt2", "logprob", "1, 10, 100, 1000", 5)
    assert p.share.note in out and calls == []


@pytest.mark.parametrize(
    "data", [b"", b"\x00\xff", b"[]", b"null", b'{"choices": []}', b'{"choices": [{"text": "x"}]}', b"{" * 50_000]
)
def test_hostile_files_are_one_clear_message(data):
    with pytest.raises(ExplorerError, match=r"^This file could not be opened: "):
        open_document(data)


# ---- imports, number by number -----------------------------------------------------------------------------
def test_vllm_prompt_logprobs_body_number_by_number():
    body = json.loads((GOLDEN / "scored.vllm.json").read_text())
    o = open_document(json.dumps(body))
    r, c = o.results[0], body["choices"][0]
    assert o.shape == "vllm" and r.token_ids.tolist() == c["prompt_token_ids"] and r.n_prompt == r.n
    for j, entry in enumerate(c["prompt_logprobs"]):
        if entry is None:
            assert math.isnan(r.logprobs[j]) and r.ranks[j] == 0
            continue
        own = entry[str(c["prompt_token_ids"][j])]
        assert close(own["logprob"], r.logprobs[j]) and r.ranks[j] == own["rank"]
        assert r.token_text[j] == own["decoded_token"] and math.isnan(r.entropy[j])
        for i, lp, rk in zip(r.top_ids[j], r.top_logprobs[j], r.top_ranks[j]):
            if i >= 0:
                assert close(entry[str(i)]["logprob"], lp) and entry[str(i)]["rank"] == rk
        listed = [int(i) for i, v in entry.items() if v["rank"] <= len(entry) - 1 or int(i) != c["prompt_token_ids"][j]]
        assert sorted(i for i in r.top_ids[j].tolist() if i >= 0) == sorted(listed)
    assert any("Entropy is not in the body" in n for n in o.notes)


def test_openai_chat_body_number_by_number():
    body = json.loads((GOLDEN / "chat.openai-chat.json").read_text())
    o = open_document(json.dumps(body))
    r, content = o.results[0], body["choices"][0]["logprobs"]["content"]
    assert o.shape == "openai-chat" and r.n == len(content) and r.n_prompt == 0 and r.output_k is not None
    for j, e in enumerate(content):
        assert close(e["logprob"], r.logprobs[j]) and r.token_bytes[j] == bytes(e["bytes"])
        tops = [(t["logprob"], bytes(t["bytes"])) for t in e["top_logprobs"]]
        got = [(float(lp), r.pieces[int(i)]) for i, lp in zip(r.top_ids[j], r.top_logprobs[j]) if i >= 0]
        assert [b for _, b in got] == [b for _, b in sorted(tops, key=lambda t: -t[0])]
        assert all(close(a, b) for (a, _), (b, _) in zip(sorted(tops, key=lambda t: -t[0]), got))
        assert r.ranks[j] == 1 + sum(t["logprob"] > e["logprob"] for t in e["top_logprobs"])  # listed: rank known
    assert r.text == body["choices"][0]["message"]["content"]


def test_openai_completions_body_number_by_number():
    body = {"object": "text_completion", "model": "m", "usage": {"prompt_tokens": 2, "completion_tokens": 2},
            "choices": [{"text": "ab", "finish_reason": "length", "logprobs": {
                "tokens": ["A", " b", " c", "\\xe6"], "token_logprobs": [None, -1.5, -0.25, -3.0],
                "top_logprobs": [None, {" b": -1.5, " x": -0.5, " y": -2.0}, {" c": -0.25, " q": -2.5},
                                 {"\\xe6": -3.0, " z": -0.1, " w": -1.0}],
                "text_offset": [0, 1, 3, 5]}}]}  # fmt: skip
    o = open_document(json.dumps(body))
    r = o.results[0]
    assert o.shape == "openai-completion" and r.n_prompt == 2 and r.finish_reason == "length"
    assert r.token_bytes == [b"A", b" b", b" c", b"\xe6"] and math.isnan(r.logprobs[0])
    assert [float(x) for x in r.logprobs[1:]] == [-1.5, -0.25, -3.0]
    assert r.ranks.tolist() == [0, 2, 1, 0]  # " b" ranks 2 (known: " y" is below it); "\xe6" is the lowest: unknown
    assert [r.pieces[i] for i in r.top_ids[1] if i >= 0] == [b" x", b" b", b" y"]
    assert [r.pieces[i] for i in r.top_ids[3] if i >= 0] == [b" z", b" w"]  # the actual, maybe an extra, left out
    assert any("carry no ranks" in n for n in o.notes)


def test_vllm_chat_body_with_prompt_logprobs_at_the_top():
    body = {"object": "chat.completion", "model": "m", "prompt_token_ids": [5, 6],
            "prompt_logprobs": [None, {"6": {"logprob": -2.0, "rank": 3, "decoded_token": "hi"},
                                       "9": {"logprob": -0.1, "rank": 1, "decoded_token": "yo"}}],
            "choices": [{"message": {"role": "assistant", "content": "ok"}, "token_ids": [11],
                         "logprobs": {"content": [{"token": "ok", "logprob": -0.5, "bytes": [111, 107],
                                                   "top_logprobs": [{"token": "ok", "logprob": -0.5}]}]}}]}  # fmt: skip
    o = open_document(json.dumps(body))
    r = o.results[0]
    assert o.shape == "vllm-chat" and r.token_ids.tolist() == [5, 6, 11] and r.n_prompt == 2
    assert r.ranks.tolist() == [0, 3, 1] and [float(x) for x in r.logprobs[1:]] == [-2.0, -0.5]
    assert r.token_text == ["[5]", "hi", "ok"] and any("[id]" in n for n in o.notes)


def test_a_session_file_round_trips_with_its_inputs(built, gpt2, tmp_path):
    from explorer.engine.passes.scoring import score_text
    from explorer.ui.inspector import View

    p, _, calls = built
    r = score_text(gpt2, "The capital of France is Paris.", k=5)
    values = [[r], View(), 3, "rank", "1, 5", 4, "The capital of France is Paris.", False, "eos", "", "", []]
    path = p.share.prepare_session(page_values(p, values)).value["path"]
    o = open_document(Path(path).read_bytes())
    assert o.shape == "session" and o.results[0].to_dict() == r.to_dict()
    assert ViewState.from_dict(o.view) == view(model="tiny-gpt2", text=values[6], metric="rank",
                                               thresholds=(1, 5), k=4, selected=3)  # fmt: skip
    calls.clear()
    out = p.share.open_file(path, "other-model", "logprob", "1, 10, 100, 1000", 10)
    assert out[p.inspector.selected] == 3 and out[p.tabs["score"].text] == values[6] and calls == []
    assert "this session&#x27;s model is other-model" in out[p.share.note]  # escaped


def test_a_generation_link_replays_and_a_chat_link_restores_the_conversation(built, gpt2):
    p, _, calls = built
    gen = encode(view("generate", model="tiny-gpt2", text="The lazy", sampler={**GEN, "mode": "raw"}))
    runs = [last(restore(built, gen), p.inspector.result)[0] for _ in range(2)]
    assert runs[0].token_ids.tolist() == runs[1].token_ids.tolist() and runs[0].sampler["seed"] == GEN["seed"]
    outs = restore(built, encode(STATES["chat"]))
    chat = p.tabs["chat"]
    assert outs[0][chat.history] == [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}]
    assert outs[0][chat.message] == "Why?" and outs[0][p.share.tab_block].selected == "chat"
    r = last(outs, p.inspector.result)[0]
    assert r.prompt_text.count("<|user|>") == 2 and "Be terse." in r.prompt_text and calls == []
    # its own link again: the same conversation, the reply left for the rerun
    values = [[r], last(outs, p.inspector.view), 12, "entropy", "1, 10, 100, 1000", 10, "", False, "eos", "",
              "Be terse.", last(outs, chat.history)]  # fmt: skip
    again = decode(p.share.copy_link(page_values(p, values))[p.share.code])
    assert again.source.messages == STATES["chat"].source.messages
    assert again.source.sampler.seed == STATES["chat"].source.sampler.seed


def test_copy_link_of_a_long_text_offers_the_session_file(built, gpt2):
    from explorer.engine.passes.scoring import score_text
    from explorer.ui.inspector import View

    p = built[0]
    import random

    rnd = random.Random(1)
    text = "".join(rnd.choice("abcdefghij klmnop") for _ in range(20_000))
    r = score_text(gpt2, "short", k=5)
    out = p.share.copy_link(
        page_values(p, [[r], View(), 0, "logprob", "1, 10, 100, 1000", 10, text, False, "eos", "", "", []])
    )
    assert (
        out[p.share.code] == ""
        and "too long for a link" in out[p.share.link_note]
        and "Download session" in out[p.share.link_note]
    )
    nothing = p.share.copy_link(
        page_values(p, [[], None, 0, "logprob", "1, 10, 100, 1000", 10, "", False, "eos", "", "", []])
    )
    assert "Score a text, generate or chat first" in nothing[p.share.link_note]


def test_a_full_vocabulary_prompt_logprobs_entry_gives_its_entropy():
    import numpy as np

    rng = np.random.default_rng(0)
    logits = rng.normal(size=1500) * 3
    lp = logits - np.log(np.exp(logits).sum())
    order = np.argsort(-lp)
    ranks = np.empty(1500, int)
    ranks[order] = np.arange(1, 1501)
    entry = {str(i): {"logprob": float(lp[i]), "rank": int(ranks[i]), "decoded_token": f"t{i}"} for i in range(1500)}
    body = {"object": "text_completion", "model": "m", "choices": [{"text": "", "logprobs": None,
            "prompt_token_ids": [3, 42], "prompt_logprobs": [None, entry]}]}  # fmt: skip
    r = open_document(json.dumps(body)).results[0]
    assert abs(float(r.entropy[1]) - float(-(np.exp(lp) * lp).sum())) < 1e-4 and r.ranks[1] == ranks[42]
    assert r.top_ids[1].tolist()[:5] == order[:5].tolist() and r.top_ids.shape[1] == 64


def test_a_link_runs_as_model_work_and_opening_a_file_does_not():
    """Marked handlers share the public queue, its caps and (on ZeroGPU) spaces.GPU; opening a file uses no model."""
    from explorer.ui.actions import marked
    from explorer.ui.share import Share

    assert marked(Share.restore) and not marked(Share.open_file) and not marked(Share.copy_link)
