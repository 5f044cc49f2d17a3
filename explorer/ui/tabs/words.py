"""The Words tab: the current result read word by word, each word's joint probability; click a word for its tokens."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import gradio as gr

from explorer.engine.passes.word_ends import Progress, score_words
from explorer.errors import ExplorerError
from explorer.export.words import to_csv, to_json
from explorer.notebook.views import words_page
from explorer.render.words import (
    CORRECTED_NOTE,
    CSS,
    METRICS,
    word_tokens,
    words_figure,
    words_html,
    words_legend,
    words_summary,
    words_table,
)
from explorer.results.scores import TokenScores
from explorer.results.words import Words, leading, with_ends, words
from explorer.ui.actions import uses_model
from explorer.ui.chips import CLICK_JS, clicked
from explorer.ui.downloads import view_button, view_file, write_text
from explorer.ui.errors import error, picked
from explorer.ui.links import MAX_POSITION, Base, Rerun, TabLink, ViewState, choice, count, whole
from explorer.ui.tabs import Shared
from explorer.ui.tabs.score import UI_PREFILL

PASS = "Corrected surprisal: a second pass over the text"  # the progress bar's words


class WordsTab:
    """Colour-by menu + button; word chips, a per-word curve and the clicked word's tokens."""

    def __init__(self, shared: Shared):
        self.inspector = shared.inspector
        self.models = shared.models
        with gr.Tab("Words", id="words") as self.tab:
            gr.Markdown(
                "The current result word by word: subword tokens merged into words (spaces join the word after "
                "them, punctuation apart, each CJK character a word), each word's **joint** logprob (the sum of "
                "its tokens') and surprisal. Click a word for its tokens."
            )
            with gr.Row():
                self.metric = gr.Dropdown(list(METRICS), value="probability", label="Colour words by")
                self.button = gr.Button("Show words", variant="primary")
            self.legend = gr.HTML(words_legend("probability"), css_template=CSS)
            self.heatmap = gr.HTML("", css_template=CSS, js_on_load=CLICK_JS, elem_id="words-heatmap")
            self.summary = gr.Markdown()
            self.plot = gr.Plot(show_label=False)
            self.detail = gr.Markdown()
            self.table = gr.Dataframe(label="Tokens of the word", interactive=False)
            self.word = gr.Number(value=0, precision=0, minimum=0, label="Word")
            self.note = gr.Markdown(CORRECTED_NOTE)
            self.words_table = gr.Dataframe(label="Words: summed and corrected surprisal", interactive=False)
            with gr.Row():
                self.dl_json = gr.DownloadButton("Download words JSON", value=None, interactive=False, size="sm")
                self.dl_csv = gr.DownloadButton("Download words CSV", value=None, interactive=False, size="sm")
                self.dl_html = view_button("words-dl-html")
            self.state = gr.State(None)  # (result, words, leading special tokens) of the table, for the files
        outputs = [self.legend, self.heatmap, self.summary, self.plot, self.detail, self.table, self.word]
        outputs += [self.note, self.words_table, self.state]
        self.button.click(
            self.show,
            [self.inspector.result, self.metric],
            outputs,
            api_name="words",
            show_progress_on=[self.note, self.words_table],
        ).then(
            self.files, [self.state, self.metric], [self.dl_json, self.dl_csv, self.dl_html], api_visibility="private"
        )
        # .input, not .change: a link sets the metric and draws the chips with its word selected; a .change
        # here would redraw them again from the word box as it was before the link's rerun (a race).
        self.metric.input(
            self.restyle,
            [self.inspector.result, self.metric, self.word],
            [self.legend, self.heatmap],
            api_visibility="private",
        )
        self.heatmap.click(
            self.on_click, [self.inspector.result], [self.detail, self.table, self.word], api_visibility="private"
        )
        self.word.submit(
            self.select,
            [self.inspector.result, self.word],
            [self.detail, self.table, self.word],
            api_name="word_tokens",
        )

    @uses_model
    def show(self, state: list, metric: str, progress=gr.Progress()) -> dict:
        """Word chips, curve and summary of the current result; the first word's tokens; the words table with
        the corrected surprisal (one more pass of the model over the result's tokens, its progress shown) and its
        files."""
        if not state:
            raise error("Score a text or generate first; the words are those of that result.")
        r = state[0]
        w, lead, note = self._corrected(r, lambda done, total: progress((done, total), desc=PASS, unit="positions"))
        md, table = word_tokens(r, w, 0) if w.n else ("", None)
        return {
            self.note: note,
            self.words_table: words_table(r, w, lead),
            self.state: (r, w, lead),
            self.legend: words_legend(metric),
            self.heatmap: words_html(w, metric, 0),
            self.summary: words_summary(w, r),
            self.plot: words_figure(w),
            self.detail: md,
            self.table: table,
            self.word: 0,
        }

    def files(self, state: tuple | None, metric: str = "probability") -> dict:
        """The words table's JSON and CSV files and the view as one HTML file (after show)."""
        if state is None:
            return {
                self.dl_json: gr.DownloadButton(interactive=False),
                self.dl_csv: gr.DownloadButton(interactive=False),
                self.dl_html: view_file("", "", None),
            }
        r, w, lead = state
        return {
            self.dl_json: gr.DownloadButton(value=_write(r, w, lead, "json"), interactive=True),
            self.dl_csv: gr.DownloadButton(value=_write(r, w, lead, "csv"), interactive=True),
            self.dl_html: view_file(r.model, "words", words_page(r, w, lead, metric)),
        }

    def _corrected(self, r: TokenScores, progress: Progress | None = None) -> tuple[Words, int, str]:
        """(words with corrected logprobs where the engine gives them, leading special tokens, the note)."""
        w = words(r)
        try:
            with self.models.use(r.model) as engine:
                ids = r.token_ids.tolist()
                _, ends = score_words(
                    engine, ids, k=1, context_start=r.context_start, prefill=UI_PREFILL, progress=progress
                )
        except ExplorerError as e:
            return w, r.context_start, f"{CORRECTED_NOTE}\n\n**No corrected surprisal**: {e}"
        note = CORRECTED_NOTE + (" (numbers of the model's raw distribution)" if r.mode != "raw" else "")
        return with_ends(w, ends), leading(ends.special), note

    def restyle(self, state: list, metric: str, selected) -> dict:
        """Legend and chips recoloured by `metric` (the legend alone before any result)."""
        if not state:
            return {self.legend: words_legend(metric)}
        sel = int(selected) if selected is not None else None
        return {self.legend: words_legend(metric), self.heatmap: words_html(words(state[0]), metric, sel)}

    def on_click(self, state: list, evt: gr.EventData) -> dict:
        return self.select(state, clicked(evt))

    def select(self, state: list, j) -> dict:
        """The tokens of word `j` of the current result."""
        if not state:
            raise error("Score a text or generate first, then click a word.")
        r = state[0]
        w = words(r)
        j = picked(j, w.n, "Pick a word by clicking it.", "Word {i} is outside this text ({first}..{last}).")
        md, table = word_tokens(r, w, j)
        return {self.detail: md, self.table: table, self.word: j}


