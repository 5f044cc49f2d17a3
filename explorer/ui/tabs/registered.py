"""A registered view's tab and link, made from its record (explorer/notebook/view.py): no module of its own.

The tab: the view's Markdown, one control per option (a slider, a menu or a checkbox), a button that computes the
view of the inspector's result (`api_name`: the view's id, its options by their names), its body, its table and its *Download view (HTML)*. The
link: a `TabLink` class made per view (`link_class`), one field per option named `<view id>_<option>`, checked by the
option's own rule, over the result's base.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import field, make_dataclass
from typing import Any

import gradio as gr

from explorer.errors import ExplorerError
from explorer.notebook.registry import VIEWS
from explorer.notebook.view import Option, View
from explorer.ui.downloads import cleared, view_button, view_file
from explorer.ui.errors import error, user_errors
from explorer.ui.links import LINKS, Base, Rerun, TabLink, ViewState, damaged
from explorer.ui.tabs import Shared


def control(o: Option) -> Any:
    """The option's widget, labelled as the option, at its default."""
    if o.kind == "choice":
        return gr.Dropdown(list(o.choices), value=o.default, label=o.label)
    if o.kind == "flag":
        return gr.Checkbox(value=bool(o.default), label=o.label)
    lo, hi = o.low if o.low is not None else 0, o.high if o.high is not None else 100
    step = 1 if o.kind == "whole" else (hi - lo) / 100
    return gr.Slider(lo, hi, value=float(o.default), step=step, label=o.label)


class RegisteredTab:
    """A registered view's tab (see the module); `view` is its record."""

    def __init__(self, shared: Shared, view: View):
        self.view, self.inspector = view, shared.inspector
        with gr.Tab(view.title, id=view.id) as self.tab:
            gr.Markdown(view.about)
            self.controls = {o.name: control(o) for o in view.options}
            self.button = gr.Button(f"Show the {view.title.lower()}", variant="primary", elem_id=f"{view.id}-run")
            self.body = gr.HTML("", elem_id=f"{view.id}-body", js_on_load=None)
            self.table = gr.Dataframe(label=view.caption, interactive=False, max_height=400, elem_id=f"{view.id}-table")
            self.dl_html = view_button(f"{view.id}-dl-html")
        self.outputs = [self.body, self.table, self.dl_html]
        self.button.click(lambda: cleared(self.outputs), None, self.outputs, api_visibility="private", queue=False).then(
            self.run, [self.inspector.result], self.outputs, inputs_kwargs=self.controls, api_name=view.id,
            show_progress_on=[self.body],
        )  # fmt: skip

    def run(self, state: list, **options: Any) -> dict:
        """The view of the inspector's result with the controls' values (by the options' names): its body, table
        and file."""
        if not state:
            raise error(f"Score a text or generate first; the {self.view.title.lower()} is drawn from that result.")
        with user_errors():
            result = self.view.run(state[0], **options)
        return {
            self.body: self.view.html(result),
            self.table: self.view.shown_table(result),
            self.dl_html: view_file(result.model, self.view.id, self.view.page(result)),
        }


def link_field(view: View, o: Option) -> str:
    """The link's key of option `o` of `view`."""
    return f"{view.id}_{o.name}"


def _read(o: Option, d: dict, key: str) -> Any:
    value = d.get(key, o.default)
    if o.kind == "whole" and isinstance(value, float):
        raise damaged(f"`{key}` must be a whole number, got {str(value)[:40]!r}")
    try:
        return o.check(value)
    except ExplorerError as err:
        raise damaged(err.message.rstrip(".").replace(f"`{o.name}`", f"`{key}`")) from None


def link_class(view: View) -> type[TabLink]:
    """The view's TabLink (registered in LINKS by being made): one field per option, over the result's base."""
    keys = {o.name: link_field(view, o) for o in view.options}
    by_key = {k: o for o, k in zip(view.options, keys.values())}
    view_option = {o.name: o for o in view.options}.__getitem__

    def read(cls, d: dict) -> TabLink:
        return cls(**{k: _read(o, d, k) for k, o in by_key.items()})

    def inputs(cls, tab: RegisteredTab) -> list:
        return list(tab.controls.values())

    def to_link(cls, tab: RegisteredTab, values: Mapping[Any, Any], base: Base, model: str):
        # a slider's 3.0 is the whole number 3 (Option.check); a value out of range makes no link, saying why
        return base, cls(**{keys[name]: view_option(name).check(values.get(c)) for name, c in tab.controls.items()})

    def apply(self, tab: RegisteredTab, v: ViewState) -> dict:
        return {c: getattr(self, keys[name]) for name, c in tab.controls.items()}

    def rerun(self, tab: RegisteredTab, v: ViewState, run: Rerun) -> Iterator[dict]:
        yield tab.run(run.result, **{name: getattr(self, keys[name]) for name in tab.controls})

    def outputs(cls, tab: RegisteredTab) -> list:
        return [*tab.controls.values(), *tab.outputs]

    namespace = {
        "tab": view.id,
        "__doc__": f"A {view.title} link: its options ({', '.join(keys.values()) or 'none'}) over the result's base.",
        "read": classmethod(read),
        "inputs": classmethod(inputs),
        "to_link": classmethod(to_link),
        "apply": apply,
        "rerun": rerun,
        "outputs": classmethod(outputs),
    }
    fields = [(k, type(o.default), field(default=o.default)) for k, o in by_key.items()]
    name = "".join(p.title() for p in view.id.split("_")) + "Link"
    cls = make_dataclass(name, fields, bases=(TabLink,), namespace=namespace, frozen=True)
    cls.__module__ = __name__
    return cls


LINK_CLASSES: dict[str, type[TabLink]] = {v.id: LINKS.get(v.id) or link_class(v) for v in VIEWS}
