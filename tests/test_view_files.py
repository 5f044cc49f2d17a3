"""The tool tabs' views as self-contained HTML files (explorer/notebook/views.py): each holds its result's numbers as
text and its own JSON (logprob-data), no http(s) address in a src or href, no script to run, a CSP that allows only
inline style, light and dark colours; built on the tiny GPT-2 and Llama."""

from __future__ import annotations

import html
import json
import math
import re

import pytest

from explorer.notebook import views
from explorer.notebook.page import data_of
from tests.helpers.views import view_files


@pytest.fixture(scope="module")
def made(gpt2, llama):
    return view_files(gpt2, llama)


def f4(x: float) -> str:
    return html.escape(f"{float(x):.4f}")


@pytest.mark.parametrize("name", ["words", "compare", "compare-spans", "answers", "why", "lens", "branch", "batch"])
def test_each_view_is_one_self_contained_file(made, name):
    page, _ = made[name]
    assert page.startswith("<!doctype html>") and page.rstrip().endswith("</html>")
    assert page.count("<html") == 1 and page.count("<body>") == page.count("</body>") == 1
    assert f'content="{views.CSP}"' in page and "prefers-color-scheme: dark" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page, re.I), "a request when opened"
    assert "@import" not in page and "url(" not in page
    scripts = re.findall(r"<script([^>]*)>", page)
    assert scripts == [' type="application/json" id="logprob-data"'], scripts  # data only: nothing runs
    assert len(page) < 2_000_000


def test_words_file_holds_its_numbers_and_json(made):
    page, ws = made["words"]
    rows = ws.rows()
    assert data_of(page) == json.loads(json.dumps(views.words_dict(ws.scores, ws.words, ws.lead)))
    for row in rows[1:4]:
        assert f"<td>{f4(row['surprisal_corrected_bits'])}</td>" in page
        assert html.escape(views.visible(row["text"])) in page


def test_words_file_says_what_its_columns_are_not_what_the_tab_does(made):
    """The file explains its corrected column (made by a second pass when the view was made), never the tab's
    "its progress shows here"; a result the engine gave no corrected numbers for says so."""
    from explorer.results.words import words

    page, ws = made["words"]
    assert "second full pass of the model over the text when this view was made" in page
    assert "progress" not in page and "Show words runs" not in page
    plain = views.words_page(ws.scores, words(ws.scores), ws.lead)  # no corrected numbers
    assert "No corrected surprisal" in plain and "when this view was made" not in plain


def test_compare_file_holds_every_pair(made):
    page, c = made["compare"]
    assert data_of(page)["format"] == c.to_dict()["format"]
    for j in (1, 3, 5):
        assert f"<td>{f4(c.logprob_a[j])}</td>" in page and f"<td>{f4(c.js[j])}</td>" in page
    page2, c2 = made["compare-spans"]
    assert "different tokenizers" in page2 and f"<td>{f4(c2.span_logprob_b[2])}</td>" in page2
    assert page.count('<svg class="lx-chart"') == 2 and page2.count('<svg class="lx-chart"') == 1


def test_answers_why_lens_branch_files_hold_their_numbers(made):
    page, res = made["answers"]
    assert data_of(page) == json.loads(json.dumps(res.to_dict()))
    best = res.answers[res.best]
    assert "Paris" in page and f"{100 * float(res.normalised[res.best]):.4g}%" in page
    assert f"<td>{f4(best.variants[0].logprob)}</td>" in page
    assert f"<td>{math.exp(best.variants[0].logprob):.3g}</td>" in page  # a tiny probability, not 0.0000
    assert "<td>0.0000</td>" not in page
    page, a = made["why"]
    assert data_of(page)["format"] == a.to_dict()["format"]
    for u in a.ranked(3):
        assert f"<td>{f4(a.values[u])}</td>" in page
    page, g = made["lens"]
    assert data_of(page)["n_layers"] == g.n_layers
    last = [f"<td>{int(g.ranks[g.n_layers, p])}</td>" for p in range(1, g.n)]
    assert "".join(last) in page  # the output layer's row of ranks, in order
    page, tree = made["branch"]
    d = data_of(page)
    assert len(d["nodes"]) == tree.n and f"<td>{f4(tree.logprobs[-1])}</td>" in page
    last = f"<tr><td>{tree.n - 1}</td><td>{tree.parent[-1]}</td>"  # ranks and parents whole, the root's blank
    assert last in page and f"<td>{int(tree.ranks[-1])}</td></tr>" in page and "<tr><td>0</td><td></td>" in page


