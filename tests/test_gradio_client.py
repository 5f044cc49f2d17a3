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


def test_why_through_gradio_client(client, gpt2):
    """/why works on the session's result: score first, then ask why the last token, with a contrast."""
    from explorer.engine.analyses.attribution import attribute
    from explorer.engine.passes.scoring import score_text

    assert "/why" in client.view_api(return_format="dict", print_info=False)["named_endpoints"]
    text = "The quick brown fox"
    client.predict(text, "probability", "1, 10, 100, 1000", 5, api_name="/score")
    r = score_text(gpt2, text, 5)
    pos = r.n - 1
    out = client.predict(pos, "", api_name="/why")  # position, no contrast; the tab's defaults for the rest
    summary, chips = out[0], out[2]
    a = attribute(gpt2, r, pos, detail=128)
    assert f"{a.f:.4f}" in summary and chips.count('class="t') == a.n + 1
