"""Screenshots of every tab, light and dark, at 1400x1000 and on a 420-px phone, into assets/screens/.

    python assets/screenshots.py                 # starts the app on the default model (SmolLM2-135M-Instruct)
    python assets/screenshots.py --url URL       # or uses a running one
    python assets/screenshots.py --tabs Why Batch  # only these tabs

Score, Generate and Chat are shown with a result in view (the page brings it there); the other tabs as they
open. Each PNG is reduced to 256 colours so it stays small (well under 300 KB).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from PIL import Image
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.helpers.browser import pick_tab  # noqa: E402 - the browser tests' own helper, found from the repository root

OUT = ROOT / "assets" / "screens"
SIZES = {"wide": {"width": 1400, "height": 1000}, "phone": {"width": 420, "height": 860}}
CHROMIUM = os.environ.get("EXPLORER_CHROMIUM", "/usr/bin/chromium")
TEXT = "The quick brown fox jumps over the lazy dog. The capital of France is Paris, and the capital of Italy is Rome."


def serve(port: int) -> subprocess.Popen:
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1", "EXPLORER_COMPILE": "0"}
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "app.py"), "--port", str(port)],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None  # stderr=PIPE
    for line in proc.stderr:
        if line.startswith("Web app:"):
            return proc
    raise SystemExit("the app did not start")


def save(page, name: str) -> None:
    path = OUT / f"{name}.png"
    page.mouse.move(1, 1)  # no hover card left where the pointer happened to stop
    page.wait_for_timeout(400)
    page.screenshot(path=str(path))
    img = Image.open(path).convert("RGB")
    img = img.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    img.save(path, optimize=True)
    print(f"{path.relative_to(ROOT)}  {path.stat().st_size // 1024} KB")


def done(page, before: str) -> None:
    """Wait for a new, complete result (its data differs from `before`)."""
    page.wait_for_function(
        "b => { const d = document.querySelector('#heatmap .lx-data'); "
        "return d && d.textContent !== b && d.textContent.includes('\"lp\"'); }",
        arg=before,
        timeout=180_000,
    )
    page.wait_for_timeout(1000)


def data(page) -> str:
    d = page.locator("#heatmap .lx-data")
    return d.text_content() if d.count() else ""


def run_tab(page, tab: str) -> None:
    """Use the tab the way its screenshot shows it."""
    before = data(page)
    if tab == "Score":
        page.get_by_label("Text", exact=True).fill(TEXT)
        page.get_by_label("Score from the start of a document", exact=False).check()
        page.get_by_role("button", name="Score", exact=True).click()
        done(page, before)
        page.locator("#heatmap [data-pos='4']").click()
        page.locator("#token-detail .td[data-pos='4']").wait_for()
    elif tab == "Generate":
        page.get_by_label("Prompt", exact=True).fill("The three primary colors are")
        page.get_by_label("number input for Top-p (1 = off)").fill("0.9")
        page.get_by_label("number input for Max tokens").fill("40")
        page.get_by_role("button", name="Generate", exact=True).click()
        done(page, before)
    elif tab == "Chat":
        page.get_by_label("Message", exact=True).fill("What is the capital of France?")
        page.get_by_label("number input for Max tokens").filter(visible=True).fill("24")
        page.get_by_label("number input for Temperature (0 = greedy)").filter(visible=True).fill("0")
        page.get_by_role("button", name="Send", exact=True).click()
        done(page, before)


def shoot(browser, url: str, size: str, theme: str, only: list[str] | None = None) -> None:
    ctx = browser.new_context(viewport=SIZES[size], device_scale_factor=1)
    page = ctx.new_page()
    page.goto(url + ("?__theme=dark" if theme == "dark" else ""))
    page.get_by_label("Text", exact=True).wait_for(timeout=120_000)
    tabs = [t.text_content() for t in page.locator(".tab-container.visually-hidden button").all()]
    for tab in tabs:
        if only and tab not in only:
            continue
        pick_tab(page, tab)
        if tab in ("Score", "Generate", "Chat"):
            run_tab(page, tab)
        else:
            page.evaluate("window.scrollTo(0, 0)")
        save(page, f"{tab.lower().replace(' ', '-')}-{theme}-{size}")
    if not only or "presentation" in only:
        page.locator("#present-btn").click()
        save(page, f"presentation-{theme}-{size}")
    ctx.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url")
    ap.add_argument("--port", type=int, default=7931)
    ap.add_argument("--tabs", nargs="+", metavar="TAB", help="only these tabs (their names; 'presentation' too)")
    a = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    proc = None if a.url else serve(a.port)
    url = a.url or f"http://127.0.0.1:{a.port}"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
            for size in SIZES:
                for theme in ("light", "dark"):
                    shoot(browser, url, size, theme, a.tabs)
            browser.close()
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
