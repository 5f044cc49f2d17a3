"""The token inspector every tab fills: colour controls, legend, heatmap, summary, detail, curves, table, downloads.

Its components are made unrendered so tabs can send outputs to them; `render()` places them
on the page. The session's current result lives in `result` (a gr.State: a list of TokenScores).
"""

from __future__ import annotations

import os
import tempfile

import gradio as gr

from explorer.export import FORMATS, dumps, export, names
from explorer.render.charts import curves, rank_histogram
from explorer.render.heatmap import CSS, DEFAULT_THRESHOLDS, METRICS, heatmap_html, legend_html
from explorer.render.tables import detail_markdown, detail_table, summary_markdown, token_csv, token_table
from explorer.result import TokenScores
from explorer.settings import MAX_K
from explorer.ui.errors import error

DEFAULT_THRESHOLDS_TEXT = ", ".join(map(str, DEFAULT_THRESHOLDS))
DOWNLOADS = [*names(), "csv"]  # every exporter's shape, then the per-token table
HEATMAP_JS = """
const pick = (t) => {
  element.querySelectorAll('.sel').forEach((x) => x.classList.remove('sel'));
  t.classList.add('sel');
  trigger('click', {pos: Number(t.dataset.pos)});
};
element.addEventListener('click', (e) => { const t = e.target.closest('[data-pos]'); if (t) pick(t); });
element.addEventListener('keydown', (e) => {
  if (e.key !== 'Enter' && e.key !== ' ') return;
  const t = e.target.closest('[data-pos]');
  if (t) { e.preventDefault(); pick(t); }
});
"""


def parse_thresholds(text: str) -> tuple[int, ...]:
    """Rank bucket thresholds parsed from '1, 10, 100, 1000' (1 to 4 increasing whole numbers)."""
    try:
        t = tuple(int(x) for x in str(text).replace(" ", "").split(",") if x)
    except ValueError:
        raise error(f"Rank thresholds must be increasing whole numbers like 1, 10, 100, 1000 (got {text!r}).") from None
    if not 1 <= len(t) <= 4 or any(b <= a for a, b in zip(t, t[1:])) or t[0] < 1:
        raise error("Rank thresholds must be 1 to 4 increasing whole numbers ≥ 1, like 1, 10, 100, 1000.")
    return t


