"""The page's handlers called directly (no browser) on the tiny models: a page over loaded engines, and its tabs
driven as the browser would (score, generate, chat, load), with what their outputs hold."""

from __future__ import annotations

import html
import json
import re
from typing import TYPE_CHECKING

import pytest

from explorer.errors import ExplorerError
from explorer.ui.sampler import RunOptions

if TYPE_CHECKING:
    import gradio as gr

T = "1, 10, 100, 1000"
GPT2, LLAMA = "tiny-gpt2", "tiny-llama"
SAMPLER = dict(
    max_tokens=6, temperature=0.9, top_p=1.0, top_k=0, seed=5, stop="", mode="processed: after", score_prompt=True
)


def no_hub(spec):
    """A loader that never reaches the network: every model not already loaded 'was not found'."""
    raise ExplorerError(f"Model {spec.source!r} was not found.", code="model_not_found")


def models_of(engines, allow_hub=False):
    """A registry over these loaded engines (the first is the default) that loads nothing else (`no_hub`)."""
    from explorer.serving.models import Models

    models = Models([e.name for e in engines], allow_hub=allow_hub, loader=no_hub)
    for e in engines:
        models.add(e)
    return models


def make_page(engines, allow_hub=False):
    """The whole page over these loaded engines, built now (so under the environment's cap); nothing else loads."""
    from explorer.ui.layout import page

    return page(models_of(engines, allow_hub))


def build_tab(cls, *engines):
    """`cls` built in its own Blocks for `engines` (the first is the default); the inspector's parts it reads are
    stand-ins."""
    from types import SimpleNamespace

    import gradio as gr

    from explorer.ui.tabs import Shared

    with gr.Blocks():
        inspector = SimpleNamespace(result=gr.State([]), selected=gr.Number(value=0, precision=0))
        with gr.Tabs():
            return cls(Shared(models_of(engines), gr.State(engines[0].name), inspector))


@pytest.fixture(scope="module")
def ui(gpt2, llama):
    return make_page([gpt2, llama])


@pytest.fixture(scope="module")
def v(ui):
    return ui.inspector


def score_all(ui, text, thresholds=T, name=GPT2, metric="logprob", k=5, from_start=False, start=None):
    return list(
        ui.tabs["score"].score(
            name,
            text,
            metric=metric,
            thresholds_text=thresholds,
            k=k,
            from_start=from_start,
            start=start,
            progress=lambda *a, **kw: None,
        )
    )


def score(ui, text, **kw):
    return score_all(ui, text, **kw)[-1]


def gen(ui, prompt, name=GPT2, metric="rank", thresholds=T, k=5, **kw):
    s = {**SAMPLER, **kw}
    return list(
        ui.tabs["generate"].continue_prompt(
            name, prompt, RunOptions.from_values({**s, "metric": metric, "thresholds_text": thresholds, "k": k})
        )
    )


def chat(ui, system, message, name=GPT2, history=None, **kw):
    s = {**SAMPLER, **kw}
    return list(
        ui.tabs["chat"].reply(
            name,
            history or [],
            system,
            message,
            RunOptions.from_values({**s, "metric": "logprob", "thresholds_text": T, "k": 5}),
        )
    )


def load(ui, choice):
    return ui.picker.load(choice, progress=lambda *a, **k: None)


def path_of(button: gr.DownloadButton) -> str | None:
    """The file a download button holds (Gradio keeps it as a file record)."""
    return button.value["path"] if isinstance(button.value, dict) else button.value


def heat(out, v) -> str:
    return out[v.heatmap]


def blob_of(heatmap: str) -> dict:
    """The page's one data blob, read from the heatmap's HTML as the page reads it."""
    return json.loads(html.unescape(re.search(r'<div class="lx-data" hidden>(.*?)</div>', heatmap).group(1)))
