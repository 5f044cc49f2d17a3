"""The one exception type that carries a user-facing message."""

from __future__ import annotations


class ExplorerError(ValueError):
    """Bad input or an unusable model: `str(err)` is one sentence saying what to change.

    `param` names the offending setting (as the HTTP API's error body does) and `code`
    is a short machine-readable reason ("integer_above_max_value", "model_not_found" ...).
    """

    def __init__(self, message: str, *, param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code
