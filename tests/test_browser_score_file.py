"""The Score view's HTML file (explorer/notebook/page.py `page_html`) in real headless Chromium, from file:// and inside
an <iframe srcdoc> (a learning platform's or a slide's embed), with every network request blocked and counted (none
made): hovering, clicking and the keyboard show the numbers of the file's own JSON (logprob-data), the span sum is
their sum; light and dark (prefers-color-scheme) with no serious axe finding (contrast at least 4.5:1); screenshots
(assets/screens/view-file-*.png with EXPLORER_SCREENS=1)."""

from __future__ import annotations

import html
import re

import pytest

from explorer.notebook.lm import LM
from explorer.notebook.page import HOST_COLOURS, data_of, page_html
from explorer.results.text import visible
from tests.helpers.browser import offline_page, require_chromium, serious

require_chromium()
pytestmark = pytest.mark.browser
TEXT = "The capital of France is Paris.\nThe cat sat on the mat because it was warm."
CHECKED = (0, 1, 4, 9, -1)  # positions hovered and clicked (0: not scored)


@pytest.fixture(scope="module")
def made(gpt2):
    """The file's text and its embedded JSON (the numbers every check below compares with)."""
    page = page_html(LM(gpt2).score(TEXT, k=5))
    return page, data_of(page)


def near(shown: str, value: float, places: int) -> bool:
    """`shown` (a number as the view writes it, `places` decimals, maybe with thousands commas) is `value` rounded;
    the card's numbers pass through the page's 6-decimal blob first, hence the small slack."""
    return abs(float(shown.replace(",", "")) - value) <= 0.5 * 10**-places + 1e-6


def hover_and_click(root, d: dict, pos: int) -> None:
    """Hover the chip at `pos`: the card has its logprob, rank and entropy; click it: the detail has them and every
    listed alternative's logprob, all equal to the JSON's `d`."""
    chip = root.locator(f'#heatmap [data-pos="{pos}"]')
    chip.hover()
    card = root.locator("#lx-card")
    card.wait_for(state="visible", timeout=5000)
    text = card.inner_text()
    assert f"position {pos}" in text
    lp = d["logprobs"][pos]
    if lp is None:
        assert "Not scored" in text
    else:
        m = re.search(r"logprob (-?[\d.]+) · rank ([\d,]+) · entropy ([\d.]+) nats", text)
        assert m, text
        assert near(m[1], lp, 4) and int(m[2].replace(",", "")) == d["ranks"][pos] and near(m[3], d["entropy"][pos], 2)
    chip.click()
    td = root.locator(f'.lx-detail .td[data-pos="{pos}"]')
    td.wait_for(timeout=5000)
    assert root.locator(f'#heatmap [data-pos="{pos}"].sel').count() == 1
    if lp is None:
        assert "Not scored" in td.inner_text()
        return
    prob, logprob, rank, entropy = td.locator("dl.td-nums dd").all_inner_texts()
    assert near(logprob, lp, 4) and int(rank.replace(",", "")) == d["ranks"][pos]
    assert near(entropy.removesuffix(" nats"), d["entropy"][pos], 3) and prob.endswith("%")
    listed = [(i, x) for i, x in zip(d["top_ids"][pos], d["top_logprobs"][pos]) if i >= 0 and x is not None]
    rows = td.locator("tbody tr")
    assert rows.count() == len(listed) == 5
    for j, (i, x) in enumerate(listed):
        token, logprob = rows.nth(j).locator("td").nth(1).inner_text(), rows.nth(j).locator("td").nth(3).inner_text()
        assert near(logprob, x, 4) and token == (visible(piece(d, i)) or " "), (pos, j)


def piece(d: dict, i: int) -> str:
    """Token `i`'s text from the JSON's bytes as the page's detail shows it (explorer/render/detail.py)."""
    return bytes.fromhex(d["pieces"][str(i)]).decode("utf-8", "backslashreplace")


def keyboard_and_span(page, root, d: dict) -> None:
    """From the chip at 3: ArrowRight moves to 4 (its card shows), Shift+ArrowRight twice selects 4-6 and the span's
    total is the JSON's sum of those logprobs."""
    root.locator('#heatmap [data-pos="3"]').click()
    page.keyboard.press("ArrowRight")
    assert "position 4" in root.locator("#lx-card").inner_text()
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("Shift+ArrowRight")
    total = root.locator(".lx-span .sp-sum")
    total.wait_for(timeout=5000)
    assert abs(float(total.get_attribute("data-sum")) - sum(d["logprobs"][4:7])) < 1e-5
    assert "Span 4–6" in root.locator(".lx-span").inner_text()


def test_the_score_file_works_offline_from_a_file(browser, made, tmp_path, shots):
    text, d = made
    path = tmp_path / "score.view.html"
    path.write_text(text, encoding="utf-8")
    pg = offline_page(browser, lambda url: url == path.as_uri())  # the file itself, nothing else
    try:
        pg.goto(path.as_uri())
        for pos in CHECKED:
            hover_and_click(pg, d, pos % len(d["logprobs"]))
        keyboard_and_span(pg, pg, d)
        for scheme in ("light", "dark"):
            pg.emulate_media(color_scheme=scheme)
            pg.locator('#heatmap [data-pos="9"]').click()
            pg.locator('#heatmap [data-pos="5"]').hover()  # the card over the text, the detail of 9 beside it
            pg.locator("#lx-card").wait_for(state="visible", timeout=5000)
            bg = pg.evaluate("getComputedStyle(document.querySelector('.lx-view')).backgroundColor")
            want = HOST_COLOURS[scheme]["--background-fill-primary"]
            assert bg == "rgb({}, {}, {})".format(*(int(want[i : i + 2], 16) for i in (1, 3, 5))), (scheme, bg)
            assert serious(pg) == [], scheme  # axe: contrast of every text (chips, card, detail) and the rest
            pg.screenshot(path=str(shots / f"view-file-{scheme}.png"))
        assert pg.errors == [], pg.errors
        assert pg.refused == [], pg.refused
    finally:
        pg.context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_score_file_works_inside_an_iframe_srcdoc(browser, made, scheme, tmp_path):
    text, d = made
    pg = offline_page(browser, lambda url: False)  # nothing at all may be fetched
    try:
        pg.emulate_media(color_scheme=scheme)
        pg.set_content(
            '<p>A lesson page with the view embedded:</p><iframe id="f" title="the view" '
            f'style="width:1000px;height:640px;border:1px solid #888" srcdoc="{html.escape(text, quote=True)}"></iframe>'
        )
        frame = pg.frame_locator("#f")
        frame.locator("#heatmap [data-pos]").first.wait_for(timeout=10_000)
        for pos in CHECKED:
            hover_and_click(frame, d, pos % len(d["logprobs"]))
        keyboard_and_span(pg, frame, d)
        frame.locator('#heatmap [data-pos="9"]').click()
        frame.locator('#heatmap [data-pos="5"]').hover()
        inside = pg.frames[1]
        dark = inside.evaluate("matchMedia('(prefers-color-scheme: dark)').matches")
        assert dark == (scheme == "dark")
        pg.screenshot(path=str(tmp_path / f"view-file-iframe-{scheme}.png"))  # looked at; not kept
        assert pg.errors == [], pg.errors
        assert pg.refused == [], pg.refused
    finally:
        pg.context.close()
