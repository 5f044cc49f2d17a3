"""Helpers for the view tabs' handler tests: one tab built alone, beside a stand-in for the inspector's result and selection."""

from __future__ import annotations

from types import SimpleNamespace

import gradio as gr
import pytest
import torch

from explorer.errors import ExplorerError
from explorer.models import Models
from explorer.ui.tabs import Shared


def no_hub(spec):
    raise ExplorerError(f"Model {spec.source!r} was not found.", code="model_not_found")


def build_tab(cls, *engines):
    """`cls` built in its own Blocks for `engines` (the first is the default); the inspector's parts it reads are stand-ins."""
    models = Models([e.name for e in engines], allow_hub=False, loader=no_hub)
    for e in engines:
        models.add(e)
    with gr.Blocks():
        inspector = SimpleNamespace(result=gr.State([]), selected=gr.Number(value=0, precision=0))
        with gr.Tabs():
            return cls(Shared(models, gr.State(engines[0].name), inspector))


def whole_page(*engines):
    """The whole page over these loaded engines, built now (so under the environment's cap); nothing else loads."""
    from explorer.ui.layout import page

    models = Models([e.name for e in engines], allow_hub=False, loader=no_hub)
    for e in engines:
        models.add(e)
    return page(models)


@pytest.fixture(scope="session")
def gpt2_b_dir(gpt2, tmp_path_factory):
    """A second tiny GPT-2 saved to a folder: the same tokenizer as `gpt2`, other weights (import it into a test module)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(7)
    cfg = GPT2Config(
        vocab_size=gpt2.vocab_size,
        n_positions=128,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=gpt2.tokenizer.bos_token_id,
        eos_token_id=gpt2.tokenizer.eos_token_id,
    )
    model = GPT2LMHeadModel(cfg)
    with torch.no_grad():
        model.lm_head.weight.mul_(15)
    path = tmp_path_factory.mktemp("gpt2-b")
    model.save_pretrained(path)
    gpt2.tokenizer.save_pretrained(path)
    return str(path)


@pytest.fixture(scope="session")
def gpt2_b(gpt2_b_dir):
    from explorer.engine import TorchEngine

    return TorchEngine.load(gpt2_b_dir, device="cpu", name="tiny-gpt2-b")
