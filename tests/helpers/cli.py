"""The command line as a user runs it: `python -m explorer ...` in a subprocess."""

from __future__ import annotations

import subprocess
import sys


def run(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True, timeout=timeout)
