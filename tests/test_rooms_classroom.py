"""A classroom nobody can break (explorer/api/rooms.py, explorer/api/proxy.py, explorer/lessons/rooms.py): floods of
the requests that cost CPU leave `GET /v1/models` answering; forwarding headers count only from a configured proxy;
a forwarded host that names no host is ignored, never a 500; the teacher locks the room and removes a student with
their answers; a student's result is read only with their own secret; nicknames keep no hidden characters.

Loopback only, bounded loops. The floods record how long `/v1/models` took and assert an order (it answered while
flood requests were still in flight) and a bound a loaded machine cannot miss; the times are printed (`-s`)."""

from __future__ import annotations

import io
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace

import httpx
import pytest

from tests.helpers.rooms_http import get, join, post
from tests.helpers.servers import LiveServer

LESSON = {"title": "Tiny", "steps": [{"kind": "guess", "text": "the quick brown fox jumps", "start": 3, "blanks": 2}]}
HEAVY = "title: x\nsteps: [" + ",".join(["{a: b}"] * 9000) + "]\n"  # 63 KB, under the caps; refused once read
GENEROUS_S = 5.0  # /v1/models under a flood, at most (the bound is 1 s: the median is held to it)


@pytest.fixture(scope="module")
def proxied(gpt2):
    """The app behind a proxy the operator named: 127.0.0.1 (EXPLORER_FORWARDED_ALLOW_IPS)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EXPLORER_FORWARDED_ALLOW_IPS", "127.0.0.1")
        srv = LiveServer(gpt2)
    yield srv
    srv.stop()


@contextmanager
def room_caps(server, **caps):
    """The server's room caps changed for the block (and the join counts of the last minute forgotten)."""
    rooms = server.app.state.rooms
    before, rooms.limits = rooms.limits, replace(rooms.limits, **caps)
    rooms.joined.clear()
    try:
        yield rooms
    finally:
        rooms.limits = before
        rooms.joined.clear()


def flood(url: str, send, n: int = 40, at_once: int = 20) -> dict:
    """`send(client)` n times, `at_once` at a time, while one client polls GET /v1/models: {"models_s": each poll's
    time, "during": polls answered while flood requests were in flight, "statuses": the flood's}."""
    in_flight, lock, done = [0], threading.Lock(), threading.Event()
    polls: list[tuple[float, int]] = []

    def one(client):
        with lock:
            in_flight[0] += 1
        try:
            return send(client).status_code
        finally:
            with lock:
                in_flight[0] -= 1

    def poll():
        with httpx.Client(timeout=60) as c:
            while not done.is_set() and len(polls) < 2000:
                t = time.perf_counter()
                assert c.get(url + "/v1/models").status_code == 200
                with lock:
                    polls.append((time.perf_counter() - t, in_flight[0]))
                time.sleep(0.02)

    with httpx.Client(timeout=120, limits=httpx.Limits(max_connections=at_once)) as client:
        poller = threading.Thread(target=poll)
        with ThreadPoolExecutor(at_once) as pool:
            futures = [pool.submit(one, client) for _ in range(n)]
            poller.start()
            statuses = [f.result() for f in futures]
        done.set()
        poller.join(timeout=120)
    return {"models_s": [s for s, _ in polls], "during": sum(1 for _, k in polls if k > 0), "statuses": statuses}


def check_flood(got: dict, what: str) -> None:
    times = got["models_s"]
    print(f"\n{what}: /v1/models answered {len(times)} times, {got['during']} during the flood; "
          f"median {statistics.median(times):.3f} s, max {max(times):.3f} s")  # fmt: skip
    assert got["during"] >= 1  # it answered while the flood's requests were still in flight
    assert statistics.median(times) < 1.0 and max(times) < GENEROUS_S


def test_a_flood_of_lesson_uploads_leaves_the_server_answering(live):
    got = flood(live.url, lambda c: c.post(f"{live.url}/rooms", json={"lesson_text": HEAVY}))
    assert set(got["statuses"]) == {400}  # each read (off the event loop) and refused in words
    check_flood(got, "lesson uploads")


