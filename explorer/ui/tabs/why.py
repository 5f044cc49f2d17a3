"""The Why tab: which earlier tokens made the selected token likely (or likelier than another), by a method you pick.

The work runs beside the page's event (a thread), so the tab shows its progress while it runs and Stop ends it at the
next batch of ablated rows (the engine's `bounds.check()`); the page's time cap applies as to every action.
"""

from __future__ import annotations

import contextvars
import json
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import gradio as gr

from explorer.engine.analyses.attribution import DETAIL, MAX_STEPS, attribute, check_request
from explorer.engine.passes import bounds
from explorer.errors import ExplorerError
from explorer.notebook.views import why_page
from explorer.render.why import CSS, legend_html, why_figure, why_html, why_summary, why_table
from explorer.results.attribution import Attribution
from explorer.ui.actions import uses_model
from explorer.ui.downloads import view_button, view_file, write_text
from explorer.ui.errors import error, user_errors, whole_number
from explorer.ui.inspector import progress_html
from explorer.ui.links import MAX_TOKEN_CHARS, Base, Rerun, TabLink, ViewState, choice, count, text, whole
from explorer.ui.stop import running, stop_button, stops
from explorer.ui.tabs import Shared, twin_note

METHODS = {  # label -> method
    "Occlusion (exact: leave each unit out; every engine)": "occlusion",
    "Integrated gradients (torch engine)": "ig",
    "Gradient × input (torch engine)": "gxi",
    "Attention of the last layer (torch engine; what it looked at, not why)": "attention",
}
METHOD_LABELS = {m: label for label, m in METHODS.items()}
UNITS = {"Tokens": "token", "Words": "word"}
UNIT_LABELS = {u: label for label, u in UNITS.items()}
MODES = {"Remove the unit": "remove", "Replace it by a neutral token": "replace"}
MODE_LABELS = {m: label for label, m in MODES.items()}
BASELINES = {"Neutral token everywhere": "neutral", "Zero embeddings": "zero"}
BASELINE_LABELS = {b: label for label, b in BASELINES.items()}
MAX_DETAIL_SLIDER = 1024
# the tab's sliders (built from these, checked in a link by these): name -> (low, high, default)
NUMBERS = {"why_detail": (0, MAX_DETAIL_SLIDER, DETAIL), "why_steps": (2, MAX_STEPS, 32)}
POLL_S = 0.25  # how often the progress line is redrawn while the work runs


def gradients_off(why_not: str | None) -> str:
    """What the tab says, before any click, where only occlusion can run on the model."""
    if why_not is None:
        return ""
    return f"Only *Occlusion* runs on this model. {why_not}"


INTRO = """**Why did the model expect this token?** Pick a token in the heatmap below (after Score, Generate or Chat)
and press *Why?*: the text before it is coloured by how much each earlier token (or word) contributed to its logprob.
Give a token in *rather than* to ask why it beat that one (the difference of their logprobs); words of several tokens
are scored as a continuation (the sum of their tokens' logprobs, as in Answers; a leading space is part of them). *Occlusion* is exact
(each unit left out, the text scored again); the gradient methods are fast approximations of the same question;
attention shows where the model looked, which is not the same as why."""


def contrast_of(text: str) -> int | str | None:
    """The contrast as typed in *rather than*: '' (or only spaces) = none, `#123` = that token id, else the text, which
    the engine reads as typed right after the text before the target (a leading space is part of it) and, where it
    is several tokens, scores as a continuation (explorer.engine.analyses.attribution.contrast_tokens)."""
    text = text or ""
    if not text.strip():  # nothing, or only spaces: no contrast (a space token: give its #id)
        return None
    if text.strip().startswith("#") and text.strip()[1:].isascii() and text.strip()[1:].isdigit():
        return int(text.strip()[1:])
    return text


def stopped(summary: str) -> str:
    """The summary after Stop: a run in progress says it stopped; a finished result stays as it is."""
    if "lx-progress" in (summary or ""):
        return "Stopped: nothing was changed. Press *Why?* to run it again."
    return summary