class Inspector:
    """The shared views and their own events (token click, restyle, download)."""

    def __init__(self):
        with gr.Column(render=False) as self.block:
            self.result = gr.State([])
            gr.Markdown("## Tokens\nColour each token by a metric; hover for its numbers, click (or Tab + Enter) for its alternatives.")
            with gr.Row():
                self.metric = gr.Dropdown(list(METRICS), value="probability", label="Colour by")
                self.thresholds = gr.Textbox(DEFAULT_THRESHOLDS_TEXT, label="Rank bucket thresholds (GLTR)")
                self.k = gr.Slider(1, MAX_K, value=10, step=1, label="Alternatives shown (k)")
            self.legend = gr.HTML(legend_html("probability"), css_template=CSS, js_on_load=None)
            self.heatmap = gr.HTML("", css_template=CSS, js_on_load=HEATMAP_JS, elem_id="heatmap")
            self.summary = gr.Markdown()
            self._detail_and_curves()
            gr.Markdown("### Every token\nOne row per token; probability and logprob of the actual token, its rank, the entropy (nats) and surprisal (bits).")
            self.table = gr.Dataframe(label="Per-token numbers", interactive=False, max_height=400)
            with gr.Row():
                self.fmt = gr.Dropdown(DOWNLOADS, value="vllm", label="Download format")
                self.dl_btn = gr.Button("Prepare download")
                self.dl_file = gr.File(label="Download", interactive=False)
        self._wire()

    def _detail_and_curves(self) -> None:
        with gr.Row():
            with gr.Column(scale=1):
                gr.Markdown("### Selected token\nThe top-k alternatives the model weighed here; *(others)* is the probability left to the rest of the vocabulary.")
                self.detail_md = gr.Markdown()
                self.detail_df = gr.Dataframe(label="Alternatives", interactive=False)
                self.selected = gr.Number(value=0, precision=0, label="Position", minimum=0)
            with gr.Column(scale=1):
                gr.Markdown("### Curves\nRank near 1 and low entropy: the model saw it coming. Spikes: surprises.")
                self.plot = gr.Plot(label="Rank, entropy, surprisal over positions", show_label=False)
                self.hist = gr.Plot(label="Rank buckets", show_label=False)

    def render(self) -> None:
        """Place the views on the page here."""
        self.block.render()

    @property
    def look(self) -> list:
        """The inputs every action reads: colour by, thresholds, k."""
        return [self.metric, self.thresholds, self.k]

    @property
    def outputs(self) -> list:
        """Every component an action may fill."""
        return [self.result, self.heatmap, self.legend, self.summary, self.plot, self.hist, self.table,
                self.detail_md, self.detail_df, self.selected]

    def _wire(self) -> None:
        detail_out = [self.detail_md, self.detail_df, self.selected]

        def on_click(state, k, evt: gr.EventData):
            return self.detail(state, evt._data.get("pos", 0), k)

        self.heatmap.click(on_click, [self.result, self.k], detail_out, api_name=False)
        gr.on([self.selected.submit, self.k.release], self.detail, [self.result, self.selected, self.k], detail_out,
              api_name="token_detail")
        gr.on([self.metric.change, self.thresholds.submit], self.restyle,
              [self.result, self.metric, self.thresholds, self.selected], [self.heatmap, self.legend, self.hist],
              api_name="restyle")
        self.dl_btn.click(self.download, [self.result, self.fmt], [self.dl_file], api_name="download")

    # ---- handlers ------------------------------------------------------------------------
    def show(self, r: TokenScores, metric: str, thresholds_text: str, k: int) -> dict:
        """Every view of a finished result, its first scored token selected."""
        t = parse_thresholds(thresholds_text)
        pos = next((i for i in range(r.n) if r.scored[i]), 0)
        return {self.result: [r], self.heatmap: heatmap_html(r, metric, t), self.legend: legend_html(metric, t),
                self.summary: summary_markdown(r), self.plot: curves(r), self.hist: rank_histogram(r, t),
                self.table: token_table(r), **self._detail(r, pos, k)}

    def partial(self, r: TokenScores, metric: str, t: tuple[int, ...]) -> dict:
        """The heatmap alone, for a result still streaming in."""
        return {self.heatmap: heatmap_html(r, metric, t)}

    def _detail(self, r: TokenScores, pos: int, k: int) -> dict:
        return {self.detail_md: detail_markdown(r, pos), self.detail_df: detail_table(r, pos, int(k)), self.selected: pos}

    def detail(self, state: list, pos, k) -> dict:
        """Detail of the token at `pos` of the current result."""
        if not state:
            raise error("Score a text or generate first, then click a token.")
        r = state[0]
        try:
            pos = int(pos)
        except (TypeError, ValueError):
            raise error("Pick a token by clicking it in the heatmap.") from None
        if not 0 <= pos < r.n:
            raise error(f"Position {pos} is outside this text (0..{r.n - 1}).")
        return self._detail(r, pos, k)

    def restyle(self, state: list, metric: str, thresholds_text: str, selected) -> dict:
        """Heatmap, legend and histogram recoloured by `metric` and `thresholds_text`."""
        t = parse_thresholds(thresholds_text)
        if not state:
            return {self.legend: legend_html(metric, t)}
        r = state[0]
        sel = int(selected) if selected is not None else None
        return {self.heatmap: heatmap_html(r, metric, t, sel), self.legend: legend_html(metric, t),
                self.hist: rank_histogram(r, t)}

    def download(self, state: list, fmt: str) -> dict:
        """The current result written in shape `fmt` (the exporter's bytes, as is) as a file."""
        if not state:
            raise error("Nothing to download yet: score a text or generate first.")
        r = state[0]
        if fmt not in DOWNLOADS:
            raise error(f"Unknown download format {fmt!r}: pick one of {', '.join(DOWNLOADS)}.")
        if fmt != "csv" and FORMATS[fmt].needs_generation and r.output_k is None:
            raise error(f"{fmt} needs generated tokens: use Generate or Chat, or pick another format.")
        folder = tempfile.mkdtemp(prefix="logprobs-")
        if fmt == "csv":
            path, data = os.path.join(folder, "tokens.csv"), token_csv(r)
        else:
            path, data = os.path.join(folder, f"logprobs.{fmt}.json"), dumps(export(fmt, state))
        with open(path, "w", encoding="utf-8") as f:
            f.write(data)
        return {self.dl_file: path}
