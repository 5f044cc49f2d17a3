"""Every web-app action is callable through gradio_client by its api_name."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def client(live):
    from gradio_client import Client

    return Client(live.url + "/", verbose=False)


def test_api_names_are_listed(client):
    names = set(client.view_api(return_format="dict", print_info=False)["named_endpoints"])
    assert {"/score", "/generate", "/chat", "/token_detail", "/restyle", "/download", "/load_model"} <= names


def test_score_through_gradio_client(client):
    out = client.predict("The quick brown fox", "probability", "1, 10, 100, 1000", 5, api_name="/score")
    heatmap, summary = out[0], out[2]
    assert "data-pos=" in heatmap and "perplexity" in summary
