"""A result as the page's downloads give it, by name: every JSON shape of explorer.export, the per-token CSV, and
the self-contained HTML page written to a file; and back (`open_file`: a session file, native JSON, a captured
server body or a page written here -> TokenScores)."""

from __future__ import annotations

import os

from explorer.errors import ExplorerError
from explorer.export import FORMATS, dumps, export, names
from explorer.notebook.page import DATA_ELEMENT, data_of, page_html
from explorer.render.heatmap import DEFAULT_METRIC
from explorer.render.tables import token_csv
from explorer.results.scores import TokenScores


def json_text(r: TokenScores | list[TokenScores], shape: str = "native") -> str:
    """The JSON body of shape `shape` (one of explorer.export.FORMATS) for `r`, as the page's download writes it."""
    results = r if isinstance(r, list) else [r]
    if not isinstance(shape, str) or shape not in FORMATS:
        raise ExplorerError(f"Unknown JSON shape {shape!r}: use one of {', '.join(FORMATS)}.", param="shape")
    if FORMATS[shape].needs_generation and any(x.output_k is None for x in results):
        raise ExplorerError(
            f"The {shape!r} shape describes generated tokens and this is a scored text: use one of "
            f"{', '.join(names(generated=False))} (or generate).",
            param="shape",
        )
    return dumps(export(shape, r))


def csv_text(r: TokenScores) -> str:
    """The per-token table as the page's CSV download (full precision, the real token text)."""
    return token_csv(r)


def save_html(r: TokenScores, path: str | os.PathLike[str], metric: str = DEFAULT_METRIC) -> str:
    """Write the self-contained page of `r` to `path` (UTF-8); the path written."""
    target = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(folder):
        raise ExplorerError(f"Cannot write {target!r}: the folder {folder!r} does not exist; create it first.")
    text = page_html(r, metric)
    with open(target, "w", encoding="utf-8") as f:
        f.write(text)
    return target


def open_file(path: str | os.PathLike[str]) -> TokenScores:
    """The result held by the file at `path`: a session file (its first result), native JSON (TokenScores.to_dict),
    a captured vLLM / OpenAI body (explorer/export/read/documents.py), or an HTML view made by `save_html` /
    `to_html` (its native JSON), a Compare view's file or JSON (its result A); gzipped too. Anything wrong (a tool
    tab's other files among it: their JSON is no result) is one ExplorerError that names the file."""
    from explorer.export.read.documents import MAX_FILE_BYTES, open_document

    target = os.fspath(path)
    try:
        with open(target, "rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise ExplorerError(f"{target!r} could not be read: {e.strerror}.", param="path") from None
    try:
        return open_document(document_bytes(raw)).results[0]
    except ExplorerError as e:
        raise ExplorerError(f"{target!r}: {e.message}", param="path", code=e.code) from None


def document_bytes(raw: bytes) -> bytes:
    """`raw`, or for an HTML page its view's native JSON (the `logprob-data` element); the page's *Open a session*
    reads the views it downloads through it too."""
    if not raw.removeprefix(b"\xef\xbb\xbf").lstrip().startswith(b"<"):
        return raw
    page = raw.decode("utf-8", errors="replace")
    if DATA_ELEMENT not in page:
        raise ExplorerError(
            "This file could not be opened: it is an HTML page without a view's data (a "
            '`<script type="application/json" id="logprob-data">` element): give a page made by '
            "TokenScores.save_html or to_html, a session file or native JSON."
        )
    try:
        return dumps(data_of(page)).encode("utf-8")
    except ValueError:
        raise ExplorerError("This file could not be opened: its view's data is not JSON.") from None