def test_a_flood_of_qr_codes_under_a_long_forwarded_host_leaves_the_server_answering(proxied):
    code = post(proxied.url, "/rooms", {"lesson": LESSON})["room"]
    longest = ".".join(["a" * 62] * 4)  # 251 characters: the longest host name a QR code is drawn for
    for host in (longest, "a" * 2300):  # the 2,300 characters are ignored (below): the Host's link is drawn
        got = flood(
            proxied.url, lambda c, h=host: c.get(f"{proxied.url}/rooms/{code}/qr.png", headers={"X-Forwarded-Host": h})
        )
        assert set(got["statuses"]) == {200}
        check_flood(got, f"QR codes, a forwarded host of {len(host)} characters")


def test_a_forged_forwarded_for_counts_as_the_peer_without_a_proxy(live):
    rooms = live.app.state.rooms
    mine = sum(1 for r in rooms.rooms.values() if r.owner == "127.0.0.1")
    opened = []
    with room_caps(live, per_address=mine + 3):
        for n in range(3):
            forged = {"X-Forwarded-For": f"10.9.{n}.1"}
            opened.append(post(live.url, "/rooms", {"lesson": LESSON}, headers=forged))
        err = post(live.url, "/rooms", {"lesson": LESSON}, status=429, headers={"X-Forwarded-For": "10.9.9.1"})
        assert "EXPLORER_ROOMS_PER_ADDRESS" in err["error"]["message"]
        assert {rooms.get(r["room"]).owner for r in opened} == {"127.0.0.1"}
    for r in opened:
        post(live.url, f"/rooms/{r['room']}/end", {"teacher_key": r["teacher_key"]})


def test_behind_a_configured_proxy_the_client_it_forwarded_counts(proxied):
    rooms, opened = proxied.app.state.rooms, []
    with room_caps(proxied, per_address=2):
        for _ in range(2):
            opened.append(post(proxied.url, "/rooms", {"lesson": LESSON}, headers={"X-Forwarded-For": "10.9.0.1"}))
        post(proxied.url, "/rooms", {"lesson": LESSON}, status=429, headers={"X-Forwarded-For": "6.6.6.6, 10.9.0.1"})
        opened.append(post(proxied.url, "/rooms", {"lesson": LESSON}, headers={"X-Forwarded-For": "10.9.0.2"}))
        assert [rooms.get(r["room"]).owner for r in opened] == ["10.9.0.1", "10.9.0.1", "10.9.0.2"]
    for r in opened:
        post(proxied.url, f"/rooms/{r['room']}/end", {"teacher_key": r["teacher_key"]})


@pytest.mark.parametrize("host", ["a" * 4000, "evil.example/x?", "a" * 300 + ".example", "x.example:99999"])
def test_a_forwarded_host_that_names_no_host_is_ignored_never_a_500(proxied, host):
    zxingcpp = pytest.importorskip("zxingcpp")
    from PIL import Image

    made = post(proxied.url, "/rooms", {"lesson": LESSON}, headers={"X-Forwarded-Host": host})
    own = f"http://127.0.0.1:{proxied.port}/lesson/{made['room']}"  # the Host the request was sent to
    assert made["join_url"] == own
    for kind in ("svg", "png"):
        r = httpx.get(f"{proxied.url}/rooms/{made['room']}/qr.{kind}", headers={"X-Forwarded-Host": host}, timeout=30)
        assert r.status_code == 200, r.text
    found = zxingcpp.read_barcodes(Image.open(io.BytesIO(r.content)))
    assert [b.text for b in found] == [own]
    good = {"X-Forwarded-Host": "class.example:8443", "X-Forwarded-Proto": "https"}
    fine = post(proxied.url, "/rooms", {"lesson": LESSON}, headers=good)
    assert fine["join_url"].startswith("https://class.example:8443/lesson/")  # a trusted proxy's good host is used
    for r in (made, fine):
        post(proxied.url, f"/rooms/{r['room']}/end", {"teacher_key": r["teacher_key"]})


def test_a_forwarded_host_from_anyone_else_is_not_believed(live):
    good = {"X-Forwarded-Host": "class.example:8443", "X-Forwarded-Proto": "https"}
    made = post(live.url, "/rooms", {"lesson": LESSON}, headers=good)
    assert made["join_url"] == f"http://127.0.0.1:{live.port}/lesson/{made['room']}"
    post(live.url, f"/rooms/{made['room']}/end", {"teacher_key": made["teacher_key"]})


