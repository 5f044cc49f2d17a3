"""One hop for a request (#56): a `/v1` body becomes its plan (ids, one validated SamplerSettings, the export
options) in one call at the edge, each value checked once, the client's name kept to the exporter."""

from __future__ import annotations

import pytest

from explorer.api import handlers, schemas
from explorer.engine import with_seed
from explorer.errors import ExplorerError
from explorer.export.hidden_states import Shape
from explorer.rules import sampler as rules
from explorer.rules.sampler import Limits, SamplerSettings

CHAT = {"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 3}


@pytest.fixture
def checked(monkeypatch) -> list[tuple[str, object]]:
    """Every `check_k` call (its param and value), wherever it is called from."""
    calls: list[tuple[str, object]] = []
    real = rules.check_k

    def counted(value, param, *, allow_full):
        calls.append((param, value))
        return real(value, param, allow_full=allow_full)

    monkeypatch.setattr(rules, "check_k", counted)
    monkeypatch.setattr(schemas, "check_k", counted, raising=False)  # schemas checks no k of its own (#56)
    return calls


def test_a_chat_body_is_its_plan_in_one_call(gpt2, checked):
    req = schemas.parse(schemas.ChatRequest, {**CHAT, "logprobs": True, "top_logprobs": 3})
    p = handlers.chat_plan(gpt2, req, Limits())
    assert p.prompts == [gpt2.encode_chat(req.chat_messages())]
    assert p.settings.logprobs == 3 and p.options.top_logprobs == 3 and p.options.logprobs is True
    assert p.settings.seed is not None and p.hidden is None and p.options.hidden_states is None
    values = [v for param, v in checked if param in ("top_logprobs", "logprobs")]
    assert values == [3]  # top_logprobs checked once (as SamplerSettings' logprobs), not three times


@pytest.mark.parametrize(
    "body",
    [
        {"prompt": "Hi", "max_tokens": 1, "prompt_logprobs": 2},
        {"prompt": "Hi", "max_tokens": 0, "echo": True, "logprobs": 3, "prompt_logprobs": 2},
        {"prompt": "Hi", "max_tokens": 0, "echo": True, "prompt_logprobs": -1},
    ],
)
def test_prompt_logprobs_is_checked_once(gpt2, checked, body):
    req = schemas.parse(schemas.CompletionRequest, body)
    p = handlers.completion_plan(gpt2, req, Limits())
    assert [param for param, _ in checked].count("prompt_logprobs") == 1
    assert p.settings.prompt_logprobs == (-1 if body["prompt_logprobs"] == -1 else max(2, body.get("logprobs", 0)))


@pytest.mark.parametrize("k", [-5, 21])
def test_a_prompt_logprobs_error_names_the_value_sent(gpt2, k):
    """Widened by echo's `logprobs` or not, a `prompt_logprobs` out of range is refused with the value sent."""
    for extra in ({}, {"echo": True, "logprobs": 3, "max_tokens": 0}):
        req = schemas.parse(schemas.CompletionRequest, {"prompt": "Hi", "prompt_logprobs": k, **extra})
        with pytest.raises(ExplorerError) as e:
            handlers.completion_plan(gpt2, req, Limits())
        assert e.value.param == "prompt_logprobs" and f"`prompt_logprobs` (={k})" in e.value.message


def test_a_seed_is_drawn_without_a_second_check(checked):
    s = SamplerSettings(temperature=0.7, logprobs=4)
    before = len(checked)
    seeded = with_seed(s)
    assert len(checked) == before  # no second __post_init__
    assert seeded.seed is not None and 0 <= seeded.seed < 2**31 and seeded.logprobs == 4 and s.seed is None
    assert with_seed(seeded) is seeded and with_seed(SamplerSettings(temperature=0.0)).seed is None


@pytest.mark.parametrize("k", [30, -1])
def test_a_chat_k_error_names_the_field_sent(gpt2, k):
    req = schemas.parse(schemas.ChatRequest, {**CHAT, "logprobs": True, "top_logprobs": k})
    with pytest.raises(ExplorerError) as e:
        handlers.chat_plan(gpt2, req, Limits())
    assert e.value.param == "top_logprobs" and f"`top_logprobs` (={k})" in e.value.message
    assert "`logprobs`" not in e.value.message


def test_not_asked_stays_not_asked(gpt2):
    """No logprobs asked: the exporter is told so (None / False), whatever k the engine records."""
    chat = handlers.chat_plan(gpt2, schemas.parse(schemas.ChatRequest, CHAT), Limits())
    assert chat.options.logprobs is False and chat.options.prompt_logprobs is None
    comp = handlers.completion_plan(
        gpt2, schemas.parse(schemas.CompletionRequest, {"prompt": "Hi", "max_tokens": 2}), Limits()
    )
    assert comp.options.logprobs is None and comp.options.prompt_logprobs is None and comp.listed is None


def test_hidden_states_are_the_exporters_to_write(gpt2):
    """The plan tells the exporter how the states are written; the handler attaches nothing to a built body."""
    body = {**CHAT, "return_hidden_states": {"layers": [0], "dtype": "float16"}}
    p = handlers.chat_plan(gpt2, schemas.parse(schemas.ChatRequest, body), Limits(hidden_states=True))
    assert p.hidden is not None and p.options.hidden_states == Shape("object", "float16", "base64")
    assert not hasattr(handlers.hidden, "attach")


def test_hidden_states_are_read_once(gpt2, monkeypatch):
    """`return_hidden_states` is read once per request (the route asks first, then `check` and the plan)."""
    reads = []
    real = handlers.hidden.read
    monkeypatch.setattr(handlers.hidden, "read", lambda value: reads.append(value) or real(value))
    body = {**CHAT, "return_hidden_states": {"layers": [0, -1]}}
    req = schemas.parse(schemas.ChatRequest, body)
    assert req.hidden_ask is not None  # as routes.engine_for asks, before the plan
    p = handlers.chat_plan(gpt2, req, Limits(hidden_states=True))
    assert p.hidden == req.hidden_ask and p.hidden.layers == (0, -1) and len(reads) == 1


def test_not_asked_becomes_a_count_at_one_place():
    """SamplerSettings keeps `logprobs` None ("not asked", for the exporters' `null`); the code that counts entries
    reads `top_entries`, 0 there, instead of writing `s.logprobs or 0` again."""
    from pathlib import Path

    assert SamplerSettings(logprobs=None).logprobs is None and SamplerSettings(logprobs=None).top_entries == 0
    assert SamplerSettings(logprobs=3).top_entries == 3 and SamplerSettings(logprobs=0).top_entries == 0
    assert SamplerSettings(logprobs=3, logprob_ids=(5, 6)).output_k == 2 and SamplerSettings(logprobs=3).output_k == 3
    root = Path(__file__).resolve().parents[1] / "explorer"
    for inner in ("engine/remote/stream.py", "engine/analyses/branch.py", "engine/passes/generation.py"):
        assert "logprobs or 0" not in (root / inner).read_text(), inner
