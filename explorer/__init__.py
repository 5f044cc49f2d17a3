"""logprob-explorer: see what a language model expected, token by token."""

from explorer.errors import ExplorerError
from explorer.results.scores import TokenScores
from explorer.settings import VERSION as __version__

__all__ = ["ExplorerError", "TokenScores", "__version__"]
