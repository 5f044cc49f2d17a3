"""The token inspector every tab fills: colour controls, the heatmap beside the selected token's detail,
the most surprising tokens, the sortable table, curves and one-click downloads.

Its components are made unrendered so tabs can send outputs to them; `render()` places them on the
page. The session's current result lives in `result` (a gr.State: a list of TokenScores) and the
selected position in `selected` (a gr.Number); other views (compare, lens, branch) read both.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from itertools import pairwise

import gradio as gr
import numpy as np

from explorer.errors import ExplorerError
from explorer.render.charts import curves, rank_histogram
from explorer.render.detail import detail_html
from explorer.render.heatmap import (
    DEFAULT_METRIC,
    DEFAULT_THRESHOLDS,
    METRICS,
    Marks,
    heatmap_html,
    legend_html,
)
from explorer.render.page_data import data_html, page_data
from explorer.render.stats import stats_markdown
from explorer.render.tables import summary_markdown, surprising_html, table_view
from explorer.render.text import escape
from explorer.results.scores import TokenScores
from explorer.results.stats import text_stats
from explorer.rules.sampler import page_k
from explorer.ui.actions import uses_model
from explorer.ui.downloads import Downloads
from explorer.ui.errors import error, info, picked
from explorer.ui.theme import HEATMAP_JS, JUMP_JS, PRESENT_JS

DEFAULT_THRESHOLDS_TEXT = ", ".join(map(str, DEFAULT_THRESHOLDS))
SKIP = '<a class="lx-skip" href="#token-detail">Skip the tokens: go to the selected token</a>'
SPAN = '<div class="lx-span" hidden aria-live="polite"></div>'
DEFAULT_K = 10  # alternatives shown at first


def parse_thresholds(text: str) -> tuple[int, ...]:
    """Rank bucket thresholds parsed from '1, 10, 100, 1000' (1 to 4 increasing whole numbers)."""
    try:
        t = tuple(int(x) for x in str(text).replace(" ", "").split(",") if x)
    except ValueError:
        raise error(f"Rank thresholds must be increasing whole numbers like 1, 10, 100, 1000 (got {text!r}).") from None
    if not 1 <= len(t) <= 4 or any(b <= a for a, b in pairwise(t)) or t[0] < 1:
        raise error("Rank thresholds must be 1 to 4 increasing whole numbers ≥ 1, like 1, 10, 100, 1000.")
    return t


def new_rid() -> str:
    """An id for one run: the page brings a result into view once per id."""
    return uuid.uuid4().hex[:12]


def progress_html(done: int, total: int, what: str = "Scoring", unit: str = "positions") -> str:
    return (
        f'<div class="lx-progress"><label>{escape(what)}: {done:,} of {total:,} {escape(unit)}'
        f' <progress value="{done}" max="{max(total, 1)}"></progress></label></div>'
    )


def shown_k(k) -> int:
    """Alternatives the detail shows for the slider's `k`: 1 up to the page's top-k (0 where the server allows none)."""
    return min(max(int(k or DEFAULT_K), 1), page_k())


def k_slider() -> gr.Slider:
    """The "Alternatives shown (k)" slider, up to the page's top-k; fixed, saying why, where the cap leaves 0 or 1."""
    top = page_k()  # when the page is built: after --max-logprobs set the cap
    if top <= 1:  # a slider needs two values: fixed at the one the cap leaves
        why = f"This server runs with --max-logprobs {top}: " + (
            "no alternatives are computed (each token's own logprob and rank are)." if top == 0 else "one per token."
        )
        return gr.Slider(0, 1, value=top, step=1, label="Alternatives shown (k)", info=why, interactive=False, scale=2)
    return gr.Slider(1, top, value=min(DEFAULT_K, top), step=1, label="Alternatives shown (k)", scale=2)


@dataclass(frozen=True)
class View:
    """What the page shows besides the result: its marks and the id of the run that made it."""

    marks: Marks | None = None
    rid: str = ""
    imported: str = ""  # the shape of the file it was opened from ('' = computed here); then no model is used


def role_at(marks: Marks | None, pos: int) -> str | None:
    """The chat role of the turn holding `pos`, if the result is a chat."""
    roles = [role for start, role in (marks.turns if marks else ()) if start <= pos]
    return roles[-1] if roles else None


