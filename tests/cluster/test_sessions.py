"""Legacy sessions any process serves: two servers of one app, as two worker processes
would run them (each a uvicorn on 127.0.0.1 in a thread of its own, each with its own
``RedisSessions``), one real redis-server, and a client that sends each request of one
2025-11-25 session to whichever server it likes, as a round-robin balancer would.

The handshake on one, the rest on the other; a log level set on one governs the other; a
question one server's tool asks is answered through the other; a cancellation sent to one
stops the call running on the other; a DELETE on one ends the session on both; a stream
lost on one is resumed on the other, every event once; the record's garbage or Redis away
is an answer, never a crash."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcpgen.generated.v2025_11_25 import server as stubs
from mcpgen.generated.v2025_11_25 import types as t
from mcpgen.runtime import App
from mcpgen.runtime.cluster import RedisBus, RedisSessions
from mcpgen.runtime.http.endpoint import McpHttpApp
from support.http_endpoint import data_events, sse
from support.http_servers import ThreadedUvicorn
from support.redis_server import RedisServer

VERSION = "2025-11-25"
TIMEOUT = 10.0


class Signals:
    def __init__(self) -> None:
        self.cancelled = threading.Event()


def app(signals: Signals, redis_url: str) -> App:
    made = App(
        "shared-sessions", binding=stubs, shared=None, bus=RedisBus(redis_url, prefix="test:")
    )

    @made.tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    @made.tool
    async def chat(ctx: stubs.Context) -> str:
        """Ask the client's model, and log at info."""
        await ctx.log("info", "asking the model")
        question = t.SamplingMessage(role="user", content=t.TextContent(text="hi"))
        said = await ctx.create_message(
            t.CreateMessageRequestParams(messages=[question], max_tokens=5)
        )
        assert isinstance(said.content, t.TextContent)
        return f"the model said {said.content.text}"

    @made.resource("mem://note", mime_type="text/plain")
    def note() -> str:
        return "a note"

    @made.tool
    async def touch() -> str:
        """Announce that the note changed."""
        await made.resource_updated("mem://note")
        return "touched"

    @made.tool(task="optional")
    async def later() -> str:
        """Runs as a task when asked to: its status is told outside any request."""
        await asyncio.sleep(0.2)
        return "done later"

    @made.tool
    async def steps(n: int, ctx: stubs.Context) -> str:
        """Log a line per step, a twentieth of a second apart."""
        for i in range(n):
            await ctx.log("info", f"step {i}")
            await asyncio.sleep(0.05)
        return f"{n} steps"

    @made.tool
    async def slow() -> str:
        """Wait until cancelled."""
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            signals.cancelled.set()
            raise
        return "finished"

    return made


class SlowToRecord(RedisSessions):
    """A store whose writes of new records take a while, as a loaded Redis's may."""

    async def create(self, *args: Any, **kwargs: Any) -> None:
        await asyncio.sleep(0.3)
        await super().create(*args, **kwargs)


@pytest.fixture
def servers() -> Iterator[tuple[list[str], Signals, RedisServer]]:
    yield from serving(RedisSessions)


@pytest.fixture
def slow_servers() -> Iterator[tuple[list[str], Signals, RedisServer]]:
    yield from serving(SlowToRecord)


def serving(store: type[RedisSessions]) -> Iterator[tuple[list[str], Signals, RedisServer]]:
    signals = Signals()
    with RedisServer() as redis:
        started: list[ThreadedUvicorn] = []
        try:
            for _ in range(2):
                sessions = store(redis.url, prefix="test:")
                asgi = McpHttpApp(app(signals, redis.url).server, shared_sessions=sessions)
                server = ThreadedUvicorn(asgi)
                server.start()
                started.append(server)
            yield [f"http://127.0.0.1:{s.port}/mcp" for s in started], signals, redis
        finally:
            for server in started:
                server.stop()


def headers(session_id: str | None = None) -> dict[str, str]:
    sent = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if session_id:
        sent |= {"mcp-session-id": session_id, "mcp-protocol-version": VERSION}
    return sent


