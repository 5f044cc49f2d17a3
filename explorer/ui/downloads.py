"""One-click downloads: a button per format, its file written when a result arrives, named for what it holds.

The bytes are the exporters' own (`dumps(export(fmt, results))`); the CSV is the per-token table with the
real token text. A format that cannot describe the result (a chat shape for a scored text) stays disabled;
one whose export fails is cleared, never left holding the previous result's file.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from functools import cache

import gradio as gr

from explorer.export import FORMATS, dumps, export, names
from explorer.notebook.page import page_html
from explorer.render.heatmap import DEFAULT_METRIC
from explorer.render.tables import token_csv
from explorer.results.scores import TokenScores
from explorer.ui.errors import error, warning

LABELS = {  # what each file is for, in words; the API's name only where it is the point
    "csv": "a table for a spreadsheet (CSV)",
    "native": "every number (JSON)",
    "html": "this view, to open anywhere (HTML)",
    "vllm": "as vLLM's API answers (JSON)",
    "openai-completion": "as OpenAI's Completions API answers (JSON)",
    "openai-chat": "as OpenAI's Chat API answers (JSON)",
    "vllm-offline": "as vLLM's Python LLM.generate returns it (JSON)",
}
# the table, ours and the view as one file, then the APIs' shapes
FORMATS_SHOWN = ["csv", "native", "html", *(n for n in names() if n != "native")]
SUFFIX = {"csv": "tokens.csv", "html": "view.html"}  # the others: <format>.json


def label(fmt: str) -> str:
    return "Download " + LABELS.get(fmt, f"{fmt} (JSON)")


def safe_name(model: str) -> str:
    """A model's name made safe for a file name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-.") or "model"


def file_name(r: TokenScores, fmt: str, when: float | None = None) -> str:
    """`<model>-<mode>-<date>.<format>.json` (CSV: `.tokens.csv`, the view: `.view.html`); the model's name made
    safe for a file name."""
    model = safe_name(r.model)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(when))
    return f"{model}-{r.mode}-{stamp}." + SUFFIX.get(fmt, f"{fmt}.json")


def write(results: list[TokenScores], fmt: str, folder: str) -> str:
    """Write `results` in shape `fmt` into `folder`; the file's path."""
    r = results[0]
    if fmt in ("csv", "html"):  # the table, and the heatmap with its card and detail in one self-contained page
        data = token_csv(r) if fmt == "csv" else page_html(r, DEFAULT_METRIC)
    else:
        data = dumps(export(fmt, results))
    path = os.path.join(folder, file_name(r, fmt))
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(data)
    return path


KEEP_S = 3600  # prepared files older than this are removed (Gradio serves its own copy)


@cache
def _base() -> str:
    return tempfile.mkdtemp(prefix="logprobs-")


def fresh_folder() -> str:
    """A new folder for one result's files; folders older than KEEP_S go."""
    base, now = _base(), time.time()
    for name in os.listdir(base):
        path = os.path.join(base, name)
        if now - os.path.getmtime(path) > KEEP_S:
            shutil.rmtree(path, ignore_errors=True)
    return tempfile.mkdtemp(dir=base)


def write_text(model: str, what: str, data: str) -> str:
    """`data` as the file `<model>-<what>` in a fresh folder (a tab's own download); its path."""
    path = os.path.join(fresh_folder(), f"{safe_name(model)}-{what}")
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(data)
    return path


VIEW_LABEL = "Download view (HTML)"


def view_button(elem_id: str) -> gr.DownloadButton:
    """A tool tab's *Download view (HTML)*: empty until its view is drawn."""
    return gr.DownloadButton(VIEW_LABEL, value=None, interactive=False, size="sm", elem_id=elem_id)


def view_file(model: str, what: str, page: str | None) -> gr.DownloadButton:
    """The button holding `page` (a view as one HTML file, explorer/notebook/views.py) as `<model>-<what>.view.html`;
    disabled when there is none."""
    if page is None:
        return gr.DownloadButton(value=None, interactive=False)
    return gr.DownloadButton(value=write_text(model, f"{what}.view.html", page), interactive=True)


def read_upload(path, missing: str, what: str, max_bytes: int) -> tuple[bytes, str]:
    """An uploaded file's bytes and name; gr.Error `missing` when there is none, and when it is over `max_bytes`
    (`what` names it: "The quiz file")."""
    if not path:
        raise error(missing)
    path = getattr(path, "name", path)
    if os.path.getsize(path) > max_bytes:
        raise error(f"{what} is over {max_bytes // 1_000_000} MB: split it.")
    with open(path, "rb") as f:
        return f.read(), os.path.basename(path)


def cleared(outputs: list) -> dict:
    """Every output emptied and every download button disabled, before a run fills them (a failed run then leaves
    no old result under its error; the inputs stay)."""
    out: dict = {c: None for c in outputs}
    out.update(
        {c: gr.DownloadButton(value=None, interactive=False) for c in outputs if isinstance(c, gr.DownloadButton)}
    )
    return out


def usable(r: TokenScores, fmt: str) -> bool:
    return fmt in SUFFIX or not FORMATS[fmt].needs_generation or r.output_k is not None


class Downloads:
    """The row of download buttons."""

    def __init__(self):
        with gr.Row(elem_id="downloads", elem_classes=["lx-hide-present"]):
            self.buttons = {
                fmt: gr.DownloadButton(
                    label(fmt), value=None, interactive=False, size="sm", variant="secondary", elem_id=f"dl-{fmt}"
                )
                for fmt in FORMATS_SHOWN
            }

    @property
    def outputs(self) -> list:
        return list(self.buttons.values())

    def cleared(self) -> dict:
        """Every button emptied (a new run has started: no file of the old result stays downloadable)."""
        return {b: gr.DownloadButton(value=None, interactive=False) for b in self.buttons.values()}

    def prepare(self, state: list) -> dict:
        """A file per format for the current result; a format that fails is cleared and said in a note."""
        if not state:
            return self.cleared()
        folder, out, failed = fresh_folder(), {}, []
        for fmt, button in self.buttons.items():
            if not usable(state[0], fmt):
                out[button] = gr.DownloadButton(value=None, interactive=False)
                continue
            try:
                out[button] = gr.DownloadButton(value=write(state, fmt, folder), interactive=True)
            except (ValueError, OSError) as err:
                out[button] = gr.DownloadButton(value=None, interactive=False)
                failed.append(f"{LABELS.get(fmt, fmt)}: {err}")
        if failed:
            warning("Some downloads could not be prepared: " + "; ".join(failed))
        return out
