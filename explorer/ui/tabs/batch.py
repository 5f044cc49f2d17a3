"""The Batch tab: a CSV or JSONL file of texts scored one after another, a sortable table of their figures, Stop,
each row opening its text in the Score tab, and the table as CSV and JSONL; the same file as a stimulus list gives
the word table of every text (and its region table), as `logprob-explorer words --file` writes it.

The table fills in as the texts are scored (redrawn at most every REDRAW_S); the batch so far is in the tab's state
after every text, so Stop (or the server's time cap) keeps every row done and offers it for download.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import gradio as gr

from explorer.engine.analyses.batch import STOP_CODES, fill_word_table, score_batch, settings
from explorer.engine.passes import bounds
from explorer.errors import ExplorerError
from explorer.notebook.views import batch_page
from explorer.render.batch import batch_markdown, batch_table, row_of
from explorer.results.batch import MAX_TEXTS, Batch, read_batch
from explorer.results.stats import MIN_K_PERCENT
from explorer.results.stimuli import Stimulus, read_stimuli
from explorer.results.word_table import WordTable
from explorer.ui.actions import uses_model
from explorer.ui.downloads import cleared, read_upload, view_button, view_file, write_text
from explorer.ui.errors import error, user_errors
from explorer.ui.inspector import progress_html
from explorer.ui.stop import running, stop_button, stops
from explorer.ui.tabs import Shared
from explorer.ui.tabs.score import start_menu

MAX_BYTES = 2_000_000  # an uploaded file
EMPTY = batch_table(Batch("", [], 0))  # the table's columns with no rows (not Gradio's blank 1 2 3 grid)
REDRAW_S = 0.5  # the table is redrawn at most this often while the texts are scored
INTRO = f"""**Many texts at once.** Upload a CSV with a `text` column (an `id` column is kept; commas, semicolons or
tabs), a .txt file with one text a line, or JSONL: a JSON string, `{{"text": "..."}}`, or a quiz line
`{{"question": ..., "choices": [...], "answer": 0}}` whose question is scored and whose choices are an answer set.
Each text is scored exactly as the Score tab scores it alone: perplexity, mean and total logprob, tokens and the
text statistics (scores, not verdicts). Sort or filter by a column from the ⋮ menu beside its name; click a row to
open that text in the Score tab. Up to {MAX_TEXTS:,} texts a file. Stop, or this server's time cap for one
action, keeps the rows done and fills in *Start at text*: press Score to go on from there.

