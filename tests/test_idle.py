"""Small facts of the running server: an idle server does not spin (the page's Gradio queue polls every 20 ms while
there is work, every 250 ms after 5 s without any: gradio's own is 1 ms always), and one version is reported
everywhere."""

from types import SimpleNamespace

from explorer.rules.sampler import Limits
from explorer.server import page_app
from explorer.serving.models import Models
from explorer.ui.page_queue import BUSY_POLL_S, BUSY_S, IDLE_POLL_S, PROGRESS_POLL_S


def test_the_page_queue_polls_slowly_when_idle_and_often_while_there_is_work(gpt2, monkeypatch):
    from explorer.ui import page_queue

    models = Models([gpt2.name], allow_hub=False)
    models.add(gpt2)
    pace = page_app(models, Limits.from_env())[1]  # each tick below: a turn of the pace's own loop (follow)
    q = pace.queue
    clock = SimpleNamespace(now=1000.0)
    monkeypatch.setattr(page_queue.time, "monotonic", lambda: clock.now)
    q.active_jobs = [None, None]
    assert (q.sleep_when_free, q.progress_update_sleep_when_free) == (IDLE_POLL_S, IDLE_POLL_S)  # idle from the start
    q.active_jobs = [["an action"], None]  # one runs: new work is looked for often, its progress too
    pace.tick()
    assert (q.sleep_when_free, q.progress_update_sleep_when_free) == (BUSY_POLL_S, PROGRESS_POLL_S)
    q.active_jobs = [None, None]
    clock.now += BUSY_S / 2  # it ended a moment ago: a next action is likely soon
    pace.tick()
    assert (q.sleep_when_free, q.progress_update_sleep_when_free) == (BUSY_POLL_S, IDLE_POLL_S)
    clock.now += BUSY_S
    pace.tick()
    assert q.sleep_when_free == IDLE_POLL_S
    q.sleep_when_free = 0.001  # what gradio's own __init__ writes lasts until the next tick
    pace.tick()
    assert q.sleep_when_free == IDLE_POLL_S
    assert 0.01 <= BUSY_POLL_S <= 0.05 and IDLE_POLL_S <= 0.5  # a waiting action starts within a frame or two


def test_one_version_everywhere():
    """pyproject.toml, explorer.__version__ and the bodies' system_fingerprint say the same version: pyproject.toml
    writes none of its own, it reads the one the package writes (tests/test_wheel.py builds the wheel from it)."""
    import importlib

    import tomllib

    import explorer
    from explorer.export.common import fingerprint
    from tests.helpers.repo import ROOT

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    where, _, name = project["tool"]["setuptools"]["dynamic"]["version"]["attr"].rpartition(".")
    version = getattr(importlib.import_module(where), name)
    assert explorer.__version__ == version and fingerprint() == f"logprob-explorer-{version}"


def test_only_the_models_work_stands_in_the_visitors_line(gpt2):
    """The page's queue bounds the model's actions by EXPLORER_QUEUE and a page opening (a link's rerun) in a line
    of its own; the page's cheap events (a recolour, a tab shown) are in none, so none of them is ever "busy"."""
    from explorer.ui.page_queue import OPENING_LINE

    models = Models([gpt2.name], allow_hub=False)
    models.add(gpt2)
    demo, queue = page_app(models, Limits(queue=3))
    lines = queue.lines
    fns = list(demo.fns.values())
    opening = [f for f in fns if any(t[1] == "load" for t in f.targets) and f._id in lines]
    assert [f.name for f in opening] == ["restore"] and lines[opening[0]._id] == ("opening", OPENING_LINE)
    model = [f for f in fns if lines.get(f._id) == ("model", 3)]
    assert {"score", "generate", "chat", "compare"} <= {f.name for f in model}
    assert len(model) + 1 == len(lines) < len(fns)  # the rest, the page's cheap events: in no line
    assert demo._queue.max_size is None  # gradio's own bound (every waiting event) is off


def test_a_full_line_is_refused_in_gradios_words_and_a_join_wakes_the_queue(gpt2):
    """In front of Gradio's queue (explorer/ui/page_queue.py): a model action whose line is full (EXPLORER_QUEUE=0
    here: none may wait) is refused as Gradio refuses one when its queue is full (a 503 its clients show as "busy"),
    by the page's route and by a client's call by name; an event in no line joins, and its joining wakes the pace."""
    import httpx

    from tests.helpers.servers import LiveServer

    srv = LiveServer(gpt2, limits=Limits(queue=0))
    try:
        demo, pace = srv.app.state.demo, srv.app.state.page_queue
        fns = {f.name: f for f in demo.fns.values()}
        join = srv.url + "/gradio_api/queue/join"
        r = httpx.post(join, json={"data": [], "fn_index": fns["score"]._id, "session_hash": "s1"}, timeout=30)
        assert r.status_code == 503 and r.json() == {"detail": "Queue is full. Max size is 0 and size is 0."}
        r = httpx.post(srv.url + "/gradio_api/call/score", json={"data": []}, timeout=30)
        assert r.status_code == 503 and r.json()["detail"].startswith("Queue is full.")
        restyle, before = fns["restyle"], pace.busy_at
        assert restyle._id not in pace.lines
        body = {"data": [None] * len(restyle.inputs), "fn_index": restyle._id, "session_hash": "s1"}
        r = httpx.post(join, json=body, timeout=30)
        assert r.status_code == 200 and r.json()["event_id"] and pace.busy_at > before
    finally:
        srv.stop()