def messages_of(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a JSON or SSE answer."""
    if response.headers.get("content-type", "").startswith("application/json"):
        return [response.json()] if response.content else []
    return [
        json.loads(line[5:])
        for line in response.text.splitlines()
        if line.startswith("data:") and line[5:].strip()
    ]


def streamed(stream: httpx.Response) -> Iterator[dict[str, Any]]:
    """The JSON-RPC messages of an SSE answer, as they come (priming events skipped)."""
    for line in stream.iter_lines():
        if line.startswith("data:") and line[5:].strip():
            yield json.loads(line[5:])


def post(url: str, session_id: str | None, message: dict[str, Any]) -> httpx.Response:
    return httpx.post(url, headers=headers(session_id), json=message, timeout=TIMEOUT)


def begun(url: str, then: str) -> str:
    """A session begun on ``url``, its handshake finished on ``then``: its id."""
    params = {
        "protocolVersion": VERSION,
        "capabilities": {"sampling": {}},
        "clientInfo": {"name": "rr", "version": "1"},
    }
    response = post(
        url, None, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    )
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    done = post(then, session_id, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert done.status_code == 202, done.text
    return session_id


def call(url: str, session_id: str, request_id: int, name: str, **arguments: Any) -> dict[str, Any]:
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    response = post(url, session_id, message)
    assert response.status_code == 200, response.text
    return messages_of(response)[-1]


def test_every_request_of_a_session_is_served_by_either_process(
    servers: tuple[list[str], Signals, RedisServer],
) -> None:
    (a, b), _, _ = servers
    session_id = begun(a, then=b)
    for n in range(1, 21):  # round robin
        answer = call((a, b)[n % 2], session_id, n, "add", a=n, b=1)
        assert answer["id"] == n and answer["result"]["structuredContent"] == {"result": n + 1}
    unknown = post(b, "no-such-session", {"jsonrpc": "2.0", "id": 99, "method": "ping"})
    assert unknown.status_code == 404


def test_a_session_is_recorded_before_its_handshake_is_answered(
    slow_servers: tuple[list[str], Signals, RedisServer],
) -> None:
    """A client that sends its next POST the moment the handshake is answered, to another
    process, finds the session there, however long the store takes to write it."""
    (a, b), _, _ = slow_servers
    for n in range(3):
        session_id = begun(a, then=b)
        assert call(b, session_id, 1, "add", a=n, b=1)["result"]["structuredContent"] == {
            "result": n + 1
        }


def test_with_redis_away_a_handshake_is_refused_without_a_session_id(
    servers: tuple[list[str], Signals, RedisServer],
) -> None:
    """No session is handed out that other processes could not find: the handshake is
    answered 503 (retry), with no ``Mcp-Session-Id``; Redis back, the next one succeeds."""
    (a, b), _, redis = servers
    port = redis.port
    redis.stop(keep_dir=True)
    params = {
        "protocolVersion": VERSION,
        "capabilities": {},
        "clientInfo": {"name": "x", "version": "1"},
    }
    initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    refused = post(a, None, initialize)
    assert refused.status_code == 503 and "unavailable" in refused.text, refused.text
    assert "mcp-session-id" not in refused.headers
    assert refused.json()["id"] == 0 and refused.json()["error"]["code"] < 0
    redis.start(port)
    for _ in range(50):  # each process's store finds Redis again within a second or two
        if post(a, None, initialize).status_code == 200:
            break
        threading.Event().wait(0.1)
    session_id = begun(a, then=b)
    assert call(b, session_id, 1, "add", a=2, b=2)["result"]["structuredContent"] == {"result": 4}


def test_a_log_level_set_on_one_process_governs_the_other(
    servers: tuple[list[str], Signals, RedisServer],
) -> None:
    (a, b), _, _ = servers
    session_id = begun(a, then=a)
    set_level = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "logging/setLevel",
        "params": {"level": "error"},
    }
    assert post(a, session_id, set_level).status_code == 200
    assert call(b, session_id, 2, "add", a=1, b=1)["result"]["structuredContent"] == {"result": 2}
    with httpx.stream(
        "POST",
        b,
        headers=headers(session_id),
        timeout=TIMEOUT,
        json={
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "chat", "arguments": {}},
        },
    ) as stream:
        for sent in streamed(stream):
            assert sent.get("method") != "notifications/message", "info logged below error"
            if sent.get("method") == "sampling/createMessage":
                break


def test_a_question_asked_on_one_process_is_answered_through_the_other(
    servers: tuple[list[str], Signals, RedisServer],
) -> None:
    (a, b), _, _ = servers
    session_id = begun(b, then=a)
    message = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "chat", "arguments": {}},
    }
    seen: list[dict[str, Any]] = []
    with httpx.stream(
        "POST", a, headers=headers(session_id), json=message, timeout=TIMEOUT
    ) as stream:
        for sent in streamed(stream):
            seen.append(sent)
            if sent.get("method") == "sampling/createMessage":
                asked = sent["id"]
                assert isinstance(asked, str) and asked.endswith(("~1", "~2", "~3"))
                result = {
                    "role": "assistant",
                    "content": {"type": "text", "text": "hello"},
                    "model": "m",
                }
                answered = post(b, session_id, {"jsonrpc": "2.0", "id": asked, "result": result})
                assert answered.status_code == 202, answered.text
            if sent.get("id") == 7:
                break
    final = seen[-1]
    assert final["id"] == 7, seen
    assert final["result"]["content"][0]["text"] == "the model said hello"


def test_a_cancellation_sent_to_one_process_stops_the_call_on_the_other(
    servers: tuple[list[str], Signals, RedisServer],
) -> None:
    (a, b), signals, _ = servers
    session_id = begun(a, then=b)
    slow = {
        "jsonrpc": "2.0",
        "id": 11,
        "method": "tools/call",
        "params": {"name": "slow", "arguments": {}},
    }
    box: list[Any] = []

    def slow_call() -> None:  # a cancelled request is not answered: its POST is left
        try:
            box.append(httpx.post(a, headers=headers(session_id), json=slow, timeout=3))
        except httpx.ReadTimeout:
            box.append("no answer")

    running = threading.Thread(target=slow_call, daemon=True)
    running.start()
    for _ in range(100):
        threading.Event().wait(0.05)  # the call starts on a
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 11}}
    assert post(b, session_id, cancel).status_code == 202
    assert signals.cancelled.wait(TIMEOUT)
    running.join(TIMEOUT)
    assert call(b, session_id, 12, "add", a=2, b=2)["result"]["structuredContent"] == {"result": 4}


def test_a_session_deleted_on_one_process_is_gone_on_the_other(
    servers: tuple[list[str], Signals, RedisServer],
) -> None:
    (a, b), _, _ = servers
    session_id = begun(a, then=b)
    assert call(a, session_id, 1, "add", a=1, b=2)["result"]["structuredContent"] == {"result": 3}
    deleted = httpx.delete(b, headers=headers(session_id), timeout=TIMEOUT)
    assert deleted.status_code == 200
    gone = post(a, session_id, {"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert gone.status_code == 404


def test_with_redis_away_a_sessions_request_is_refused_and_served_again_once_it_is_back(
    servers: tuple[list[str], Signals, RedisServer],
) -> None:
    """Redis stopped: a process that holds a view of the session goes on serving it; one
    that would have to read it answers 503 (retry); Redis back, sessions begin and are
    served again, with no restart."""
    (a, b), _, redis = servers
    session_id = begun(a, then=a)  # only a holds a view of it
    port = redis.port
    redis.stop(keep_dir=True)
    refused = post(b, session_id, {"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert refused.status_code == 503 and "unavailable" in refused.text
    health = httpx.get(b.replace("/mcp", "/healthz"), timeout=TIMEOUT)
    assert health.status_code == 503 and "unreachable" in health.json()["checks"]["sessions"]
    served = post(a, session_id, {"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert served.status_code == 200, served.text
    redis.start(port)  # (nothing persisted: the session is gone with the old Redis)
    again = begun(b, then=a)
    assert call(a, again, 3, "add", a=3, b=4)["result"]["structuredContent"] == {"result": 7}
    for _ in range(50):  # the bus subscribes again within a second or two
        health = httpx.get(b.replace("/mcp", "/healthz"), timeout=TIMEOUT)
        if health.status_code == 200:
            break
        threading.Event().wait(0.1)
    assert health.status_code == 200, health.text
    assert health.json()["checks"] == {"bus": "ok", "sessions": "ok"}


def test_a_get_stream_on_one_process_hears_of_a_subscription_made_on_the_other(
    servers: tuple[list[str], Signals, RedisServer],
) -> None:
    """The client listens on its GET stream at one process and subscribes through the
    other: an update made anywhere reaches the stream; a DELETE elsewhere ends it."""
    (a, b), _, _ = servers
    session_id = begun(a, then=a)
    heard: list[dict[str, Any]] = []
    opened = threading.Event()

    def listen() -> None:
        get = {**headers(session_id), "accept": "text/event-stream"}
        with httpx.stream("GET", b, headers=get, timeout=TIMEOUT) as stream:
            opened.set()
            for sent in streamed(stream):
                heard.append(sent)

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    assert opened.wait(TIMEOUT)
    subscribe = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "resources/subscribe",
        "params": {"uri": "mem://note"},
    }
    assert post(a, session_id, subscribe).status_code == 200
    threading.Event().wait(0.3)  # b's view reads the record again
    assert call(a, session_id, 2, "touch")["result"]["content"][0]["text"] == "touched"
    for _ in range(100):
        if heard:
            break
        threading.Event().wait(0.05)
    assert heard == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": "mem://note"},
        }
    ]
    assert httpx.delete(a, headers=headers(session_id), timeout=TIMEOUT).status_code == 200
    listener.join(TIMEOUT)
    assert not listener.is_alive(), "the GET stream on the other process did not end"


def test_what_a_process_sends_outside_any_request_reaches_the_get_stream_on_the_other(
    servers: tuple[list[str], Signals, RedisServer],
) -> None:
    """A task run on one process tells its status changes outside any request: they reach
    the client's GET stream, open on the other."""
    (a, b), _, _ = servers
    session_id = begun(a, then=a)
    heard: list[dict[str, Any]] = []
    opened = threading.Event()

    def listen() -> None:
        get = {**headers(session_id), "accept": "text/event-stream"}
        with httpx.stream("GET", b, headers=get, timeout=TIMEOUT) as stream:
            opened.set()
            for sent in streamed(stream):
                heard.append(sent)
                if sent.get("params", {}).get("status") == "completed":
                    return

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    assert opened.wait(TIMEOUT)
    threading.Event().wait(0.2)
    params = {"name": "later", "arguments": {}, "task": {"ttl": 60_000}}
    created = post(
        a, session_id, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    )
    assert created.status_code == 200 and "taskId" in created.text, created.text
    listener.join(TIMEOUT)
    statuses = [
        m["params"]["status"] for m in heard if m.get("method") == "notifications/tasks/status"
    ]
    assert statuses and statuses[-1] == "completed", heard


def test_garbage_in_a_shared_session_is_refused_and_the_session_goes_on(
    servers: tuple[list[str], Signals, RedisServer],
) -> None:
    """Bodies that are not JSON-RPC, answers to requests no process sent (tagged as
    another's, or as this one's), cancellations of nothing: each answered or ignored, and
    the session's next call served by either process."""
    (a, b), _, _ = servers
    session_id = begun(a, then=b)
    garbage: list[Any] = [
        {"jsonrpc": "2.0", "id": "p0123456789~7", "result": {}},
        {"jsonrpc": "2.0", "id": "pabcdefabcd~1", "error": {"code": 1, "message": "x"}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "nope"}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "x" * 10_000},
        [{"jsonrpc": "2.0", "id": "p0123456789~2", "result": 5}] * 50,
    ]
    for body in garbage:
        for url in (a, b):
            reply = httpx.post(url, headers=headers(session_id), json=body, timeout=TIMEOUT)
            assert reply.status_code in (200, 202, 400), reply.text
    raw = httpx.post(b, headers=headers(session_id), content=b"{not json", timeout=TIMEOUT)
    assert raw.status_code == 400
    for n, url in enumerate((a, b, a, b)):
        answer = call(url, session_id, 100 + n, "add", a=n, b=1)
        assert answer["result"]["structuredContent"] == {"result": n + 1}