**Per word** (a stimulus list): *Make the word table* scores each text alone as the Words tab does and gives one row
per word (summed and corrected surprisal, bits and nats) with the file's other columns (`item`, `condition`, ...)
on every row, as `logprob-explorer words --file` writes it. Mark regions in a text with brackets,
`The horse [raced past the barn] [fell].`, or name them, `[verb: fell]`: each region's sums go in a table of their
own."""
WORDS_NOTE = "Word table"  # the progress bar's words


class BatchTab:
    """File, document start, Score all and Stop; the summary, the table and its downloads."""

    def __init__(self, shared: Shared):
        self.models = shared.models
        with gr.Tab("Batch", id="batch") as self.tab:
            gr.Markdown(INTRO)
            self.file = gr.File(
                label="Texts (CSV, JSONL or .txt)",
                file_types=[".csv", ".tsv", ".jsonl", ".json", ".txt"],
                elem_id="batch-file",
            )
            with gr.Row():
                self.from_start = gr.Checkbox(
                    False,
                    label="Score each text from the start of a document (the end-of-text token first; the word table always is)",
                    scale=3,
                    min_width=240,
                )
                self.first = gr.Number(
                    1, precision=0, minimum=1, label="Start at text", scale=1, min_width=140, elem_id="batch-first",
                    info="After a stop, the next text is filled in here: press Score to go on.",
                )  # fmt: skip
            with gr.Row():
                self.button = gr.Button("Score every text", variant="primary", scale=3)
                self.stop = stop_button(scale=1)
            self.summary = gr.Markdown(elem_id="batch-summary")
            self.table = gr.Dataframe(
                EMPTY, label="Texts", interactive=False, max_height=500, wrap=True, elem_id="batch-table"
            )
            with gr.Row():
                self.dl_csv = gr.DownloadButton("Download the table (CSV)", value=None, interactive=False, size="sm")
                self.dl_jsonl = gr.DownloadButton(
                    "Download the table (JSONL)", value=None, interactive=False, size="sm"
                )
                self.dl_html = view_button("batch-dl-html")
            with gr.Row():
                self.words_button = gr.Button("Make the word table of every text", size="sm", scale=2)
                self.dl_words = gr.DownloadButton(
                    "Download the word table (CSV)", value=None, interactive=False, size="sm", elem_id="batch-dl-words"
                )
                self.dl_regions = gr.DownloadButton(
                    "Download the region table (CSV)", value=None, interactive=False, size="sm", visible=False
                )
            self.words_note = gr.Markdown(elem_id="batch-words-note")
            self.state = gr.State(None)
            self.words_state = gr.State(None)  # (table so far, texts done, texts in all)
        outs = self.outputs
        emptied = self.button.click(self.clear, None, outs, api_visibility="private", queue=False)
        event = running(
            self.stop, emptied.then, self.run, [shared.model, self.file, self.from_start, self.first], outs,
            api_name="batch", show_progress_on=[self.summary],
        )  # fmt: skip
        words = self.words_outputs
        emptied = self.words_button.click(self.words_cleared, None, words, api_visibility="private", queue=False)
        made = running(
            self.stop, emptied.then, self.word_table, [shared.model, self.file, self.from_start], words,
            api_name="batch_words", show_progress_on=[self.words_note],
        )  # fmt: skip
        self.file.change(self.words_cleared, None, words, api_visibility="private", queue=False)
        stops(self.stop, [event, made])
        self.stop.click(self.stopped, [self.state], outs, api_visibility="private", queue=False)
        self.stop.click(self.words_stopped, [self.words_state], words, api_visibility="private", queue=False)

    @property
    def outputs(self) -> list:
        return [self.summary, self.table, self.dl_csv, self.dl_jsonl, self.dl_html, self.state, self.first]

    def clear(self) -> dict:
        """Before a run: no old result under a new error (the start box keeps its value)."""
        return {**cleared(self.outputs[:-1]), self.table: EMPTY}

    @uses_model
    def run(self, name: str, path, from_start: bool, first=1, progress=gr.Progress()) -> Iterator[dict]:
        """Every text of the file from text `first` on, in turn: the table as it fills (and the state after each
        text), then all; a stop keeps the rows done and fills in the next text to start at."""
        items = _items(path)
        at = _first(first, len(items))
        with user_errors(), self.models.use(name) as engine:
            start = start_menu(engine)["value"] if from_start else None  # the Score tab's default start
            start = None if start == "none" else start
            b = Batch(engine.name, [], len(items) - at, {**settings(start, MIN_K_PERCENT), "first_row": at + 1})
            last = time.monotonic()
            try:
                for row in score_batch(engine, items, start, first=at):
                    b.rows.append(row)
                    progress((len(b.rows), b.total), desc="Scoring", unit="texts")
                    if time.monotonic() - last >= REDRAW_S:
                        last = time.monotonic()
                        yield self._partial(b)
                    else:
                        yield {self.state: b}
            except ExplorerError as e:
                if e.code not in STOP_CODES:
                    raise
                b.stopped = _why_stopped(e, b)
        yield self.show(b)

    def _partial(self, b: Batch) -> dict:
        note = progress_html(len(b.rows), b.total, "Scoring", "texts")
        return {self.summary: note, self.table: batch_table(b), self.state: b}

    def show(self, b: Batch) -> dict:
        """The summary, the table and both files of `b`; the text to start at next (1 once the file is done)."""
        rest = len(b.rows) < b.total
        return {
            self.summary: batch_markdown(b),
            self.table: batch_table(b),
            self.dl_csv: gr.DownloadButton(value=_write(b, "csv"), interactive=True),
            self.dl_jsonl: gr.DownloadButton(value=_write(b, "jsonl"), interactive=True),
            self.dl_html: view_file(b.model, "batch", batch_page(b)),
            self.state: b,
            self.first: _next(b) if rest else 1,
        }

    @property
    def words_outputs(self) -> list:
        return [self.words_note, self.dl_words, self.dl_regions, self.words_state]

    def words_cleared(self) -> dict:
        """Before a word table (or after a new file): no file of an older one."""
        return {**cleared(self.words_outputs), self.dl_regions: gr.DownloadButton(value=None, visible=False)}

    @uses_model
    def word_table(self, name: str, path, from_start: bool, progress=gr.Progress()) -> Iterator[dict]:
        """Every text of the file scored alone for its words (engine.batch.fill_word_table, as `words --file`): the
        state after each text, then the word table's CSV (and the region table's when the texts mark regions); a
        stop keeps the texts done. Every text is scored from the model's document start, as `words --file` and
        `lm.word_table` do by default, whatever `from_start` (the score table's choice) says."""
        items = _stimuli(path)
        with user_errors(), self.models.use(name) as engine:
            start = "document"
            table, done, stopped, last = WordTable(engine.name), 0, "", time.monotonic()
            try:
                for done in fill_word_table(engine, items, start, table):
                    progress((done, len(items)), desc=WORDS_NOTE, unit="texts")
                    out: dict = {self.words_state: (table, done, len(items))}
                    if time.monotonic() - last >= REDRAW_S:
                        last = time.monotonic()
                        out[self.words_note] = progress_html(done, len(items), WORDS_NOTE, "texts")
                    yield out
            except ExplorerError as e:
                if e.code not in STOP_CODES:
                    raise
                stopped = e.message
        yield self.word_files(table, done, len(items), stopped)

    def word_files(self, table: WordTable, done: int, total: int, stopped: str = "") -> dict:
        """The word table's CSV (and the region table's, when there are regions) and a note of what they hold."""
        words = write_text(table.model, "words.csv", table.to_csv())
        regions = write_text(table.model, "regions.csv", table.to_csv(regions=True)) if table.regions else None
        note = (
            f"**Word table**: {len(table.words):,} words of {done:,} texts, each text scored alone "
            "(as `logprob-explorer words --file`)" + (f"; {len(table.regions):,} regions" if table.regions else "")
        ) + "."
        if done < total:
            note += f"\n\n**Stopped after {done:,} of {total:,} texts**: {stopped} The table holds their words."
        return {
            self.words_note: note,
            self.dl_words: gr.DownloadButton(value=words, interactive=True),
            self.dl_regions: gr.DownloadButton(value=regions, interactive=True, visible=regions is not None),
            self.words_state: (table, done, total),
        }

    def words_stopped(self, state: tuple | None) -> dict:
        """After Stop: a word table part-way gets the files of the texts done (nothing when none was being made)."""
        if state is None or state[1] >= state[2]:
            return {}
        table, done, total = state
        return self.word_files(table, done, total, "Stop was pressed.")

    def stopped(self, b: Batch | None) -> dict:
        """After Stop: the rows done so far, their files, and that it stopped (nothing when nothing ran)."""
        if b is None:
            return {}
        if len(b.rows) < b.total and not b.stopped:
            b.stopped = f"Stop was pressed. Press Score to go on from text {_next(b)}."
        return self.show(b)

    def pick(self, b: Batch | None, evt: gr.SelectData) -> tuple[str, bool, Any, Any, str]:
        """The clicked row's text and document start for the Score tab (as this batch scored it), that tab shown."""
        values = evt.row_value if isinstance(evt.row_value, list) else []
        row = row_of(b, values[0]) if b is not None and values else None
        if row is None:
            raise error("Score a file first, then click one of its rows.")
        if row.error:
            raise error(f"That text was not scored ({row.error}): fix it in the file, or pick another row.")
        start = b.settings.get("context_start", "none")  # type: ignore[union-attr]
        menu = gr.Dropdown() if start == "none" else gr.Dropdown(value=start)
        return row.text, start != "none", menu, gr.Tabs(selected="score"), "score"


def _next(b: Batch) -> int:
    """The text (1-based) a run goes on from after `b`."""
    return int(b.settings.get("first_row", 1)) + len(b.rows)


def _why_stopped(e: ExplorerError, b: Batch) -> str:
    """A stop's reason; the time cap's says how to go on (the next run starts where this one stopped)."""
    if e.code != "timeout":
        return e.message
    bound = bounds.current_bound()
    cap = bound.limits.max_seconds if bound is not None and bound.limits is not None else 0
    return (
        f"This server allows {cap:g} s for one action (EXPLORER_MAX_SECONDS). Press Score to go on from text "
        f"{_next(b)} (filled in under *Start at text*), or split the file."
    )


def _first(first, n: int) -> int:
    """The 0-based first text of a run from the 1-based `first` box; gr.Error when past the file's end."""
    try:
        at = int(first or 1) - 1
    except (TypeError, ValueError):
        raise error("Start at text: give a whole number, 1 for the first text.") from None
    if not 0 <= at < n:
        raise error(f"Start at text: the file has {n:,} texts; give 1 to {n:,}.")
    return at


def _items(path) -> list:
    """The uploaded file's texts, checked; gr.Error saying what to change."""
    missing = "Upload a file first: a CSV with a `text` column, a .txt or JSONL file with one text a line."
    raw, name = read_upload(path, missing, "The file", MAX_BYTES)
    with user_errors():
        return read_batch(raw, name)


def _stimuli(path) -> list[Stimulus]:
    """The uploaded file as a stimulus list (explorer/results/stimuli.py), checked; gr.Error saying what to change."""
    missing = "Upload a file first: a CSV with a `text` column (and item, condition, ... columns), JSONL or .txt."
    raw, name = read_upload(path, missing, "The file", MAX_BYTES)
    with user_errors():
        return read_stimuli(raw, name)


def _write(b: Batch, fmt: str) -> str:
    return write_text(b.model, f"batch.{fmt}", b.to_csv() if fmt == "csv" else b.to_jsonl())
