"""The registry of models: who may load what, least recently used dropped first, never one in use."""

from __future__ import annotations

import pytest

from explorer.errors import ExplorerError
from explorer.serving.models import Models


class Fake:
    def __init__(self, name: str, mb: float = 100.0):
        self.name, self.weights_mb = name, mb


def registry(names, **kw):
    loads = []

    def loader(spec):
        loads.append(spec.name)
        return Fake(spec.name)

    return Models(names, loader=loader, allow_hub=False, **kw), loads


def test_least_recently_used_goes_first():
    models, loads = registry(["a", "b", "c"], max_loaded=2)
    models.get("a"), models.get("b"), models.get("a"), models.get("c")  # b is the least recently used
    assert models.loaded("a") and models.loaded("c") and models.loaded("b") is None
    models.get("b")
    assert loads == ["a", "b", "c", "b"]


def test_a_model_in_use_is_never_dropped():
    models, _ = registry(["a", "b", "c"], max_loaded=1)
    with models.use("a") as a:
        models.get("b")  # over the count, but a is pinned by the running request
        assert models.loaded("a") is a
    models.get("c")  # a is free now: it and b go
    assert models.loaded("a") is None and models.loaded("b") is None and models.loaded("c")


def test_memory_budget():
    models, _ = registry(["a", "b"], max_loaded=5, max_mb=150)
    models.get("a"), models.get("b")  # 200 MB > 150: a goes
    assert models.loaded("a") is None and models.loaded("b")


def test_default_and_names():
    models, _ = registry(["a", "b"])
    assert models.default == "a" and models.names == ["a", "b"] and models.get().name == "a"
    with pytest.raises(ExplorerError, match="not available") as err:
        models.get("gpt2")  # hub ids only where the deployment allows them
    assert err.value.code == "model_not_found"
    hub, _ = registry(["a"])
    hub.allow_hub = True
    assert hub.get("gpt2").name == "gpt2" and hub.listed() == ["a", "gpt2"]
