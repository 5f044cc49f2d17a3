"""Sharing in real Chromium: a link reopens the same view in a fresh browser, a seeded generation link replays its
tokens, a session file and a captured vLLM body open without the model, a garbage link is a message."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from explorer.ui.links import encode
from tests.helpers.browser import SIZES, open_page, pick_tab, require_chromium, score, wait_detail
from tests.helpers.share import view

require_chromium()
pytestmark = pytest.mark.browser

GOLDEN = Path(__file__).parent / "golden"
TEXT = "The quick brown fox jumps over the lazy dog."


@pytest.fixture
def screens(tmp_path) -> Path:
    """Where screenshots go: a temporary folder, or assets/screens/ with EXPLORER_SCREENS=1 (to update them)."""
    if os.environ.get("EXPLORER_SCREENS") == "1":
        return Path(__file__).resolve().parents[1] / "assets" / "screens"
    return tmp_path


def open_link(browser, url, size="wide"):
    """A fresh browser context on `url`, ready when the page is (whichever tab the link opens)."""
    c = browser.new_context(viewport=SIZES[size])
    pg = c.new_page()
    pg.dialogs = []
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
    pg.goto(url)
    pg.get_by_role("button", name="Copy link").wait_for(timeout=60_000)
    return pg


def chips(page) -> list[tuple[str, str]]:
    """Each token chip's position and colour class, as the heatmap draws them."""
    loc = page.locator("#heatmap [data-pos]")
    return [(loc.nth(i).get_attribute("data-pos"), loc.nth(i).get_attribute("class")) for i in range(loc.count())]


def heat(page) -> list[tuple[str, str]]:
    return [(p, " ".join(c for c in cls.split() if c != "sel")) for p, cls in chips(page)]


def wait_result(page) -> None:
    page.locator("#heatmap .lx-data").filter(has_text='"lp"').wait_for(state="attached", timeout=60_000)


def test_a_link_reopens_the_same_view_in_a_fresh_browser(browser, live, gpt2, screens):
    pg = open_page(browser, live.url, accept_downloads=True)
    pg.context.grant_permissions(["clipboard-read", "clipboard-write"])
    score(pg, TEXT)
    pg.locator("#heatmap [data-pos='5']").click()
    wait_detail(pg, 5)
    before = heat(pg)
    pg.get_by_role("button", name="Copy link").click()
    link = pg.get_by_label("Link", exact=True)
    pg.wait_for_function(
        "() => document.querySelector('#share-link textarea, #share-link input').value.includes('?view=')"
    )
    url = link.input_value()
    assert url.startswith(live.url) and pg.evaluate("navigator.clipboard.readText()") == url
    assert pg.get_by_test_id("toast-body").count() == 0  # no error pop-up, on load or on copy
    pg.screenshot(path=str(screens / "share-light-wide.png"))
    pg.context.close()

    fresh = open_link(browser, url)
    wait_result(fresh)
    wait_detail(fresh, 5)
    assert heat(fresh) == before
    assert "sel" in fresh.locator("#heatmap [data-pos='5']").get_attribute("class")
    assert fresh.get_by_label("Text", exact=True).input_value() == TEXT
    assert fresh.get_by_test_id("toast-body").count() == 0
    fresh.context.close()


def test_a_seeded_generation_link_replays_its_tokens(browser, live, gpt2):
    state = view("generate", text="The capital of France is",
                 sampler={"max_tokens": 12, "temperature": 1.0, "top_p": 1.0, "top_k": 0, "seed": 1234,
                          "stop": [], "mode": "raw"}, selected=7)  # fmt: skip
    url = f"{live.url}/?view={encode(state)}"
    texts = []
    for _ in range(2):
        pg = open_link(browser, url)
        wait_result(pg)
        wait_detail(pg, 7)
        texts.append(json.loads(pg.locator("#heatmap .lx-data").text_content())["ids"])
        assert pg.get_by_label("Seed").input_value() == "1234"
        pg.context.close()
    assert texts[0] == texts[1] and len(texts[0]) > len(gpt2.encode(state.source.text))


