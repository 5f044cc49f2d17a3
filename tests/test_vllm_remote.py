"""The remote engine on the real vLLM (tests/helpers/vllm_peer.py): every number equals the local torch engine's on the
same folder (rescoring the ids vLLM chose, to 1e-4), with the model's tokenizer here (the card's root) and
without one (the server tokenizes); what vLLM cannot give is refused with a reason, never mislabelled."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import replace

import httpx
import numpy as np
import pytest

from explorer.engine import generate, score_ids
from explorer.engine.analyses.branch import generate_then_branch
from explorer.engine.interface import forward_pass
from explorer.engine.remote.engine import SERVER, RemoteEngine
from explorer.errors import ExplorerError
from explorer.export import FORMATS, export
from explorer.rules.sampler import SamplerSettings
from tests.helpers.scores_match import assert_scores_match

pytestmark = pytest.mark.vllm

TEXT = (
    "Hello 課 world, the quick brown fox 👋 jumps over the lazy dog."  # a CJK character and an emoji split over tokens
)
CHAT = [{"role": "user", "content": "Say hi"}]
SUMMED = 60  # most tokens a generation here sums over (max_tokens)
ENDINGS = {  # greedy replies to CHAT, each ending another way
    "eos": {"max_tokens": 60},
    "stop string": {"max_tokens": 60, "stop": ("welc",)},  # inside the token ' welcome'
    "stop token": {"max_tokens": 60, "stop_token_ids": (28,)},  # ','
    "length": {"max_tokens": 5},
    "listed ids": {"max_tokens": 8, "logprob_ids": (5, 28, 29, 665, 17)},
}


@pytest.fixture(scope="module")
def url(vllm_server) -> str:
    return vllm_server.url + "/v1"


@pytest.fixture(scope="module", params=["root", SERVER])
def remote(request, url) -> RemoteEngine:
    """The remote engine with the tokenizer of the card's root folder, and with none (`--backend-tokenizer server`)."""
    return RemoteEngine(url, tokenizer=None if request.param == "root" else SERVER)


def vllm(url: str, route: str, body: dict) -> httpx.Response:
    """The real server's own answer (a non-streamed request, independent of the engine's streamed one)."""
    return httpx.post(f"{url}/{route}", json={"model": vllm_model(url), **body}, timeout=120)


def vllm_model(url: str) -> str:
    return httpx.get(url + "/models", timeout=30).json()["data"][0]["id"]


def rescored(smollm, r):
    """The same ids scored by the local engine, every position's full distribution."""
    return score_ids(smollm, r.token_ids.tolist(), k=-1)


# ---- what the engine reads off the server ---------------------------------------------------------------------


def test_connecting_reads_the_server(remote, smollm, url, default_model_dir):
    from explorer.ui.model_picker import status_text

    if remote.known_vocab is None:  # the card's `root` is the folder vLLM serves: loaded here, exact bytes
        assert remote.tokenizer.name_or_path == default_model_dir
    assert remote.vocab_size == smollm.vocab_size and remote.context == 8192
    caps = remote.capabilities
    assert (caps.max_logprobs, caps.full_vocab, caps.full_vocab_max_prompt_tokens) == (20, False, 0)
    ids = [1, 2, 3]
    assert vllm(url, "completions", {"prompt": ids, "max_tokens": 0, "echo": True, "prompt_logprobs": 20}).is_success
    for k in (21, -1):  # the server's own cap, as the engine reports it
        r = vllm(url, "completions", {"prompt": ids, "max_tokens": 0, "echo": True, "prompt_logprobs": k})
        assert r.status_code == 400
    line = status_text(remote)
    assert f"on a remote server ({url})" in line and "namespace" not in line
    assert not hasattr(remote, "device")  # no device here, and what needs one says so
    with pytest.raises(ExplorerError, match="remote backend"):
        forward_pass(remote)


def test_tokens_equal_the_local_tokenizer(remote, smollm, url):
    ids = smollm.encode(TEXT)
    assert remote.encode(TEXT) == ids and remote.tokenize(TEXT, add_special_tokens=False) == ids
    assert remote.detokenize(ids) == smollm.detokenize(ids)
    assert remote.encode_chat(CHAT) == smollm.encode_chat(CHAT)
    split = [i for i in ids if not _whole(smollm.vocab[i])]
    assert split, "the text has tokens that split a character"
    assert [remote.vocab[i] for i in ids] == [smollm.vocab[i] for i in ids]  # their exact bytes too


