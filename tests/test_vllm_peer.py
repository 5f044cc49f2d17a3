"""The real vLLM tier's own footing: the server the other vllm tests compare with is the real one, on our folder."""

import httpx
import pytest

from tests.helpers.vllm_peer import VERSION

pytestmark = pytest.mark.vllm


def test_the_peer_is_the_pinned_vllm_on_the_default_folder(vllm_server, default_model_dir):
    assert httpx.get(vllm_server.url + "/version", timeout=10).json()["version"].startswith(VERSION)
    cards = httpx.get(vllm_server.url + "/v1/models", timeout=10).json()["data"]
    assert [c["id"] for c in cards] == vllm_server.names
    assert {c["root"] for c in cards} == {default_model_dir}
    assert {c["owned_by"] for c in cards} == {"vllm"}
