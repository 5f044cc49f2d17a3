"""`explorer.open` and `logprob-explorer site`: every input kind opens to the same result; the site folder lists every
view with a link that exists, opens offline with no request, and its README is a static Space's; a bad input is one
error naming the file, and nothing that looks like a site is left behind."""

from __future__ import annotations

import gzip
import html
import json
import os
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

import explorer
from explorer.cli import main
from explorer.errors import ExplorerError
from explorer.export.read.documents import SESSION_FORMAT

TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "The capital of France is Paris. The capital of Italy is Rome.",
]


@pytest.fixture(scope="module")
def results(gpt2_dir):
    lm = explorer.load(gpt2_dir, device="cpu")
    return [lm.score(TEXTS[0], k=5, context_start=True), lm.score(TEXTS[1], k=3)]


@pytest.fixture
def inputs(results, tmp_path) -> dict[str, Path]:
    """The same results as each kind of file: native JSON, a session, a saved page, a notebook fragment, gzip."""
    a, b = results
    files = {
        "native": tmp_path / "fox.json",
        "session": tmp_path / "capital-session.json",
        "page": tmp_path / "fox page.html",
        "fragment": tmp_path / "fragment.html",
        "gzip": tmp_path / "capital.json.gz",
    }
    files["native"].write_text(a.to_json("native"), encoding="utf-8")
    session = {"format": SESSION_FORMAT, "version": 1, "view": None, "marks": {"special": [], "turns": []},
               "results": [b.to_dict()]}  # fmt: skip
    files["session"].write_text(json.dumps(session), encoding="utf-8")
    a.save_html(files["page"])
    files["fragment"].write_text(a.to_html(), encoding="utf-8")
    files["gzip"].write_bytes(gzip.compress(b.to_json("native").encode()))
    return files


def test_open_round_trips_every_kind(results, inputs):
    a, b = results
    want = {"native": a, "session": b, "page": a, "fragment": a, "gzip": b}
    for kind, path in inputs.items():
        assert explorer.open(path).to_dict() == want[kind].to_dict(), kind
        assert explorer.open(str(path)).to_dict() == want[kind].to_dict(), kind