def session_file(tmp_path, r, model: str, **fields) -> str:
    doc = {"format": "logprob-explorer/session", "version": 1,
           "view": view(model=model, **fields).to_dict(), "results": [{**r.to_dict(), "model": model}]}  # fmt: skip
    path = tmp_path / "s.session.json"
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.mark.parametrize("served", [True, False])
def test_a_session_file_opens_without_the_model(browser, live, gpt2, tmp_path, served):
    """A served model that is not loaded stays unloaded; a model not served here is named as such."""
    from explorer.engine.passes.scoring import score_text
    from explorer.serving.models import ModelSpec

    name = "big-model" if served else "some-other-model"
    path = session_file(tmp_path, score_text(gpt2, TEXT, k=5), name, text=TEXT, selected=3)
    calls: list[str] = []
    pg = open_page(browser, live.url)
    real = live.models._loader
    live.models._loader = lambda spec: calls.append(spec.name) or real(spec)
    if served:
        live.models.specs[name] = ModelSpec(name, "/nowhere/big-model")
    try:
        pg.locator("#open-session input[type=file]").set_input_files(path)
        wait_result(pg)
        wait_detail(pg, 3)
        note = pg.locator("#share-note").inner_text()
        assert "without running a model" in note and name in note
        assert ("this session's model is tiny-gpt2" if served else "not available here") in note
        assert pg.locator("#heatmap [data-pos]").count() == len(gpt2.encode(TEXT))
        assert "sel" in pg.locator("#heatmap [data-pos='3']").get_attribute("class")
        assert live.models.loaded(name) is None if served else True
    finally:
        live.models._loader = real
        live.models.specs.pop("big-model", None)
    assert calls == []
    pg.context.close()


def test_script_in_every_field_of_a_file_stays_text(browser, live, gpt2, tmp_path):
    from explorer.engine.passes.scoring import score_text

    evil = '<img src=x onerror="alert(1)">${alert(2)}'
    r = score_text(gpt2, "<script>alert(1)</script> & <b>bold</b>", k=5)
    r.sampler = {"seed": evil}
    path = session_file(tmp_path, r, evil, text=evil, system=evil)
    pg = open_page(browser, live.url)
    pg.locator("#open-session input[type=file]").set_input_files(path)
    wait_result(pg)
    assert evil in pg.locator("#share-note").inner_text() and pg.get_by_label("Text", exact=True).input_value() == evil
    pg.wait_for_timeout(500)
    assert pg.dialogs == [] and pg.locator("#share-note img, #heatmap img, #heatmap script").count() == 0
    pg.context.close()


def test_a_captured_vllm_body_opens_and_shows_its_tokens(browser, live, tmp_path, screens):
    path = tmp_path / "body.json"
    path.write_text((GOLDEN / "scored.vllm.json").read_text())
    pg = open_page(browser, live.url, size="phone")
    pg.locator("#open-session input[type=file]").set_input_files(str(path))
    wait_result(pg)
    assert "vLLM completions body" in pg.locator("#share-note").inner_text()
    assert "sky" in pg.locator("#heatmap .lx").inner_text()
    pg.screenshot(path=str(screens / "share-vllm-phone.png"), full_page=False)
    pg.locator("#share-note").scroll_into_view_if_needed()
    pg.screenshot(path=str(screens / "share-note-phone.png"), full_page=False)
    pg.locator("#share").scroll_into_view_if_needed()
    pg.screenshot(path=str(screens / "share-row-phone.png"), full_page=False)
    pg.context.close()


def test_a_body_recorded_from_vllm_with_default_options_shows_every_prompt_token(browser, live, tmp_path, screens):
    """vLLM's completions body with `prompt_logprobs` and no `return_token_ids` (so no `prompt_token_ids`): every
    prompt token in the heatmap, the first as [?]; then its stream, saved as the SSE text (.txt), opens too."""
    from tests.helpers.recorded import positions, raw

    name = "completions.prompt-logprobs.json"
    want, n_prompt = positions(name)
    path = tmp_path / "vllm-prompt-logprobs.json"
    path.write_bytes(raw(name))
    pg = open_page(browser, live.url, size="wide")
    pg.locator("#open-session input[type=file]").set_input_files(str(path))
    wait_result(pg)
    note = pg.locator("#share-note").inner_text()
    assert "vLLM completions body" in note and "return_token_ids" in note, note
    chips = pg.locator("#heatmap [data-pos]")
    assert chips.count() == len(want) and n_prompt == 5
    texts = [chips.nth(i).inner_text() for i in range(n_prompt)]
    assert texts[0] == "[?]"
    assert [t.replace("·", " ") for t in texts[1:]] == [w.text for w in want[1:n_prompt]], texts
    pg.locator("#heatmap [data-pos='3']").click()
    wait_detail(pg, 3)
    assert want[3].text.strip() in pg.locator("#token-detail").inner_text()
    pg.locator("#heatmap").scroll_into_view_if_needed()
    pg.screenshot(path=str(screens / "share-vllm-recorded-wide.png"), full_page=False)
    pg.context.close()
    stream = tmp_path / "vllm-stream.txt"
    stream.write_bytes(raw("completions.stream.sse"))
    pg = open_page(browser, live.url, size="wide")
    pg.locator("#open-session input[type=file]").set_input_files(str(stream))
    pg.locator("#share-note").filter(has_text="It is a stream").wait_for(timeout=60_000)
    assert pg.locator("#heatmap [data-pos]").count() == len(positions("completions.stream.sse")[0])
    pg.context.close()