def events_of(stream: httpx.Response, until: int | None = None) -> list[tuple[str | None, Any]]:
    """The (SSE id, JSON-RPC message) events of a stream as they come, priming events
    skipped; ``until``: stop after that many."""
    return [(e.id, e.message()) for e in data_events(sse(stream), until)]


def test_a_stream_lost_on_one_process_is_resumed_on_the_other_every_event_once(
    servers: tuple[list[str], Signals, RedisServer],
) -> None:
    """A call streaming ten log lines from one process: the client leaves after three and
    resumes on the other with ``Last-Event-ID``; it gets the other seven, live, then the
    answer; each once."""
    (a, b), _, _ = servers
    session_id = begun(a, then=a)
    message = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": "steps", "arguments": {"n": 10}},
    }
    with httpx.stream(
        "POST", a, headers=headers(session_id), json=message, timeout=TIMEOUT
    ) as lost:
        first = events_of(lost, until=3)
    last = first[-1][0]
    assert last is not None
    get = {**headers(session_id), "accept": "text/event-stream", "last-event-id": last}
    with httpx.stream("GET", b, headers=get, timeout=TIMEOUT) as resumed:
        rest = events_of(resumed)
    lines = [m["params"]["data"] for _, m in first + rest if m.get("method")]
    assert lines == [f"step {i}" for i in range(10)]
    answer = rest[-1][1]
    assert answer["id"] == 5 and answer["result"]["content"][0]["text"] == "10 steps"
    assert [m.get("id") for _, m in first + rest].count(5) == 1


