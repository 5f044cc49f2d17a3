"""Every view's colours follow the main heatmap's rule: no red-versus-green pair (no colour of a scale is green, so
nothing is told apart by red against green), and text on each colour keeps a contrast of at least 4.5:1. The lens's
legend says in words what each colour stands for."""

from __future__ import annotations

import colorsys
import re
from html import unescape

import pytest

from explorer.render import branch, compare, heatmap, lens, words

WHITE, INK = (255, 255, 255), (17, 17, 17)


def rgb(c: str) -> tuple[int, ...]:
    if c.startswith("#"):
        c = c[1:] if len(c) == 7 else "".join(x * 2 for x in c[1:])
        return tuple(int(c[i : i + 2], 16) for i in (0, 2, 4))
    return tuple(int(x) for x in c.split(",")[:3])


def over(c: tuple[int, ...], alpha: float, base=WHITE) -> tuple[float, ...]:
    return tuple(alpha * x + (1 - alpha) * b for x, b in zip(c, base))


def luminance(c) -> float:
    def lin(v):
        v = v / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(v) for v in c)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def green(c) -> bool:
    """A colour a red-green colour-blind reader cannot tell from red: a saturated hue between yellow-green and
    teal."""
    h, s, _ = colorsys.rgb_to_hsv(*(x / 255 for x in c))
    return 75 <= h * 360 <= 165 and s > 0.2


SCALES = {
    "heatmap light": [rgb(c) for c in heatmap.LIGHT],
    "lens": [rgb(c) for c in lens.PALETTE],
    "words": [rgb(c) for c in words._C],
    "compare": [rgb(c) for c in compare._D],
    "branch": [rgb(c) for c in re.findall(r"\.bt \.r\d \{ background: rgba\((\d+,\d+,\d+),", branch.CSS)],
}


@pytest.mark.parametrize("name", SCALES)
def test_no_scale_tells_red_from_green(name):
    assert len(SCALES[name]) >= 5 and [c for c in SCALES[name] if green(c)] == []


def test_a_branch_line_may_break_between_tokens():
    """The tree's tokens carry the heatmap's break points: a long branch wraps in its box."""
    chips = re.findall(r"</span>(<wbr>)?", "".join(branch._chip(_Tree(), i, None) for i in range(3)))
    assert chips == ["<wbr>"] * 3


class _Tree:
    """The three fields of a tree a chip reads."""

    ranks = (1, 2, 40)
    logprobs = (-0.1, -1.0, -5.0)
    branches = ({},)

    def depth(self, i):
        return i

    def piece(self, i):
        return ["The", " quick", " brown"][i]


def test_text_keeps_its_contrast_on_every_colour():
    assert all(contrast(rgb(bg), rgb(ink)) >= 4.5 for bg, ink in zip(lens.PALETTE, lens.INK))
    for scale in (words._C, compare._D):  # chips: the colour at 45% over the page, dark text
        assert all(contrast(over(rgb(c), 0.45), INK) >= 4.5 for c in scale)


def test_the_old_red_green_scales_would_fail():
    """The guard can fail: the lens's and the words' scales before this change."""
    old_lens = ["#15803d", "#22c55e", "#84cc16", "#eab308", "#f59e0b", "#f97316", "#ef4444", "#991b1b"]
    assert any(green(rgb(c)) for c in old_lens)
    assert any(contrast(rgb(c), WHITE) < 4.5 for c in old_lens)  # white digits on them


@pytest.mark.parametrize("metric", list(lens.METRICS))
def test_the_lens_legend_says_what_each_colour_is(metric):
    html = lens.legend_html(metric)
    labels = lens.bucket_labels(metric)
    assert len(labels) == len(lens.PALETTE) and all(f">{label}<" in unescape(html) for label in labels)
    assert ">1<" not in html  # no bare bucket numbers
