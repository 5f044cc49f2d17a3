"""logprob-explorer: see what a language model expected, token by token."""

from explorer.errors import ExplorerError
from explorer.result import TokenScores

__all__ = ["ExplorerError", "TokenScores"]
__version__ = "0.2.0"
