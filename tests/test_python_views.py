"""The whole Python API in a notebook (#54): every view of the page is a method of `LM`, and each result draws that
view inline in Jupyter, its CSS scoped to the view. A notebook run on a real IPython kernel (nbclient) calls every
method; each cell's `text/html` must hold the view's own tokens. Also: the scoped CSS, the Python-worded errors,
several tokens as a continuation, and the default model's torch twin for the views that need hidden states."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest

import explorer
from explorer.errors import ExplorerError
from explorer.notebook.page import scope_css, view_css
from explorer.render.text import visible

TEXT = "The cat sat on the mat."
# one cell a method: (name, the call, on `lm` and `other`)
CALLS = {
    "score": "lm.score(TEXT, k=5, context_start=True)",
    "words": "lm.words(TEXT)",
    "lens": "lm.lens(TEXT, k=3)",
    "why": "lm.why(TEXT)",
    "why_ig": "lm.why(TEXT, method='ig', steps=4)",
    "compare": "lm.compare(lm, TEXT)",
    "answers": "lm.answers('The cat sat on the', [' mat', ' warm bed'])",
    "branch": "lm.branch(TEXT, [' dog', ' big dog'], position=2, max_tokens=3)",
    "lookup": "lm.lookup(TEXT, [' mat', ' the mat'])",
    "batch": "lm.batch([TEXT, 'A second, shorter text.'])",
}


def shown(values) -> list[str]:
    """The strings a drawn view holds for these texts: each text as the page shows it, escaped."""
    return [t for t in (str(v) for v in values) if t.strip()]


def expected_tokens(name: str, r) -> list[str]:
    """The texts that view `name` of result `r` draws: its tokens, words, units, answers or texts."""
    if name == "score":
        return shown(r.token_text[1:])
    if name == "words":
        return shown(r.words.text)
    if name == "lens":
        return shown(r.token_text)
    if name.startswith("why"):
        return shown(r.unit_text)
    if name == "compare":
        return shown(r.token_text)
    if name == "answers":
        return shown(a.name for a in r.answers)
    if name == "branch":
        return shown(r.piece(i) for i in range(r.n))
    if name == "lookup":
        return shown(r.scores.token_text)
    return shown(row.text for row in r.rows)


def holds(view: str, text: str) -> bool:
    """Whether the drawn `view` holds `text`, in any of the forms the views write it (escaped; spaces made visible)."""
    return any(form in view for form in {html.escape(text), html.escape(visible(text)), html.escape(text, False)})


def unscoped_selectors(css: str, scope: str = ".lx-view") -> list[str]:
    """The selectors of `css` (inside @media too) that are not under `scope` or the hover card's id."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    css = re.sub(r"@(media|supports)[^{]*\{", "", css)  # the blocks' own rules are checked as any other
    out = []
    for head in re.findall(r"([^{}]+)\{[^{}]*\}", css):
        for sel in head.split(","):
            sel = sel.strip()
            if sel and not sel.startswith(("@", scope, "#lx-card")):
                out.append(sel)
    return out


def styles(view: str) -> str:
    return "".join(re.findall(r"<style>(.*?)</style>", view, flags=re.S))


def run_notebook(tmp_path, monkeypatch, model: str | None) -> list[tuple[str, list[str]]]:
    """A notebook that loads `model` (None: the default) and calls every method, run on a real kernel: per call,
    its name and the text/html outputs of its cell."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    load = f"explorer.load({model!r}, device='cpu')" if model else "explorer.load()"
    cells = [nbformat.v4.new_code_cell(f"import explorer\nTEXT = {TEXT!r}\nlm = {load}\nlm")]
    cells += [nbformat.v4.new_code_cell(f"# {name}\n{call}") for name, call in CALLS.items()]
    nb = nbformat.v4.new_notebook(cells=cells)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors
    out = []
    for cell, name in zip(nb.cells[1:], CALLS):
        views = [o["data"]["text/html"] for o in cell.outputs if "text/html" in o.get("data", {})]
        out.append((name, ["".join(v) if isinstance(v, list) else v for v in views]))
    return out


def check_views(lm, views: list[tuple[str, list[str]]]) -> None:
    """Each cell drew its view: one text/html output, the view's tokens in it, no array repr, CSS scoped."""
    ns = {"lm": lm, "TEXT": TEXT}
    for name, outputs in views:
        assert len(outputs) == 1, name
        (view,) = outputs
        assert view.startswith('<div class="lx-view'), name
        assert "array(" not in view and "dtype=" not in view, name  # a drawing, not a repr of numpy arrays
        assert ":root" not in view and not unscoped_selectors(styles(view)), (name, unscoped_selectors(styles(view)))
        r = eval(CALLS[name], ns)  # the same call here: the same numbers (greedy, seeded)
        tokens = expected_tokens(name, r)
        assert tokens, name
        missing = [t for t in tokens if not holds(view, t)]
        assert not missing, (name, missing)
        assert len(r.to_pandas()) > 0, name


