"""Small facts of the running server: an idle server does not spin (the page's Gradio queue polls every 20 ms, not
every 1 ms), and one version is reported everywhere."""

from explorer.models import Models
from explorer.server import IDLE_POLL_S, PROGRESS_POLL_S, page_app
from explorer.settings import Limits


def test_the_page_queue_polls_slowly_when_idle(gpt2):
    models = Models([gpt2.name], allow_hub=False)
    models.add(gpt2)
    demo = page_app(models, Limits.from_env())
    assert demo._queue.sleep_when_free >= IDLE_POLL_S >= 0.01  # gradio's own default is 0.001
    assert demo._queue.progress_update_sleep_when_free >= PROGRESS_POLL_S
    assert IDLE_POLL_S <= 0.05  # a waiting action still starts within a frame or two


def test_one_version_everywhere():
    """pyproject.toml, explorer.__version__ and the bodies' system_fingerprint say the same version."""
    import re

    import explorer
    from explorer.export.common import fingerprint
    from tests.repo import ROOT

    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)[1]
    assert explorer.__version__ == version and fingerprint() == f"logprob-explorer-{version}"