@pytest.mark.parametrize("code", ["garbage", "1.AAAA", "1." + "A" * 9000, "<script>alert(1)</script>"])
def test_a_garbage_link_shows_a_message_and_the_default_page(browser, live, code):
    import urllib.parse

    pg = open_link(browser, f"{live.url}/?view={urllib.parse.quote(code)}&__theme=light")
    pg.locator("#share-note .lx-note").wait_for(timeout=30_000)
    assert "damaged" in pg.locator("#share-note").inner_text()
    assert pg.get_by_label("Text", exact=True).input_value() == ""
    assert (
        pg.get_by_test_id("toast-body").count() == 0
        and pg.dialogs == []
        and pg.locator("script:has-text('alert(1)')").count() == 0
    )
    pg.context.close()


def test_on_a_public_server_a_link_keeps_to_the_caps_and_the_allowlist(browser, gpt2):
    from dataclasses import replace

    from explorer.rules.sampler import PUBLIC_LIMITS
    from tests.helpers.servers import LiveServer

    srv = LiveServer(gpt2, limits=replace(PUBLIC_LIMITS, max_input_tokens=16), public=True)
    try:
        long = encode(view(text="the quick brown fox jumps over the lazy dog " * 10))
        pg = open_link(browser, f"{srv.url}/?view={long}")
        pg.locator("#share-note").filter(has_text="16").wait_for(timeout=30_000)
        assert pg.locator("#heatmap [data-pos]").count() == 0  # refused before any scoring, the cap named
        pg.context.close()
        hub = open_link(browser, f"{srv.url}/?view={encode(view(model='gpt2', text='hi'))}")
        hub.locator("#share-note").filter(has_text="not available here").wait_for(timeout=30_000)
        assert srv.models.loaded("tiny-gpt2") is not None and srv.models.names == ["tiny-gpt2"]
        hub.context.close()
    finally:
        srv.stop()


# ---- the tabs beside the result: the same view in a fresh browser -------------------------------------------------
def copied_url(pg) -> str:
    pg.get_by_role("button", name="Copy link").click()
    pg.wait_for_function(
        "() => document.querySelector('#share-link textarea, #share-link input').value.includes('?view=')"
    )
    return pg.get_by_label("Link", exact=True).input_value()


def changed(pg, read, before, seconds: float = 30) -> bool:
    """Whether `read()` differs from `before` within `seconds` (what the server redraws)."""
    for _ in range(int(seconds * 10)):
        if read() != before:
            return True
        pg.wait_for_timeout(100)
    return read() != before


def chips_of(pg, where: str) -> list[tuple[str | None, str | None, str]]:
    """Each chip's position, title and colour class (the selection mark left out)."""
    loc = pg.locator(f"{where} [data-pos]")
    out = []
    for i in range(loc.count()):
        c = loc.nth(i)
        cls = " ".join(x for x in (c.get_attribute("class") or "").split() if x != "sel")
        out.append((c.get_attribute("data-pos"), c.get_attribute("title"), cls))
    return out


def test_a_compare_link_reopens_the_same_comparison_and_token(browser, live, gpt2, screens):
    pg = open_page(browser, live.url)
    pick_tab(pg, "Compare")
    pg.get_by_label("Text to compare").fill(TEXT)
    pg.get_by_role("button", name="Compare", exact=True).click()
    pg.locator("#compare-heatmap [data-pos='4']").click()
    detail = pg.get_by_text("Position 4:", exact=False).first
    detail.wait_for(timeout=30_000)
    before, text = chips_of(pg, "#compare-heatmap"), detail.inner_text()
    pg.get_by_label("Text to compare").fill("Edited after comparing.")  # the link keeps what was compared
    url = copied_url(pg)
    pg.context.close()

    for size in ("wide", "phone"):
        fresh = open_link(browser, url, size)
        again = fresh.get_by_text("Position 4:", exact=False).first
        again.wait_for(timeout=60_000)
        assert again.inner_text() == text and chips_of(fresh, "#compare-heatmap") == before
        assert "sel" in fresh.locator("#compare-heatmap [data-pos='4']").get_attribute("class")
        assert fresh.get_by_label("Text to compare").input_value() == TEXT
        assert fresh.get_by_test_id("toast-body").count() == 0
        fresh.locator("#compare-heatmap").scroll_into_view_if_needed()
        fresh.screenshot(path=str(screens / f"share-compare-{size}.png"))
        fresh.context.close()


