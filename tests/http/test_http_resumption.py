"""Legacy SSE streams over real HTTP: nothing a client was owed is lost when it goes away,
and no stream queues without bound for a client that reads slowly.

* A client that drops a POST's stream early and resumes with ``Last-Event-ID`` gets its
  answer, however many events came while it was away (those beyond ``event_log_size`` are
  gone; the answer never is).
* A resumption of a stream the session no longer keeps is told, per request, that its
  answer is lost, instead of getting an empty stream.
* A slow reader holds the handler back (it waits for room, nothing is dropped); a GET
  stream fed announcements is cut off instead, and resumes from its last event.

The everything server plus the flood server's ``chatter`` tool (``count`` progress
notifications of ``size`` characters, then its answer), served by uvicorn in a thread on
127.0.0.1; the client side is raw sockets, every one with a timeout.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.asgi_driver import call as asgi_call
from support.asgi_driver import open_session, request
from support.flood_wire import (
    Response,
    Wire,
    call,
    get,
    open_sessions,
    post,
    sse_events,
    tool_text,
    works,
)
from support.raw_http import Running, running

from mcpgen.runtime.http.endpoint import McpHttpApp
from mcpgen.runtime.http.streams import ClientWatch, Stream
from mcpgen.runtime.core.limits import Limits

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from examples.everything.server import build_app  # noqa: E402
from mcpgen.generated.v2026_07_28.server import Context  # noqa: E402
from peers.flood_server import chatter  # noqa: E402

LIMITS = Limits(finished_streams=2, stream_queue=8)


@pytest.fixture(scope="module")
def served() -> Iterator[Running]:
    app = build_app(LIMITS, name="mcpgen-resume")
    app.add_tool(chatter)
    with running("httptools", limits=LIMITS, server=app.server) as server:
        yield server


def session_of(port: int) -> str:
    session = open_sessions(port, 1)[0]
    works(port, session)
    return session


def events_of(wire: Wire, at_least: int) -> list[tuple[str | None, Any]]:
    """Read a chunked SSE body until ``at_least`` whole events have come; those events."""
    events: list[tuple[str | None, Any]] = []
    partial = b""
    while len(events) < at_least:
        chunk = wire.chunk()
        assert chunk is not None, "the stream ended early"
        whole, _, partial = (partial + chunk).rpartition(b"\n\n")
        if whole:
            events += sse_events(whole)
    return events


def resume(port: int, session: str, last: str) -> Response:
    wire = Wire(port)
    try:
        return wire.exchange(get(session, last))
    finally:
        wire.close()


def chatter_call(request_id: int, count: int, size: int) -> bytes:
    return call(request_id, "chatter", {"count": count, "size": size}, f"p{request_id}")


def test_a_client_that_left_early_gets_its_answer_on_resuming(served: Running) -> None:
    """300 progress notifications of 2,000 characters: the client reads two events, goes
    away, and resumes from the last it read, which has long left the 256-event log."""
    session = session_of(served.port)
    wire = Wire(served.port)
    wire.send(post(chatter_call(41, 300, 2000), session))
    assert wire.head().status == 200
    seen = events_of(wire, 2)
    wire.close()
    last = seen[-1][0]
    assert last is not None
    time.sleep(1.0)  # away for a while: the handler is done by the time it is back
    replayed = resume(served.port, session, last)
    assert replayed.status == 200
    answers = [data for _, data in replayed.events if data and "id" in data]
    assert answers, f"no answer among {len(replayed.events)} replayed events"
    assert answers[0]["id"] == 41
    assert tool_text(answers[0]) == "chattered 300 times"
    numbers = [int(str(event_id).rpartition(".")[2]) for event_id, _ in replayed.events]
    assert numbers == sorted(numbers) and numbers[0] > int(last.rpartition(".")[2])
    works(served.port, session)


def test_resuming_a_stream_no_longer_kept_says_its_answer_is_lost(served: Running) -> None:
    session = session_of(served.port)
    wire = Wire(served.port)
    wire.send(post(chatter_call(51, 50, 100), session))
    assert wire.head().status == 200
    first = events_of(wire, 1)[-1][0]
    wire.close()
    assert first is not None
    for request_id in range(52, 52 + LIMITS.finished_streams + 1):  # newer streams push it out
        done = Wire(served.port).exchange(post(chatter_call(request_id, 2, 10), session))
        assert tool_text(done.json()) == "chattered 2 times"
    lost = resume(served.port, session, first)
    assert lost.status == 200
    assert [data["id"] for _, data in lost.events] == [51]
    error = lost.events[0][1]["error"]
    assert "no longer kept" in error["message"] and "finished_streams" in error["message"]
    works(served.port, session)


def test_a_slow_reader_holds_the_handler_back_and_misses_nothing(served: Running) -> None:
    """3,000 events of 4,000 characters (more than the sockets' buffers hold) through a
    queue of 8: while the reader pauses, the handler waits with no more than 8 frames
    queued; then the reader gets every event, in order, and the answer last."""
    session = session_of(served.port)
    app = served.server.config.app
    assert isinstance(app, McpHttpApp)
    count = 3000
    wire = Wire(served.port)
    try:
        wire.send(post(chatter_call(61, count, 4000), session))
        assert wire.head().status == 200
        time.sleep(0.5)  # not reading: the socket's buffers and the queue fill up
        legacy = app.sessions.get(session)
        assert legacy is not None
        stream = legacy.router.by_request[61]
        assert len(stream.frames) <= LIMITS.stream_queue  # queued: no more than the bound
        assert stream.counter < count  # and the handler is held back, not done
        events = events_of(wire, count + 2)  # the priming event, the notifications, the answer
    finally:
        wire.close()
    progress = [data["params"]["progress"] for _, data in events[1:-1]]
    assert progress == list(range(1, count + 1))
    assert tool_text(events[-1][1]) == f"chattered {count} times"
    works(served.port, session)


def test_a_get_stream_whose_client_left_records_announcements_for_its_return(
    served: Running,
) -> None:
    """Announcements made while a GET stream's client is away wait in the stream's record;
    resuming from its last event gets them, and the stream is the session's GET stream
    again."""
    session = session_of(served.port)
    other = session_of(served.port)
    trigger = call(71, "test_trigger_tool_change")

    def announce() -> None:
        caller = Wire(served.port)
        try:
            assert caller.exchange(post(trigger, other)).status == 200
        finally:
            caller.close()

    listener = Wire(served.port)
    listener.send(get(session))
    assert listener.head().status == 200
    events_of(listener, 1)  # the priming event
    announce()
    last = events_of(listener, 1)[-1][0]
    listener.close()
    assert last is not None
    for _ in range(3):
        announce()
    resumed = Wire(served.port)
    try:
        resumed.send(get(session, last))
        assert resumed.head().status == 200
        missed = events_of(resumed, 3)
        assert [data["method"] for _, data in missed] == ["notifications/tools/list_changed"] * 3
        announce()  # the resumed stream goes on as the GET stream
        assert len(events_of(resumed, 1)) == 1
    finally:
        resumed.close()
    works(served.port, session)


# -- the queue itself ---------------------------------------------------------------------


class Silent:
    """A client that never disconnects (its ``receive`` never returns)."""

    async def receive(self) -> dict[str, Any]:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def test_a_handler_waits_for_room_and_an_announcement_never_does() -> None:
    async def scenario() -> None:
        own = Stream("s1", ["r"], log_size=256, capacity=4)
        reader = ClientWatch(Silent().receive)
        for n in range(4):
            await own.push(b"n%d" % n, False)
        assert (await own.next(reader)) is not None  # the reader attaches, takes one
        await own.push(b"n4", False)  # room for it
        blocked = asyncio.ensure_future(own.push(b"n5", False))
        await asyncio.sleep(0.05)
        assert not blocked.done(), "a handler's frame went past a full queue"
        assert (await own.next(reader)) is not None
        await asyncio.wait_for(blocked, 1)  # room again: the handler goes on
        await own.push(b"answer", True)  # answers never wait, even on a full queue
        assert own.done and len(own.frames) == 5

        shared = Stream("s2", log_size=256, capacity=4)
        shared.shared = True
        await shared.push(b"a0", False)
        watcher = ClientWatch(Silent().receive)
        assert (await shared.next(watcher)) is not None
        for n in range(1, 10):  # nobody reads: cut off once 4 wait, never blocking
            await asyncio.wait_for(shared.push(b"a%d" % n, False), 1)
        assert shared.reader is None and not shared.frames
        again = ClientWatch(Silent().receive)
        replay = shared.resume(again, "s2.1")
        assert [data for _, data in replay] == [b"a%d" % n for n in range(1, 10)]
        assert [event_id for event_id, _ in replay] == [f"s2.{n}" for n in range(2, 11)]
        await shared.push(b"a10", False)
        assert (await shared.next(again)) == (11, b"a10", False, None)
        for watch in (reader, watcher, again):
            watch.stop()

    asyncio.run(asyncio.wait_for(scenario(), 10))


def test_a_client_gone_before_the_first_frame_holds_no_handler_and_no_session() -> None:
    """The client leaves right after its request: the handler runs on to its answer (its
    frames recorded, nothing waiting for a reader), and the session is free again."""

    async def scenario() -> None:
        limits = Limits(stream_queue=4)
        built = build_app(limits, name="mcpgen-gone")

        @built.tool
        async def late_chatter(ctx: Context) -> str:
            """Wait a moment, then report 50 progress notifications."""
            await asyncio.sleep(0.05)
            for step in range(50):
                await ctx.report_progress(step + 1, 50)
            return "chattered late"

        app = built.http_app(limits=limits)
        headers = await open_session(app)
        gone = asyncio.Event()
        gone.set()  # the client is gone as soon as its body is read
        params = {"name": "late_chatter", "arguments": {}, "_meta": {"progressToken": 1}}
        await asgi_call(app, body=request(7, "tools/call", params), headers=headers, leave=gone)
        legacy = app.sessions.get(headers["mcp-session-id"])
        assert legacy is not None
        for _ in range(500):
            if not legacy.busy:
                break
            await asyncio.sleep(0.01)
        assert not legacy.busy, "the handler waits for a reader that is gone"
        assert legacy.router.by_request == {}
        simple = request(8, "tools/call", {"name": "test_simple_text", "arguments": {}})
        reply = await asgi_call(app, body=simple, headers=headers)
        assert tool_text(reply.messages()[-1]) == "This is a simple text response for testing."

    asyncio.run(asyncio.wait_for(scenario(), 10))


def test_a_listen_stream_cut_off_for_falling_behind_ends_with_its_result() -> None:
    """A 2026-07-28 listen stream whose client reads nothing while changes are announced:
    the announcements never wait for it; it is cut off, and ends as the spec has a server
    end a listen: its completion result, then the end of the response."""

    async def scenario() -> None:
        limits = Limits(stream_queue=4)
        built = build_app(limits, name="mcpgen-listen")
        app = built.http_app(limits=limits)
        reading = asyncio.Event()  # the client reads only once this is set
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            if not sent:
                meta = {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
                params = {"notifications": {"toolsListChanged": True}, "_meta": meta}
                body = request("L1", "subscriptions/listen", params)
                return {"type": "http.request", "body": body, "more_body": False}
            await asyncio.Event().wait()  # never disconnects
            raise AssertionError("unreachable")

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)
            if message.get("more_body") and len(sent) > 2:  # after the acknowledgement
                await reading.wait()

        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "subscriptions/listen",
            "host": "127.0.0.1",
        }
        scope = {
            "type": "http",
            "method": "POST",
            "path": "/mcp",
            "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
        }
        served = asyncio.ensure_future(app(scope, receive, send))
        while len(sent) < 2:
            await asyncio.sleep(0.01)
        for _ in range(20):  # each returns at once: nothing waits for the listener
            await asyncio.wait_for(built.server.notify_changed("tools"), 1)
        reading.set()
        await asyncio.wait_for(served, 5)
        assert sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
        data = sent[-2]["body"].split(b"data: ", 1)[1]
        assert json.loads(data) == {
            "jsonrpc": "2.0",
            "id": "L1",
            "result": {
                "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/subscriptionId": "L1"},
            },
        }

    asyncio.run(asyncio.wait_for(scenario(), 10))
