"""A public server's page in real Chromium: it says what it allows and which models are in memory, a full queue
says "busy" and a waiting visitor sees their place, rather than a hang; over-cap input is refused in words."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

import pytest

from explorer.rules.sampler import PUBLIC_LIMITS
from explorer.ui.links import encode
from tests.helpers.browser import SIZES, open_page, require_chromium
from tests.helpers.servers import LiveServer, before_each_pass
from tests.helpers.share import view

require_chromium()
pytestmark = pytest.mark.browser


@pytest.fixture
def shots(tmp_path) -> Path:
    """Where screenshots go: a temporary folder, or assets/screens/ with EXPLORER_SCREENS=1 (to update them)."""
    if os.environ.get("EXPLORER_SCREENS") == "1":
        return Path(__file__).resolve().parents[1] / "assets" / "screens"
    return tmp_path


def public_server(engine, monkeypatch, queue: int):
    """`engine` served publicly with a 64-token cap, one action at a time and `queue` waiting."""
    for name in ("EXPLORER_API_KEY", "SPACE_ID", "EXPLORER_PUBLIC"):
        monkeypatch.delenv(name, raising=False)
    limits = replace(PUBLIC_LIMITS, workers=1, queue=queue, max_input_tokens=64)
    return LiveServer(engine, limits=limits, public=True)


@pytest.fixture
def slow_public(long_gpt2, monkeypatch):
    """The 8k tiny model at ~20 decode steps a second, served publicly: one action at a time, one waiting."""
    before_each_pass(monkeypatch, long_gpt2, lambda: time.sleep(0.05))
    srv = public_server(long_gpt2, monkeypatch, queue=1)
    yield srv
    srv.stop()


def start_generating(page, tokens: int = 200) -> None:
    page.get_by_role("tab", name="Generate").click()
    page.get_by_label("Prompt", exact=True).fill("The lazy")
    page.get_by_label("number input for Temperature (0 = greedy)").fill("0")
    page.get_by_label("number input for Max tokens").fill(str(tokens))
    page.get_by_role("button", name="Generate", exact=True).click()


def test_a_full_queue_says_busy_and_a_waiting_visitor_sees_their_place(browser, slow_public, shots):
    first, second, third = (open_page(browser, slow_public.url) for _ in range(3))
    try:
        status = first.locator("#model-status").inner_text()
        assert "public server" in status and "64 tokens" in status and "In memory now" not in status  # folded
        first.get_by_role("button", name="Details: engine, vocabulary, memory").click()
        assert "In memory now" in first.locator("#model-details").inner_text()
        start_generating(first)
        first.wait_for_timeout(1500)  # it holds the one worker
        start_generating(second)
        second.get_by_text("queue", exact=False).filter(visible=True).first.wait_for(
            timeout=20_000
        )  # Gradio: "queue: 1/1"
        start_generating(third)
        third.get_by_text("busy", exact=False).filter(visible=True).first.wait_for(timeout=20_000)
        assert "try again" in third.get_by_text("busy", exact=False).filter(visible=True).first.inner_text().lower()
        third.screenshot(path=str(shots / "public-busy-wide.png"))
        first.get_by_text("finish:", exact=False).first.wait_for(timeout=60_000)
        second.get_by_text("finish:", exact=False).first.wait_for(timeout=60_000)  # the waiting one ran after
    finally:
        for pg in (first, second, third):
            pg.context.close()


def test_a_page_opened_while_the_line_is_full_opens_and_its_link_restores(browser, slow_public, shots):
    """Only the model's work stands in the line: Gradio's own bound counted every waiting event, the events a page
    runs as it opens too, so a page opened while one visitor ran and one waited was told "busy" and its link lost."""
    first, second = (open_page(browser, slow_public.url) for _ in range(2))
    third = None
    try:
        start_generating(first)
        first.wait_for_timeout(1500)
        start_generating(second)
        second.get_by_text("queue", exact=False).filter(visible=True).first.wait_for(timeout=20_000)  # the line: full
        text = "the quick brown fox jumps over the lazy dog"
        third = open_page(browser, f"{slow_public.url}/?view={encode(view(text=text))}", shown=False)
        third.wait_for_timeout(2000)
        assert third.get_by_text("busy", exact=False).filter(visible=True).count() == 0
        start_generating(third, 8)  # its own action is the model's work: refused while the line is full
        third.get_by_text("busy", exact=False).filter(visible=True).first.wait_for(timeout=20_000)
        third.locator("#heatmap .lx-data").filter(has_text='"lp"').wait_for(state="attached", timeout=90_000)
        assert third.get_by_label("Text", exact=True).input_value() == text  # the link's run, after the others
        third.screenshot(path=str(shots / "public-link-while-full-wide.png"))
    finally:
        for pg in (first, second, third):
            if pg is not None:
                pg.context.close()


def test_over_cap_text_is_refused_in_words_on_a_phone(browser, slow_public, shots):
    pg = open_page(browser, slow_public.url, "phone")
    try:
        pg.get_by_label("Text", exact=True).fill("the quick brown fox jumps " * 30)
        pg.get_by_role("button", name="Score", exact=True).click()
        toast = pg.get_by_text("EXPLORER_MAX_INPUT_TOKENS", exact=False).first
        toast.wait_for(timeout=30_000)
        assert "shorten it" in toast.inner_text()
        assert pg.evaluate("document.documentElement.scrollWidth") <= SIZES["phone"]["width"]
        pg.screenshot(path=str(shots / "public-cap-phone.png"))
    finally:
        pg.context.close()
