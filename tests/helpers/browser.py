"""Shared by the browser test files: Debian's Chromium under Playwright, skipped (saying so) where it is missing.

Use in a test module:
    from tests.helpers.browser import CHROMIUM, FLAGS, require_chromium
    require_chromium()
    pytestmark = pytest.mark.browser
and the session-wide `browser` fixture from conftest; `open_page` and `score` drive the page as a person would,
`wait_detail` and `in_view` read what it shows.
"""

from __future__ import annotations

import contextlib
import os
import shutil

import pytest

CHROMIUM = os.environ.get("EXPLORER_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def require_chromium() -> None:
    if not os.path.exists(CHROMIUM):
        pytest.skip(
            f"BROWSER TESTS SKIPPED: no Chromium at {CHROMIUM} (apt-get install -y chromium; .ci/run does this)",
            allow_module_level=True,
        )


SIZES = {"wide": {"width": 1400, "height": 1000}, "phone": {"width": 420, "height": 860}}


def open_page(browser, url, size="wide", shown=True, **ctx):
    """A new page at `url` in a `size` viewport (or `viewport=`), once the page's Text box is there; dialogs dismissed
    and kept.

    `shown=False` for a share link that opens another tab: the Text box is then in the page but hidden, and
    whether it is seen before the link switches tabs is a race.
    """
    c = browser.new_context(viewport=ctx.pop("viewport", SIZES[size]), **ctx)
    pg = c.new_page()
    pg.dialogs = []
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
    pg.goto(url)
    pg.get_by_label("Text", exact=True).wait_for(state="visible" if shown else "attached", timeout=60_000)
    return pg


GROUPS = {  # a grouped tab -> the tab of the top row holding it (explorer/ui/layout.py's LAYOUT)
    **dict.fromkeys(("What-if", "Why", "Words", "Branch", "Logit lens"), "Read a result"),
    **dict.fromkeys(("Compare", "Answers", "Batch"), "Compare and many"),
}


def pick_tab(page, name: str) -> None:
    """Click a tab (its group's first where it is grouped), through the "More tabs" menu where a narrow page folds a
    tab of the top row away."""
    if name in GROUPS:
        _click_tab(page, GROUPS[name])
    _click_tab(page, name)


def _click_tab(page, name: str) -> None:
    tab = page.get_by_role("tab", name=name, exact=True)
    if tab.count():
        tab.click()
        return
    page.get_by_role("button", name="More tabs").first.click()
    page.locator(".overflow-dropdown button", has_text=name).first.click()


def score(page, text, done=True):
    """Type `text` into the Score tab and press Score (`done`: wait for the finished result's numbers)."""
    page.get_by_label("Text", exact=True).fill(text)
    page.get_by_role("button", name="Score", exact=True).click()
    if done:
        page.locator("#heatmap .lx-data").filter(has_text='"lp"').wait_for(state="attached", timeout=60_000)


def wait_detail(page, pos: int) -> None:
    page.locator(f"#token-detail .td[data-pos='{pos}']").wait_for(timeout=30_000)


def in_view(page, selector: str, whole: bool = False) -> bool:
    """The element's top (or all of it) is inside the viewport."""
    box = page.locator(selector).first.bounding_box()
    vh = page.viewport_size["height"]
    return box is not None and box["y"] >= -1 and (box["y"] + box["height"] <= vh + 1 if whole else box["y"] < vh - 40)


BLOB = "document.querySelector('#heatmap .lx-data')"  # the page's data: one run's id, its numbers once finished
NEW_RESULT = f"""old => {{
  if (document.querySelector('[data-testid=toast-body]')) return true;
  const d = {BLOB}; if (!d) return false;
  const b = JSON.parse(d.textContent); return b.rid !== old && 'lp' in b;
}}"""


def rid(pg) -> str | None:
    return pg.evaluate(f"(() => {{ const d = {BLOB}; return d ? JSON.parse(d.textContent).rid : null; }})()")


def new_result(pg, press) -> None:
    """`press()`, then wait for a finished result of a new run, or an error pop-up (failing with its words)."""
    old = rid(pg)
    press()
    pg.wait_for_function(NEW_RESULT, arg=old, timeout=60_000)
    pg.wait_for_timeout(300)  # the views beside the heatmap are filled by the same update
    toast = pg.get_by_test_id("toast-body")
    assert toast.count() == 0, toast.first.inner_text()


def screens_dir(tmp_path):
    """Where screenshots go: `tmp_path`, or assets/screens/ with EXPLORER_SCREENS=1 (to update them)."""
    from pathlib import Path

    if os.environ.get("EXPLORER_SCREENS") == "1":
        return Path(__file__).resolve().parents[2] / "assets" / "screens"
    return tmp_path


def serious(page) -> list[str]:
    """'rule: target' for every serious or critical axe-core violation on the page once its updates are done (Gradio
    dims a component at 0.2 opacity while an event updates it: axe would measure that passing state's contrast)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    axe = pytest.importorskip("axe_playwright_python.sync_playwright", reason="pip install axe-playwright-python")
    with contextlib.suppress(PlaywrightTimeout):  # a stream still running keeps its outputs dimmed: check it as it is
        page.wait_for_function("() => !document.querySelector('.pending')", timeout=30_000)
    res = axe.Axe().run(page)
    return [
        f"{v['id']}: {n['target']}"
        for v in res.response["violations"]
        if v["impact"] in ("serious", "critical")
        for n in v["nodes"]
    ]


def offline_page(browser, allowed):
    """A new page on which every request but those `allowed(url)` is refused and counted: (page, requests refused,
    page errors: uncaught exceptions and console errors). Close it with `page.context.close()`."""
    page = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
    page.refused, page.errors = [], []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)

    def block(route):
        if allowed(route.request.url):
            route.continue_()
        else:
            page.refused.append(route.request.url)
            route.abort()

    page.route("**/*", block)
    return page