def _write(r: TokenScores, w: Words, lead: int, fmt: str) -> str:
    """The words table's file (export/words.py) in a fresh folder; its path."""
    return write_text(r.model, f"words.{fmt}", to_json(r, w, lead) if fmt == "json" else to_csv(r, w, lead))


@dataclass(frozen=True)
class WordsLink(TabLink):
    """A Words link: the colouring and the selected word (over the base's result)."""

    tab = "words"
    word_metric: str = "probability"
    word: int = 0

    @classmethod
    def read(cls, d: dict) -> WordsLink:
        metric = choice(d, "word_metric", tuple(METRICS), "probability")
        return cls(metric, whole(d, "word", 0, MAX_POSITION, 0))

    @classmethod
    def inputs(cls, tab: WordsTab) -> list:
        return [tab.metric, tab.word]

    @classmethod
    def to_link(cls, tab: WordsTab, values: Mapping[Any, Any], base: Base, model: str) -> tuple[Base, WordsLink]:
        return base, cls(values.get(tab.metric), count(values.get(tab.word)))  # type: ignore[arg-type]

    def apply(self, tab: WordsTab, v: ViewState) -> dict:
        return {tab.metric: self.word_metric}

    def rerun(self, tab: WordsTab, v: ViewState, run: Rerun) -> Iterator[dict]:
        j = min(self.word, max(words(run.result[0]).n - 1, 0))
        out = tab.show(run.result, self.word_metric, progress=lambda *a, **kw: None)
        yield {**out, **tab.select(run.result, j), **tab.restyle(run.result, self.word_metric, j)}

    @classmethod
    def outputs(cls, tab: WordsTab) -> list:
        return [tab.metric, tab.legend, tab.heatmap, tab.summary, tab.plot, tab.detail, tab.table, tab.word,
                tab.note, tab.words_table, tab.state]  # fmt: skip
