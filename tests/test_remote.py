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
from explorer.engine.remote import RemoteEngine
from explorer.errors import ExplorerError
from explorer.settings import SamplerSettings
from tests.conftest import ServerProcess


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
    monkeypatch.setattr("explorer.engine.remote.FULL_VOCAB_BUDGET", 10)
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


def test_what_a_remote_server_cannot_give_says_so(remote):
    from explorer.engine.lens import lens_ids

    assert not remote.capabilities.hidden_states and remote.capabilities.why_not("hidden_states")
    with pytest.raises(ExplorerError, match=r"remote backend"):
        remote.body(None)
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
            from tests.samples import scored_prompt

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
    from tests.samples import scored_prompt

    _, url = faulty
    Faulty.mode = "golden"
    want = scored_prompt()
    got = score_ids(RemoteEngine(url), want.token_ids.tolist(), k=2)
    np.testing.assert_allclose(got.logprobs[1:], want.logprobs[1:], atol=1e-6)
    assert got.ranks.tolist() == want.ranks.tolist() and got.top_ids.tolist() == want.top_ids.tolist()
    assert got.token_bytes == want.token_bytes  # from the server's /detokenize


def test_429_is_retried(faulty):
    _, url = faulty
    Faulty.mode = "busy-once"
    r = score_ids(RemoteEngine(url), [0, 1], k=0)
    assert Faulty.hits == 2 and abs(r.logprobs[1] + 0.5) < 1e-6


def test_a_stream_cut_short_is_a_message(faulty):
    _, url = faulty
    Faulty.mode = "cut"
    engine = RemoteEngine(url)
    with pytest.raises(ExplorerError, match=r"without \[DONE\]|broke off"):
        generate(engine, [0, 1], SamplerSettings(max_tokens=4, temperature=0, logprobs=1))


@pytest.mark.browser
def test_the_app_runs_on_a_remote_engine(browser, remote):
    from tests.browser import require_chromium
    from tests.conftest import LiveServer

    require_chromium()
    srv = LiveServer(remote)
    try:
        ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
        page = ctx.new_page()
        page.goto(srv.url)
        page.get_by_label("Text", exact=True).fill("The quick brown fox")
        page.get_by_role("button", name="Score", exact=True).click()
        page.locator("#heatmap [data-pos='2']").wait_for(timeout=60_000)
        ctx.close()
    finally:
        srv.stop()