def run_beside(fn) -> Iterator[tuple[int, int] | Attribution]:
    """Run fn(progress) on a thread in this context (the page's time cap): yields (done, total) while it runs, then
    its result. Closing the iterator (Stop) makes the bound's check raise, so the work ends at its next batch."""
    state: dict[str, Any] = {"done": (0, 0), "stop": False}
    finished = threading.Event()

    def stop() -> None:
        if state["stop"]:
            raise ExplorerError("Stopped.", code="cancelled")

    def progress(done: int, total: int) -> None:
        state["done"] = (done, total)

    def work() -> None:
        try:
            with bounds.stopping(stop):  # the page's bound (copied below), and Stop
                state["result"] = fn(progress)
        except BaseException as err:  # noqa: BLE001 - handed back to the page's thread
            state["error"] = err
        finally:
            finished.set()

    ctx = contextvars.copy_context()
    threading.Thread(target=ctx.run, args=(work,), daemon=True, name="why").start()
    try:
        while not finished.wait(POLL_S):
            yield state["done"]
    finally:
        state["stop"] = True
    if "error" in state:
        raise state["error"]
    yield state["result"]


class WhyTab:
    """Method and units, an optional contrast token, Why? and Stop; the coloured text, the ranked list, downloads."""

    def __init__(self, shared: Shared):
        self.models, self.inspector = shared.models, shared.inspector
        with gr.Tab("Why", id="why") as self.tab:
            gr.Markdown(INTRO)
            with gr.Row():
                self.contrast = gr.Textbox(
                    label="Rather than (optional: a token or words, e.g. “ London” or “ New York”, or #id)",
                    max_lines=1,
                    scale=2,
                    min_width=240,
                )
                self.method = gr.Radio(
                    list(METHODS), value=METHOD_LABELS["occlusion"], label="Method", scale=3, min_width=300
                )
            why_not = self.models.without(self.models.default, "hidden_states")
            self.unavailable = gr.Markdown(
                gradients_off(why_not), visible=why_not is not None, elem_id="why-unavailable"
            )
            with gr.Row():
                with gr.Column(scale=1, min_width=240):
                    self.units = gr.Radio(list(UNITS), value="Tokens", label="Units")
                    self.with_special = gr.Checkbox(False, label="Rank template and special tokens too")
                self.detail = gr.Slider(
                    *NUMBERS["why_detail"][:2], value=NUMBERS["why_detail"][2], step=1, scale=2, min_width=300,
                    label="Units next to the target taken one by one (0 = all; the text before them in 8 spans)",
                )  # fmt: skip
            with gr.Accordion("Method settings", open=False), gr.Row():
                self.mode = gr.Radio(list(MODES), value=MODE_LABELS["remove"], label="Occlusion")
                self.steps = gr.Slider(
                    *NUMBERS["why_steps"][:2],
                    value=NUMBERS["why_steps"][2],
                    step=1,
                    label="Integrated gradients: steps",
                )
                self.baseline = gr.Radio(list(BASELINES), value=BASELINE_LABELS["neutral"], label="IG baseline")
            with gr.Row():
                self.button = gr.Button("Why? (the selected token)", variant="primary", scale=3)
                self.stop = stop_button(scale=1)
            self.summary = gr.Markdown(elem_id="why-summary")
            self.legend = gr.HTML(legend_html(None), css_template=CSS, js_on_load=None, elem_id="why-legend")
            self.text = gr.HTML("", css_template=CSS, js_on_load=None, elem_id="why-text")
            with gr.Row(equal_height=False):
                self.table = gr.Dataframe(label="Strongest contributors", interactive=False, scale=1, min_width=360)
                self.plot = gr.Plot(show_label=False, scale=1, min_width=360)
            with gr.Row():
                self.dl_json = gr.DownloadButton("Download attribution JSON", value=None, interactive=False, size="sm")
                self.dl_csv = gr.DownloadButton("Download attribution CSV", value=None, interactive=False, size="sm")
                self.dl_html = view_button("why-dl-html")
            self.state = gr.State(None)
        self._wire()
        shared.model.change(
            lambda name: gr.Markdown(gradients_off(w := self.models.without(name, "hidden_states")), visible=w is not None),
            [shared.model], [self.unavailable], api_visibility="private",
        )  # fmt: skip

    @property
    def named(self) -> dict:
        """The tab's settings by their link keys (WhyLink's fields), in the order `run` takes them."""
        return {"why_contrast": self.contrast, "why_method": self.method, "why_units": self.units,
                "why_detail": self.detail, "why_mode": self.mode, "why_steps": self.steps,
                "why_baseline": self.baseline}  # fmt: skip

    @property
    def controls(self) -> list:
        return list(self.named.values())

    @property
    def inputs(self) -> list:
        """`run`'s positional inputs (its settings come by name: `options`)."""
        return [self.inspector.result, self.inspector.selected]

    @property
    def options(self) -> dict:
        """`run`'s keyword inputs: the settings by the `/why` endpoint's names (their link keys less `why_`), and
        whether special tokens are ranked too."""
        return {k.removeprefix("why_"): c for k, c in self.named.items()} | {"with_special": self.with_special}

    @property
    def outputs(self) -> list:
        return [self.summary, self.legend, self.text, self.table, self.plot, self.dl_json, self.dl_csv, self.dl_html,
                self.state]  # fmt: skip

    def _wire(self) -> None:
        event = running(
            self.stop, self.button.click, self.run, self.inputs, self.outputs, inputs_kwargs=self.options,
            api_name="why", show_progress_on=[self.summary],
        )  # fmt: skip
        self.stop_events([event])

    def stop_events(self, events: list) -> None:
        """Stop cancels `events` (this tab's run, and the inspector's *Why this token?*) and says so."""
        stops(self.stop, events)
        self.stop.click(stopped, [self.summary], [self.summary], api_visibility="private", queue=False)
        self.with_special.change(self.rerank, [self.state, self.with_special], [self.table, self.plot],
                                 api_visibility="private")  # fmt: skip

    # ---- handlers ------------------------------------------------------------------------
    def rerank(self, a: Attribution | None, with_special: bool) -> dict:
        if a is None:
            return {self.table: None, self.plot: None}
        return {
            self.table: why_table(a, with_special=bool(with_special)),
            self.plot: why_figure(a, with_special=bool(with_special)),
        }

    def _request(
        self, state: list, selected, *, contrast="", method="", units="", detail=0, mode="", steps=32, baseline=""
    ) -> dict:
        """The checked request (no model needed), the settings by the names of `options`; gr.Error saying what to
        change."""
        if not state:
            raise error("Score a text, generate or chat first, then pick a token in the heatmap below.")
        r = state[0]
        pos = whole_number(selected, "Pick a token by clicking it in the heatmap below.")
        if method not in METHODS or units not in UNITS or mode not in MODES or baseline not in BASELINES:
            raise error("Pick a method, units, an occlusion mode and a baseline from the lists.")
        m, u, md, b = METHODS[method], UNITS[units], MODES[mode], BASELINES[baseline]
        d, n = int(detail or 0), int(steps or 32)
        with user_errors():
            check_request(r, pos, m, u, md, n, d, b)
        kw = {"method": m, "units": u, "mode": md, "baseline": b, "detail": d, "steps": n}
        return {"r": r, "pos": pos, "contrast": contrast or "", **kw}

    @uses_model
    def run(
        self, state: list, selected, progress=gr.Progress(), with_special: bool = False, **settings: Any
    ) -> Iterator[dict]:
        """The attribution of the selected token of the current result (`settings`: by the names of `options`);
        progress while it runs."""
        q = self._request(state, selected, **settings)
        r = q.pop("r")
        use = self.models.use(r.model) if q["method"] == "occlusion" else self.models.use_for(r.model, "hidden_states")
        with user_errors(), use as engine:
            c = contrast_of(q.pop("contrast"))
            pos = q.pop("pos")
            for item in run_beside(lambda prog: attribute(engine, r, pos, contrast=c, progress=prog, **q)):
                if isinstance(item, Attribution):
                    if (kind := self.models.engine_of(engine.name)) != engine.capabilities.engine:
                        item.note = twin_note(kind)
                    yield self.show(item, bool(with_special))
                    return
                done, total = item
                unit = "steps" if q["method"] == "ig" else "units"
                progress((done, max(total, 1)), desc="Attributing", unit=unit)
                yield {self.summary: progress_html(done, total, "Attributing", unit)}

    def show(self, a: Attribution, with_special: bool = False) -> dict:
        """Every view of `a`, and its files."""
        return {
            self.summary: why_summary(a),
            self.legend: legend_html(a),
            self.text: why_html(a),
            self.table: why_table(a, with_special=with_special),
            self.plot: why_figure(a, with_special=with_special),
            self.dl_json: gr.DownloadButton(value=_write(a, "json"), interactive=True),
            self.dl_csv: gr.DownloadButton(value=_write(a, "csv"), interactive=True),
            self.dl_html: view_file(a.model, f"why-{a.method}-{a.pos}", why_page(a)),
            self.state: a,
        }