@pytest.fixture()
def room(live):
    made = post(live.url, "/rooms", {"lesson": LESSON})
    live.app.state.rooms.joined.clear()
    yield made
    httpx.post(f"{live.url}/rooms/{made['room']}/end", json={"teacher_key": made["teacher_key"]}, timeout=30)


def teacher(live, room: dict) -> dict:
    """The teacher's view, peeking (the class's answers before the reveal too)."""
    return get(live.url, f"/rooms/{room['room']}?peek=1", headers={"X-Teacher-Key": room["teacher_key"]})


def test_a_locked_room_refuses_a_late_join_with_a_message_for_the_phone(live, room):
    code, key = room["room"], room["teacher_key"]
    ann = join(live.url, code, "Ann")
    post(live.url, f"/rooms/{code}/lock", {"teacher_key": "guess", "locked": True}, status=403)
    post(live.url, f"/rooms/{code}/lock", {"teacher_key": key, "locked": "yes"}, status=400)
    assert post(live.url, f"/rooms/{code}/lock", {"teacher_key": key, "locked": True})["locked"] is True
    late = post(live.url, f"/rooms/{code}/join", {"nickname": "Late"}, status=403)["error"]
    assert late["code"] == "room_locked"
    assert late["message"] == f"Room {code} is locked: ask your teacher to let you in."
    assert post(live.url, f"/rooms/{code}/join", {"student": ann})["student"] == ann  # a reload: still in
    view = teacher(live, room)
    assert view["locked"] is True and [s["nickname"] for s in view["students"]] == ["Ann"]
    post(live.url, f"/rooms/{code}/lock", {"teacher_key": key, "locked": False})
    assert join(live.url, code, "Late") != ann


def test_a_removed_students_answers_leave_the_aggregate_and_the_results(live, room):
    code, key = room["room"], room["teacher_key"]
    ann, bob = join(live.url, code, "Ann"), join(live.url, code, "Bob")
    post(live.url, f"/rooms/{code}/answers", {"student": ann, "step": 0, "answer": "fox"})
    post(live.url, f"/rooms/{code}/answers", {"student": bob, "step": 0, "answer": "dog"})
    students = teacher(live, room)["students"]
    assert [(s["nickname"], s["n_answers"]) for s in students] == [("Ann", 1), ("Bob", 1)]
    bob_id = students[1]["id"]
    post(live.url, f"/rooms/{code}/remove", {"teacher_key": "guess", "student": bob_id}, status=403)
    post(live.url, f"/rooms/{code}/remove", {"teacher_key": key, "student": bob_id})
    view = teacher(live, room)
    assert view["answers"] == {"fox": 1} and view["n_students"] == 1 and view["n_answered"] == 1
    assert [s["nickname"] for s in view["students"]] == ["Ann"]
    post(live.url, f"/rooms/{code}/step", {"teacher_key": key})
    results = get(live.url, f"/rooms/{code}/results", headers={"X-Teacher-Key": key})
    assert [(a["answer"], a["nicknames"]) for a in results["steps"][0]["answers"]] == [("fox", ["Ann"])]
    csv = httpx.get(f"{live.url}/rooms/{code}/results?format=csv", headers={"X-Teacher-Key": key}).text
    assert "dog" not in csv and "Bob" not in csv
    gone = post(live.url, f"/rooms/{code}/answers", {"student": bob, "step": 1, "answer": "x"}, status=403)
    assert gone["error"]["code"] == "removed"
    assert get(live.url, f"/rooms/{code}", status=403, headers={"X-Student": bob})["error"]["code"] == "removed"
    post(live.url, f"/rooms/{code}/remove", {"teacher_key": key, "student": bob_id}, status=400)


