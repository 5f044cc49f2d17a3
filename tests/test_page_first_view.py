"""The page before any run, as a newcomer first sees it: tables name their columns (never Gradio's "1 2 3"), the
simple start's parts are there, and the help a teacher needs is on the page."""

from __future__ import annotations

import pytest

from explorer.render.compare import TOPK_COLUMNS, topk_table
from explorer.render.tables import ALT_COLUMNS, alternatives_table
from explorer.render.whatif import WHATIF_COLUMNS
from tests.helpers.page import make_page


@pytest.fixture(scope="module")
def ui(gpt2):
    return make_page([gpt2])


def headers(table) -> list[str]:
    return list(table.value["headers"])


def test_empty_tables_name_their_columns(ui):
    t = ui.tabs
    assert headers(t["whatif"].table) == WHATIF_COLUMNS
    assert headers(t["compare"].table_a) == headers(t["compare"].table_b) == TOPK_COLUMNS
    assert headers(t["branch"].node_df) == headers(t["lens"].cell_df) == ALT_COLUMNS


def test_the_named_columns_are_the_tables_own(gpt2):
    from explorer.engine import score_text

    r = score_text(gpt2, "the quick brown fox", k=3)
    assert list(topk_table(r, 2, 3).columns) == TOPK_COLUMNS
    assert list(alternatives_table(r.top(2, 3), r.pieces, int(r.token_ids[2]), "◀").columns) == ALT_COLUMNS


def test_the_simple_start_is_there(ui):
    score = ui.tabs["score"]
    assert score.cont.value == "Continue" and len(score.chips) >= 3 and score.draw.value == "Draw 10 samples"
    assert score.temperature.minimum == 0 and score.temperature.maximum == 2


def test_what_comes_next_is_the_models_distribution_at_the_temperature(ui, gpt2):
    import re

    import numpy as np
    import torch

    from tests.helpers.reference import ref_logprobs

    text = "the quick brown"
    score = ui.tabs["score"]
    html, nt = score.redraw("tiny-gpt2", text, 0.5, None)
    ref = ref_logprobs(gpt2.model, [*gpt2.encode(text), 0])[-1].double()  # the row after the text's last token
    want = torch.softmax(ref / 0.5, -1).numpy()
    np.testing.assert_allclose(nt.probs(0.5)[: len(want)], want, atol=1e-6)
    assert "temperature 0.5" in html and not re.search(r"\de-\d", html)
    again, same = score.redraw("tiny-gpt2", text, 1.5, nt)
    assert same is nt and "temperature 1.5" in again  # the distribution is kept: a new temperature redraws at once
    drawn, _ = score.draw_samples("tiny-gpt2", text, 0.0, nt)
    top = gpt2.vocab[int(ref.argmax())].decode("utf-8", "replace")
    assert drawn.count("<span>") == 10 and "10×" in drawn  # temperature 0: the same token ten times
    assert top.strip() == "" or top.strip() in drawn.replace("·", " ")


def test_what_if_follows_the_picked_token_only_while_it_is_shown(ui):
    """Picking a token on another tab leaves What-if as it is: one skip per output (an empty answer is a Gradio
    error in every browser session)."""
    w = ui.tabs["whatif"]
    out = w.follow(
        "score", [], 3, temperature=1.0, top_k=0, top_p=1.0, min_p=0.0, repetition_penalty=1.0, top_n=15, cache=None
    )
    assert set(out) == set(w.outputs) and all(
        isinstance(v, dict) and v.get("__type__") == "update" for v in out.values()
    )


def test_what_comes_next_of_an_empty_text_says_what_to_do(ui):
    import gradio as gr

    score = ui.tabs["score"]
    assert score.redraw("tiny-gpt2", "   ", 1.0, None) == ("", None)  # a slider moved before any text: nothing drawn
    with pytest.raises(gr.Error, match="The text is empty"):
        score.draw_samples("tiny-gpt2", "", 1.0, None)
    html, nt = score.redraw("tiny-gpt2", "a", 1.0, None)  # one character: the distribution after it
    assert nt is not None and "The next token would be" in html


TECHNICAL = ("vocabulary", "context", " MB", "runs on", "with torch", "GGUF", "in memory")


def test_the_status_line_says_ready_in_plain_words_and_the_details_are_apart(ui, gpt2):
    from explorer.ui.model_picker import details_text, status_lines

    cases = [
        (gpt2, "**tiny-gpt2** is ready.", ["runs on cpu (float32) with torch", "vocabulary", "In memory now"]),
        (None, "**tiny-gpt2** loads when you first use it.", ["loads on the first action", "In memory now"]),
    ]
    for engine, first, details in cases:
        plain = status_lines(ui.picker.models, engine, "tiny-gpt2")
        assert plain == first, plain  # the technical figures are one click away, not first
        assert not [w for w in TECHNICAL if w.lower() in plain.lower()], plain
        folded = details_text(ui.picker.models, engine, "tiny-gpt2")
        assert all(w in folded for w in details), folded


@pytest.mark.parametrize(
    ("name", "short"),
    [
        ("HuggingFaceTB/SmolLM2-135M-Instruct", "SmolLM2-135M-Instruct"),
        ("gpt2", "gpt2"),
        ("/models/m.gguf", "m.gguf"),
        ("C:\\models\\m.gguf", "m.gguf"),
        ("models/folder/", "folder"),
    ],
)
def test_a_models_short_name_is_the_last_part_of_its_id_or_path(name, short):
    from explorer.ui.model_picker import short_name

    assert short_name(name) == short


def test_every_stop_is_hidden_until_its_action_runs(ui):
    import gradio as gr

    stops = [b for b in ui.demo.blocks.values() if isinstance(b, gr.Button) and b.value == "Stop"]
    assert len(stops) >= 5 and [b.visible for b in stops] == [False] * len(stops)  # Score, Generate, Chat, Batch, Why
    shown = {c._id for fn in ui.demo.fns.values() for c in fn.outputs}
    assert all(b._id in shown for b in stops)  # each is shown by some event (the browser tests see it run)
