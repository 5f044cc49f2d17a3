"""Shared by the browser test files: Debian's Chromium under Playwright, skipped (saying so) where it is missing.

Use in a test module:
    from tests.browser import CHROMIUM, FLAGS, require_chromium
    require_chromium()
    pytestmark = pytest.mark.browser
and the session-wide `browser` fixture from conftest.
"""

from __future__ import annotations

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