def test_every_lm_method_draws_its_view_in_a_real_kernel(gpt2_dir, gpt2, tmp_path, monkeypatch):
    views = run_notebook(tmp_path, monkeypatch, gpt2_dir)
    assert [n for n, _ in views] == list(CALLS)
    check_views(explorer.load(gpt2_dir, device="cpu"), views)


@pytest.mark.slow
def test_every_lm_method_on_the_default_model_in_a_real_kernel(smollm, tmp_path, monkeypatch):
    """The default model as `explorer.load()` loads it (the GGUF on llama.cpp where installed): the lens and the
    gradient methods come from its torch twin, and say so."""
    views = run_notebook(tmp_path, monkeypatch, None)
    lm = explorer.load()
    check_views(lm, views)
    if not lm.engine.capabilities.hidden_states:
        assert "torch engine on the same weights" in dict(views)["lens"][0]


# ---- the CSS stays inside the view ------------------------------------------------------------------------------
def test_scope_css_puts_every_rule_under_the_view():
    css = (
        ":root{--a:1} .c0{background:red} .dark{--a:2} .dark .x{y:1} body{margin:0} #lx-card .tok{z:1} "
        "/* .gone{} */ @media (max-width: 720px) { .sbs, .lx .t { w:1 } } @keyframes k { from {o:0} to {o:1} }"
    )
    out = scope_css(css)
    assert ".lx-view, #lx-card {--a:1}" in out
    assert ".lx-view .c0 {background:red}" in out
    assert ".dark" not in out and ".gone" not in out  # the dark rules go under prefers-color-scheme (dark_rules)
    assert ".lx-view, #lx-card {margin:0}" in out and "#lx-card .tok {z:1}" in out
    assert "@media (max-width: 720px) {.lx-view .sbs, .lx-view .lx .t { w:1 }}" in out
    assert "@keyframes k {" in out
    assert unscoped_selectors(".c0{a:1} .lx-view .c1{b:2}") == [".c0"]


def test_the_notebook_views_add_no_global_css(gpt2):
    lm = explorer.LM(gpt2)
    assert not unscoped_selectors(view_css())
    assert ":root" not in view_css() and ".lx-view .c0 {" in view_css()  # the palette's classes, under the view
    for r in (lm.score(TEXT), lm.words(TEXT), lm.lens(TEXT), lm.answers("The", [" cat"])):
        view = r._repr_html_()
        assert ":root" not in view and not unscoped_selectors(styles(view)), type(r).__name__
        assert "<html" not in view
    page = lm.lens(TEXT).to_html()  # a saved file is its own document: its CSS may be global there
    assert page.startswith("<!doctype html>")


# ---- errors in Python name Python arguments ---------------------------------------------------------------------
def test_errors_name_python_arguments(tiny_gguf):
    from explorer.notebook.lm import in_python

    e = in_python(ExplorerError("needs hidden states: load it with --engine torch", param="x", code="c"))
    assert "--engine" not in e.message and 'explorer.load(..., engine="torch")' in e.message
    assert (e.param, e.code) == ("x", "c")
    e = in_python(ExplorerError("... (or use --engine torch)."))
    assert 'use explorer.load(..., engine="torch")' in e.message
    plain = ExplorerError("nothing to change")
    assert in_python(plain) is plain
    lm = explorer.LM(tiny_gguf)  # a GGUF of its own: no torch twin can read it
    for call in (lambda: lm.lens(TEXT), lambda: lm.why(TEXT, method="gxi")):
        with pytest.raises(ExplorerError, match=r'`lm\.(lens|why).*explorer\.load\(model, engine="torch"\)') as err:
            call()
        assert err.value.param == "engine"
    with pytest.raises(ExplorerError, match="`position` 99 is outside"):
        lm.branch(TEXT, [" dog"], position=99)
    with pytest.raises(ExplorerError, match="`queries` must be"):
        lm.lookup(TEXT, [])


