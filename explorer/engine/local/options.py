"""The options an engine runs under (explorer.config.EngineOptions): those handed to it, else those in force.

The one place in explorer/engine/ that asks explorer.config for them (tests/test_engine_options.py holds that,
beside team.py's import-time EXPLORER_TEAM): `select.load` resolves an EngineSpec's options here once, and an
engine built directly (a test, a bench script) resolves its own here at construction; code below that reads the
engine's `options`, or a parameter handed down from them.
"""

from __future__ import annotations

from explorer.config import EngineOptions, engine_options


def in_force(options: EngineOptions | None) -> EngineOptions:
    """`options`, else the ones the configuration in force says (explorer.config.engine_options)."""
    return options if options is not None else engine_options()
