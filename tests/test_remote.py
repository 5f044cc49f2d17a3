"""The remote engine against our own server in a second process (a real /v1), and against a server that misbehaves."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from explorer.engine import generate, score_ids
from explorer.engine.analyses.branch import generate_then_branch
from explorer.engine.interface import forward_pass
from explorer.engine.remote.engine import SERVER, RemoteEngine
from explorer.errors import ExplorerError
from explorer.rules.sampler import SamplerSettings
from tests.helpers.servers import ServerProcess


@pytest.fixture(scope="module")
def backend(gpt2_dir):
    """Our own server on the tiny GPT-2, as a separate process: the backend the remote engine talks to."""
    server = ServerProcess(gpt2_dir)
    yield server.url + "/v1"
    server.stop()


@pytest.fixture(scope="module")
def remote(backend, gpt2_dir):
    return RemoteEngine(backend, tokenizer=gpt2_dir)


def test_scoring_equals_the_local_engine(remote, gpt2):
    ids = gpt2.encode("The quick brown fox jumps over the lazy dog.")
    a, b = score_ids(gpt2, ids, k=5), score_ids(remote, ids, k=5)
    np.testing.assert_allclose(b.logprobs[1:], a.logprobs[1:], atol=1e-5)
    assert b.ranks.tolist() == a.ranks.tolist()
    np.testing.assert_allclose(b.top_logprobs[1:], a.top_logprobs[1:], atol=1e-5)
    np.testing.assert_allclose(
        b.entropy[1:], a.entropy[1:], atol=1e-4
    )  # within the server's full-vocabulary cap: exact
    assert b.token_bytes == a.token_bytes and b.model == remote.name


def test_scoring_without_a_local_tokenizer(backend, gpt2):
    bare = RemoteEngine(backend)  # the served name is not loadable here: tokenize on the server
    assert bare.tokenizer is None
    ids = bare.encode("fox jumps over")
    assert ids == gpt2.encode("fox jumps over")
    a, b = score_ids(gpt2, ids, k=3), score_ids(bare, ids, k=3)
    np.testing.assert_allclose(b.logprobs[1:], a.logprobs[1:], atol=1e-5)
    assert b.ranks.tolist() == a.ranks.tolist()


def test_beyond_the_cap_entropy_is_unavailable_not_guessed(remote, gpt2, monkeypatch):
    monkeypatch.setattr("explorer.engine.remote.engine.FULL_VOCAB_BUDGET", 10)
    ids = gpt2.encode("fox jumps over the dog")
    r = score_ids(remote, ids, k=3)
    assert np.isnan(r.entropy).all() and r.scored[1:].all()


@pytest.mark.parametrize("temperature", [0.0, 1.2])
def test_generation_equals_the_local_engine(remote, gpt2, temperature):
    ids = gpt2.encode("The capital of")
    s = SamplerSettings(max_tokens=8, temperature=temperature, seed=11, logprobs=3)
    a, b = generate(gpt2, ids, s)[0], generate(remote, ids, s)[0]
    assert b.token_ids.tolist() == a.token_ids.tolist()
    np.testing.assert_allclose(b.logprobs[a.n_prompt :], a.logprobs[a.n_prompt :], atol=1e-5)
    np.testing.assert_allclose(b.top_logprobs[a.n_prompt :], a.top_logprobs[a.n_prompt :], atol=1e-5)
    assert b.completion_text == a.completion_text and b.finish_reason == a.finish_reason
    inside = b.ranks[a.n_prompt :] > 0  # ranks are known where the token is in the top-k
    assert (b.ranks[a.n_prompt :][inside] == a.ranks[a.n_prompt :][inside]).all()


def test_chat_equals_the_local_engine(remote, gpt2):
    msgs = [{"role": "user", "content": "Tell me about foxes"}]
    assert remote.encode_chat(msgs) == gpt2.encode_chat(msgs)
    s = SamplerSettings(max_tokens=6, temperature=0.9, seed=5, logprobs=2)
    a, b = generate(gpt2, gpt2.encode_chat(msgs), s)[0], generate(remote, remote.encode_chat(msgs), s)[0]
    assert b.token_ids.tolist() == a.token_ids.tolist()


def test_a_continued_chat_equals_the_local_engine(remote, gpt2):
    """encode_chat's options reach the server's template as asked (the remote engine overrides `template_ids` only)."""
    msgs = [{"role": "user", "content": "Tell me about foxes"}, {"role": "assistant", "content": "Foxes are"}]
    want = gpt2.encode_chat(msgs, add_generation_prompt=False, continue_final_message=True)
    assert want != gpt2.encode_chat(msgs)  # the options change the ids, so a dropped or swapped one shows
    assert remote.encode_chat(msgs, add_generation_prompt=False, continue_final_message=True) == want


def test_no_local_tokenizer_tokenizes_on_the_server(backend, gpt2):
    """Tokens, text and bytes from the server. (The exact bytes of tokens that split a character come from the
    vocabulary strings of /tokenize: vLLM's, checked in tests/test_vllm_remote.py.)"""
    bare = RemoteEngine(backend, tokenizer=SERVER)
    text = "The quick brown fox, 東京 👋"
    ids = gpt2.encode(text)
    assert bare.tokenizer is None and bare.vocab_size == gpt2.vocab_size  # the size from the server, not 0
    assert bare.encode(text) == ids and bare.tokenize(text, add_special_tokens=False) == gpt2.tokenize(text, False)
    assert bare.detokenize(ids) == gpt2.detokenize(ids) == text
    whole = [i for i in ids if "\ufffd" not in gpt2.vocab[i].decode("utf-8", "replace")]
    assert len(whole) < len(ids) and [bare.vocab[i] for i in whole] == [gpt2.vocab[i] for i in whole]
    plain = gpt2.encode("The quick brown fox jumps")
    r, local = score_ids(bare, plain, k=3), score_ids(gpt2, plain, k=3)
    assert r.token_bytes == local.token_bytes and r.text == local.text
    lossy = {i: p.decode("utf-8", "replace").encode() for i, p in local.pieces.items()}  # what /detokenize can say
    assert {i: bare.vocab[i] for i in r.pieces} == lossy and lossy != local.pieces  # alternatives split characters


def test_our_api_on_a_remote_engine_without_a_tokenizer(backend, gpt2):
    """/tokenize was a 500, /detokenize said 'outside the vocabulary (0..-1)', /v1/models 'vocab_size: 0'."""
    import httpx

    from tests.helpers.servers import LiveServer

    srv = LiveServer(RemoteEngine(backend, tokenizer=SERVER))
    try:
        ids = gpt2.encode("fox jumps")
        assert httpx.post(srv.url + "/tokenize", json={"prompt": "fox jumps"}).json()["tokens"] == ids
        assert httpx.post(srv.url + "/detokenize", json={"tokens": ids}).json()["prompt"] == "fox jumps"
        bad = httpx.post(srv.url + "/detokenize", json={"tokens": [gpt2.vocab_size]})
        assert bad.status_code == 400 and f"(0..{gpt2.vocab_size - 1})" in bad.json()["error"]["message"]
        card = httpx.get(srv.url + "/v1/models").json()["data"][0]
        assert card["vocab_size"] == gpt2.vocab_size and card["engine"] == "remote"
    finally:
        srv.stop()


def test_a_stop_token_ending_is_one_answer_with_and_without_a_tokenizer(backend, remote, gpt2):
    ids = gpt2.encode("The capital of")
    probe = generate(gpt2, ids, SamplerSettings(max_tokens=6, temperature=0, logprobs=2))[0]
    s = SamplerSettings(max_tokens=6, temperature=0, logprobs=2, stop_token_ids=(int(probe.token_ids[-3]),))
    a = generate(gpt2, ids, s)[0]
    assert (a.finish_reason, a.stop_reason, a.stop_token) == ("stop", s.stop_token_ids[0], True)
    for engine in (remote, RemoteEngine(backend, tokenizer=SERVER)):
        b = generate(engine, ids, s)[0]
        assert b.token_ids.tolist() == a.token_ids.tolist()
        for field in ("finish_reason", "stop_reason", "stop_token", "completion_text", "token_bytes"):
            assert getattr(b, field) == getattr(a, field), field
        np.testing.assert_allclose(b.logprobs[a.n_prompt :], a.logprobs[a.n_prompt :], atol=1e-5)


def test_listed_ids_all_come_back(remote, gpt2):
    """`logprob_token_ids` lost the least likely asked id at every position (the sampled token took its place)."""
    ids = gpt2.encode("The capital of")
    asked = (3, 17, 40, 41)
    s = SamplerSettings(max_tokens=5, temperature=0, logprob_ids=asked)
    a, b = generate(gpt2, ids, s)[0], generate(remote, ids, s)[0]
    n = a.n_prompt
    assert b.token_ids.tolist() == a.token_ids.tolist()
    assert all(sorted(row) == sorted(asked) for row in b.top_ids[n:].tolist())
    assert b.top_ids[n:].tolist() == a.top_ids[n:].tolist()  # by descending logprob, as the local engine orders them
    np.testing.assert_allclose(b.top_logprobs[n:], a.top_logprobs[n:], atol=1e-5)


def test_a_branch_on_a_remote_engine_equals_the_local_one(remote, gpt2):
    """`generate --branch-at` on a remote engine crashed (a fake device in torch.tensor)."""
    ids = gpt2.encode("The quick brown")
    s = SamplerSettings(max_tokens=5, temperature=0, logprobs=2)
    (ra, a), (rb, b) = generate_then_branch(gpt2, ids, s, 4, 17), generate_then_branch(remote, ids, s, 4, 17)
    assert rb.token_ids.tolist() == ra.token_ids.tolist() and b.token_ids.tolist() == a.token_ids.tolist()
    assert int(b.token_ids[4]) == 17
    np.testing.assert_allclose(b.logprobs, a.logprobs, atol=1e-5)
    np.testing.assert_allclose(b.top_logprobs[a.scored], a.top_logprobs[a.scored], atol=1e-5)
    assert b.finish_reason == a.finish_reason and b.completion_text == a.completion_text


def test_processed_logprobs_are_refused_not_mislabelled(remote, gpt2):
    s = SamplerSettings(max_tokens=3, temperature=0.7, seed=1, mode="processed")
    with pytest.raises(ExplorerError, match=r"--logprobs-mode raw") as err:
        generate(remote, gpt2.encode("fox"), s)
    assert err.value.code == "not_available_remote"
    with pytest.raises(ExplorerError, match=r"--logprobs-mode raw"):
        generate_then_branch(remote, gpt2.encode("fox jumps"), s, 2, 17)


def test_the_status_line_names_the_server(remote, backend):
    from explorer.ui.model_picker import status_text

    line = status_text(remote)
    assert f"on a remote server ({backend})" in line and "namespace" not in line
    assert not hasattr(remote, "device")  # there is none, and what needs one says so
    with pytest.raises(ExplorerError, match=r"remote backend"):
        forward_pass(remote)


def test_what_a_remote_server_cannot_give_says_so(remote):
    from explorer.engine.analyses.lens import lens_ids

    assert not remote.capabilities.hidden_states and remote.capabilities.why_not("hidden_states")
    assert not hasattr(remote, "body")  # no forward pass here: what needs one says so
    with pytest.raises(ExplorerError, match=r"remote backend"):
        forward_pass(remote)
    with pytest.raises(ExplorerError, match=r"logit lens is off.*hidden states"):
        lens_ids(remote, [0, 1, 2], k=2)


def test_cli_score_through_the_backend(backend, gpt2_dir, gpt2):
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "explorer",
            "score",
            "--backend",
            backend,
            "--backend-tokenizer",
            gpt2_dir,
            "--text",
            "fox jumps",
            "--logprobs",
            "2",
            "--format",
            "native",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    body = json.loads(p.stdout)
    local = score_ids(gpt2, gpt2.encode("fox jumps"), k=2)
    np.testing.assert_allclose([x for x in body["logprobs"][1:]], local.logprobs[1:], atol=1e-5)


# ---- a backend that misbehaves ------------------------------------------------------------------


class Faulty(BaseHTTPRequestHandler):
    mode = "ok"
    hits = 0

    def log_message(self, *a):
        pass

    def _send(self, status, body: bytes, headers=()):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if type(self).mode == "vllm":  # vLLM's card: no capabilities, no vocabulary size
            return self._send(
                200, json.dumps({"data": [{"id": "m", "root": "/nowhere/m", "max_model_len": 64}]}).encode()
            )
        card = {
            "id": "m",
            "max_model_len": 64,
            "vocab_size": 50000,
            "capabilities": {"max_logprobs": 5, "full_vocab_max_prompt_tokens": 0},
        }
        self._send(200, json.dumps({"data": [card]}).encode())

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        asked = json.loads(self.rfile.read(length) or b"{}")
        if self.path.endswith("/detokenize"):  # the remote vocabulary learning a token's text
            from tests.helpers.samples import scored_prompt

            pieces = scored_prompt().pieces
            text = b"".join(pieces.get(i, b"a") for i in asked["tokens"]).decode()
            return self._send(200, json.dumps({"prompt": text}).encode())
        if self.path.endswith("/tokenize"):  # no separator to decode many ids at once: one id per call
            return self._send(200, b'{"tokens": []}')
        type(self).hits += 1
        mode = type(self).mode
        if mode == "slow":
            time.sleep(3)
            self._send(200, b"{}")
        elif mode == "busy-once" and type(self).hits == 1:
            self._send(429, b'{"error": {"message": "busy"}}', [("Retry-After", "0")])
        elif mode == "500":
            self._send(500, b'{"error": {"message": "boom"}}')
        elif mode == "garbage":
            self._send(200, b"<html>not json")
        elif mode == "golden":  # a recorded vLLM body (our exporter's golden file of the shapes reference's example)
            from pathlib import Path

            self._send(200, (Path(__file__).parent / "golden" / "scored.vllm.json").read_bytes())
        elif mode == "vllm" and asked.get("prompt_logprobs") == -1:  # vLLM 0.32's refusal, as it words it
            msg = "Requested prompt logprobs of 50000, which is greater than max allowed: 7 (parameter=prompt_logprobs, value=50000)"
            self._send(400, json.dumps({"error": {"message": msg, "type": "BadRequestError", "code": 400}}).encode())
        elif mode == "cut":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(
                b'data: {"choices": [{"index": 0, "text": "a", "logprobs": null, "finish_reason": null}]}\n\n'
            )
            self.wfile.flush()  # then the connection closes without [DONE]
        else:
            entry = {"1": {"logprob": -0.5, "rank": 1, "decoded_token": "b"}}
            body = {"choices": [{"prompt_logprobs": [None, entry]}]}
            self._send(200, json.dumps(body).encode())


@pytest.fixture
def faulty():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Faulty)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Faulty.hits = 0
    yield server, f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


