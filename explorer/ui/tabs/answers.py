"""The Answers tab: which answer the model prefers after a prompt (each answer a set of variants), and quizzes."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import gradio as gr

from explorer.engine.analyses.answers import MAX_ANSWERS, MAX_VARIANTS, check_answers, run_quiz, score_answers
from explorer.errors import ExplorerError
from explorer.notebook.views import answers_page
from explorer.render.answers import (
    answers_figure,
    answers_markdown,
    quiz_markdown,
    quiz_table,
    reliability_figure,
    variants_table,
)
from explorer.results.answers import Quiz, parse_answers, quiz_text, read_quiz
from explorer.ui.actions import uses_model
from explorer.ui.downloads import cleared, read_upload, view_button, view_file, write_text
from explorer.ui.errors import error, user_errors
from explorer.ui.links import MAX_TOKEN_CHARS, Base, Rerun, TabLink, ViewState, damaged, text
from explorer.ui.tabs import Shared

INTRO = f"""Which answer does the model prefer? Each answer's probability is the sum over its **variants** of the
probability of the whole continuation (every token, not the first one only), so ` Paris`, ` paris` and
` the city of Paris` pool their mass. One answer a line, variants separated by `|`; a leading space is part of the
token (` Paris` after "is"), trailing spaces are dropped. Up to {MAX_ANSWERS} answers, {MAX_VARIANTS} variants
in all. **Quiz**: upload a JSONL file, one question a line: `{{"question": "...", "choices": [" yes| Yes", " no"],
"answer": 0}}` (`answer`: the right choice's index or text); each question is the prompt its choices continue.
*Copy link* keeps the prompt and the answers; a quiz is a file, so it is not in the link."""
QUIZ_MAX_BYTES = 2_000_000


class AnswersTab:
    """Prompt + answers + Score button; the bars, the variants' table; a quiz's accuracy, table and diagram."""

    def __init__(self, shared: Shared):
        self.models, self.model = shared.models, shared.model
        with gr.Tab("Answers", id="answers") as self.tab:
            gr.Markdown(INTRO)
            self.prompt = gr.Textbox(label="Prompt", lines=2, value="The capital of France is")
            self.answers = gr.Textbox(
                label="Answers (one a line, variants separated by |)", lines=4, value=" Paris| paris\n London\n Rome"
            )
            self.button = gr.Button("Score the answers", variant="primary")
            self.summary = gr.Markdown()
            self.plot = gr.Plot(label="Answers", elem_id="answers-plot")
            self.table = gr.Dataframe(label="Variants: tokens and logprobs", interactive=False, max_height=400)
            self.dl_html = view_button("answers-dl-html")
            with gr.Accordion("Quiz (JSONL)", open=True):
                self.quiz_file = gr.File(
                    label="Quiz file (JSONL)", file_types=[".jsonl", ".json", ".txt"], elem_id="answers-quiz-file"
                )
                self.quiz_button = gr.Button("Run the quiz", variant="primary")
                self.quiz_summary = gr.Markdown(elem_id="answers-quiz-summary")
                self.diagram = gr.Plot(label="Reliability diagram", elem_id="answers-reliability")
                self.quiz_df = gr.Dataframe(label="Questions", interactive=False, max_height=400)
                self.download = gr.DownloadButton("Download the quiz table (CSV)", value=None, interactive=False)
            self.state = gr.State(None)
        # a run first clears its outputs (a failed run then leaves no old result under its error); the inputs stay
        outs = [self.summary, self.plot, self.table, self.dl_html]
        self.button.click(lambda: cleared(outs), None, outs, api_visibility="private", queue=False).then(
            self.run, [self.model, self.prompt, self.answers], outs, api_name="answers", show_progress_on=[self.summary]
        )
        quiz_outs = [self.quiz_summary, self.diagram, self.quiz_df, self.download, self.state]
        self.quiz_button.click(lambda: cleared(quiz_outs), None, quiz_outs, api_visibility="private", queue=False).then(
            self.quiz,
            [self.model, self.quiz_file],
            quiz_outs,
            api_name="answers_quiz",
            show_progress_on=[self.quiz_summary],
        )

    @uses_model
    def run(self, name: str, prompt: str, text: str) -> dict:
        """One answer set scored: the summary, the bars and the variants' table."""
        sets = parse_answers(str(text or ""))
        if not sets:
            raise error("Type at least one answer: one a line, variants separated by `|`, e.g. ` Paris| paris`.")
        with user_errors(), self.models.use(name) as engine:
            res = score_answers(engine, str(prompt or ""), sets)
        return {
            self.summary: answers_markdown(res),
            self.plot: answers_figure(res),
            self.table: variants_table(res),
            self.dl_html: view_file(res.model, "answers", answers_page(res)),
        }

    @uses_model
    def quiz(self, name: str, path, progress=gr.Progress()) -> dict:
        """The quiz file's questions scored: accuracy and ECE, the diagram, the table and its CSV."""
        missing = "Upload a quiz file first: JSONL, one question a line (question, choices, answer)."
        raw, _ = read_upload(path, missing, "The quiz file", QUIZ_MAX_BYTES)
        with user_errors():
            items = read_quiz(quiz_text(raw, "The quiz file"))
            with self.models.use(name) as engine:
                q = run_quiz(engine, items, progress=lambda d, n: progress((d, n), desc="Quiz", unit="questions"))
        return {
            self.quiz_summary: quiz_markdown(q),
            self.diagram: reliability_figure(q),
            self.quiz_df: quiz_table(q),
            self.download: gr.DownloadButton(value=_write(q), interactive=True),
            self.state: q,
        }


def _write(q: Quiz) -> str:
    return write_text(q.model, "quiz.csv", q.to_csv())


@dataclass(frozen=True)
class AnswersLink(TabLink):
    """An Answers link: the prompt and the answers as in their boxes (rescored on opening); it works on no result
    (the base's `model` is the model they run on). A quiz is an uploaded file: not in the link."""

    tab = "answers"
    on_result = False
    MAX_CHARS = MAX_VARIANTS * MAX_TOKEN_CHARS  # the answers' text: every variant a set may hold, each a long one
    answers_prompt: str = ""
    answers: str = ""

    @classmethod
    def read(cls, d: dict) -> AnswersLink:
        own = cls(text(d, "answers_prompt"), text(d, "answers", cls.MAX_CHARS))
        sets = parse_answers(own.answers)
        if len(sets) > MAX_ANSWERS or sum(map(len, sets)) > MAX_VARIANTS:
            raise damaged(f"`answers` holds more than {MAX_ANSWERS} answers or {MAX_VARIANTS} variants")
        return own

    @classmethod
    def inputs(cls, tab: AnswersTab) -> list:
        return [tab.prompt, tab.answers]

    @classmethod
    def to_link(cls, tab: AnswersTab, values: Mapping[Any, Any], base: Base, model: str) -> tuple[Base, AnswersLink]:
        prompt, answers = str(values.get(tab.prompt) or ""), str(values.get(tab.answers) or "")
        sets = parse_answers(answers)
        if not sets:
            raise ExplorerError("Type the answers first: then their link can be shared.")
        check_answers(sets)  # a set the tab would refuse makes no link (its message says what to drop)
        return Base(model=model), cls(prompt, answers)

    def apply(self, tab: AnswersTab, v: ViewState) -> dict:
        return {tab.prompt: self.answers_prompt, tab.answers: self.answers}

    def rerun(self, tab: AnswersTab, v: ViewState, run: Rerun) -> Iterator[dict]:
        yield tab.run(run.name, self.answers_prompt, self.answers)

    @classmethod
    def outputs(cls, tab: AnswersTab) -> list:
        return [tab.prompt, tab.answers, tab.summary, tab.plot, tab.table, tab.dl_html]
