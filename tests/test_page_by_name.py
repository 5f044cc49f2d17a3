"""The page wired by name: every sampler control is one field of `Sampler` and one widget by the same name, reaches
the engine through the handler's keyword inputs, and travels through a link and back; the tabs are keyed by id and
every tab's link is one class, Score, Generate and Chat included."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest
import torch

from explorer.engine import generate
from explorer.errors import ExplorerError
from explorer.rules.sampler import SamplerSettings
from explorer.ui.links import LINKS, TABS, ResultLink, decode, encode
from explorer.ui.sampler import Sampler, sampler_controls
from tests.helpers.reference import ref_logprobs
from tests.helpers.share import built, last, pack, restore, view  # noqa: F401 - `built`: fixture

GPT2 = "tiny-gpt2"
PROMPT = "the the the cat the"


def test_every_sampler_field_has_its_widget_by_name_and_range():
    import gradio as gr

    with gr.Blocks():
        controls = sampler_controls(cap=100)
    assert list(controls) == [*Sampler.names(), "score_prompt"]
    for name, (lo, hi) in Sampler.ranges().items():
        slider = controls[name]
        assert isinstance(slider, gr.Slider) and slider.minimum == lo
        assert slider.maximum == (min(hi, 100) if name == "max_tokens" else hi)
        assert slider.value == getattr(Sampler(), name)
    assert set(Sampler.names()) <= {f.name for f in fields(SamplerSettings)}  # the engine's names, no mapping


def test_tabs_are_keyed_by_id_and_each_has_one_link_class(built):
    p = built[0]
    assert set(TABS) <= set(p.tabs) and all(p.tabs[i].tab.id == i for i in p.tabs)
    assert all(issubclass(LINKS[t], ResultLink) for t in TABS)
    result_keys = {f.name for t in TABS for f in fields(LINKS[t])}
    for name, cls in LINKS.items():  # a view over a result carries its maker's keys: no tab may reuse one
        if name not in TABS and cls.on_result:
            assert not result_keys & {f.name for f in fields(cls)}, name


def test_a_new_control_reaches_the_engine_by_name(built, gpt2):
    """Presence penalty (the control added by name): the page's run equals the engine's with the same settings,
    and differs from the run without it (the control is not dropped on the way)."""
    p = built[0]
    gen = p.tabs["generate"]
    values = {**Sampler(max_tokens=8, temperature=0.0).controls(), "score_prompt": False, "k": 5}
    page = [list(gen.generate(GPT2, PROMPT, **{**values, "presence_penalty": x}))[-1] for x in (0.0, 2.0)]
    r = [out[gen.inspector.result][0] for out in page]
    for x, got in zip((0.0, 2.0), r):
        s = SamplerSettings(max_tokens=8, temperature=0.0, presence_penalty=x, logprobs=5)
        want = generate(gpt2, gpt2.encode(PROMPT), s)[0]
        assert got.token_ids.tolist() == want.token_ids.tolist() and got.sampler["presence_penalty"] == x
        n, ids = got.n_prompt, got.token_ids.tolist()  # the raw logprob of each generated token, independently
        plain = ref_logprobs(gpt2.model, ids)[n - 1 :].gather(-1, torch.tensor(ids[n:])[:, None])[:, 0].numpy()
        np.testing.assert_allclose(got.logprobs[n:], plain, atol=1e-4)
    processed = {**values, "mode": "processed", "presence_penalty": 2.0}  # the numbers the sampler drew from
    q = list(gen.generate(GPT2, PROMPT, **processed))[-1][gen.inspector.result][0]
    ids, n = q.token_ids.tolist(), q.n_prompt
    assert ids == r[1].token_ids.tolist()
    repeats = [ids[p] in ids[n:p] for p in range(n, q.n)]
    lower = [bool(q.logprobs[p] < r[1].logprobs[p] - 1e-3) for p in range(n, q.n)]
    assert any(repeats) and lower == repeats  # a token already generated had 2.0 taken off its logit


def test_a_new_control_travels_through_a_link(built):
    p = built[0]
    gen = p.tabs["generate"]
    state = view("generate", text=PROMPT, sampler={"max_tokens": 4, "temperature": 0.0, "presence_penalty": 1.5})
    code = encode(state)
    assert decode(code) == state and decode(code).source.sampler.presence_penalty == 1.5
    outs = restore(built, code)
    assert last(outs, gen.controls["presence_penalty"]) == 1.5
    assert last(outs, gen.inspector.result)[0].sampler["presence_penalty"] == 1.5
    plain = decode(encode(view("generate", text=PROMPT, sampler={"max_tokens": 4}))).to_dict()["sampler"]
    assert "presence_penalty" not in plain  # unset: written as before it existed (old links keep their bytes)
    with pytest.raises(ExplorerError, match="presence_penalty"):  # outside its slider: refused, saying which
        decode(pack({"tab": "generate", "text": PROMPT, "sampler": {"presence_penalty": 3.0}}))


def test_the_endpoints_keep_their_parameters_in_order(built):
    """A client passing values by position keeps working: the controls added since come after the old ones."""
    info = built[0].demo.get_api_info()["named_endpoints"]
    names = {e: [p["parameter_name"] for p in info[e]["parameters"]] for e in ("/generate", "/chat", "/why")}
    old = ["max_tokens", "temperature", "top_p", "top_k", "seed", "stop", "mode", "score_prompt", "metric",
           "thresholds_text", "k"]  # fmt: skip
    assert names["/generate"] == ["prompt", *old, "presence_penalty", "min_p"]
    assert names["/chat"][-len(old) - 2 :] == [*old, "presence_penalty", "min_p"]
    assert names["/why"] == ["selected", "contrast", "method", "units", "detail", "mode", "steps", "baseline",
                             "with_special"]  # fmt: skip
    names |= {e: [p["parameter_name"] for p in info[e]["parameters"]] for e in ("/whatif", "/compare", "/branch")}
    assert names["/whatif"] == ["selected", "temperature", "top_k", "top_p", "min_p", "repetition_penalty", "top_n"]
    assert names["/compare"] == ["mode", "name_a", "name_b", "text", "prompt_a", "prompt_b", "colour"]
    assert names["/branch"] == [  # no look
        "at", "alts", "source", *old[: old.index("metric")], "presence_penalty", "min_p"
    ]  # fmt: skip


@pytest.mark.parametrize("stops", [("a\r\nb",), ("x\\ny", "\n\n"), ("\u2028", "c:\\path\\"), ()])
def test_stop_strings_survive_the_stop_box(stops):
    s = Sampler(stop=stops)
    assert Sampler.from_controls(s.controls()) == s


def test_a_view_keeps_the_source_it_is_given():
    from explorer.ui.tabs.generate import GenerateLink

    own = GenerateLink(text="hello")
    assert view("generate", text="hello").source == own
    from explorer.ui.links import ViewState

    assert ViewState(tab="generate", source=own).source is own and ViewState(tab="generate", tool=own).tool is own


def test_a_cleared_chat_says_so_instead_of_a_link(built):
    from explorer.ui.sampler import RunOptions

    p = built[0]
    chat, ins = p.tabs["chat"], p.inspector
    out = list(chat.reply(GPT2, [], "", "Hi", RunOptions.from_values({"max_tokens": 2, "k": 5})))[-1]
    values = {c: None for c in p.share.copy_inputs}
    values |= dict(zip(ins.look.values(), ("logprob", "1, 10, 100, 1000", 5)))
    values |= {ins.result: out[ins.result], ins.view: out[ins.view], ins.selected: 1, p.share.current: "chat"}
    assert p.share.copy_link({**values, chat.history: out[chat.history]})[p.share.code]  # the conversation: a link
    cleared = p.share.copy_link({**values, chat.history: []})  # after *New conversation*
    assert not cleared[p.share.code] and "no message now" in cleared[p.share.link_note]