@pytest.mark.parametrize(("mode", "needle"), [("slow", "did not answer"), ("500", "HTTP 500"), ("garbage", "not JSON")])
def test_faults_are_clear_messages(faulty, mode, needle):
    _, url = faulty
    Faulty.mode = mode
    engine = RemoteEngine(url, timeout=1.0)
    with pytest.raises(ExplorerError, match=needle):
        score_ids(engine, [0, 1], k=1)


def test_a_recorded_vllm_body_parses_into_the_same_result(faulty):
    from tests.helpers.samples import scored_prompt

    _, url = faulty
    Faulty.mode = "golden"
    want = scored_prompt()
    got = score_ids(RemoteEngine(url), want.token_ids.tolist(), k=2)
    np.testing.assert_allclose(got.logprobs[1:], want.logprobs[1:], atol=1e-6)
    assert got.ranks.tolist() == want.ranks.tolist() and got.top_ids.tolist() == want.top_ids.tolist()
    assert got.token_bytes == want.token_bytes  # from the server's /detokenize


def test_a_vllm_server_tells_its_vocabulary_and_caps_by_refusing(faulty):
    """vLLM's card names neither: its refusal of a full-vocabulary request does; our /v1/models passes them on."""
    import httpx

    from tests.helpers.servers import LiveServer

    _, url = faulty
    Faulty.mode = "vllm"
    engine = RemoteEngine(url)
    assert engine.vocab_size == 50000 and engine.tokenizer is None
    caps = engine.capabilities
    assert (caps.max_logprobs, caps.full_vocab, caps.full_vocab_max_prompt_tokens) == (7, False, 0)
    with pytest.raises(ExplorerError, match=r"no full-vocabulary distributions") as err:
        score_ids(engine, [0, 1], k=-1)
    assert err.value.code == "full_vocab_unavailable"
    srv = LiveServer(engine)
    try:
        card = httpx.get(srv.url + "/v1/models").json()["data"][0]
        assert card["vocab_size"] == 50000
        assert card["capabilities"]["full_vocab_max_prompt_tokens"] == 0 and card["capabilities"]["max_logprobs"] == 7
    finally:
        srv.stop()