def test_a_result_is_read_only_with_the_students_own_secret(live, room):
    code = room["room"]
    ann, bob = join(live.url, code, "Ann"), join(live.url, code, "Bob")
    post(live.url, f"/rooms/{code}/answers", {"student": ann, "step": 0, "answer": "fox"})
    assert get(live.url, f"/rooms/{code}", headers={"X-Student": ann})["mine"]["answer"] == "fox"
    assert get(live.url, f"/rooms/{code}", headers={"X-Student": bob})["mine"] is None
    ann_id = next(s["id"] for s in teacher(live, room)["students"] if s["nickname"] == "Ann")
    for other in (ann_id, "made-up"):  # her public id, a guess
        err = get(live.url, f"/rooms/{code}", status=403, headers={"X-Student": other})["error"]
        assert (err["code"], err["message"]) == ("not_joined", "Join the room first: reload this page.")
    for other in (ann_id, "made-up", "\u0000\u202e"):
        err = post(live.url, f"/rooms/{code}/answers", {"student": other, "step": 0, "answer": "dog"}, status=403)
        assert err["error"]["code"] == "not_joined"
    assert teacher(live, room)["answers"] == {"fox": 1}
    results = get(live.url, f"/rooms/{code}/results", headers={"X-Teacher-Key": room["teacher_key"]})
    body = str(teacher(live, room)) + str(results)
    assert ann not in body and bob not in body  # the secrets are the students' alone


def test_nicknames_reach_the_results_without_hidden_characters(live, room):
    code, key = room["room"], room["teacher_key"]
    marks = "\u0000\u202e\u200b\u2066\u200f\u061c"
    made = post(live.url, f"/rooms/{code}/join", {"nickname": f"{marks[0]}A{marks[1:3]}nn{marks[3:]}"})
    assert made["nickname"] == "Ann"
    post(live.url, f"/rooms/{code}/answers", {"student": made["student"], "step": 0, "answer": f"fo{marks}x"})
    assert [s["nickname"] for s in teacher(live, room)["students"]] == ["Ann"]
    data = httpx.get(f"{live.url}/rooms/{code}/results", headers={"X-Teacher-Key": key}).text
    csv = httpx.get(f"{live.url}/rooms/{code}/results?format=csv", headers={"X-Teacher-Key": key}).text
    assert '"nicknames":["Ann"]' in data and ",fox,1," in csv and ",Ann" in csv
    shown = data.encode().decode("unicode_escape") + csv  # JSON's \u escapes read back as characters
    assert not any(m in shown for m in marks)
    post(live.url, f"/rooms/{code}/join", {"nickname": ["x"]}, status=400)


def test_joins_from_one_address_are_paced_a_class_at_once(live, room):
    code = room["room"]
    with room_caps(live, joins_per_minute=60):
        secrets = [join(live.url, code) for _ in range(60)]  # a class behind one school router joins at once
        err = post(live.url, f"/rooms/{code}/join", {}, status=429)["error"]
        assert "EXPLORER_ROOMS_JOINS_PER_MINUTE" in err["message"] and "wait" in err["message"]
        assert post(live.url, f"/rooms/{code}/join", {"student": secrets[0]})["student"] == secrets[0]  # a reload
    assert len(set(secrets)) == 60 and teacher(live, room)["n_students"] == 60


HOSTS = [  # (a Host or X-Forwarded-Host, what a link may name: None for ignored)
    ("class.example", "class.example"),
    ("class.example:8443", "class.example:8443"),
    ("192.168.1.20:7860", "192.168.1.20:7860"),
    ("[::1]:7860", "[::1]:7860"),
    ("", None),
    ("a" * 4000, None),
    (".".join(["a" * 63] * 4), None),  # 255 characters: past a DNS name's 253
    ("evil.example/x", None),
    ("evil.example@x", None),
    ("x.example:99999", None),
    ("x.example:", None),
    ("-x.example", None),
    ("::1", None),
]


@pytest.mark.parametrize(("value", "kept"), HOSTS, ids=[h[:20] or "empty" for h, _ in HOSTS])
def test_only_a_host_name_reaches_a_link(value, kept):
    from explorer.serving.reach import host_header

    assert host_header(value) == kept


def test_a_qr_code_of_a_link_too_long_is_none_never_an_error():
    from explorer.serving.reach import qr_code

    assert qr_code("http://x.example/" + "a" * 3000, "png") is None
    assert qr_code("http://x.example/" + "a" * 3000) is None
    assert qr_code("http://x.example/" + "a" * 2000, "png")[:8] == b"\x89PNG\r\n\x1a\n"  # still fits one
