"""`GET /tokenizer_info`, vLLM's route that lm-eval's `local-completions` reads to tokenize through the server:
the tokenizer's class and its tokenizer_config.json, guarded like /tokenize. (Against a real vLLM:
tests/test_vllm_api.py's peer tests; against lm-eval itself: tests/test_lmeval.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.helpers.servers import LiveServer


def file_config(folder: str) -> dict:
    """tokenizer_config.json as saved, special tokens as their text (AddedToken dicts carry it in `content`)."""
    raw = json.loads((Path(folder) / "tokenizer_config.json").read_text())
    return {k: v["content"] if isinstance(v, dict) and "content" in v else v for k, v in raw.items()}


def test_it_is_the_tokenizers_config_at_both_roots(live, gpt2, gpt2_dir):
    for base in (live.url, live.url + "/v1"):
        r = httpx.get(base + "/tokenizer_info", timeout=30)
        assert r.status_code == 200 and r.headers["content-type"] == "application/json"
        info = r.json()
        assert next(iter(info)) == "tokenizer_class" and info["tokenizer_class"] == type(gpt2.tokenizer).__name__
        for k, v in file_config(gpt2_dir).items():
            if k not in ("tokenizer_class", "added_tokens_decoder", "vocab_file", "merges_file"):
                assert info[k] == v, k
        assert info["model_max_length"] == gpt2.tokenizer.model_max_length  # 1e30 as an int: past 64 bits
        assert info["chat_template"] == gpt2.tokenizer.chat_template
        assert (info["bos_token"], info["eos_token"]) == (gpt2.tokenizer.bos_token, gpt2.tokenizer.eos_token)
        added = {str(i): t.content for i, t in gpt2.tokenizer.added_tokens_decoder.items()}
        assert info["added_tokens_decoder"] == added
        assert "vocab_file" not in info and "merges_file" not in info


def test_special_tokens_are_plain_text_before_json(gpt2):
    """The body is plain data (AddedTokens as their text, as vLLM writes them), not left to the encoder's fallback."""
    from explorer.api.tokenize import tokenizer_info

    info = tokenizer_info(gpt2)
    assert type(info["bos_token"]) is str and type(info["eos_token"]) is str
    assert all(type(v) is str for v in info["added_tokens_decoder"].values())
    json.dumps(info)  # no fallback: raises on anything but plain data


def test_a_model_without_a_chat_template_says_none(gpt2, llama):
    srv = LiveServer(gpt2, llama)
    try:
        info = httpx.get(srv.url + "/tokenizer_info", params={"model": "tiny-llama"}, timeout=30).json()
        assert info["bos_token"] == "<s>" and "chat_template" not in info
        assert "chat_template" in httpx.get(srv.url + "/tokenizer_info", timeout=30).json()  # the default: gpt2
        r = httpx.get(srv.url + "/tokenizer_info", params={"model": "nope"}, timeout=30)
        assert r.status_code == 404 and r.json()["error"]["code"] == "model_not_found"
    finally:
        srv.stop()


def test_it_is_guarded_like_tokenize(gpt2, monkeypatch):
    srv = LiveServer(gpt2, auth=("teacher", "s3cret"))
    try:
        for path in ("/tokenizer_info", "/v1/tokenizer_info"):
            assert httpx.get(srv.url + path, timeout=30).status_code == 401, path
            assert httpx.get(srv.url + path, auth=("teacher", "s3cret"), timeout=30).status_code == 200, path
    finally:
        srv.stop()


def test_a_served_model_without_a_local_tokenizer_gets_a_clear_400(gpt2, monkeypatch):
    monkeypatch.setattr(gpt2, "tokenizer", None)
    from explorer.api.tokenize import tokenizer_info
    from explorer.errors import ExplorerError

    with pytest.raises(ExplorerError, match="--tokenizer") as err:
        tokenizer_info(gpt2)
    assert err.value.code == "not_available_remote"


# ---- against the real vLLM (`make test-vllm`; its server needs --enable-tokenizer-info-endpoint) --------------
VLLM_OWN = {
    # vLLM names the class of its wrapper around the same transformers tokenizer (TokenizerPoolCached...)
    "tokenizer_class": lambda ours, theirs: theirs.endswith(ours),
    # vLLM loads every tokenizer with truncation_side="left"; ours keeps the folder's setting (it never truncates)
    "truncation_side": lambda ours, theirs: ours is None and theirs == "left",
}


@pytest.mark.vllm
def test_it_is_vllms_answer_on_the_default_folder(vllm_server, smollm):
    r = httpx.get(vllm_server.url + "/tokenizer_info", timeout=30)
    if r.status_code == 404:
        pytest.skip(
            "the vLLM peer runs without --enable-tokenizer-info-endpoint (tests/helpers/vllm_peer.py starts it with)"
        )
    theirs = r.json()
    srv = LiveServer(smollm)
    try:
        ours = httpx.get(srv.url + "/tokenizer_info", timeout=30).json()
    finally:
        srv.stop()
    for key, same in VLLM_OWN.items():
        assert same(ours.get(key), theirs.get(key)), (key, ours.get(key), theirs.get(key))
    assert [k for k in ours if k not in VLLM_OWN] == [k for k in theirs if k not in VLLM_OWN]
    assert {k: v for k, v in ours.items() if k not in VLLM_OWN} == {
        k: v for k, v in theirs.items() if k not in VLLM_OWN
    }