def _whole(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


# ---- scoring ----------------------------------------------------------------------------------------------------


def test_scoring_equals_the_local_engine(remote, smollm):
    ids = smollm.encode(TEXT)
    r, local = score_ids(remote, ids, k=5), score_ids(smollm, ids, k=5)
    worst = assert_scores_match(r, rescored(smollm, r), range(1, len(ids)))
    print(f"scoring: max |dlogprob| remote vs local = {worst:.2e}")
    assert (r.ranks[1:] > 0).all()  # prompt ranks: vLLM sends the true rank of every token
    assert r.token_bytes == local.token_bytes and r.text == local.text == TEXT
    assert np.isnan(r.entropy).all()  # vLLM refuses the full vocabulary (--max-logprobs 20): not guessed


def test_what_vllm_cannot_give_is_refused(remote, smollm):
    from explorer.engine.analyses.lookup import lookup

    ids = smollm.encode(TEXT)
    with pytest.raises(ExplorerError, match=r"no full-vocabulary distributions.*--max-logprobs -1"):
        score_ids(remote, ids, k=-1)
    with pytest.raises(ExplorerError, match="ignored `prompt_logprob_token_ids`"):  # vLLM 0.32 drops the field
        score_ids(remote, ids, k=0, listed=[5, 6])
    with pytest.raises(ExplorerError, match="remote backend") as lookup_error:
        lookup(remote, ids, ["fox"])
    assert lookup_error.value.code == "not_available_remote"
    s = SamplerSettings(max_tokens=4, temperature=0.7, seed=1, mode="processed")
    with pytest.raises(ExplorerError, match=r"--logprobs-mode raw"):
        generate(remote, ids, s)


# ---- generation ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_greedy_generation_equals_the_local_engine(remote, smollm, ending):
    s = SamplerSettings(temperature=0, logprobs=3, **ENDINGS[ending])
    a = generate(smollm, smollm.encode_chat(CHAT), s)[0]
    b = generate(remote, remote.encode_chat(CHAT), s)[0]
    assert b.token_ids.tolist() == a.token_ids.tolist()
    for field in ("finish_reason", "stop_reason", "stop_token", "completion_text", "output_text", "token_bytes"):
        assert getattr(b, field) == getattr(a, field), field
    n = a.n_prompt
    worst = assert_scores_match(b, rescored(smollm, b), range(n, b.n), listed=bool(s.logprob_ids))
    print(f"greedy {ending}: max |dlogprob| remote vs local = {worst:.2e}")
    expected = {  # the case is the ending it names
        "eos": ("stop", None, True),
        "stop string": ("stop", "welc", False),
        "stop token": ("stop", 28, True),
        "length": ("length", None, False),
        "listed ids": ("length", None, False),
    }[ending]
    assert (a.finish_reason, a.stop_reason, a.stop_token) == expected
    if ending == "eos":
        assert int(a.token_ids[-1]) in smollm.eos_ids and a.token_text[-1] == "<|im_end|>"
    if s.logprob_ids:  # every asked id, at every position, with the local engine's numbers
        for pos in range(n, b.n):
            assert sorted(b.top_ids[pos].tolist()) == sorted(s.logprob_ids)
        np.testing.assert_allclose(b.top_logprobs[n:], a.top_logprobs[n:], atol=1e-4)
        assert b.top_ids[n:].tolist() == a.top_ids[n:].tolist()


def test_a_stop_string_keeps_the_token_that_completed_it(remote, url):
    """As vLLM answers the same request unstreamed: the token that completed the stop string is the last one."""
    ids = remote.encode_chat(CHAT)
    body = {"prompt": ids, "max_tokens": 60, "temperature": 0, "stop": [" welc"], "return_token_ids": True}
    want = vllm(url, "completions", {**body, "logprobs": 1}).json()
    b = generate(remote, ids, SamplerSettings(max_tokens=60, temperature=0, stop=(" welc",), logprobs=1))[0]
    ch = want["choices"][0]
    assert b.token_ids[b.n_prompt :].tolist() == ch["token_ids"]
    assert b.n - b.n_prompt == want["usage"]["completion_tokens"]
    assert b.completion_text == ch["text"] and not b.completion_text.endswith(" welc")
    assert (b.finish_reason, b.stop_reason) == ("stop", " welc")


def test_seeded_generation_is_the_servers_and_its_numbers_the_models(remote, smollm, url):
    """vLLM's sampler is not ours: the tokens are the ones vLLM draws for the seed, their raw numbers the model's."""
    ids = remote.encode_chat(CHAT)
    s = SamplerSettings(max_tokens=24, temperature=0.9, top_p=0.95, seed=7, logprobs=5)
    b = generate(remote, ids, s)[0]
    body = {"prompt": ids, "max_tokens": 24, "temperature": 0.9, "top_p": 0.95, "seed": 7, "return_token_ids": True}
    assert b.token_ids[len(ids) :].tolist() == vllm(url, "completions", body).json()["choices"][0]["token_ids"]
    assert b.mode == "raw"  # and they are: equal to the model's own distribution, not the sampler's
    worst = assert_scores_match(b, rescored(smollm, b), range(len(ids), b.n))
    print(f"seeded: max |dlogprob| remote vs local rescoring = {worst:.2e}")


def test_a_branch_equals_the_local_engines(remote, smollm):
    ids = smollm.encode("The capital of France is")
    s = SamplerSettings(max_tokens=6, temperature=0, logprobs=2)
    _, a = generate_then_branch(smollm, ids, s, 7, 260)
    _, b = generate_then_branch(remote, remote.encode("The capital of France is"), s, 7, 260)
    assert b.token_ids.tolist() == a.token_ids.tolist() and b.n_prompt == a.n_prompt
    assert (b.finish_reason, b.completion_text) == (a.finish_reason, a.completion_text)
    scored = np.flatnonzero(a.scored)
    assert scored.tolist() == np.flatnonzero(b.scored).tolist() and 7 in scored
    assert_scores_match(b, rescored(smollm, b), scored)


def as_known(a, b, bare: bool):
    """Local result `a` cut to what a remote engine knows of it (remote result `b` tells where): no entropy, a
    generated token's rank only within the top-k; without a tokenizer (`bare`), a top-k alternative that splits a
    character (not one of the text's tokens) has the U+FFFD text the server's /detokenize gives it."""
    seq = set(a.token_ids.tolist())
    pieces = {i: p if i in seq or not bare else p.decode("utf-8", "replace").encode() for i, p in a.pieces.items()}
    return replace(
        a,
        entropy=np.full_like(a.entropy, np.nan),
        ranks=np.where(b.ranks > 0, a.ranks, 0),
        top_ranks=None if b.top_ranks is None else a.rows.listed_ranks(),
        pieces=pieces,
    )


def test_every_export_format_equals_the_local_engines(remote, smollm):
    """Each exporter's body of the remote result equals its body of the local one cut to what a remote server
    sends (`as_known`)."""
    s = SamplerSettings(max_tokens=60, temperature=0, logprobs=3, prompt_logprobs=2)
    gen_a = generate(smollm, smollm.encode_chat(CHAT), s)[0]
    gen_b = generate(remote, remote.encode_chat(CHAT), s)[0]
    score_a, score_b = score_ids(smollm, smollm.encode(TEXT), k=3), score_ids(remote, smollm.encode(TEXT), k=3)
    for fmt, f in FORMATS.items():
        for a, b in [(gen_a, gen_b)] + ([] if f.needs_generation else [(score_a, score_b)]):
            _same(export(fmt, b), export(fmt, as_known(a, b, remote.known_vocab is not None)), fmt)


def _same(got, want, where: str) -> None:
    """Equal JSON: same keys in the same order, numbers within 1e-4 (a sum over tokens: 1e-4 a token), ids and
    timestamps aside."""
    if isinstance(want, dict):
        assert list(got) == list(want), where
        for key in want:
            if key not in ("id", "created"):
                _same(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list):
        assert len(got) == len(want), where
        for j, (x, y) in enumerate(zip(got, want)):
            _same(x, y, f"{where}[{j}]")
    elif isinstance(want, float) and not isinstance(got, bool):
        tol = 1e-4 * (SUMMED if where.endswith("cumulative_logprob") else 1)
        assert isinstance(got, (int, float)) and math.isclose(got, want, abs_tol=tol), (where, got, want)
    else:
        assert got == want, (where, got, want)


# ---- the CLI ------------------------------------------------------------------------------------------------------


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("tokenizer", ["root", SERVER])
def test_cli_score_through_vllm(url, smollm, tokenizer):
    extra = ["--backend-tokenizer", SERVER] if tokenizer == SERVER else []
    p = cli("score", "--backend", url, *extra, "--text", TEXT, "--logprobs", "3", "--format", "native")
    assert p.returncode == 0, p.stderr
    body = json.loads(p.stdout)
    local = score_ids(smollm, smollm.encode(TEXT), k=3)
    np.testing.assert_allclose(np.array(body["logprobs"][1:], float), local.logprobs[1:], atol=1e-4)
    assert body["token_text"] == local.token_text and body["ranks"] == local.ranks.tolist()


def test_cli_generate_branch_at_through_vllm(url, smollm):
    p = cli(
        *("generate", "--backend", url, "--prompt", "The capital of France is", "--max-tokens", "6"),
        *("--temperature", "0", "--branch-at", "7", "--branch-token", "260", "--format", "native"),
    )
    assert p.returncode == 0, p.stderr
    body = json.loads(p.stdout)
    s = SamplerSettings(max_tokens=6, temperature=0, logprobs=5)
    _, local = generate_then_branch(smollm, smollm.encode("The capital of France is"), s, 7, 260)
    assert body["token_ids"] == local.token_ids.tolist()
    got = np.array([np.nan if v is None else v for v in body["logprobs"]], float)
    np.testing.assert_allclose(got, local.logprobs, atol=1e-4)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["generate", "--prompt", "Hi", "--temperature", "0.7", "--logprobs-mode", "processed"], "--logprobs-mode raw"),
        (["score", "--text", "Hi there", "--lookup", "fox", "--format", "native"], "drop --backend"),
    ],
)
def test_cli_refusals_through_vllm_say_why(url, args, needle):
    p = cli(*args, "--backend", url)
    assert p.returncode == 2 and needle in p.stderr and "Traceback" not in p.stderr, p.stderr