def test_a_whatif_link_reopens_the_same_position_and_sliders(browser, live, gpt2):
    pg = open_page(browser, live.url)
    score(pg, TEXT)
    pg.locator("#heatmap [data-pos='5']").click()
    wait_detail(pg, 5)
    pick_tab(pg, "What-if")
    pg.get_by_role("spinbutton", name="Top-k (0 = off)").fill("7")
    pg.get_by_role("spinbutton", name="Top-k (0 = off)").press("Enter")
    pg.get_by_role("button", name="What if? (at the selected token)").click()
    summary = pg.get_by_text("Position 5, actual token", exact=False).first
    summary.wait_for(timeout=30_000)
    text = summary.inner_text()
    url = copied_url(pg)
    pg.context.close()

    fresh = open_link(browser, url)
    again = fresh.get_by_text("Position 5, actual token", exact=False).first
    again.wait_for(timeout=60_000)
    assert again.inner_text() == text and "entries left 7" in text  # top-k 7 kept
    assert fresh.get_by_role("spinbutton", name="Top-k (0 = off)").input_value() == "7"
    wait_detail(fresh, 5)
    fresh.context.close()


def test_a_lens_link_reopens_the_same_grid_and_cell(browser, live, gpt2, screens):
    pg = open_page(browser, live.url)
    score(pg, TEXT)
    pick_tab(pg, "Logit lens")
    pg.get_by_role("button", name="Run the logit lens").click()
    cell = pg.locator("#lens-grid tr[data-l='1'] td").nth(3)  # layer 1, position 3
    cell.wait_for(timeout=60_000)
    cell.click()
    head = pg.get_by_text(re.compile(r"^Layer 1: after 1 block, position 3"))
    head.wait_for(timeout=30_000)
    by_rank = pg.locator("#lens-grid table").inner_html()
    pg.locator("#lens-metric input[value='logprob']").check()  # recoloured by the person: the cell stays selected
    assert changed(pg, lambda: pg.locator("#lens-grid table").inner_html(), by_rank)
    assert "sel" in (pg.locator("#lens-grid tr[data-l='1'] td").nth(3).get_attribute("class") or "")
    grid, text = pg.locator("#lens-grid table").inner_html(), head.inner_text()
    assert grid != by_rank
    url = copied_url(pg)
    pg.context.close()

    fresh = open_link(browser, url)
    again = fresh.get_by_text(re.compile(r"^Layer 1: after 1 block, position 3"))
    again.wait_for(timeout=60_000)
    assert again.inner_text() == text
    assert "sel" in (fresh.locator("#lens-grid tr[data-l='1'] td").nth(3).get_attribute("class") or "")
    assert fresh.locator("#lens-grid table").inner_html() == grid
    fresh.locator("#lens-grid").scroll_into_view_if_needed()
    fresh.screenshot(path=str(screens / "share-lens-wide.png"))
    fresh.context.close()


def test_a_link_restores_the_document_start_token_and_the_status_line(browser, live, gpt2):
    state = view(model="tiny-gpt2", text=TEXT, from_start=True, start="<|system|>", selected=2)
    pg = open_link(browser, f"{live.url}/?view={encode(state)}")
    wait_result(pg)
    wait_detail(pg, 2)
    menu = pg.get_by_label("Document-start token")
    pg.wait_for_function("() => document.querySelector('#model-status').innerText.includes('is ready')")
    pg.wait_for_timeout(500)  # the model's own menu arrives after the run: it must keep the link's token
    assert menu.input_value() == "<|system|>" and pg.get_by_label(re.compile("Score from the start")).is_checked()
    assert "tiny-gpt2" in pg.locator("#model-status").inner_text()
    pg.context.close()


def notes(pg) -> str:
    """The Look up tab's notes, one line per query."""
    return "\n".join(pg.locator("li").filter(has_text=re.compile("is token|the curves show the")).all_inner_texts())


