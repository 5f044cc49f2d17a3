"""Sharing a view: *Copy link* (the inputs, settings and selected token in the URL), *Download session* (the same plus
the results, as a file) and *Open a session* (a session file, native JSON or a captured vLLM / OpenAI body, shown
from the file alone: no model is loaded or run).

Opening the page with `?view=...` restores the inputs, switches to the tab, reruns (a link carries the seed used, so
a generation replays) and selects the same token. A bad link or file is a message in the page, never an error page;
a link names a model at most, and that name goes through `Models.resolve` like any other.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Generator, Iterator
from typing import Any

import gradio as gr
from gradio.utils import get_upload_folder

from explorer.errors import ExplorerError
from explorer.export.read.documents import MAX_FILE_BYTES, SESSION_FORMAT, Opened, open_document
from explorer.notebook.files import document_bytes
from explorer.render.heatmap import Marks
from explorer.results.scores import TokenScores
from explorer.serving.models import Models
from explorer.serving.reach import base_url, qr_code
from explorer.ui.actions import uses_model
from explorer.ui.downloads import file_name, fresh_folder
from explorer.ui.inspector import Inspector, View, parse_thresholds, shown_k
from explorer.ui.links import LINKS, QUERY_KEY, TABS, Base, Rerun, ResultLink, ViewState, decode, encode
from explorer.ui.model_picker import details_text, status_lines
from explorer.ui.tab_bar import TabBar
from explorer.ui.tabs.score import ScoreLink, start_menu

COPY_JS = """(code, base) => {
  document.body.classList.toggle("lx-has-link", !!code);  // the Link box and QR code show once there is a link
  if (!code) return "";
  const url = (base || window.location.origin) + window.location.pathname + "?KEY=" + code;
  try { navigator.clipboard.writeText(url).catch(() => {}); } catch (e) {}
  return url;
}""".replace("KEY", QUERY_KEY)


def uploaded(path: str) -> bool:
    """Whether `path` lies in Gradio's upload folder (where the file control puts a visitor's files)."""
    root = os.path.realpath(get_upload_folder())
    real = os.path.realpath(str(path))
    return os.path.commonpath([real, root]) == root


def note_html(*lines: str) -> str:
    """The share note: each line escaped, in a polite live region."""
    body = "".join(f"<p>{html.escape(line, quote=True)}</p>" for line in lines if line)
    return f'<div class="lx-note" role="status">{body}</div>' if body else ""


def tab_of(r: TokenScores, view: View | None) -> str:
    if r.output_k is None:
        return "score"
    return "chat" if isinstance(view, View) and view.marks is not None and view.marks.turns else "generate"


class Share:
    """The share row under the results, the note above the tabs, and the page-load restore of a link."""

    def __init__(self, demo: gr.Blocks, models: Models, picker, inspector: Inspector, bar: TabBar, *, note, slot):
        """`note`: the HTML above the tabs that says what a link or an opened file did; `slot`: the column the share
        row is placed in."""
        self.models, self.picker, self.inspector, self.note, self.bar = models, picker, inspector, note, bar
        self.tab_block = bar.block
        self.by_id = bar.built  # tab id -> the tab's object (its link: LINKS[id])
        self.current = bar.current  # the tab shown (Copy link describes that one)
        self._blobs: dict[str, str] = {}  # run id -> its results' JSON, so a new selection rewrites the file cheaply
        with slot:  # beside the result it shares
            with gr.Row(elem_id="share-bar"):
                self.copy = gr.Button("Copy link", size="sm", scale=0, min_width=120, elem_id="copy-link")
                self.session = gr.DownloadButton(
                    "Download session", value=None, interactive=False, size="sm", scale=0, min_width=170,
                    elem_id="dl-session",
                )  # fmt: skip
            self.link_note = gr.HTML("", elem_id="link-note", js_on_load=None)  # why a link cannot be made, or reach
            self.link = gr.Textbox(label="Link", interactive=False, elem_id="share-link", max_lines=3)
            self.qr = gr.HTML("", elem_id="share-qr", js_on_load=None)  # under the link: full size on a phone too
            self.code = gr.Textbox(visible=False)
            self.base = gr.Textbox(visible=False)  # the address other devices reach this page at
        with gr.Row(elem_id="share", elem_classes=["lx-share", "lx-hide-present"]):
            self.upload = gr.File(
                label="Open a session (a session file, a view saved as HTML, or a captured vLLM / OpenAI response)",
                file_types=[".json", ".txt", ".sse", ".gz", ".html"],
                type="filepath",
                height=150,
                min_width=260,
                elem_id="open-session",
            )
        self._wire(demo)

    # ---- the inputs a view is made of ------------------------------------------------------------
    @property
    def makers(self) -> dict[str, tuple[type[ResultLink], Any]]:
        """tab id -> (its link class, the tab's object) for the tabs that make the inspector's result."""
        return {name: (LINKS[name], self.by_id[name]) for name in TABS}  # type: ignore[misc]

    @property
    def inputs(self) -> list:
        """What the inspector's result's part of a link is read from (`base_of`)."""
        ins = self.inspector
        own = [c for cls, tab in self.makers.values() for c in cls.inputs(tab)]
        return [ins.result, ins.view, ins.selected, *ins.look.values(), *own]

    @property
    def links(self) -> dict:
        """tab id -> (its link state class, the tab's object), for the tabs of this page that have one."""
        return {name: (cls, self.by_id[name]) for name, cls in LINKS.items() if name in self.by_id}

    @property
    def copy_inputs(self) -> set:
        """Everything *Copy link* reads: the base's inputs, the tab shown, the session's model and each tab's own."""
        own = [c for cls, tab in self.links.values() for c in cls.inputs(tab)]
        return {*self.inputs, self.current, self.picker.name, *own}

    def state_of(self, values: dict[Any, Any]) -> ViewState:
        """The ViewState of the tab shown (`values`: by component, as Gradio gives a set of inputs; the tab shown
        missing: the inspector's result). Raises ExplorerError when there is nothing to describe."""
        tab = str(values.get(self.current))
        if tab in TABS or tab not in self.links:
            return self.base_of(values)
        cls, obj = self.links[tab]
        model = values.get(self.picker.name) or ""
        try:
            made, why = self.base_of(values), None
        except ExplorerError as err:
            made, why = ViewState(tab=tab, base=Base(model=model), tool=cls()), err
        base, own = cls.to_link(obj, values, made.base, model)
        if not base.tab and own.needs_result():
            raise why or ExplorerError("Score a text, generate or chat first: then its link can be shared.")
        return ViewState(tab=tab, base=base, tool=own, source=made.source if base.tab else None)

    def base_of(self, values: dict[Any, Any]) -> ViewState:
        """The ViewState of the current result (raises ExplorerError when there is none to describe)."""
        ins = self.inspector
        state, view, selected = values.get(ins.result), values.get(ins.view), values.get(ins.selected)
        look = {name: values[c] for name, c in ins.look.items()}
        if not state:
            raise ExplorerError("Score a text, generate or chat first: then its link and session can be shared.")
        r, tab = state[0], tab_of(state[0], view)
        cls, obj = self.makers[tab]
        source = cls.of_result(obj, values, r)
        if isinstance(view, View) and view.imported and source.empty():
            raise ExplorerError("This result was opened from a file and carries no inputs: share the file itself.")
        base = Base(
            model=r.model,
            metric=look["metric"],
            thresholds=parse_thresholds(look["thresholds_text"]),
            k=max(int(look["k"]), 1),  # a cap of 0 fixes the slider at 0; a link keeps 1..20 (the opener shows its own)
            selected=int(selected or 0),
        )
        return ViewState(tab=tab, base=base, tool=source)

    # ---- handlers ---------------------------------------------------------------------------------
    def copy_link(self, values: dict[Any, Any], request: gr.Request | None = None) -> dict:
        """The link's code and the address it names (the page's script makes them a URL, copies it and shows it
        under *Link*), its QR code, and a warning where the address reaches this computer only."""
        try:
            code = encode(self.state_of(values))
        except ExplorerError as err:
            return {self.code: "", self.base: "", self.qr: "", self.link: "", self.link_note: note_html(err.message)}
        if request is None:  # called directly (tests): the page's own origin
            return {self.code: code, self.base: "", self.qr: "", self.link_note: ""}
        raw = getattr(request, "request", None)  # Starlette's request, where Gradio has one
        scheme = raw.url.scheme if raw is not None else "http"
        base, warning = base_url(request.headers, scheme, self.models.host, self.models.public_url)
        url = f"{base}/?{QUERY_KEY}={code}"
        drawn = qr_code(url)  # None: a link too long for a QR code (the link itself still works)
        qr = (
            f'<figure class="lx-qr">{drawn.decode()}<figcaption>Scan to open this view</figcaption></figure>'
            if drawn
            else ""
        )
        return {self.code: code, self.base: base, self.qr: qr, self.link_note: note_html(warning) if warning else ""}

    def prepare_session(self, values: dict[Any, Any]) -> gr.DownloadButton:
        """The session file of the current result: its inputs, settings and selected token (where known) and the
        results. Written again on each new selection: the results' JSON is kept per run, so that stays cheap."""
        state, view = values.get(self.inspector.result), values.get(self.inspector.view)
        if not state:
            return gr.DownloadButton(value=None, interactive=False)
        try:
            inputs = self.base_of(values).to_dict()
        except (ExplorerError, gr.Error):
            inputs = None
        marks = view.marks if isinstance(view, View) and view.marks else Marks()
        head = {
            "format": SESSION_FORMAT,
            "version": 1,
            "view": inputs,
            "marks": {"special": sorted(marks.special), "turns": [list(t) for t in marks.turns]},
        }
        rid = view.rid if isinstance(view, View) and view.rid else ""
        results = self._blobs.get(rid) if rid else None
        if results is None:
            results = json.dumps([r.to_dict() for r in state], ensure_ascii=False, allow_nan=False)
            if rid:
                self._blobs = {**dict(list(self._blobs.items())[-7:]), rid: results}
        path = os.path.join(fresh_folder(), file_name(state[0], "session"))
        with open(path, "w", encoding="utf-8") as f:
            f.write(json.dumps(head, ensure_ascii=False, allow_nan=False)[:-1] + ', "results": ' + results + "}")
        return gr.DownloadButton(value=path, interactive=True)

    def open_file(self, path, name, metric, thresholds_text, k) -> dict:
        """Show a session file or a captured body from the file alone: no model is loaded or run."""
        if not path:
            return {self.note: ""}
        try:
            if not uploaded(path):  # only what a visitor uploaded: never a path of this server's choosing
                raise ExplorerError("This file could not be opened: open it with the *Open a session* control.")
            if os.path.getsize(path) > MAX_FILE_BYTES:
                raise ExplorerError(f"This file could not be opened: it is larger than {MAX_FILE_BYTES >> 20} MB.")
            with open(path, "rb") as f:
                opened = open_document(document_bytes(f.read()))  # an HTML view downloaded here: its data
        except ExplorerError as err:
            return {self.note: note_html(str(err), "The page is as it was.")}
        except OSError:  # its message would show a path
            return {self.note: note_html("This file could not be read: upload it again.", "The page is as it was.")}
        return self._show_opened(opened, name, metric=metric, thresholds_text=thresholds_text, k=k)

    def _show_opened(self, o: Opened, name, metric, thresholds_text, k) -> dict:
        r, inputs, view = o.results[0], {}, None
        lines = [f"Opened {o.about} ({r.n:,} tokens) from the file, without running a model."]
        if o.view is not None:
            try:
                view = ViewState.from_dict(o.view)
            except ExplorerError as err:
                lines.append("Its inputs could not be restored: " + err.message.split(": ", 1)[-1])
        lines.append(self._model_note(r.model, name))
        lines += o.notes
        if view is not None:
            metric, thresholds_text, k = view.base.metric, view.base.thresholds_text, view.base.k
            inputs = self._inputs(view)
        marks = Marks(frozenset(o.special), o.turns) if o.special or o.turns else None
        shown = View(marks, imported=o.shape)
        out = self.inspector.show(r, metric, thresholds_text, k, shown, pos=view.base.selected if view else None)
        return {**out, **inputs, self.note: note_html(*lines)}

    def _model_note(self, model: str, current) -> str:
        try:
            here = self.models.resolve(model).name
        except ExplorerError:
            return f"It was made with {model}, which is not available here: the numbers shown are the file's."
        if here != (current or self.models.default):
            return (
                f"It was made with {here}; this session's model is {current or self.models.default}: "
                "the numbers shown are the file's, and running again uses this session's model."
            )
        return ""

    def _inputs(self, v: ViewState) -> dict[Any, Any]:
        """The base's inputs of `v` and its result's (the tab switched to its own)."""
        b = v.base
        out: dict[Any, Any] = {
            **self.bar.show(v.tab),
            self.inspector.metric: b.metric,
            self.inspector.thresholds: gr.Textbox(b.thresholds_text, visible=b.metric == "rank"),
            self.inspector.k: shown_k(b.k),  # a link made under a higher cap shows what this one allows
        }
        if v.source is not None:
            out.update(v.source.apply(self.by_id[v.source.tab], v))
        return out

    def _link_inputs(self, v: ViewState) -> dict[Any, Any]:
        """A link's inputs: the base's (`_inputs`), the tab shown, then the tab's own (the other tabs keep theirs)."""
        out = {**self._inputs(v), self.current: v.tab}
        if v.tool is not None and v.tool is not v.source and v.tab in self.links:
            out.update(v.tool.apply(self.links[v.tab][1], v))
        return out

    @uses_model  # a link reruns: the model's queue, caps and (on ZeroGPU) the GPU, like any run
    def restore(self, request: gr.Request) -> Iterator[dict]:
        """On page load: a `?view=` link's inputs, then its run, then its selected token; a bad one is a note."""
        code = request.query_params.get(QUERY_KEY) if request is not None else None
        if code is None:
            yield {self.note: ""}
            return
        try:  # 1. the link and every model it names (refused before anything loads or runs)
            v = decode(code)
            name = self.models.resolve(v.base.model or None).name
            others = tuple(self.models.resolve(m or None).name for m in (v.tool.models() if v.tool else ()))
        except ExplorerError as err:
            yield {self.note: note_html(err.message)}
            return
        yield {**self._link_inputs(v), self.picker.name: name, self.picker.choice: name,  # 2. its inputs
               self.note: note_html(f"Opened a shared link: {v.tab} with {name}.")}  # fmt: skip
        try:  # 3. the inspector's result, then the tab's own run on it
            result = yield from self._base(v, name)
            if v.tool is not None and v.tool is not v.source and v.tab in self.links:
                sel = min(v.base.selected, result[0].n - 1) if result else v.base.selected
                yield from v.tool.rerun(self.links[v.tab][1], v, Rerun(name, others, result, sel))
        except gr.Error as err:  # the run's own message (already escaped by explorer.ui.errors)
            yield {self.note: f'<div class="lx-note" role="status"><p>{err.message}</p></div>'}
        yield self._model_lines(name, v.source.start if isinstance(v.source, ScoreLink) else "")

    def _base(self, v: ViewState, name: str) -> Generator[dict, None, list]:
        """The link's inspector result rerun and its token selected; returns the result ([] when it has none)."""
        last: dict = {}
        if v.source is not None:
            for last in v.source.run(self.by_id[v.source.tab], name, v.base):
                yield last
        if self.inspector.result not in last:
            return []
        result, view = last[self.inspector.result], last[self.inspector.view]
        b = v.base
        sel = min(b.selected, result[0].n - 1)
        yield {**self.inspector.detail_of(result, sel, b.k, view),
               **self.inspector.restyle(result, b.metric, b.thresholds_text, sel, view)}  # fmt: skip
        return result

    def _model_lines(self, name: str, start: str) -> dict:
        """The model's status line, its details and the document-start menu (with the link's value) once the model
        is in."""
        engine = self.models.loaded(name)
        menu = start_menu(engine)
        if start in [value for _label, value in menu["choices"]]:
            menu["value"] = start
        return {self.picker.status: status_lines(self.models, engine, name),
                self.picker.details: details_text(self.models, engine, name),
                self.by_id["score"].start: gr.Dropdown(**menu)}  # fmt: skip

    # ---- wiring -----------------------------------------------------------------------------------
    def _wire(self, demo: gr.Blocks) -> None:
        ins = self.inspector
        copy = self.copy.click(
            self.copy_link, self.copy_inputs, [self.code, self.base, self.qr, self.link, self.link_note],
            api_visibility="private",
        )  # fmt: skip
        copy.then(None, [self.code, self.base], [self.link], js=COPY_JS, api_visibility="private")
        gr.on(
            [ins.result.change, ins.selected.change, self.copy.click],
            self.prepare_session,
            set(self.inputs),
            [self.session],
            api_visibility="private",
            show_progress="hidden",
            trigger_mode="always_last",
        )
        self.upload.upload(
            self.open_file,
            [self.upload, self.picker.name],
            [*ins.outputs, *self.restorable, self.note],
            inputs_kwargs=ins.look,
            api_visibility="private",
        )
        for _cls, tab in self.makers.values():  # a new run: the old note and link go
            tab.button.click(
                lambda: ("",) * 4, None, [self.note, self.link_note, self.link, self.qr], api_visibility="private",
                show_progress="hidden",
            )  # fmt: skip
        outputs = [
            *ins.outputs,
            *self.restorable,
            self.picker.name,
            self.picker.choice,
            self.picker.status,
            self.picker.details,
            self.note,
            self.current,
            *(c for cls, tab in self.links.values() for c in cls.outputs(tab)),
        ]
        self.bar.wire(demo)  # which tab is shown, and each group's remembered tab (but on a link)
        demo.load(
            self.restore,
            None,
            list(dict.fromkeys(outputs)),
            api_visibility="private",
            show_progress_on=[ins.summary],
        )  # fmt: skip

    @property
    def restorable(self) -> list:
        """Every control a link or session sets: the tab rows, the look and the inputs of the result."""
        own = [c for cls, tab in self.makers.values() for c in cls.outputs(tab)]
        return [*self.bar.blocks, *self.inspector.look.values(), *own]
