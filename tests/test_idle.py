"""Small facts of the running server: an idle server does not spin (the page's Gradio queue polls every 20 ms while
there is work, every 250 ms after 5 s without any: gradio's own is 1 ms always), and one version is reported
everywhere."""

from types import SimpleNamespace

from explorer.rules.sampler import Limits
from explorer.server import BUSY_POLL_S, BUSY_S, IDLE_POLL_S, PROGRESS_POLL_S, page_app
from explorer.serving.models import Models


def test_the_page_queue_polls_slowly_when_idle_and_often_while_there_is_work(gpt2, monkeypatch):
    from explorer import server

    models = Models([gpt2.name], allow_hub=False)
    models.add(gpt2)
    q = page_app(models, Limits.from_env())._queue
    clock = SimpleNamespace(now=1000.0)
    monkeypatch.setattr(server.time, "monotonic", lambda: clock.now)
    q.active_jobs = [None, None]
    assert (q.sleep_when_free, q.progress_update_sleep_when_free) == (IDLE_POLL_S, IDLE_POLL_S)  # idle from the start
    q.active_jobs = [["an action"], None]  # one runs: new work is looked for often, its progress too
    assert (q.sleep_when_free, q.progress_update_sleep_when_free) == (BUSY_POLL_S, PROGRESS_POLL_S)
    q.active_jobs = [None, None]
    clock.now += BUSY_S / 2  # it ended a moment ago: a next action is likely soon
    assert (q.sleep_when_free, q.progress_update_sleep_when_free) == (BUSY_POLL_S, IDLE_POLL_S)
    clock.now += BUSY_S
    assert q.sleep_when_free == IDLE_POLL_S
    q.sleep_when_free = 0.001  # what gradio's own __init__ writes changes nothing
    assert q.sleep_when_free == IDLE_POLL_S
    assert 0.01 <= BUSY_POLL_S <= 0.05 and IDLE_POLL_S <= 0.5  # a waiting action starts within a frame or two


def test_one_version_everywhere():
    """pyproject.toml, explorer.__version__ and the bodies' system_fingerprint say the same version."""
    import re

    import explorer
    from explorer.export.common import fingerprint
    from tests.helpers.repo import ROOT

    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)[1]
    assert explorer.__version__ == version and fingerprint() == f"logprob-explorer-{version}"


def test_only_the_models_work_stands_in_the_visitors_line(gpt2):
    """The page's queue bounds the model's actions by EXPLORER_QUEUE and a page opening (a link's rerun) in a line
    of its own; the page's cheap events (a recolour, a tab shown) are in none, so none of them is ever "busy"."""
    from explorer.server import OPENING_LINE

    models = Models([gpt2.name], allow_hub=False)
    models.add(gpt2)
    demo = page_app(models, Limits(queue=3))
    lines = demo._queue.explorer_lines
    fns = list(demo.fns.values())
    opening = [f for f in fns if any(t[1] == "load" for t in f.targets) and f._id in lines]
    assert [f.name for f in opening] == ["restore"] and lines[opening[0]._id] == ("opening", OPENING_LINE)
    model = [f for f in fns if lines.get(f._id) == ("model", 3)]
    assert {"score", "generate", "chat", "compare"} <= {f.name for f in model}
    assert len(model) + 1 == len(lines) < len(fns)  # the rest, the page's cheap events: in no line
    assert demo._queue.max_size is None  # gradio's own bound (every waiting event) is off
