"""Workers killed with ``kill -9`` mid-stream, behind haproxy running the deployment
guide's configuration, three uvicorn processes sharing one real redis-server: a client
whose stream died with its worker resumes through the balancer with ``Last-Event-ID`` on
another and gets every event once; a call whose worker died is answered once, with an
error saying so, never twice; the session goes on on the workers left."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mcpgen.runtime.cluster.events import STOPPED
from support.checkout import ROOT
from support.http_endpoint import Endpoint, Event, Legacy, data_events, open_session
from support.http_endpoint import request, sse
from support.workers import Workers, workers

pytestmark = pytest.mark.slow
VERSION = "2025-11-25"


@pytest.fixture
def cluster(tmp_path: Any) -> Iterator[Workers]:
    with workers("support.failover_app:app", 3, tmp_path, app_dir=ROOT / "tests") as up:
        yield up


def through(port: int, session: Legacy) -> Legacy:
    """The same session, spoken to at the worker on ``port``."""
    return Legacy(Endpoint(port), session.version, session.session_id, None)


def read_on(response_events: Iterator[Event], into: list[Event]) -> None:
    """Whatever else a dying stream still carries, until it breaks."""
    try:
        into.extend(data_events(response_events))
    except Exception:  # the worker died: the connection breaks
        pass


def test_a_call_whose_worker_is_killed_mid_stream_resumes_elsewhere_and_is_answered_once(
    cluster: Workers,
) -> None:
    """A call streams a log line every 50 ms from worker 0; the client reads five, worker 0
    is killed; resumed through the balancer after the last event it read, the client gets
    the lines worker 0 sent but it never read, each once, then one error for the call."""
    front = open_session(Endpoint(cluster.port), VERSION)
    held = through(cluster.ports[0], front)
    call = request(7, "tools/call", {"name": "steps", "arguments": {"n": 200, "delay": 0.05}})
    read: list[Event] = []
    with held.stream(call) as response:
        events = sse(response)
        read += data_events(events, 5)
        cluster.kill(0)
        read_on(events, read)
    last = read[-1].id
    assert last is not None
    with front.stream(None, method="GET", **{"last-event-id": last}) as resumed:
        rest = data_events(sse(resumed))
    messages = [json.loads(e.data) for e in read + rest]
    lines = [m["params"]["data"] for m in messages if m.get("method") == "notifications/message"]
    assert lines == [f"step {i}" for i in range(len(lines))], lines  # in order, each once
    assert 5 <= len(lines) < 200
    answers = [m for m in messages if m.get("id") == 7]
    assert len(answers) == 1 and answers[0]["error"]["message"] == STOPPED, answers
    assert front.call("touch")["content"][0]["text"] == "touched"  # the session goes on


def test_a_get_stream_whose_worker_is_killed_resumes_elsewhere_every_message_once(
    cluster: Workers,
) -> None:
    """The client's GET stream is held by worker 0 and hears three updates; worker 0 is
    killed; three more updates are made through the balancer while no stream is open;
    resumed through the balancer, the stream replays those three, then hears two more
    live: eight updates, each once."""
    front = open_session(Endpoint(cluster.port), VERSION)
    subscribed = front.post(request(1, "resources/subscribe", {"uri": "mem://note"}))
    assert subscribed.status_code == 200, subscribed.text
    heard: list[Event] = []

    def listen(session: Legacy, count: int, opened: threading.Event, **extra: str) -> None:
        with session.stream(None, method="GET", **extra) as response:
            opened.set()
            heard.extend(data_events(sse(response), count))

    def touches(n: int) -> None:
        for _ in range(n):
            assert front.call("touch")["content"][0]["text"] == "touched"

    opened = threading.Event()
    held = through(cluster.ports[0], front)
    listener = threading.Thread(target=listen, args=(held, 3, opened), daemon=True)
    listener.start()
    assert opened.wait(10)
    time.sleep(0.3)
    touches(3)
    listener.join(10)
    assert len(heard) == 3, heard
    cluster.kill(0)
    touches(3)  # nobody listening; worker 0's share of them is tried elsewhere
    opened = threading.Event()
    resume = {"last-event-id": heard[-1].id or ""}
    listener = threading.Thread(target=listen, args=(front, 5, opened), kwargs=resume, daemon=True)
    listener.start()
    assert opened.wait(10)
    time.sleep(0.3)
    touches(2)
    listener.join(10)
    assert not listener.is_alive(), f"heard {len(heard)} of 8"
    methods = {json.loads(e.data)["method"] for e in heard}
    assert methods == {"notifications/resources/updated"}
    assert len(heard) == 8 and len({e.id for e in heard}) == 8