def test_several_tokens_are_a_continuation(gpt2):
    """A branch's alternative of several tokens is put in whole (then the model goes on); a lookup of several
    tokens gets its joint logprob where the text continues with them."""
    lm = explorer.LM(gpt2)
    alt = " big dog"
    toks = gpt2.tokenize(alt, add_special_tokens=False)
    assert len(toks) > 1
    tree = lm.branch(TEXT, [alt], position=2, max_tokens=2)
    leaf = tree.leaves()[-1]
    path = tree.path(leaf)
    got = [int(tree.token_ids[i]) for i in path]
    n_text = 2  # the text's tokens before the branch are kept
    assert got[n_text : n_text + len(toks)] == toks
    assert alt in tree.text(leaf)
    look = lm.lookup(TEXT, [" the mat"])
    (x,) = look.lookups
    at = np.flatnonzero(~np.isnan(x.joint_logprobs)).tolist()
    assert at  # the text continues with " the mat" once
    r = lm.score(TEXT)
    for p in at:  # the joint: the sum of the text's own logprobs over those tokens
        assert x.joint_logprobs[p] == pytest.approx(float(r.logprobs[p : p + len(x.token_ids)].sum()), abs=1e-4)


# ---- /v1: the hidden states of a model llama.cpp serves come from its torch twin ------------------------------------
def test_v1_hidden_states_of_a_llamacpp_model_come_from_its_twin(tiny_gguf, tiny_gguf_dir):
    """As tests/test_twin.py's registry: the tiny GGUF on llama.cpp, its twin the same weights' HF folder."""
    import os

    import httpx

    from explorer.engine import TorchEngine
    from explorer.serving.models import TWIN, Models
    from tests.helpers.servers import LiveServer

    hf = os.path.join(tiny_gguf_dir, "hf")
    loads = []

    def loader(spec):
        loads.append(spec.name)
        return TorchEngine.load(hf, device="cpu", name=spec.twin_of)

    models = Models([tiny_gguf.name], allow_hub=False, loader=loader)
    models.add(tiny_gguf)
    srv = LiveServer(models=models)
    try:
        ask = {"model": tiny_gguf.name, "prompt": "the quick brown fox", "max_tokens": 1, "temperature": 0}
        plain = httpx.post(srv.url + "/v1/completions", json=ask, timeout=120)
        assert plain.status_code == 200, plain.text
        assert loads == []  # no hidden states asked: llama.cpp answers
        r = httpx.post(srv.url + "/v1/completions", json={**ask, "return_hidden_states": True}, timeout=120)
        assert r.status_code == 200, r.text
        assert isinstance(r.json()["choices"][0]["hidden_states"], list)  # llama.cpp alone refuses: a 400
        assert loads == [tiny_gguf.name + TWIN]  # loaded on first use, then kept
        again = httpx.post(srv.url + "/v1/completions", json={**ask, "return_hidden_states": True}, timeout=120)
        assert again.status_code == 200 and loads == [tiny_gguf.name + TWIN]
    finally:
        srv.stop()


def test_v1_loads_no_twin_where_the_operator_left_hidden_states_off(tiny_gguf, tiny_gguf_dir):
    """A server whose operator left hidden states off (a public one's default): a request for them is refused with
    the operator's setting named, and no second copy of the model is loaded for it."""
    import httpx

    from explorer.rules.sampler import Limits
    from explorer.serving.models import Models
    from tests.helpers.servers import LiveServer

    loads = []

    def loader(spec):
        loads.append(spec.name)
        raise AssertionError("no model should load for a refused request")

    models = Models([tiny_gguf.name], allow_hub=False, loader=loader)
    models.add(tiny_gguf)
    srv = LiveServer(models=models, limits=Limits(hidden_states=False))
    try:
        ask = {"model": tiny_gguf.name, "prompt": "the quick brown fox", "max_tokens": 1, "return_hidden_states": True}
        r = httpx.post(srv.url + "/v1/completions", json=ask, timeout=120)
    finally:
        srv.stop()
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "hidden_states_off" and loads == []
