"""A flood per limit of ``runtime.core.limits.Limits``: the server's memory stays within a
stated bound, and it still answers a valid request afterwards.

Each test floods a real server process (``tests/peers/flood_server.py``: the everything
server with limits of the test's choosing) and reads its own memory from
``/proc/<pid>/status``: ``VmRSS`` before and after, ``VmHWM`` for the peak in between.
"Growth" is the peak (or the final RSS, if higher) minus the RSS before. Each bound is
stated where it is asserted, with what it is derived from; the figures go to the run's
summary (``REPORT``). Most floods are preceded by a warm-up flood of the same kind, so the
bound measures what the flood holds, not the allocator arenas and lazy imports any first
use of a code path costs.

The oversize stdio line is covered by tests/aio/test_stdio_limits.py, the behaviour of the
header timeout by tests/http/test_http_serve.py; here only memory and liveness.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.checkout import REPORT
from support.flood_wire import (
    SIMPLE_TEXT,
    Memory,
    ServerProcess,
    Wire,
    call,
    calls,
    get,
    message,
    nested,
    once,
    open_get,
    open_sessions,
    open_sse,
    pipelined,
    post,
    send_from_thread,
    sse_post,
    status_of,
    stdio_ping,
    stdio_session,
    tool_text,
    works,
)

from mcpgen.runtime import INVALID_PARAMS, INVALID_REQUEST
from mcpgen.runtime.core.limits import DEFAULT

pytestmark = [
    # Slow: each test floods a real server process (``make unit`` leaves this module out).
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc"),
]

MiB = 1024  # the figures are in KiB
#: A request for an HTTP+SSE stream, and the body of an ``initialize`` (2025-11-25).
SSE_GET = b"GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"
INITIALIZE_BODY = message(
    0,
    "initialize",
    {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "flood", "version": "0"},
    },
)
READ_TIMEOUT = 30.0
Start = Callable[..., ServerProcess]


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Start]:
    """Start a flood server (``transport``, then ``Limits`` fields); killed at teardown."""
    started: list[ServerProcess] = []

    def run(transport: str, **limits: float) -> ServerProcess:
        server = ServerProcess(tmp_path / f"server-{len(started)}.log", transport, limits)
        started.append(server)
        return server

    yield run
    for server in started:
        server.kill()


def report(name: str, memory: Memory, bound: int, extra: str = "") -> None:
    REPORT[f"flood, {name}"] = f"{memory}; bound {bound / MiB:g} MiB{extra}"


# -- stdio ---------------------------------------------------------------------------------------


#: The in-flight flood. Before the bound, the server read all 100,000 requests while
#: nobody read its stdout and held a task and an answer for each: RSS 28 -> 353 MiB.
FLOOD_CALLS = 100_000
IN_FLIGHT = 16
#: Bytes of requests a server may take in before it stops reading: its StreamReader stops
#: at twice its 256 KiB piece size, plus one pipe read, plus the few requests whose
#: handlers hold the in-flight slots (the kernel's 64 KiB pipe buffer comes on top).
#: Measured: 640 KiB.
READ_BOUND = 2 * 1024 * 1024
#: What the server may grow by while stalled and until the flood is answered: the reader's
#: buffer (up to ~600 KiB), the write buffer (64 KiB high-water mark plus one answer per
#: in-flight handler) and 16 tasks. Measured 1.3-1.4 MiB with the runtime patched to hold
#: each slot until its answer is written (it frees the slot before: see the commit that
#: added this file). 8 MiB leaves room for allocator noise, 40x below the unbounded 325.
IN_FLIGHT_BOUND = 8 * MiB


def test_in_flight_requests_hold_back_the_reader(start: Start) -> None:
    server = start("stdio", max_in_flight=IN_FLIGHT)
    lines = stdio_session(server)
    assert server.proc.stdin is not None
    stdin = server.proc.stdin.fileno()
    warm_up, _ = send_from_thread(stdin, calls(1, 2000))
    assert all(tool_text(a) == SIMPLE_TEXT for a in lines.read(2000))
    warm_up.join(READ_TIMEOUT)
    memory = Memory.of(server)
    flood = calls(10_001, FLOOD_CALLS)
    writer, written = send_from_thread(stdin, flood)
    last, still_since = -1, time.monotonic()
    deadline = still_since + READ_TIMEOUT
    while time.monotonic() < deadline and writer.is_alive():
        time.sleep(0.1)
        if written[0] != last:
            last, still_since = written[0], time.monotonic()
        elif time.monotonic() - still_since > 1.0:
            break  # the server stopped reading
    stalled = Memory.of(server)
    taken = written[0]
    answers = lines.read(FLOOD_CALLS, timeout=60)  # reading stdout lets the server go on
    writer.join(READ_TIMEOUT)
    stdio_ping(server, lines)
    memory.measure(server)
    report(
        "stdio in-flight",
        memory,
        IN_FLIGHT_BOUND,
        f"; {FLOOD_CALLS} calls, {taken} of {len(flood)} bytes read while stdout was not"
        f" read (RSS then {stalled.before / MiB:.1f} MiB)",
    )
    assert taken < READ_BOUND, f"the server read {taken} bytes while nobody read its stdout"
    assert memory.growth < IN_FLIGHT_BOUND, memory
    ids = Counter(answer["id"] for answer in answers)
    assert set(ids) == set(range(10_001, 10_001 + FLOOD_CALLS)) and max(ids.values()) == 1
    assert all(tool_text(answer) == SIMPLE_TEXT for answer in answers)


#: Refused before anything decodes them (the depth limit is 64): nothing is held.
DEEP = 10_000
NESTING_BOUND = 4 * MiB


def refused_over_stdio(start: Start, version: str, frame: bytes, name: str) -> None:
    """Lines of ``frame``, each refused with one -32600: a warm-up of 100, then 1,000."""
    server = start("stdio")
    lines = stdio_session(server, version)
    assert server.proc.stdin is not None
    stdin = server.proc.stdin.fileno()

    def flood(count: int) -> None:
        writer, _ = send_from_thread(stdin, (frame + b"\n") * count)
        answers = lines.read(count)
        writer.join(READ_TIMEOUT)
        assert all(a["error"]["code"] == INVALID_REQUEST for a in answers), answers[:3]

    flood(100)
    memory = Memory.of(server)
    flood(1000)
    stdio_ping(server, lines)
    memory.measure(server)
    report(f"stdio {name}", memory, NESTING_BOUND, "; 1000 lines")
    assert memory.growth < NESTING_BOUND, memory


def test_deeply_nested_messages_are_refused_over_stdio(start: Start) -> None:
    refused_over_stdio(start, "2025-11-25", nested(1, DEEP), f"nesting ({DEEP} deep)")


#: Batches (2025-03-26) over ``max_batch``: 1,000 of 1,000 pings each, each refused with
#: one -32600 instead of 1,000 answers. Measured growth: under 0.5 MiB. Bound: 4 MiB.
#: (The length is checked once the batch is split into its elements, so one batch near the
#: 4 MiB message limit costs a transient peak: +150 MiB measured for 2,000,000 elements.)
def test_batches_over_the_limit_are_refused_whole(start: Start) -> None:
    batch = b"[" + b",".join(message(i, "ping") for i in range(1000)) + b"]"
    refused_over_stdio(start, "2025-03-26", batch, "batches (of 1000 pings)")


# -- stdio: resource subscriptions ---------------------------------------------------------------


#: ``test://template/{id}/data`` (the everything server's template) matches any ``id``.
def subscriptions(first: int, ids: list[str]) -> bytes:
    return b"".join(
        message(first + n, "resources/subscribe", {"uri": f"test://template/{i}/data"}) + b"\n"
        for n, i in enumerate(ids)
    )


#: 500 subscriptions to 100 KiB URIs (a template matches them all). Before the length
#: limit each was held by its session: 37 -> 85 MiB (as first measured;
#: here without the limit: +49 MiB). Refused for their length now, none is held. Then the
#: session fills up to ``max_subscriptions`` (1,000) with URIs of the longest length
#: allowed (2,048 characters, about 2.2 MiB held with the set's table), and 500 more are
#: refused for the count. A warm-up of 200 long URIs first lets the allocator's heap grow
#: to what reading such lines takes (with a warm-up of 50 the growth measured 1.9-5.6 MiB,
#: the same lines' transient copies; after 200: 0.3-0.4 MiB, what is held fitting in the
#: heap those left free). Bound: 8 MiB, a sixth of the +49 MiB without the limit.
LONG_URIS = 500
LONG_URI = 100 * 1024
WARM_UP = 200
SUBSCRIPTIONS_BOUND = 8 * MiB


def test_subscriptions_are_bounded_in_uri_length_and_count(start: Start) -> None:
    """Subscriptions to 100 KiB URIs are refused and none is held; a session holds at most
    ``max_subscriptions`` URIs of the longest length allowed; the server's growth stays
    within the bound, and it answers a ping after each flood."""
    server = start("stdio")
    lines = stdio_session(server)
    assert server.proc.stdin is not None
    stdin = server.proc.stdin.fileno()
    limits = DEFAULT
    # the longest id that keeps the URI within max_uri_length
    longest = limits.max_uri_length - len("test://template//data")

    def flood(frames: bytes, count: int) -> list[Any]:
        writer, _ = send_from_thread(stdin, frames)
        answers = lines.read(count, timeout=60)
        writer.join(READ_TIMEOUT)
        return answers

    def refused_for(answers: list[Any], limit: str) -> bool:
        return all(
            a["error"]["code"] == INVALID_PARAMS and a["error"]["data"]["limit"] == limit
            for a in answers
        )

    long_ids = ["x" * LONG_URI + str(n) for n in range(LONG_URIS)]
    warm_up = long_ids[:WARM_UP]
    assert refused_for(flood(subscriptions(1, warm_up), WARM_UP), "max_uri_length")
    memory = Memory.of(server)
    assert refused_for(flood(subscriptions(1000, long_ids), LONG_URIS), "max_uri_length")
    stdio_ping(server, lines)
    taken_long = Memory.of(server).before - memory.before
    full = [str(n).rjust(longest, "y") for n in range(limits.max_subscriptions)]
    answers = flood(subscriptions(10_000, full), len(full))
    assert all(a["result"] == {} for a in answers), answers[:3]
    more = [str(n).rjust(longest, "z") for n in range(LONG_URIS)]
    assert refused_for(flood(subscriptions(20_000, more), len(more)), "max_subscriptions")
    stdio_ping(server, lines)
    memory.measure(server)
    report(
        "stdio subscriptions",
        memory,
        SUBSCRIPTIONS_BOUND,
        f"; {LONG_URIS} x {LONG_URI // 1024} KiB URIs refused (RSS {taken_long / MiB:+.1f} MiB),"
        f" then {len(full)} x {limits.max_uri_length} characters held and {len(more)} refused",
    )
    assert memory.growth < SUBSCRIPTIONS_BOUND, memory


# -- HTTP: legacy sessions --------------------------------------------------------------------


#: 10,500 sessions never closed. Before the cap every one stayed, ~3.7 KiB each (measured
#: here with no cap: 18 MiB per 5,000), 38 MiB in all. With the cap at 200 the table holds
#: 0.7 MiB, reached within the warm-up (measured: +1.5 MiB for the first 5,000 from a cold
#: start, then 0.0 for each further 5,000). 4 MiB: a tenth of the uncapped figure.
SESSIONS = 10_500
MAX_SESSIONS = 200
SESSIONS_BOUND = 4 * MiB


def test_legacy_sessions_beyond_the_cap_evict_the_oldest(start: Start) -> None:
    server = start("http", max_sessions=MAX_SESSIONS)
    open_sessions(server.port, 1000)  # a warm-up: the table is full
    memory = Memory.of(server)
    ids = open_sessions(server.port, SESSIONS)
    memory.measure(server)
    report("legacy sessions", memory, SESSIONS_BOUND, f"; {SESSIONS} sessions, cap 200")
    assert memory.growth < SESSIONS_BOUND, memory
    for evicted in (ids[0], ids[SESSIONS // 2], ids[-MAX_SESSIONS - 1]):
        assert status_of(server.port, post(message(2, "ping"), evicted)) == 404
    works(server.port, ids[-1])
    works(server.port, ids[-MAX_SESSIONS])  # the oldest one kept


#: Waves of 2,000 sessions, each wave after the previous one went idle for longer than the
#: timeout. Without expiry every wave would stay: 4 x 2,000 x 3.7 KiB = 29 MiB. With it the
#: server holds about one wave, and settles within the first two (the warm-up); measured
#: over the next four: under 1 MiB. 6 MiB: a fifth of what unexpired waves would hold.
IDLE_TIMEOUT = 0.5
WAVE = 2000
IDLE_BOUND = 6 * MiB


def test_idle_sessions_end_after_the_idle_timeout(start: Start) -> None:
    server = start("http", session_idle_timeout=IDLE_TIMEOUT, max_sessions=100_000)

    def wave() -> list[str]:
        time.sleep(IDLE_TIMEOUT + 0.2)
        return open_sessions(server.port, WAVE)

    wave()
    wave()  # a warm-up
    memory = Memory.of(server)
    ids = [wave() for _ in range(4)][-1]
    memory.measure(server)
    report("idle sessions", memory, IDLE_BOUND, f"; 4 waves of {WAVE}, timeout {IDLE_TIMEOUT} s")
    assert memory.growth < IDLE_BOUND, memory
    time.sleep(IDLE_TIMEOUT + 0.2)
    # Every idle session is over, whichever is asked first (here: the newest first).
    statuses = [status_of(server.port, post(message(2, "ping"), i)) for i in ids[::-1][:20]]
    works(server.port, open_sessions(server.port, 1)[0])
    assert statuses == [404] * 20, f"idle sessions still answered: {statuses}"


# -- HTTP: GET streams and their event logs ----------------------------------------------------


#: GET streams opened and abandoned (the client disconnects). Before, each one stayed:
#: ~2.1 KiB each (measured here with the release disabled: 6 MiB per 3,000), 10 MiB for
#: 5,000. The stream cap is set far above the flood so that only noticing the disconnect
#: can release them. Measured growth: 0.0 MiB.
GETS = 5000
GET_BOUND = 2 * MiB


def test_abandoned_get_streams_are_released(start: Start) -> None:
    server = start("http", max_get_streams=100_000)
    session = open_sessions(server.port, 1)[0]
    works(server.port, session)
    for _ in range(500):  # a warm-up
        open_get(server.port, session).close()
    memory = Memory.of(server)
    for _ in range(GETS):
        open_get(server.port, session).close()
    time.sleep(0.2)  # the last disconnects reach the server
    memory.measure(server)
    report("abandoned GET streams", memory, GET_BOUND, f"; {GETS} streams")
    assert memory.growth < GET_BOUND, memory
    works(server.port, session)


def test_a_second_get_stream_ends_the_first(start: Start) -> None:
    server = start("http", max_get_streams=1)
    session = open_sessions(server.port, 1)[0]
    works(server.port, session)
    first = open_get(server.port, session)
    second = open_get(server.port, session)
    try:
        first.chunk()  # the priming event (2025-11-25)
        assert first.chunk() is None, "the first stream did not end"
        second.chunk()
        assert second.quiet(0.3), "the second stream ended too"
        answer = once(server.port, post(call(8, "test_trigger_tool_change"), session))
        assert answer.status == 200 and "result" in answer.json(), answer
        event = second.chunk()
        assert event is not None and b"notifications/tools/list_changed" in event
    finally:
        first.close()
        second.close()


#: Long SSE streams: 4 of 10,000 progress notifications of 500 characters each. A session
#: keeps up to 64 finished streams for resumption, so an unbounded log would keep all of
#: them: 10.6 MiB a stream (measured with the log unbounded), 42 MiB for 4. With 32
#: events a stream (its answer kept besides): 0.1 MiB. The handler waits for the client
#: to read once ``stream_queue`` frames wait (before that bound it queued them all, about
#: 10 MiB at the peak of a stream). Measured after a warm-up: 0.3 MiB. 6 MiB: a seventh
#: of the unbounded figure.
EVENT_LOG = 32
CHATTER = 10_000
STREAMS = 4
EVENT_LOG_BOUND = 6 * MiB


def test_a_stream_keeps_only_its_last_events(start: Start) -> None:
    server = start("http", event_log_size=EVENT_LOG)
    session = open_sessions(server.port, 1)[0]
    works(server.port, session)
    wire = Wire(server.port)

    def chatter(request_id: int, count: int) -> list[tuple[str | None, Any]]:
        frame = call(request_id, "chatter", {"count": count, "size": 500}, f"p{request_id}")
        response = wire.exchange(post(frame, session))
        assert response.status == 200 and len(response.events) == count + 2, response.headers
        assert tool_text(response.events[-1][1]) == f"chattered {count} times"
        return response.events

    chatter(10, CHATTER)  # a warm-up
    memory = Memory.of(server)
    last_ids = [chatter(request_id, CHATTER)[-1][0] for request_id in range(STREAMS)]
    memory.measure(server)
    wire.close()
    report("event log", memory, EVENT_LOG_BOUND, f"; {STREAMS} streams of {CHATTER} events")
    assert memory.growth < EVENT_LOG_BOUND, memory
    # Resuming the last stream: from its oldest kept event, the rest of the log...
    last_id = last_ids[-1]
    assert last_id is not None
    name, _, counter = last_id.partition(".")
    oldest = int(counter) - EVENT_LOG + 1
    replayed = once(server.port, get(session, f"{name}.{oldest}"))
    assert [e[0] for e in replayed.events] == [
        f"{name}.{i}" for i in range(oldest + 1, oldest + EVENT_LOG)
    ]
    # ... and from one older (or any older), what is kept: the events that left the log
    # are gone, the answer never is.
    for older in (oldest - 1, 1):  # the log: the 32 progress events before the answer
        replayed = once(server.port, get(session, f"{name}.{older}"))
        kept = range(max(older + 1, oldest - 1), oldest + EVENT_LOG)
        assert [e[0] for e in replayed.events] == [f"{name}.{i}" for i in kept]
        assert tool_text(replayed.events[-1][1]) == f"chattered {CHATTER} times"
    works(server.port, session)


#: A slow reader: 100,000 progress notifications of 100 characters on a legacy SSE stream
#: whose client reads nothing for 3 s, then everything. Before the stream's queue was
#: bounded the handler queued them all at once (this test measured a peak 41 MiB over
#: the RSS before the flood, growing with the count). Now it
#: waits once ``stream_queue`` (64) frames wait besides what the socket buffers hold:
#: measured after a warm-up of the same flood: under 1 MiB. 4 MiB: a sixth of the
#: unbounded figure, and flat in the count.
SLOW_READER_EVENTS = 100_000
SLOW_READER_BOUND = 4 * MiB


def test_a_slow_reader_holds_the_handler_back_not_the_memory(start: Start) -> None:
    server = start("http")
    session = open_sessions(server.port, 1)[0]
    works(server.port, session)

    def chatter(request_id: int, pause: float) -> Memory | None:
        wire = Wire(server.port, timeout=READ_TIMEOUT)
        try:
            arguments = {"count": SLOW_READER_EVENTS, "size": 100}
            wire.send(post(call(request_id, "chatter", arguments, "p"), session))
            memory = Memory.of(server) if pause else None
            time.sleep(pause)  # the client reads nothing meanwhile
            if memory is not None:
                memory.measure(server)
            response = wire.response()
        finally:
            wire.close()
        progress = [data["params"]["progress"] for _, data in response.events[1:-1]]
        assert progress == list(range(1, SLOW_READER_EVENTS + 1))
        assert tool_text(response.events[-1][1]) == f"chattered {SLOW_READER_EVENTS} times"
        return memory

    chatter(1, 0)  # a warm-up: the same flood, read at once
    memory = chatter(2, 3.0)
    assert memory is not None
    works(server.port, session)
    memory.measure(server)
    report("slow SSE reader", memory, SLOW_READER_BOUND, f"; {SLOW_READER_EVENTS} events")
    assert memory.growth < SLOW_READER_BOUND, memory


# -- HTTP: bodies, headers, nesting --------------------------------------------------------------


#: Bodies far over the 64 KiB limit, 8 at a time: a server reading them whole would hold
#: 8 x 4 MiB = 32 MiB at once. It reads at most the limit plus one receive of each, then
#: answers 413. The slow bodies (headers, then 11 of 1,000 bytes) each hold a connection
#: and a task until the 0.5 s body timeout: 200 at once, twice. Measured growth for both:
#: under 1 MiB. Bound: 6 MiB. (Each client reads its whole answer before it closes: one
#: that resets the connection instead leaves uvicorn's keep-alive timer holding the
#: connection's protocol for ``timeout_keep_alive``, 5 s, which is uvicorn's matter.)
BODY_LIMIT = 64 * 1024
#: How late past its timeout the last of a round's clients may be cut on a busy machine.
CUT_MARGIN = 4.0
HUGE_BODY = 4 * 1024 * 1024
BODY_BOUND = 6 * MiB


def test_huge_and_slow_bodies_are_refused(start: Start) -> None:
    server = start("http", max_message_bytes=BODY_LIMIT, body_timeout=0.5)
    huge = post(b"[" * HUGE_BODY, length=HUGE_BODY)
    slow = post(b'{"jsonrpc":', length=1000)

    def huge_round() -> None:
        wires = [Wire(server.port) for _ in range(8)]
        for wire in wires:
            wire.send_behind(huge)
        assert [wire.response().status for wire in wires] == [413] * 8
        for wire in wires:
            wire.close()

    def slow_round() -> None:
        wires = [Wire(server.port) for _ in range(200)]
        began = time.monotonic()
        for wire in wires:
            wire.send(slow)
        assert [wire.response().status for wire in wires] == [408] * 200
        assert time.monotonic() - began < 0.5 + CUT_MARGIN
        for wire in wires:
            wire.close()

    huge_round()
    slow_round()  # warm-ups
    memory = Memory.of(server)
    for _ in range(8):
        huge_round()
    slow_round()
    slow_round()
    memory.measure(server)
    report("bodies", memory, BODY_BOUND, "; 64 bodies of 4 MiB (413), 400 slow ones (408)")
    assert memory.growth < BODY_BOUND, memory
    works(server.port, open_sessions(server.port, 1)[0])


#: Slowloris: 300 connections at once sending part of their headers, cut after the 0.5 s
#: header timeout with a 408; three rounds. Each holds a socket and a parser until then;
#: measured growth: 0.0-0.2 MiB. Bound: 4 MiB.
SLOW_HEADERS = 300
HEADER_BOUND = 4 * MiB


def test_slow_headers_are_cut_off(start: Start) -> None:
    server = start("http", header_timeout=0.5)
    partial = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl"

    def slowloris() -> None:
        wires = [Wire(server.port) for _ in range(SLOW_HEADERS)]
        began = time.monotonic()
        for wire in wires:
            wire.send(partial)
        assert [wire.response().status for wire in wires] == [408] * SLOW_HEADERS
        assert time.monotonic() - began < 0.5 + CUT_MARGIN
        for wire in wires:
            wire.close()

    slowloris()  # a warm-up
    memory = Memory.of(server)
    for _ in range(3):
        slowloris()
    memory.measure(server)
    report("slow headers", memory, HEADER_BOUND, f"; 3 x {SLOW_HEADERS} connections")
    assert memory.growth < HEADER_BOUND, memory
    works(server.port, open_sessions(server.port, 1)[0])


def test_deeply_nested_messages_are_refused_over_http(start: Start) -> None:
    server = start("http")
    session = open_sessions(server.port, 1)[0]
    works(server.port, session)

    def flood(count: int) -> None:
        responses = pipelined(server.port, [post(nested(i, DEEP), session) for i in range(count)])
        assert {r.status for r in responses} == {400}
        assert all(r.json()["error"]["code"] == INVALID_REQUEST for r in responses)

    flood(100)  # a warm-up
    memory = Memory.of(server)
    flood(1000)
    memory.measure(server)
    report("HTTP nesting", memory, NESTING_BOUND, f"; 1000 bodies {DEEP} deep")
    assert memory.growth < NESTING_BOUND, memory
    works(server.port, session)


#: Pipelining: 2,000 requests of 20 KiB each (40 MiB) sent back to back on one connection
#: without reading an answer. A server needs to hold only the request it serves and what
#: one read brings in; uvicorn's h11 protocol does (measured: +0.5 MiB), its httptools
#: protocol resumes reading after every response even while pipelined requests wait, so
#: it takes in everything the client sends: +40 MiB measured (+100 MiB for 100 MB).
PIPELINED = 2000
PIPELINE_BOUND = 8 * MiB


def test_pipelined_requests_are_read_as_they_are_served(start: Start) -> None:
    server = start("http")
    pad = "x" * 20_000

    def ping(request_id: int) -> bytes:
        return post(message(request_id, "ping", {"_meta": {"pad": pad}}))

    pipelined(server.port, [ping(i) for i in range(200)])  # a warm-up, 64 at a time
    memory = Memory.of(server)
    responses = pipelined(server.port, [ping(i) for i in range(PIPELINED)], window=PIPELINED)
    memory.measure(server)
    report("pipelined requests", memory, PIPELINE_BOUND, f"; {PIPELINED} x 20 KiB at once")
    assert [r.json()["id"] for r in responses] == list(range(PIPELINED))
    assert memory.growth < PIPELINE_BOUND, memory
    works(server.port, open_sessions(server.port, 1)[0])


# -- HTTP+SSE and WebSocket --------------------------------------------------------------------


#: HTTP+SSE streams opened, given their session, and abandoned. Each session holds a
#: connection, a stream and a task while its client is there; once the client leaves, all
#: of it must go. With the release disabled (the session kept after its stream) each one
#: would stay: a few KiB each, several MiB for 3,000. Measured growth: under 1 MiB.
SSE_STREAMS = 3000
SSE_BOUND = 3 * MiB


def test_abandoned_sse_sessions_are_released(start: Start) -> None:
    server = start("http", max_sessions=100_000)
    for _ in range(300):  # a warm-up
        open_sse(server.port)[0].close()
    memory = Memory.of(server)
    endpoints = []
    for _ in range(SSE_STREAMS):
        wire, endpoint = open_sse(server.port)
        endpoints.append(endpoint)
        wire.close()
    time.sleep(0.3)  # the last disconnects reach the server
    memory.measure(server)
    report("abandoned HTTP+SSE sessions", memory, SSE_BOUND, f"; {SSE_STREAMS} streams")
    assert memory.growth < SSE_BOUND, memory
    gone = [status_of(server.port, sse_post(e, message(1, "ping"))) for e in endpoints[-20:]]
    assert gone == [404] * 20, f"sessions of abandoned streams still answered: {gone}"
    works(server.port, open_sessions(server.port, 1)[0])


#: HTTP+SSE sessions beyond ``max_sessions``, all held open: each one more is refused with
#: 503 at once, holding nothing.
SSE_CAP = 50


def test_sse_sessions_beyond_the_cap_are_refused(start: Start) -> None:
    server = start("http", max_sessions=SSE_CAP)
    held = [open_sse(server.port) for _ in range(SSE_CAP)]
    try:
        memory = Memory.of(server)
        refused = Counter(status_of(server.port, SSE_GET) for _ in range(500))
        memory.measure(server)
        report("HTTP+SSE sessions over the cap", memory, SSE_BOUND, f"; 500 refused, cap {SSE_CAP}")
        assert refused == {503: 500}, refused
        assert memory.growth < SSE_BOUND, memory
        wire, endpoint = held[-1]
        assert status_of(server.port, sse_post(endpoint, INITIALIZE_BODY)) == 202
    finally:
        for wire, _ in held:
            wire.close()
    time.sleep(0.3)
    wire, endpoint = open_sse(server.port)  # the cap makes room as streams end
    wire.close()


#: WebSocket connections opened, given a session (``initialize``) and closed. Each holds a
#: connection, a session and its task while open, and nothing after. Before, the guarded
#: HTTP protocol's idle clock kept each upgraded connection's objects (and closed every
#: WebSocket after 5 s): 17 MiB for 2,000. Measured since: 0.2 MiB.
WEBSOCKETS = 2000
WEBSOCKET_BOUND = 3 * MiB


def test_closed_websocket_sessions_are_released(start: Start) -> None:
    from websockets.sync.client import connect

    server = start("http")
    url = f"ws://127.0.0.1:{server.port}/ws"

    def session() -> None:
        with connect(url, subprotocols=["mcp"], open_timeout=10) as socket:  # type: ignore[list-item]
            socket.send(INITIALIZE_BODY.decode())
            assert '"protocolVersion"' in str(socket.recv(timeout=10))

    for _ in range(200):  # a warm-up
        session()
    memory = Memory.of(server)
    for _ in range(WEBSOCKETS):
        session()
    time.sleep(0.3)
    memory.measure(server)
    report("closed WebSocket sessions", memory, WEBSOCKET_BOUND, f"; {WEBSOCKETS} connections")
    assert memory.growth < WEBSOCKET_BOUND, memory
    works(server.port, open_sessions(server.port, 1)[0])


#: Requests sent over one WebSocket as fast as it takes them, none of their answers read:
#: the reader stops at ``max_in_flight`` running handlers, the ASGI server's queue and the
#: socket buffers hold the rest back (as over stdio). Measured: 2.0 MiB. With per-message
#: deflate (uvicorn's default, off in ``serve``) the same flood took 7.7 MiB, and 12.5 MiB
#: at 40,000 calls: tiny compressed frames pack thousands of requests into one read.
WS_FLOOD = 20_000
WS_FLOOD_BOUND = 6 * MiB


def test_a_websocket_flood_is_held_back_not_read_into_memory(start: Start) -> None:
    from websockets.sync.client import connect

    server = start("http", max_in_flight=IN_FLIGHT)
    url = f"ws://127.0.0.1:{server.port}/ws"
    with connect(url, subprotocols=["mcp"], open_timeout=10) as socket:  # type: ignore[list-item]
        socket.send(INITIALIZE_BODY.decode())
        socket.recv(timeout=10)
        memory = Memory.of(server)
        frames = [call(i, "test_simple_text").decode() for i in range(WS_FLOOD)]
        sender = threading.Thread(target=lambda: [socket.send(f) for f in frames], daemon=True)
        sender.start()
        time.sleep(2.0)  # the server stalls: nobody reads its answers
        memory.measure(server)
        answered = 0
        while answered < WS_FLOOD:
            socket.recv(timeout=30)
            answered += 1
        sender.join(30)
    report("WebSocket in-flight", memory, WS_FLOOD_BOUND, f"; {WS_FLOOD} calls unread")
    assert memory.growth < WS_FLOOD_BOUND, memory
    works(server.port, open_sessions(server.port, 1)[0])
