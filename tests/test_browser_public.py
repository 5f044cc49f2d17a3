"""A public server's page in real Chromium: it says what it allows and which models are in memory, a full queue
says "busy" and a waiting visitor sees their place, rather than a hang; over-cap input is refused in words."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

import pytest

from explorer.settings import PUBLIC_LIMITS
from tests.browser import SIZES, open_page, require_chromium
from tests.conftest import LiveServer, before_each_pass

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


@pytest.fixture
def capped_public(long_gpt2, monkeypatch):
    """The same with room to wait: a queue of one also refuses, "busy", the events a page runs as it opens, whose
    toasts then hide the cap's message."""
    srv = public_server(long_gpt2, monkeypatch, queue=8)
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
        assert "public server" in status and "64 tokens" in status and "In memory now" in status
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


def test_over_cap_text_is_refused_in_words_on_a_phone(browser, capped_public, shots):
    pg = open_page(browser, capped_public.url, "phone")
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
