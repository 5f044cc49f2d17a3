"""One-click downloads: the exporters' own bytes, descriptive names, the real token text in the CSV, and a
failed export that clears its file (handlers called directly on the tiny models)."""

from __future__ import annotations

import json
import pathlib
import re

from tests.helpers.page import gen, path_of, score, ui, v  # noqa: F401 - ui and v are fixtures


def test_downloads_are_the_exporters_bytes_with_descriptive_names(ui, v):
    from explorer.export import FORMATS, dumps, export, names

    state = score(ui, "The quick brown fox\nsays, hi")[v.result]
    files = v.downloads.prepare(state)
    by_fmt = dict(zip(v.downloads.buttons, files.values()))
    for fmt in names():
        button = by_fmt[fmt]
        if FORMATS[fmt].needs_generation:
            assert button.value is None and not button.interactive  # a chat shape cannot describe a scored text
            continue
        path = path_of(button)
        assert re.fullmatch(rf"tiny-gpt2-raw-\d{{8}}-\d{{6}}\.{fmt}\.json", pathlib.Path(path).name)
        text = pathlib.Path(path).read_text(encoding="utf-8")
        body, fresh = json.loads(text), export(fmt, state)
        assert text == dumps(body)  # written by the exporter's own serialiser, nothing added
        for key in ("id", "created"):  # fresh per response
            body.pop(key, None), fresh.pop(key, None)
        assert body == json.loads(dumps(fresh))
    csv = pathlib.Path(path_of(by_fmt["csv"])).read_text(encoding="utf-8")
    assert csv.startswith("pos,part,token") and "·" not in csv and "↵" not in csv
    import pandas as pd

    table = pd.read_csv(path_of(by_fmt["csv"]), keep_default_na=False)
    assert "".join(table["token"]) == state[0].text  # the real token text: spaces, newline, comma
    generated = gen(ui, "The lazy")[-1][v.result]
    chat_file = dict(zip(v.downloads.buttons, v.downloads.prepare(generated).values()))["openai-chat"]
    assert json.loads(pathlib.Path(path_of(chat_file)).read_text(encoding="utf-8"))["choices"]


def test_a_failed_export_clears_its_file(ui, v, monkeypatch):
    from explorer.ui import downloads

    state = score(ui, "The quick brown fox")[v.result]
    real = downloads.export
    monkeypatch.setattr(
        downloads,
        "export",
        lambda fmt, rs: (_ for _ in ()).throw(ValueError("boom")) if fmt == "vllm" else real(fmt, rs),
    )
    notes = []
    monkeypatch.setattr(downloads, "warning", notes.append)
    out = dict(zip(v.downloads.buttons, v.downloads.prepare(state).values()))
    assert path_of(out["vllm"]) is None and not out["vllm"].interactive and path_of(out["native"])
    assert notes and "boom" in notes[0]
    assert all(b.value is None for b in v.downloads.cleared().values())  # a new run empties every button