class Inspector:
    """The shared views and their own events (token click, restyle, downloads, presentation mode)."""

    def __init__(self, models=None):
        self.models = models  # for recomputing a generated step (raw vs processed); None: no side-by-side view
        with gr.Column(render=False, elem_id="results", elem_classes=["lx-results"]) as self.block:
            self.result = gr.State([])
            self.view = gr.State(None)  # View of the current result: its marks (chat turns, marker tokens) and run id
            self.present = gr.Button("Presentation mode", elem_id="present-btn", size="sm")
            with gr.Row(elem_classes=["lx-toolbar", "lx-hide-present"]):
                self.metric = gr.Radio(list(METRICS), value=DEFAULT_METRIC, label="Colour by", scale=3)
                self.thresholds = gr.Textbox(
                    DEFAULT_THRESHOLDS_TEXT, label="Rank buckets (GLTR), Enter applies", visible=False, scale=1
                )
                self.k = k_slider()
            self._main()
            with gr.Accordion(
                "Every token: a sortable table (click a column's header)", open=False, elem_classes=["lx-hide-present"]
            ):
                self.table = gr.Dataframe(interactive=False, max_height=420, show_label=False, elem_id="token-table")
            with (
                gr.Accordion(
                    "Curves: rank, entropy and surprisal over the text", open=False, elem_classes=["lx-hide-present"]
                ),
                gr.Row(),
            ):
                self.plot = gr.Plot(show_label=False)
                self.hist = gr.Plot(show_label=False)
            self.downloads = Downloads()
        self._wire()

    def _main(self) -> None:
        with gr.Row(equal_height=False, elem_classes=["lx-main"]):
            with gr.Column(scale=3, min_width=320, elem_classes=["lx-left"]):
                self.summary = gr.Markdown(elem_id="summary")
                self.legend = gr.HTML(legend_html(DEFAULT_METRIC), js_on_load=None, elem_id="legend")
                self.heatmap = gr.HTML("", js_on_load=HEATMAP_JS, elem_id="heatmap")
                self.surprising = gr.HTML(
                    "", js_on_load=JUMP_JS, elem_id="surprising", elem_classes=["lx-hide-present"]
                )
                with gr.Accordion(  # a researcher's figures, under the text they are about
                    "Text statistics (GLTR, Min-K%, Min-K%++, Fast-DetectGPT): scores, not verdicts",
                    open=False,
                    elem_id="text-stats",
                    elem_classes=["lx-hide-present"],
                ):
                    self.text_stats = gr.Markdown(elem_id="text-stats-table")
            with gr.Column(scale=2, min_width=300, elem_classes=["lx-side"]):
                self.detail = gr.HTML("", js_on_load=None, elem_id="token-detail")
                self.selected = gr.Number(
                    value=0,
                    precision=0,
                    minimum=0,
                    label="Position (type one, then Enter)",
                    elem_classes=["lx-hide-present"],
                )
                self.why = gr.Button(
                    "Why this token? (opens the Why tab)",
                    size="sm",
                    elem_id="why-btn",
                    elem_classes=["lx-hide-present"],
                )

    def render(self) -> None:
        """Place the views on the page here."""
        self.block.render()

    @property
    def look(self) -> dict:
        """The inputs every action reads (colour by, thresholds, k) by the names a run takes them: RunOptions'
        fields, a handler's keyword inputs, and the keys of a link's values (Base.look)."""
        return {"metric": self.metric, "thresholds_text": self.thresholds, "k": self.k}

    @property
    def outputs(self) -> list:
        """Every component an action may fill (heatmap first and summary third among the visible ones)."""
        return [
            self.result,
            self.heatmap,
            self.legend,
            self.summary,
            self.plot,
            self.hist,
            self.table,
            self.detail,
            self.selected,
            self.view,
            self.surprising,
            *self.downloads.outputs,
        ]

    def _wire(self) -> None:
        detail_out = [self.detail, self.selected]

        @uses_model
        def on_click(state, k, view, evt: gr.EventData):
            if not state:  # tokens shown and no result yet: a run is still coming in
                info("The numbers come when the run finishes: click the token again then.")
                return {c: gr.skip() for c in detail_out}
            return self.detail_of(state, evt._data.get("pos", 0), k, view)

        self.heatmap.click(on_click, [self.result, self.k, self.view], detail_out, api_visibility="private")
        gr.on(
            [self.selected.submit, self.k.change],
            self.detail_of,
            [self.result, self.selected, self.k, self.view],
            detail_out,
            api_name="token_detail",
            trigger_mode="always_last",
            show_progress="hidden",
        )
        gr.on(
            [self.metric.change, self.thresholds.submit],
            self.restyle,
            [self.result, self.metric, self.thresholds, self.selected, self.view],
            [self.heatmap, self.legend, self.hist, self.thresholds],
            api_name="restyle",
        )
        self.result.change(
            self.downloads.prepare, [self.result], self.downloads.outputs, api_name="download", show_progress="hidden"
        )
        self.result.change(
            self.text_stats_of, [self.result], [self.text_stats], api_name="text_stats", show_progress="hidden"
        )
        self.present.click(None, js=PRESENT_JS)

    # ---- handlers ------------------------------------------------------------------------
    @staticmethod
    def text_stats_of(state: list) -> str:
        """The Text statistics panel of the shown result (the first sample), from its numbers alone."""
        if not state:
            return ""
        r = state[0]
        scored, generated = int(r.scored.sum()), r.n - r.n_prompt
        title = (
            f"Text statistics of all {scored} scored tokens: the prompt's (with any chat template) and the "
            f"{generated} generated together"
            if generated > 0
            else "Text statistics"
        )
        return stats_markdown(text_stats(r), title)

    def _heat(self, r: TokenScores, metric: str, t, selected, view: View, *, full: bool = True, note: str = "") -> str:
        """The heatmap's HTML: skip link, span bar, progress, the chips, and the page's data (numbers once full)."""
        data = page_data(r, view.rid) if full else {"rid": view.rid, "n": r.n, "partial": True}
        return SKIP + SPAN + note + heatmap_html(r, metric, t, selected, view.marks) + data_html(data)

    def show(
        self,
        r: TokenScores,
        metric: str,
        thresholds_text: str,
        k: int,
        view: View | None = None,
        pos: int | None = None,
    ) -> dict:
        """Every view of a finished result; selected: `pos`, else the first generated token, else the first scored one.

        `view`: its marks and run id (a new id where it has none); a result opened from a file (`view.imported`, its
        shape) is shown from the file alone, no model runs."""
        t, view = parse_thresholds(thresholds_text), view or View()
        view = view if view.rid else replace(view, rid=new_rid())
        scored = np.flatnonzero(r.scored)
        if pos is None or not 0 <= pos < r.n:
            pos = r.n_prompt if r.output_k is not None and r.n_prompt < r.n else int(scored[0]) if scored.size else 0
        return {
            self.result: [r],
            self.view: view,
            self.heatmap: self._heat(r, metric, t, pos, view),
            self.legend: legend_html(metric, t),
            self.summary: summary_markdown(r),
            self.plot: curves(r),
            self.hist: rank_histogram(r, t),
            self.table: table_view(r),
            self.surprising: surprising_html(r),
            **self._detail(r, pos, k, view),
        }

    def partial(self, r: TokenScores, metric: str, t: tuple[int, ...], view: View, *, note="", first=False) -> dict:
        """The heatmap alone, for a result still coming in (`view`: its marks and its run's id; the first one also
        empties the old downloads)."""
        out = {self.heatmap: self._heat(r, metric, t, None, view, full=False, note=note)}
        return {**out, **self.downloads.cleared()} if first else out

    def _step(self, r: TokenScores, pos: int, k: int, imported: bool = False):
        """Raw and processed distributions of a generated token, recomputed (None where that cannot be done, and for
        a result opened from a file: that never loads a model)."""
        if self.models is None or imported or r.output_k is None or pos < r.n_prompt:
            return None
        from explorer.engine.analyses.step_view import step_view  # torch only where it is needed

        try:
            with self.models.use(r.model) as engine:
                return step_view(engine, r, pos, max(int(k), 1))
        except ExplorerError:
            return None

    def _detail(self, r: TokenScores, pos: int, k, view: View | None = None) -> dict:
        k = shown_k(k)
        view = view if isinstance(view, View) else View()
        html = detail_html(r, pos, k, self._step(r, pos, k, bool(view.imported)), role_at(view.marks, pos))
        return {self.detail: html, self.selected: pos}

    @uses_model  # a generated token's raw and processed rows are recomputed
    def detail_of(self, state: list, pos, k, view: View | None = None) -> dict:
        """Detail of the token at `pos` of the current result."""
        if not state:
            raise error("Score a text or generate first, then click a token.")
        r = state[0]
        unpicked = "Pick a token by clicking it in the heatmap, or type its position."
        pos = picked(pos, r.n, unpicked, "Position {i} is outside this text ({first}..{last}).")
        return self._detail(r, pos, k, view)

    def restyle(self, state: list, metric: str, thresholds_text: str, selected, view: View | None = None) -> dict:
        """Heatmap, legend and histogram recoloured by `metric` and `thresholds_text` (same run: no scrolling)."""
        t = parse_thresholds(thresholds_text)
        out = {self.legend: legend_html(metric, t), self.thresholds: gr.Textbox(visible=metric == "rank")}
        if not state:
            return out
        r, view = state[0], view if isinstance(view, View) else View()
        sel = int(selected) if selected is not None else None
        return {
            **out,
            self.heatmap: self._heat(r, metric, t, sel, view),
            self.hist: rank_histogram(r, t),
        }
