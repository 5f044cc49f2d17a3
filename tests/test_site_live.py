"""`logprob-explorer site --live` without a browser: the folder holds the live page, its script, wllama's files as their
SHA256SUMS list them, the model (or its URL), a README whose front matter sets the isolation headers, and fixed views
that link to it; wrong model arguments are one clear error; `serve` sends the two headers and answers a byte range."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import urllib.parse
import urllib.request
from importlib import resources
from pathlib import Path

import pytest
import yaml

import explorer
from explorer.cli import main
from explorer.errors import ExplorerError
from explorer.notebook.live import ISOLATION_HEADERS, WLLAMA, LiveOptions, check, serve
from explorer.notebook.site import build_site

TEXT = "The quick brown fox jumps over the lazy dog."


@pytest.fixture
def gguf(tmp_path):
    """A stand-in GGUF: its magic, then padding (the site copies it; no model runs here)."""
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF" + bytes(60))
    return str(path)


@pytest.fixture
def view(gpt2_dir, tmp_path):
    path = tmp_path / "fox.json"
    path.write_text(json.dumps(explorer.load(gpt2_dir, device="cpu").score(TEXT, k=3).to_dict()))
    return str(path)


def test_wllama_files_match_their_sums():
    root = resources.files("explorer.static").joinpath("wllama")
    assert root.joinpath("VERSION").read_text().strip() == WLLAMA
    assert "MIT License" in root.joinpath("LICENCE").read_text()
    sums = [line.split() for line in root.joinpath("SHA256SUMS").read_text().splitlines()]
    assert {name for _, name in sums} == {
        "index.js",
        "single-thread/wllama.wasm",
        "multi-thread/wllama.wasm",
        "LICENCE",
    }
    for digest, name in sums:
        assert hashlib.sha256(root.joinpath(*name.split("/")).read_bytes()).hexdigest() == digest, name


def test_live_site(view, gguf, tmp_path):
    out = tmp_path / "site"
    assert main(["site", str(out), view, "--live", "--model", gguf, "--server-url", "https://example.org/x"]) == 0
    files = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert {"live.html", "live.js", "model.gguf", "wllama/index.js", "wllama/single-thread/wllama.wasm",
            "wllama/multi-thread/wllama.wasm", "wllama/LICENCE", "fox.html", "index.html", "README.md"} <= files  # fmt: skip
    assert (out / "model.gguf").read_bytes() == Path(gguf).read_bytes()
    page = (out / "live.html").read_text()
    config = json.loads(page.split('id="live-config">', 1)[1].split("</script>", 1)[0])
    assert config["model_url"] == "model.gguf" and config["server_url"] == "https://example.org/x"
    assert (
        "computed in your browser (llama.cpp, WebAssembly)" in page and '<script type="module" src="live.js">' in page
    )
    assert "const root = element;" in page  # the page's own heatmap script, not a second renderer
    front = yaml.safe_load((out / "README.md").read_text().split("---")[1])
    assert front["sdk"] == "static"
    assert front["custom_headers"] == {
        "cross-origin-embedder-policy": "require-corp",
        "cross-origin-opener-policy": "same-origin",
        "cross-origin-resource-policy": "cross-origin",
    }
    fixed = (out / "fox.html").read_text()
    href = fixed.split('<a href="', 1)[1].split('"', 1)[0].replace("&amp;", "&")
    assert href.startswith("live.html?") and urllib.parse.parse_qs(href.split("?", 1)[1])["text"] == [TEXT]
    assert 'href="live.html"' in (out / "index.html").read_text()


def test_live_site_from_a_url_holds_no_model(tmp_path):
    out = tmp_path / "site"
    url = "https://huggingface.co/USER/REPO/resolve/main/model.gguf"
    assert main(["site", str(out), "--live", "--model-url", url]) == 0
    assert not (out / "model.gguf").exists()
    page = (out / "live.html").read_text()
    assert json.loads(page.split('id="live-config">', 1)[1].split("</script>", 1)[0])["model_url"] == url


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (LiveOptions("m"), "needs one model"),
        (LiveOptions("m", "a.gguf", "https://x/a.gguf"), "needs one model"),
        (LiveOptions("m", "/nonexistent/a.gguf"), "is not a file"),
        (LiveOptions("m", model_url="ftp://x/a.gguf"), "http(s) URL"),
    ],
)
def test_bad_model_options(options, words):
    with pytest.raises(ExplorerError, match=words.replace("(", r"\(").replace(")", r"\)")):
        check(options)


def test_not_a_gguf_is_refused_before_anything_is_written(tmp_path):
    bad = tmp_path / "notes.gguf"
    bad.write_text("not a model")
    with pytest.raises(ExplorerError, match="is not a GGUF file"):
        build_site(str(tmp_path / "site"), [], live=LiveOptions("m", str(bad)))
    assert not (tmp_path / "site").exists()


def test_live_arguments_need_live(view, tmp_path, capsys):
    assert main(["site", str(tmp_path / "site"), view, "--model-url", "https://x/a.gguf"]) != 0
    assert "add --live" in capsys.readouterr().err


def test_serve_sends_the_isolation_headers_and_a_range(gguf, tmp_path):
    folder = os.path.dirname(gguf)
    for isolate in (True, False):
        srv = serve(folder, 0, isolate=isolate)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        try:
            url = f"http://127.0.0.1:{srv.server_port}/tiny.gguf"
            with urllib.request.urlopen(urllib.request.Request(url, headers={"Range": "bytes=0-3"})) as r:
                assert r.status == 206 and r.read() == b"GGUF" and r.headers["Content-Range"] == "bytes 0-3/64"
                for name, value in ISOLATION_HEADERS.items():
                    assert r.headers.get(name) == (value if isolate else None)
            with urllib.request.urlopen(url) as r:
                assert len(r.read()) == 64
        finally:
            srv.shutdown()
            srv.server_close()