def test_a_lookup_link_reopens_the_same_queries_and_numbers(browser, live, gpt2):
    import numpy as np

    from explorer.engine.analyses.lookup import lookup

    queries = " fox\n over the"
    pg = open_page(browser, live.url)
    score(pg, TEXT)
    pg.get_by_role("tab", name="Look up").click()
    pg.get_by_label("Tokens to look up").fill(queries)
    pg.get_by_role("button", name="Look up", exact=True).click()
    pg.get_by_text("the curves show the", exact=False).first.wait_for(timeout=30_000)
    text = notes(pg)
    url = copied_url(pg)
    pg.context.close()

    fresh = open_link(browser, url)
    fresh.get_by_text("the curves show the", exact=False).first.wait_for(timeout=60_000)
    assert notes(fresh) == text and fresh.get_by_label("Tokens to look up").input_value() == queries
    found = lookup(gpt2, gpt2.encode(TEXT), queries.split("\n"))  # the engine's own numbers, not the page's
    shown = [f"{x.joint_logprobs[p]:.3f}" for x in found for p in np.flatnonzero(~np.isnan(x.joint_logprobs))]
    assert len(shown) == 2 and all(j in text for j in shown), (text, shown)  # " fox" and " over the" both follow
    assert fresh.get_by_test_id("toast-body").count() == 0
    fresh.context.close()


def test_a_words_link_reopens_the_same_word(browser, live, gpt2):
    pg = open_page(browser, live.url)
    score(pg, TEXT)
    pick_tab(pg, "Words")
    pg.get_by_role("button", name="Show words").click()
    pg.locator("#words-heatmap [data-pos='4']").click()
    detail = pg.get_by_text("Word 4", exact=False).first
    detail.wait_for(timeout=30_000)
    by_probability = chips_of(pg, "#words-heatmap")
    pg.get_by_label("Colour words by").click()  # recoloured by the person: the chips change, word 4 stays selected
    pg.get_by_role("option", name="surprisal").click()
    assert changed(pg, lambda: chips_of(pg, "#words-heatmap"), by_probability)
    assert "sel" in (pg.locator("#words-heatmap [data-pos='4']").get_attribute("class") or "")
    before, text = chips_of(pg, "#words-heatmap"), detail.inner_text()
    url = copied_url(pg)
    pg.context.close()

    fresh = open_link(browser, url)
    again = fresh.get_by_text("Word 4", exact=False).first
    again.wait_for(timeout=60_000)
    assert again.inner_text() == text and chips_of(fresh, "#words-heatmap") == before
    assert "sel" in (fresh.locator("#words-heatmap [data-pos='4']").get_attribute("class") or "")
    assert fresh.get_by_label("Colour words by").input_value() == "surprisal"
    assert fresh.get_by_test_id("toast-body").count() == 0
    fresh.context.close()


ALT = re.compile(r"·\s+rank \d+")


def alternatives(pg) -> list[str]:
    """The Branch tab's alternatives, as their labels read."""
    return pg.locator("label").filter(has_text=ALT).all_inner_texts()


def test_a_branch_link_reopens_the_same_position_and_alternatives(browser, live, gpt2):
    pg = open_page(browser, live.url)
    score(pg, TEXT)
    pg.locator("#heatmap [data-pos='5']").click()
    wait_detail(pg, 5)
    pick_tab(pg, "Branch")
    at = pg.get_by_role("spinbutton", name="Branch at position")
    at.fill("3")  # a position of the Branch tab's own, not the inspector's
    at.press("Enter")
    note = pg.get_by_text("Position 3 of the current result", exact=False).first
    note.wait_for(timeout=30_000)
    text, alts = note.inner_text(), alternatives(pg)
    url = copied_url(pg)
    pg.context.close()

    fresh = open_link(browser, url)
    again = fresh.get_by_text("Position 3 of the current result", exact=False).first
    again.wait_for(timeout=60_000)
    expect(again).to_have_text(text)  # waits out a render in progress
    assert len(alts) > 1
    expect(fresh.locator("label").filter(has_text=ALT)).to_have_text(alts)
    assert fresh.get_by_role("spinbutton", name="Branch at position").input_value() == "3"
    assert fresh.get_by_test_id("toast-body").count() == 0
    fresh.context.close()