# ---- app.py --backend: its page and its own /v1 ---------------------------------------------------------------


@pytest.fixture(scope="module", params=["root", SERVER])
def app(request, vllm_server, default_model_dir):
    from tests.helpers.servers import ServerProcess

    env = {"EXPLORER_BACKEND": vllm_server.url + "/v1"}
    if request.param == SERVER:
        env["EXPLORER_BACKEND_TOKENIZER"] = SERVER
    server = ServerProcess(default_model_dir, env=env, app=True)  # the folder: a name vLLM serves too
    server.bare = request.param == SERVER
    yield server
    server.stop()


def test_app_page_scores_on_the_backend(app, vllm_server, smollm):
    from gradio_client import Client

    client = Client(app.url + "/", verbose=False)
    shown = client.predict(httpx.get(app.url + "/v1/models").json()["data"][0]["id"], api_name="/load_model")
    status = " ".join(x for x in shown if isinstance(x, str))  # the plain status line and the details folded under it
    assert f"on a remote server ({vllm_server.url}/v1)" in status and "namespace" not in status
    out = client.predict(TEXT, "probability", "1, 10, 100, 1000", 5, api_name="/score")
    assert out[0].count("data-pos=") >= len(smollm.encode(TEXT))


def test_app_v1_numbers_equal_the_local_engines(app, smollm):
    from explorer.export import openai_chat

    body = {"prompt": TEXT, "max_tokens": 0, "echo": True, "logprobs": 3}
    got = httpx.post(app.url + "/v1/completions", json=body, timeout=120).json()["choices"][0]["logprobs"]
    local = score_ids(smollm, smollm.encode(TEXT), k=3)
    np.testing.assert_allclose(np.array(got["token_logprobs"][1:], float), local.logprobs[1:], atol=1e-4)
    for pos, top in enumerate(got["top_logprobs"][1:], start=1):  # the values (texts that collapse aside)
        want = np.array([local.logprobs[pos], *local.top_logprobs[pos]])
        assert all(np.abs(want - v).min() <= 1e-4 for v in top.values()), pos
    chat = {"messages": CHAT, "max_tokens": 60, "temperature": 0, "logprobs": True, "top_logprobs": 2}
    reply = httpx.post(app.url + "/v1/chat/completions", json=chat, timeout=120).json()["choices"][0]
    s = SamplerSettings(max_tokens=60, temperature=0, logprobs=2)
    a = generate(smollm, smollm.encode_chat(CHAT), s)[0]
    want = openai_chat.export(as_known(a, a, app.bare))["choices"][0]
    assert reply["message"]["content"] == want["message"]["content"]
    _same(reply["logprobs"], want["logprobs"], "chat logprobs")  # no EOS entry, as OpenAI


def test_app_v1_models_and_tokens_are_the_backends(app, smollm, vllm_server):
    card = httpx.get(app.url + "/v1/models", timeout=30).json()["data"][0]
    assert card["engine"] == "remote" and card["vocab_size"] == smollm.vocab_size
    assert card["capabilities"]["full_vocab_max_prompt_tokens"] == 0 and card["capabilities"]["max_logprobs"] == 20
    url = vllm_server.url
    for route, body in (("tokenize", {"prompt": TEXT}), ("detokenize", {"tokens": smollm.encode(TEXT)})):
        ours = httpx.post(f"{app.url}/{route}", json=body, timeout=60)
        theirs = httpx.post(f"{url}/{route}", json={"model": vllm_model(url + "/v1"), **body}, timeout=60)
        assert ours.status_code == 200, ours.text
        key = "tokens" if route == "tokenize" else "prompt"
        assert ours.json()[key] == theirs.json()[key]
    full = {"prompt": TEXT, "max_tokens": 0, "echo": True, "prompt_logprobs": -1}
    r = httpx.post(app.url + "/v1/completions", json=full, timeout=60)
    assert r.status_code == 400 and r.json()["error"]["code"] == "full_vocab_unavailable"
