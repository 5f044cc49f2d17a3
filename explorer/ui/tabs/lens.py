"""The Logit lens tab: a layer x position heatmap of what each layer already predicts; click a cell for its top-k."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

import gradio as gr
import pandas as pd

from explorer.engine.analyses.lens import lens_ids
from explorer.errors import ExplorerError
from explorer.notebook.views import lens_page
from explorer.render.lens import CSS, METRICS, cell_markdown, cell_table, legend_html, lens_html
from explorer.render.tables import ALT_COLUMNS
from explorer.results.lens import LensGrid
from explorer.rules.sampler import page_k
from explorer.ui.actions import uses_model
from explorer.ui.downloads import view_button, view_file
from explorer.ui.errors import error, user_errors, whole_number
from explorer.ui.links import MAX_POSITION, Base, Rerun, TabLink, ViewState, choice, count, text, whole
from explorer.ui.tabs import Shared, twin_note

LENS_K = 10  # top-k kept per cell (at most the server's cap: page_k)
MAX_LENS_TOKENS = 512  # the page draws (layers + 1) x tokens cells; the CLI has no such cap
INTRO = """The **plain logit lens**: the residual stream after each layer, read through the model's own final norm and
output layer, as if the model stopped there. Layer 0 is the embeddings; the top row is the model's real output (the
numbers of *Score*). Each cell is one layer's verdict on the actual token at that position. Leave the text empty to
look inside the current result. Click a cell for that layer's top-k."""
GRID_JS = """
element.addEventListener('click', (e) => {
  const td = e.target.closest('td'); const tr = td && td.closest('tr[data-l]');
  if (!td || !tr || td.classList.contains('u')) return;
  element.querySelectorAll('td.sel').forEach((x) => x.classList.remove('sel'));
  td.classList.add('sel');
  trigger('click', {layer: Number(tr.dataset.l), pos: td.cellIndex - 1});
});
"""


class LensTab:
    """Text (or the current result) + Run button + metric; the grid and one cell's detail."""

    def __init__(self, shared: Shared):
        self.models, self.result = shared.models, shared.inspector.result
        with gr.Tab("Logit lens", id="lens") as self.tab:
            gr.Markdown(INTRO)
            self.text = gr.Textbox(label="Text for the lens (empty: the current result)", lines=2)
            with gr.Row():
                self.metric = gr.Radio(list(METRICS), value="rank", label="Colour cells by", elem_id="lens-metric")
                self.button = gr.Button("Run the logit lens", variant="primary")
            why_not = self.models.without(self.models.default, "hidden_states")
            self.button.interactive = why_not is None
            self.unavailable = gr.Markdown(why_not or "", visible=why_not is not None, elem_id="lens-unavailable")
            self.legend = gr.HTML(legend_html("rank"), css_template=CSS, js_on_load=None)
            self.grid = gr.HTML("", css_template=CSS, js_on_load=GRID_JS, elem_id="lens-grid")
            with gr.Row():
                self.layer = gr.Number(value=0, precision=0, label="Layer", minimum=0)
                self.pos = gr.Number(value=1, precision=0, label="Lens position", minimum=0)
            self.cell_md = gr.Markdown()
            self.cell_df = gr.Dataframe(
                pd.DataFrame(columns=ALT_COLUMNS), label="That layer's top-k", interactive=False
            )
            self.dl_html = view_button("lens-dl-html")
            self.state = gr.State(None)
        self._wire(shared)

    def _wire(self, shared: Shared) -> None:
        cell_out = [self.cell_md, self.cell_df, self.layer, self.pos]

        def available(name: str) -> dict:  # said before the click: a model whose engine cannot run the lens
            why_not = self.models.without(name, "hidden_states")
            return {
                self.button: gr.Button(interactive=why_not is None),
                self.unavailable: gr.Markdown(why_not or "", visible=why_not is not None),
            }

        shared.model.change(available, [shared.model], [self.button, self.unavailable], api_visibility="private")
        self.button.click(
            self.run,
            [shared.model, self.text, self.result, self.metric],
            [self.state, self.grid, self.legend, *cell_out],
            api_name="lens",
        )
        gr.on(
            [self.state.change, self.metric.input], self.view, [self.state, self.metric], [self.dl_html],
            api_visibility="private", show_progress="hidden",
        )  # fmt: skip
        self.metric.input(  # the person's change (a link's rerun draws its own grid: see words.py)
            self.restyle,
            [self.state, self.metric, self.layer, self.pos],
            [self.grid, self.legend],
            api_name="lens_restyle",
        )
        gr.on(
            [self.layer.submit, self.pos.submit],
            self.cell,
            [self.state, self.layer, self.pos],
            cell_out,
            api_name="lens_cell",
        )

        def on_click(state, evt: gr.EventData):
            data = evt._data or {}
            return self.cell(state, data.get("layer", 0), data.get("pos", 1))

        self.grid.click(on_click, [self.state], cell_out, api_visibility="private")

    # ---- handlers ------------------------------------------------------------------------
    @uses_model
    def run(self, name: str, text: str, result: list, metric: str) -> dict:
        """The lens of `text`, or of the current result when the text is empty; the last layer's last cell selected."""
        with user_errors(), self.models.use_for(name, "hidden_states") as engine:
            if text and text.strip():
                ids = engine.encode(text)
            elif result:
                if result[0].model != engine.name:
                    raise error(
                        f"The current result comes from {result[0].model}; pick that model again or type a text."
                    )
                ids = result[0].token_ids.tolist()
            else:
                raise error("Type a text, or score or generate one first: the lens reads the current result.")
            if len(ids) > MAX_LENS_TOKENS:
                raise error(
                    f"The text is {len(ids)} tokens; the page draws the lens of at most {MAX_LENS_TOKENS}. Shorten it, "
                    "or use the command line: logprob-explorer lens."
                )
            g = lens_ids(engine, ids, k=page_k(LENS_K))
        if (kind := self.models.engine_of(engine.name)) != engine.capabilities.engine:
            g = replace(g, note=twin_note(kind))
        layer, pos = g.n_layers, max(g.n - 1, 0)
        return {
            self.state: g,
            self.grid: lens_html(g, metric, (layer, pos)),
            self.legend: legend_html(metric),
            **self._cell(g, layer, pos),
        }

    @staticmethod
    def view(g: LensGrid | None, metric: str) -> gr.DownloadButton:
        """The lens shown, coloured as shown, as one HTML file (disabled before any)."""
        return view_file("", "", None) if g is None else view_file(g.model, "lens", lens_page(g, metric))

    def restyle(self, g: LensGrid | None, metric: str, layer=None, pos=None) -> dict:
        """The grid recoloured by `metric`, cell (`layer`, `pos`) still selected where it is one of the grid's."""
        if metric not in METRICS:
            raise error(f"Colour by one of {', '.join(METRICS)}.")
        try:
            at: tuple[int, int] | None = (int(layer), int(pos))
        except (TypeError, ValueError):
            at = None
        return {self.grid: lens_html(g, metric, at) if g is not None else "", self.legend: legend_html(metric)}

    def show_cell(self, g: LensGrid, metric: str, layer: int, pos: int) -> dict:
        """The grid with cell (`layer`, `pos`) selected, and that cell's detail (a link's restore)."""
        return {self.grid: lens_html(g, metric, (layer, pos)), **self.cell(g, layer, pos)}

    def _cell(self, g: LensGrid, layer: int, pos: int) -> dict:
        return {
            self.cell_md: cell_markdown(g, layer, pos),
            self.cell_df: cell_table(g, layer, pos),
            self.layer: layer,
            self.pos: pos,
        }

    def cell(self, g: LensGrid | None, layer, pos) -> dict:
        """Layer `layer`'s reading at position `pos`: its numbers and top-k."""
        if g is None:
            raise error("Run the logit lens first, then click a cell.")
        layer, pos = (
            whole_number(x, "Pick a cell by clicking it, or type a layer and a position.") for x in (layer, pos)
        )
        if not 0 <= layer <= g.n_layers or not 0 <= pos < g.n:
            raise error(
                f"Layer {layer}, position {pos} is outside the grid (layers 0..{g.n_layers}, positions 0..{g.n - 1})."
            )
        return self._cell(g, layer, pos)