def test_a_get_stream_lost_on_one_process_is_resumed_on_the_other_every_message_once(
    servers: tuple[list[str], Signals, RedisServer],
) -> None:
    """The client's GET stream on one process hears one update and is lost; two more are
    made while no stream is open; resumed on the other process with ``Last-Event-ID``, it
    gets those two (not the first again), then the next one live."""
    (a, b), _, _ = servers
    session_id = begun(a, then=a)
    subscribe = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "resources/subscribe",
        "params": {"uri": "mem://note"},
    }
    assert post(b, session_id, subscribe).status_code == 200
    get = {**headers(session_id), "accept": "text/event-stream"}
    heard: list[tuple[str | None, Any]] = []
    opened = threading.Event()

    def listen(url: str, sent: dict[str, str], count: int) -> None:
        with httpx.stream("GET", url, headers=sent, timeout=TIMEOUT) as stream:
            opened.set()
            heard.extend(events_of(stream, until=count))

    listener = threading.Thread(target=listen, args=(a, get, 1), daemon=True)
    listener.start()
    assert opened.wait(TIMEOUT)
    threading.Event().wait(0.3)
    assert call(b, session_id, 2, "touch")["result"]["content"][0]["text"] == "touched"
    listener.join(TIMEOUT)
    assert len(heard) == 1 and heard[0][0] is not None
    for n in (3, 4):  # nobody listening
        assert call((a, b)[n % 2], session_id, n, "touch")["result"]["content"]
    opened.clear()
    resumed = {**get, "last-event-id": heard[0][0]}
    listener = threading.Thread(target=listen, args=(b, resumed, 3), daemon=True)
    listener.start()
    assert opened.wait(TIMEOUT)
    threading.Event().wait(0.3)
    assert call(a, session_id, 5, "touch")["result"]["content"]
    listener.join(TIMEOUT)
    assert not listener.is_alive()
    methods = [m["method"] for _, m in heard]
    assert methods == ["notifications/resources/updated"] * 4
    ids = [i for i, _ in heard]
    assert len(set(ids)) == 4, ids