def _write(a: Attribution, fmt: str) -> str:
    """The attribution's file (JSON: to_dict; CSV: one row per unit) in a fresh folder; its path."""
    data = json.dumps(a.to_dict(), ensure_ascii=False, allow_nan=False) if fmt == "json" else a.to_csv()
    return write_text(a.model, f"why-{a.method}-{a.pos}.{fmt}", data)


@dataclass(frozen=True)
class WhyLink(TabLink):
    """A Why link: the tab's settings (at the base's selected token); the choices by their keys, not their labels."""

    tab = "why"
    LABELS: ClassVar[dict[str, dict[str, str]]] = {"why_method": METHODS, "why_units": UNITS, "why_mode": MODES,
                                                   "why_baseline": BASELINES}  # fmt: skip
    why_contrast: str = ""  # the token the target is compared with ('' = none)
    why_method: str = "occlusion"
    why_units: str = "token"
    why_detail: int = NUMBERS["why_detail"][2]
    why_mode: str = "remove"
    why_steps: int = NUMBERS["why_steps"][2]
    why_baseline: str = "neutral"

    @classmethod
    def read(cls, d: dict) -> WhyLink:
        keys = {k: tuple(labels.values()) for k, labels in cls.LABELS.items()}
        kw: dict[str, Any] = {k: choice(d, k, options, options[0]) for k, options in keys.items()}
        kw.update({k: whole(d, k, lo, hi, default) for k, (lo, hi, default) in NUMBERS.items()})
        return cls(why_contrast=text(d, "why_contrast", MAX_TOKEN_CHARS), **kw)

    @classmethod
    def inputs(cls, tab: WhyTab) -> list:
        return tab.controls

    @classmethod
    def to_link(cls, tab: WhyTab, values: Mapping[Any, Any], base: Base, model: str) -> tuple[Base, WhyLink]:
        v: dict[str, Any] = {f: values.get(c) for f, c in tab.named.items()}
        kw: dict[str, Any] = {k: labels.get(v[k], getattr(cls, k)) for k, labels in cls.LABELS.items()}
        own = cls(
            why_contrast=str(v["why_contrast"] or ""),
            why_detail=count(v["why_detail"], NUMBERS["why_detail"][2]),
            why_steps=max(count(v["why_steps"], NUMBERS["why_steps"][2]), 2),
            **kw,
        )
        return base, own

    def apply(self, tab: WhyTab, v: ViewState) -> dict:
        labels = {k: {key: label for label, key in labels.items()} for k, labels in self.LABELS.items()}
        return {c: labels[f][getattr(self, f)] if f in labels else getattr(self, f) for f, c in tab.named.items()}

    def rerun(self, tab: WhyTab, v: ViewState, run: Rerun) -> Iterator[dict]:
        controls = self.apply(tab, v)
        settings = {f.removeprefix("why_"): controls[c] for f, c in tab.named.items()}
        yield from tab.run(run.result, run.selected, progress=lambda *a, **kw: None, **settings)

    @classmethod
    def outputs(cls, tab: WhyTab) -> list:
        return [*tab.controls, *tab.outputs]