BAD = {
    "not JSON": (b"this is not json", "not JSON"),
    "wrong shape": (b'{"format": "something/else", "tokens": []}', "none of the shapes"),
    "HTML without data": (b"<!doctype html><html><body><p>hello</p></body></html>", "without a view's data"),
    "a cut view": (b'<div><script type="application/json" id="logprob-data">{"format": ', "not JSON"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_a_bad_file_is_one_error_naming_it(name, tmp_path):
    data, why = BAD[name]
    path = tmp_path / "bad-input.json"
    path.write_bytes(data)
    with pytest.raises(ExplorerError) as err:
        explorer.open(path)
    assert str(path) in err.value.message and why in err.value.message, err.value.message


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(ExplorerError, match=r"nowhere\.json.*could not be read"):
        explorer.open(tmp_path / "nowhere.json")


class Links(HTMLParser):
    """The index's links, table headers and every URL a tag would fetch."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.fetches: list[str] = []
        self.headers: list[str] = []
        self._in_th = False

    def handle_starttag(self, tag, attrs):
        d = dict(attrs)
        if tag == "a":
            self.links.append(d["href"])
        if tag == "th" and d.get("scope") == "col":
            self._in_th = True
        for key in ("src", "srcset"):
            if d.get(key):
                self.fetches.append(d[key])
        if tag == "link" and d.get("href"):
            self.fetches.append(d["href"])

    def handle_endtag(self, tag):
        self._in_th = self._in_th and tag != "th"

    def handle_data(self, data):
        if self._in_th:
            self.headers.append(data)


def test_site_lists_every_view_and_is_a_static_space(results, inputs, tmp_path, capsys):
    out = tmp_path / "site"
    assert main(["site", str(out), *map(str, inputs.values()), "--title", "Garden paths"]) == 0
    index = (out / "index.html").read_text(encoding="utf-8")
    p = Links()
    p.feed(index)
    assert p.headers == ["Title", "Model", "First words", "Tokens", "Date"]
    assert len(p.links) == len(inputs) == len(set(p.links))
    for link in p.links:  # each a page of its own, holding the result of its input
        assert (out / link).is_file() and "/" not in link and not link.startswith(("http", "//"))
    opened = [explorer.open(out / link).to_dict() for link in p.links]
    want = [explorer.open(path).to_dict() for path in inputs.values()]
    assert opened == want
    assert p.fetches == [] and "http://" not in index and "https://" not in index
    assert "prefers-color-scheme: dark" in index and "Content-Security-Policy" in index
    assert "The quick brown fox jumps" in index and html.escape(results[0].model) in index
    for page in out.glob("*.html"):  # nothing that fetches: no src/href to another host in any page
        q = Links()
        q.feed(page.read_text(encoding="utf-8"))
        assert q.fetches == [], page
    front, body = (out / "README.md").read_text(encoding="utf-8").split("---\n")[1:3]
    meta = yaml.safe_load(front)
    assert meta["sdk"] == "static" and meta["app_file"] == "index.html" and meta["title"] == "Garden paths"
    assert {"emoji", "colorFrom", "colorTo"} <= set(meta)
    assert all(f"({link})" in body for link in p.links)
    assert sorted(os.listdir(tmp_path)) == sorted([*(x.name for x in inputs.values()), "site"])  # no leftovers


def test_a_bad_input_writes_nothing(inputs, tmp_path, capsys):
    bad = tmp_path / "notes.html"
    bad.write_text("<html><body>my notes</body></html>", encoding="utf-8")
    out = tmp_path / "site"
    assert main(["site", str(out), str(inputs["native"]), str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "without a view's data" in err and err.count("\n") == 1
    assert not out.exists() and not [n for n in os.listdir(tmp_path) if n.startswith(".site")]


def test_an_existing_site_is_replaced_only_when_asked(inputs, tmp_path, capsys):
    out = tmp_path / "site"
    out.mkdir()
    (out / "old.html").write_text("old", encoding="utf-8")
    assert main(["site", str(out), str(inputs["native"])]) == 2
    assert "--overwrite" in capsys.readouterr().err and (out / "old.html").exists()
    assert main(["site", str(out), str(inputs["native"]), "--overwrite"]) == 0
    assert sorted(os.listdir(out)) == ["README.md", "fox.html", "index.html"]
    assert [n for n in os.listdir(tmp_path) if n.startswith(".")] == []


@pytest.mark.browser
def test_the_site_opens_offline_with_no_request(browser, inputs, tmp_path):
    """The session's Chromium (tests/conftest.py `browser`: one Playwright per test session)."""
    from tests.helpers.browser import offline_page

    out = tmp_path / "site"
    assert main(["site", str(out), str(inputs["native"]), str(inputs["session"])]) == 0

    page = offline_page(browser, lambda url: url.startswith(out.as_uri() + "/"))  # the site's own files only
    try:
        page.goto((out / "index.html").as_uri())
        assert page.get_by_role("table").get_by_role("link").count() == 2
        page.get_by_role("link", name="fox").click()
        chip = page.locator('#heatmap [data-pos="3"]')
        chip.click()
        detail = page.locator('.lx-detail .td[data-pos="3"]')
        detail.wait_for(timeout=5000)
        assert detail.locator("tbody tr").count() == 5  # every listed alternative
        page.go_back()
        page.get_by_role("link", name="capital-session").click()
        page.locator('#heatmap [data-pos="2"]').wait_for(timeout=5000)
        assert page.errors == []
        assert page.refused == [], page.refused
    finally:
        page.context.close()


def test_the_site_is_readable_by_a_web_server(inputs, tmp_path, capsys):
    """Folder 0755 and files 0644 whatever the umask (mkdtemp alone makes the folder 0700, #54)."""
    import stat

    out = tmp_path / "site"
    old = os.umask(0o077)
    try:
        assert main(["site", str(out), *map(str, inputs.values())]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o755
    assert {stat.S_IMODE(f.stat().st_mode) for f in out.iterdir()} == {0o644}
