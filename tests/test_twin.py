"""Views that need hidden states or gradients (the Logit lens; Why's integrated gradients, gradient x input and
attention) on a model served by llama.cpp: they run on the torch engine on the same weights (Models.use_for), say
so, and equal that engine's own numbers; where torch cannot read the weights the page says why before any click."""

from __future__ import annotations

import os

import numpy as np
import pytest

from explorer.engine import TorchEngine
from explorer.engine.analyses.attribution import attribute
from explorer.engine.analyses.lens import lens_ids
from explorer.serving.models import TWIN, Models
from explorer.ui.layout import page
from explorer.ui.tabs.why import BASELINE_LABELS, METHOD_LABELS, MODE_LABELS
from tests.helpers.page import score

TEXT = "the quick brown fox jumps over the lazy dog"


@pytest.fixture(scope="module")
def served(tiny_gguf, tiny_gguf_dir):
    """A registry serving the tiny GGUF through llama.cpp, whose torch twin reads the same weights' HF folder."""
    hf = os.path.join(tiny_gguf_dir, "hf")
    loads = []

    def loader(spec):
        loads.append(spec.name)
        assert spec.twin_of == tiny_gguf.name  # only the twin is ever loaded here
        return TorchEngine.load(hf, device="cpu", name=spec.twin_of)

    models = Models([tiny_gguf.name], allow_hub=False, loader=loader)
    models.add(tiny_gguf)
    return models, loads


def test_the_lens_runs_on_the_twin_and_says_so(served):
    models, loads = served
    ui = page(models)
    lens = ui.tabs["lens"]
    assert lens.button.interactive and not lens.unavailable.visible  # offered: it works
    out = lens.run(models.default, TEXT, [], "rank")
    g = out[lens.state]
    assert loads == [models.default + TWIN]
    with models.use_for(models.default, "hidden_states") as twin:
        assert twin.capabilities.engine == "torch" and twin.name == models.default
        want = lens_ids(twin, twin.encode(TEXT), k=g.k)
    np.testing.assert_allclose(g.logprobs, want.logprobs, atol=1e-5, equal_nan=True)
    assert "torch engine on the same weights" in g.note and "llama.cpp" in g.note
    assert "torch engine on the same weights" in out[lens.grid]
    assert loads == [models.default + TWIN]  # loaded once, then kept


@pytest.mark.parametrize("method", ["ig", "gxi", "attention"])
def test_gradient_methods_run_on_the_twin(served, method):
    models, _ = served
    ui = page(models)
    res = score(ui, TEXT, name=models.default)
    state = res[ui.inspector.result]
    r = state[0]
    pos = r.n - 1
    tab = ui.tabs["why"]
    out = list(
        tab.run(state, pos, method=METHOD_LABELS[method], units="Tokens", detail=128,
                mode=MODE_LABELS["remove"], steps=8, baseline=BASELINE_LABELS["neutral"],
                progress=lambda *a, **kw: None)
    )[-1]  # fmt: skip
    a = out[tab.state]
    with models.use_for(models.default, "hidden_states") as twin:
        want = attribute(twin, r, pos, method=method, steps=8, detail=128)
    np.testing.assert_allclose(a.values, want.values, atol=1e-5)
    assert "torch engine on the same weights" in out[tab.summary]


def test_where_torch_cannot_read_the_weights_the_page_says_why_before_the_click(tiny_gguf):
    models = Models([tiny_gguf.name], allow_hub=False, loader=lambda spec: tiny_gguf, engine="llama.cpp")
    models.add(tiny_gguf)
    models.specs[tiny_gguf.name] = type(models.specs[tiny_gguf.name])(tiny_gguf.name, tiny_gguf.path)
    why_not = models.without(tiny_gguf.name, "hidden_states")
    assert why_not and "--engine torch" in why_not
    ui = page(models)
    assert not ui.tabs["lens"].button.interactive and ui.tabs["lens"].unavailable.visible
    assert ui.tabs["why"].unavailable.visible and "Only *Occlusion*" in ui.tabs["why"].unavailable.value