def test_markdown_keeps_only_its_own_tags():
    out = views.md_html("**a** <img src=x onerror=alert(1)> `<b>` *i* <code>x</code>\n\nnext")
    assert "<img" not in out and "&lt;img" in out and "<code>&lt;b&gt;</code>" in out
    assert out == (
        "<p><strong>a</strong> &lt;img src=x onerror=alert(1)&gt; <code>&lt;b&gt;</code> <em>i</em> "
        "<code>x</code></p><p>next</p>"
    )


def test_each_tab_offers_its_view_as_html(gpt2, llama, made):
    """The tabs' *Download view (HTML)* buttons hold the file of the view they show (explorer/ui/tabs)."""
    from tests.helpers.page import GPT2, make_page, path_of

    p = make_page([gpt2, llama])

    def held(button) -> str:
        assert button.interactive and path_of(button).endswith(".view.html")
        with open(path_of(button), encoding="utf-8") as f:
            return f.read()

    ws = made["words"][1]
    words = p.tabs["words"]
    out = words.files((ws.scores, ws.words, ws.lead), "surprisal")
    assert held(out[words.dl_html]) == views.words_page(ws.scores, ws.words, ws.lead, "surprisal")
    assert words.files(None)[words.dl_html].interactive is False
    c = made["compare"][1]
    assert held(p.tabs["compare"].view(c, "Jensen-Shannon")) == views.compare_page(c, "js")
    assert p.tabs["compare"].view(None, "").interactive is False
    g = made["lens"][1]
    assert held(p.tabs["lens"].view(g, "entropy")) == views.lens_page(g, "entropy")
    why = p.tabs["why"]
    a = made["why"][1]
    assert held(why.show(a)[why.dl_html]) == views.why_page(a)
    answers = p.tabs["answers"]
    out = answers.run(GPT2, "The capital of France is", " Paris| paris\n London\n Rome")
    assert data_of(held(out[answers.dl_html]))["answers"][0]["answer"] == " Paris"


def test_batch_file_holds_every_texts_figures_and_its_json(made):
    page, b = made["batch"]
    assert data_of(page) == json.loads(json.dumps(b.to_dict()))
    for r in b.rows:  # each text's row: its id and perplexity as the table shows them, its bar's mean surprisal
        assert f"<td>{r.id}</td>" in page and r.perplexity is not None
        assert f"{-r.mean_logprob / math.log(2):.4g}" in page
    assert "corpus perplexity" in page and "Mean surprisal of each text" in page and "Click a row" not in page


@pytest.mark.parametrize("name", ["words", "answers", "why", "lens", "branch", "batch"])
def test_a_tool_file_says_it_does_not_open_and_what_does(made, name, tmp_path):
    """*Open a session* and explorer.open read a tool tab's file and say which view it is and what opens instead."""
    from explorer.errors import ExplorerError
    from explorer.notebook.files import open_file

    path = tmp_path / f"{name}.view.html"
    path.write_text(made[name][0], encoding="utf-8")
    view = {"lens": "Logit lens", "answers": "Answers"}.get(name, name.capitalize())
    with pytest.raises(ExplorerError, match=f"it is an? {view} view's own JSON .*Score, Generate, Chat or Compare"):
        open_file(path)


@pytest.mark.parametrize("name", ["compare", "compare-spans"])
def test_a_compare_file_opens_as_its_result_a(made, name, tmp_path):
    from explorer.export.read.documents import open_document
    from explorer.notebook.files import document_bytes, open_file

    page, c = made[name]
    path = tmp_path / f"{name}.view.html"
    path.write_text(page, encoding="utf-8")
    r = open_file(path)
    assert r.token_ids.tolist() == c.a.token_ids.tolist() and r.to_dict() == c.a.to_dict()
    opened = open_document(document_bytes(page.encode()))
    assert [x.to_dict() for x in opened.results] == [c.a.to_dict(), c.b.to_dict()]
    assert opened.about == "result A of a Compare view" and c.b.model in opened.notes[0]