@pytest.mark.parametrize(
    "last",
    [
        "g.garbage",
        "g.99999999999999999999-0",
        "g.",
        "g.1-2-3",
        "g." + "9" * 40,
        ".",
        "x" * 4000,
        "p0123456789~s1.abc",
        "p0123456789~s99.5",
        "s1.-4",
        "\u00e9t\u00e9.1",
    ],
)
def test_a_garbage_last_event_id_is_a_clear_answer_and_the_store_stays_healthy(
    servers: tuple[list[str], Signals, RedisServer], last: str
) -> None:
    """Whatever a client puts in ``Last-Event-ID``, the GET is answered (a stream from now,
    or the stream's loss told), never a server error; the store is not taken for down;
    the session goes on."""
    (a, b), _, _ = servers
    session_id = begun(a, then=a)
    get: dict[str, Any] = {**headers(session_id), "accept": "text/event-stream"}
    get["last-event-id"] = last.encode()
    with httpx.stream("GET", b, headers=get, timeout=TIMEOUT) as response:
        assert response.status_code in (200, 404), response.status_code
    health = httpx.get(b.replace("/mcp", "/healthz"), timeout=TIMEOUT)
    assert health.status_code == 200, health.text
    assert call(b, session_id, 9, "add", a=1, b=2)["result"]["structuredContent"] == {"result": 3}
