"""The notebook faces of the Python API: docs/notebook.ipynb run on a real IPython kernel (nbclient), and the saved
self-contained page in a real Chromium from file:// with every network request blocked and counted."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

import explorer

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "docs" / "notebook.ipynb"


def html_outputs(cell: dict) -> list[str]:
    """The text/html of each of a cell's rich outputs."""
    out = []
    for o in cell.get("outputs", []):
        html = o.get("data", {}).get("text/html")
        if html is not None:
            out.append(html if isinstance(html, str) else "".join(html))
    return out


def test_the_notebook_runs_and_shows_the_heatmap(gpt2_dir, tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    monkeypatch.setenv("EXPLORER_NOTEBOOK_MODEL", gpt2_dir)  # the kernel inherits it: the tiny model, offline
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    nbclient.NotebookClient(
        nb, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert not [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    score = next(c for c in code if "lm.score(" in c.source)
    (view,) = html_outputs(score)
    tokens = explorer.TokenScores.from_dict(json.loads(view.split('id="logprob-data">')[1].split("</script>")[0]))
    assert tokens.text == "<|endoftext|>The cat sat on the mat."
    assert len(re.findall(r'<span class="t [^"]*" data-pos="', view)) == tokens.n  # one chip a token
    assert "lx-card" in view and 'id="token-detail"' in view  # the card's script, the click's detail
    assert any("<table" in h and "logprob" in h for c in code if "to_pandas" in c.source for h in html_outputs(c))
    assert (tmp_path / "cat.html").read_text(encoding="utf-8").count('id="logprob-data"') == 1


@pytest.mark.browser
def test_the_saved_page_works_offline_in_a_browser(browser, gpt2_dir, tmp_path):
    """The session's Chromium (tests/conftest.py `browser`: one Playwright per test session)."""
    lm = explorer.load(gpt2_dir, device="cpu")
    s = lm.score("The quick brown fox jumps over the lazy dog.", k=5, context_start=True)
    path = s.save_html(tmp_path / "fox.html")
    from tests.helpers.browser import offline_page

    page = offline_page(browser, lambda url: url == Path(path).as_uri())  # the page's own file only
    try:
        page.goto(Path(path).as_uri())
        chip = page.locator('#heatmap [data-pos="3"]')
        chip.hover()
        card = page.locator("#lx-card")
        card.wait_for(state="visible", timeout=5000)
        assert "rank" in card.inner_text() and "position 3" in card.inner_text()
        chip.click()
        detail = page.locator('.lx-detail .td[data-pos="3"]')
        detail.wait_for(timeout=5000)
        assert detail.locator("tbody tr").count() == 5  # every listed alternative
        assert page.locator('#heatmap [data-pos="3"].sel').count() == 1
        page.keyboard.press("ArrowRight")
        assert page.evaluate("document.activeElement.dataset.pos") == "4"
        assert page.errors == []
        assert page.refused == [], page.refused
    finally:
        page.context.close()
    assert os.path.getsize(path) > 0


def test_the_view_takes_the_page_theme_light_and_dark():
    """page.py's HOST_COLOURS (what Gradio's theme gives the page's CSS, for a view outside Gradio) are the theme's own
    values, light and dark; the page's dark rules (`.dark ...`) reach the view under prefers-color-scheme: dark."""
    from explorer.notebook.page import HOST_COLOURS, dark_rules, view_css
    from explorer.render.heatmap import DARK
    from explorer.ui.theme import theme

    t = theme()

    def value(name: str) -> str:
        v = getattr(t, name)
        while v.startswith("*"):
            v = getattr(t, v[1:])
        return {"white": "#ffffff"}.get(v, v)

    for scheme, colours in HOST_COLOURS.items():
        for var, colour in colours.items():
            name = var.removeprefix("--").replace("-", "_") + ("_dark" if scheme == "dark" else "")
            assert value(name) == colour, (scheme, var)
    css = view_css()
    dark = css[css.index("@media (prefers-color-scheme: dark)") :]
    assert f"--lx-c0:{DARK[0]}" in dark and ".lx-view .alts tr.act" in dark and ".lx-view .lx .t.sel" in dark
    assert dark_rules(".a{x:1} .dark{y:2} /* .dark .b{} */ .dark .c,.dark .d{z:3} body.dark .e{w:4}") == (
        ".lx-view, #lx-card {y:2}\n.lx-view .c, .lx-view .d {z:3}"
    )