@dataclass(frozen=True)
class LensLink(TabLink):
    """A Logit lens link: its own text (then it needs no result) or the base's result, the colouring and the cell."""

    tab = "lens"
    MAX_LAYER = 4096
    lens_text: str = ""  # '' = the inspector's result
    lens_metric: str = "rank"
    layer: int = 0
    lens_pos: int = 0

    @classmethod
    def read(cls, d: dict) -> LensLink:
        return cls(
            lens_text=text(d, "lens_text"),
            lens_metric=choice(d, "lens_metric", tuple(METRICS), "rank"),
            layer=whole(d, "layer", 0, cls.MAX_LAYER, 0),
            lens_pos=whole(d, "lens_pos", 0, MAX_POSITION, 0),
        )

    def needs_result(self) -> bool:
        return not self.lens_text.strip()

    @classmethod
    def inputs(cls, tab: LensTab) -> list:
        return [tab.state, tab.text, tab.metric, tab.layer, tab.pos]

    @classmethod
    def to_link(cls, tab: LensTab, values: Mapping[Any, Any], base: Base, model: str) -> tuple[Base, LensLink]:
        if values.get(tab.state) is None:
            raise ExplorerError("Run the logit lens first: then its link can be shared.")
        own = cls(lens_text=str(values.get(tab.text) or ""), lens_metric=values.get(tab.metric),  # type: ignore[arg-type]
                  layer=count(values.get(tab.layer)), lens_pos=count(values.get(tab.pos)))  # fmt: skip
        return (Base(model=model or "") if own.lens_text.strip() else base), own  # its own text: no result needed

    def apply(self, tab: LensTab, v: ViewState) -> dict:
        return {tab.text: self.lens_text, tab.metric: self.lens_metric}

    def rerun(self, tab: LensTab, v: ViewState, run: Rerun) -> Iterator[dict]:
        out = tab.run(run.name, self.lens_text, run.result, self.lens_metric)
        g = out[tab.state]
        yield {**out, **tab.show_cell(g, self.lens_metric, min(self.layer, g.n_layers), min(self.lens_pos, g.n - 1))}

    @classmethod
    def outputs(cls, tab: LensTab) -> list:
        return [tab.text, tab.metric, tab.state, tab.grid, tab.legend, tab.cell_md, tab.cell_df, tab.layer, tab.pos]