def test_an_answers_link_reopens_the_same_prompt_answers_and_bars(browser, live, gpt2):
    from explorer.engine.analyses.answers import score_answers
    from explorer.results.answers import parse_answers

    prompt, answers = "The capital of Italy is", " Rome| rome\n Paris\n Milan"
    pg = open_page(browser, live.url)
    pick_tab(pg, "Answers")
    pg.get_by_label("Prompt", exact=True).filter(visible=True).fill(prompt)
    pg.get_by_label("Answers (one a line, variants separated by |)").fill(answers)
    pg.get_by_role("button", name="Score the answers").click()
    summary = pg.get_by_text("prefers", exact=False).first
    summary.wait_for(timeout=60_000)
    text = summary.inner_text()
    url = copied_url(pg)
    pg.context.close()

    fresh = open_link(browser, url)
    again = fresh.get_by_text("prefers", exact=False).first
    again.wait_for(timeout=60_000)
    expect(again).to_have_text(text)
    assert fresh.get_by_label("Prompt", exact=True).filter(visible=True).input_value() == prompt
    assert fresh.get_by_label("Answers (one a line, variants separated by |)").input_value() == answers
    plot = fresh.locator("#answers-plot .js-plotly-plot")
    plot.wait_for(timeout=30_000)
    shown = plot.evaluate("el => Array.from(el.data[0].customdata)")
    want = score_answers(gpt2, prompt, parse_answers(answers))  # the engine's own numbers
    assert shown == pytest.approx(want.probabilities.tolist())
    assert fresh.get_by_test_id("toast-body").count() == 0
    fresh.context.close()


@pytest.mark.parametrize(("size", "viewport"), [("wide", SIZES["wide"]), ("phone", {"width": 420, "height": 900})])
def test_a_link_behind_every_interface_names_the_local_network_and_has_a_qr_code(
    browser, gpt2, screens, size, viewport
):
    """On a server listening on 0.0.0.0, *Copy link* names this machine's local network address (a phone can open
    it), and its QR code, as the page shows it wide and on a 420x900 phone, decodes to the same link; the test opens
    the link's path on loopback. On a loopback-only server the link says it cannot reach other devices."""
    zxingcpp = pytest.importorskip("zxingcpp")
    from PIL import Image

    from explorer.serving.reach import lan_address
    from tests.helpers.servers import LiveServer

    lan = lan_address()
    if lan is None:
        pytest.skip("this machine has no local network address")
    srv = LiveServer(gpt2, host="0.0.0.0")
    try:
        pg = open_page(browser, srv.url, size, viewport=viewport)
        score(pg, TEXT)
        pg.get_by_role("button", name="Copy link").click()
        pg.wait_for_function(
            "() => document.querySelector('#share-link textarea, #share-link input').value.includes('?view=')"
        )
        url = pg.get_by_label("Link", exact=True).input_value()
        assert url.startswith(f"http://{lan}:{srv.port}/?view=")
        assert "names this computer only" not in pg.locator("#link-note").inner_text()
        qr = pg.locator("#share-qr svg")
        qr.wait_for(timeout=30_000)
        qr.scroll_into_view_if_needed()
        box = qr.bounding_box()
        modules = int(qr.get_attribute("width") or 0) // 4  # segno's scale: 4 px a module
        assert box and modules and box["width"] >= 3 * modules  # drawn at 3 px a module or more: a phone can read it
        assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"]  # whole on the screen
        shot = screens / f"share-qr-{size}.png"
        pg.locator("#share-qr").screenshot(path=str(shot))
        assert [b.text for b in zxingcpp.read_barcodes(Image.open(shot))] == [url]
        pg.context.close()
        path = url.split(f"{lan}:{srv.port}", 1)[1]
        fresh = open_link(browser, srv.url + path)  # the link's path, opened on loopback
        wait_result(fresh)
        assert fresh.get_by_label("Text", exact=True).input_value() == TEXT
        fresh.context.close()
    finally:
        srv.stop()


def test_a_loopback_link_says_it_cannot_reach_other_devices(browser, live):
    pg = open_page(browser, live.url)
    score(pg, TEXT)
    pg.get_by_role("button", name="Copy link").click()
    expect(pg.locator("#link-note")).to_contain_text("names this computer only", timeout=30_000)
    assert "--host 0.0.0.0" in pg.locator("#link-note").inner_text()
    # beside the result it shares: Copy link between the Score tab's buttons and the text's tokens, not at the foot
    link, heat = pg.locator("#copy-link").bounding_box(), pg.locator("#heatmap").bounding_box()
    button = pg.get_by_role("button", name="Score", exact=True).bounding_box()
    assert link and heat and button and button["y"] < link["y"] < heat["y"]
    pg.context.close()