def test_429_is_retried(faulty):
    _, url = faulty
    Faulty.mode = "busy-once"
    r = score_ids(RemoteEngine(url), [0, 1], k=0)
    assert Faulty.hits == 2 and abs(r.logprobs[1] + 0.5) < 1e-6


def test_a_backend_gone_before_a_stream_is_a_message(faulty):
    server, url = faulty
    Faulty.mode = "ok"
    engine = RemoteEngine(url)
    server.shutdown()
    server.server_close()  # nothing listens there now
    with pytest.raises(ExplorerError, match=r"Cannot reach the backend") as err:
        generate(engine, [0, 1], SamplerSettings(max_tokens=2, temperature=0, logprobs=1))
    assert err.value.code == "backend_unreachable"


def test_a_stream_cut_short_is_a_message(faulty):
    _, url = faulty
    Faulty.mode = "cut"
    engine = RemoteEngine(url)
    with pytest.raises(ExplorerError, match=r"without \[DONE\]|broke off"):
        generate(engine, [0, 1], SamplerSettings(max_tokens=4, temperature=0, logprobs=1))


@pytest.mark.browser
def test_the_app_runs_on_a_remote_engine(browser, remote):
    """The page scores through the remote engine: a chip per token, and the numbers the engine gives."""
    from tests.helpers.browser import require_chromium
    from tests.helpers.servers import LiveServer

    require_chromium()
    text = "The quick brown fox"
    srv = LiveServer(remote)
    try:
        ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
        page = ctx.new_page()
        page.goto(srv.url)
        page.get_by_label("Text", exact=True).fill(text)
        page.get_by_role("button", name="Score", exact=True).click()
        page.locator("#heatmap [data-pos='2']").wait_for(timeout=60_000)
        blob = page.locator("#heatmap .lx-data").filter(has_text='"lp"')  # the page's numbers, once finished
        blob.wait_for(state="attached", timeout=60_000)
        data, chips = json.loads(blob.text_content()), page.locator("#heatmap [data-pos]").count()
        ctx.close()
    finally:
        srv.stop()
    want = score_ids(remote, remote.encode(text), k=1)
    assert data["ids"] == want.token_ids.tolist() and chips == want.n > 2
    np.testing.assert_allclose(data["lp"][1:], want.logprobs[1:], atol=1e-5)


