"""One set of rules: the same bad settings get the same message from the CLI, the page's handlers and the API."""

from __future__ import annotations

import html
import subprocess
import sys

import gradio as gr
import httpx
import pytest

from tests.helpers.page import SAMPLER, gen, make_page

# (CLI flags, page sampler fields, API body fields) -> the message every face must show
CASES = [
    (["--temperature", "-1"], {"temperature": -1}, {"temperature": -1}),
    (["--top-p", "0"], {"top_p": 0}, {"top_p": 0}),
    (["--top-k", "-5"], {"top_k": -5}, {"top_k": -5}),
    (["--max-tokens", "-1"], {"max_tokens": -1}, {"max_tokens": -1}),
    (["--seed", "-3"], {"seed": -3}, {"seed": -3}),
    (["--stop", "x" * 300], {"stop": "x" * 300}, {"stop": ["x" * 300]}),
]


def cli_message(gpt2_dir, flags) -> str:
    p = subprocess.run(
        [sys.executable, "-m", "explorer", "generate", "--model", gpt2_dir, "--prompt", "fox", *flags],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    return p.stderr.strip().splitlines()[-1].removeprefix("error: ")


def page_message(ui, fields) -> str:
    with pytest.raises(gr.Error) as err:
        gen(ui, "fox", **fields)
    return html.unescape(err.value.message)


def api_message(url, body) -> str:
    r = httpx.post(url + "/v1/completions", json={"prompt": "fox", "max_tokens": 2, **body}, timeout=60)
    assert r.status_code == 400, r.text
    return r.json()["error"]["message"]


@pytest.fixture(scope="module")
def ui(gpt2):
    return make_page([gpt2])


@pytest.mark.parametrize(("flags", "fields", "body"), CASES, ids=[c[0][0] for c in CASES])
def test_same_message_everywhere(gpt2_dir, ui, live, flags, fields, body):
    assert set(fields) <= set(SAMPLER)
    cli, page, api = cli_message(gpt2_dir, flags), page_message(ui, fields), api_message(live.url, body)
    assert cli == page == api, (cli, page, api)