def test_hidden_states_go_whole_to_a_backend_that_announces_them(backend, gpt2_dir):
    """A request asking for hidden states is sent on to a backend whose card announces them (ours) and answered as
    that backend answers it, under this server's model name; a backend that does not announce them: a 400 in words."""
    import httpx

    from tests.helpers.servers import LiveServer, ServerProcess

    body = {"prompt": "The quick brown fox", "max_tokens": 0, "echo": True, "logprobs": 1,
            "return_hidden_states": {"layers": [0, -1, "final_norm"]}}  # fmt: skip
    engine = RemoteEngine(backend, tokenizer=gpt2_dir, name="front")
    front = LiveServer(engine)
    try:
        via = httpx.post(front.url + "/v1/completions", json={**body, "model": "front"}, timeout=60).json()
        direct = httpx.post(backend + "/completions", json={**body, "model": engine.model_id}, timeout=60).json()
        assert via["model"] == "front" and via["choices"][0]["hidden_states"] == direct["choices"][0]["hidden_states"]
        assert via["choices"][0]["hidden_states"]["hook_names"][-1] == "ln_final.hook_normalized"
        caps = httpx.get(front.url + "/v1/models", timeout=30).json()["data"][0]["capabilities"]
        assert caps["hidden_states_max_tokens"] == engine.backend_hidden_states[0] > 0
        assert caps["hidden_states_max_bytes"] == engine.backend_hidden_states[1] > 0
    finally:
        front.stop()
    from explorer.rules.sampler import Limits

    front = LiveServer(engine, limits=Limits(hidden_states_max_tokens=2))  # this server's own cap, checked here too
    try:
        r = httpx.post(front.url + "/v1/completions", json={**body, "model": "front"}, timeout=60)
        assert r.status_code == 400 and "max is 2" in r.json()["error"]["message"]
        caps = httpx.get(front.url + "/v1/models", timeout=30).json()["data"][0]["capabilities"]
        assert caps["hidden_states_max_tokens"] == 2
    finally:
        front.stop()
    off = ServerProcess(gpt2_dir, env={"EXPLORER_HIDDEN_STATES": "0"})
    front = LiveServer(RemoteEngine(off.url + "/v1", tokenizer=gpt2_dir, name="front"))
    try:
        r = httpx.post(front.url + "/v1/completions", json={**body, "model": "front"}, timeout=60)
        assert r.status_code == 400 and "only the torch engine gives" in r.json()["error"]["message"]
    finally:
        front.stop()
        off.stop()


def test_a_backends_models_load_through_the_engine_registry(backend, gpt2_dir):
    """`--backend`'s registry (explorer/server.py): its models listed from the server, each loaded by
    explorer.engine.load as a RemoteEngine, with no torch twin and a sentence for the views needing layers."""
    from explorer.server import remote_models

    models = remote_models((backend, None, gpt2_dir), None)
    served = models.default
    assert models.names == [served] and models.engine_of(served) == "remote"
    assert models.without(served, "hidden_states") == (
        "This view needs the model's hidden states and gradients, which a remote server does not send."
    )
    engine = models.get(served)
    assert isinstance(engine, RemoteEngine) and engine.capabilities.engine == "remote"
    assert models.twin(served) is None
