"""``runtime.http.serve``: uvicorn cuts off clients that send their headers too slowly.

Real sockets on 127.0.0.1, both of uvicorn's HTTP/1.1 implementations (httptools and h11),
the everything server's ASGI app, and a header timeout short enough to watch expire. The
client side is raw sockets, since the point is to send requests no HTTP client would:
partial headers trickled a byte at a time. Every socket has a timeout, every wait has a
deadline, and every server started here is stopped at teardown.
"""

from __future__ import annotations

import json
import select
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpgen.runtime.http import protocols as http_protocols
from mcpgen.runtime.http import serve as http_serve
from mcpgen.runtime.core.limits import Limits

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # examples/ is not an installed package
    sys.path.append(str(ROOT))

from examples.everything.__main__ import build_server  # noqa: E402
from support.raw_http import (  # noqa: E402
    HEADER_TIMEOUT,
    IMPLS,
    KEEP_ALIVE,
    MARGIN,
    Reader,
    Response,
    Running,
    assert_initialized,
    connect,
    drain,
    exchange,
    initialize,
    request,
    running,
)

DRIP = 0.2
SLOW_START = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"


# Slow: real uvicorn servers and raw sockets throughout (``make unit`` leaves this module out).
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", params=IMPLS)
def served(request: pytest.FixtureRequest) -> Iterator[Running]:
    with running(request.param, HEADER_TIMEOUT) as server:
        yield server


def trickle(sock: socket.socket, deadline: float) -> bytes:
    """Send one header byte per ``DRIP`` until the server speaks or closes; what it said."""
    while time.monotonic() < deadline:
        readable, _, _ = select.select([sock], [], [], DRIP)
        if readable:
            return drain(sock)
        try:
            sock.sendall(b"a")
        except (BrokenPipeError, ConnectionResetError):
            return drain(sock)
    raise AssertionError("the server never cut off a slow client")


def assert_timed_out(data: bytes, seconds: float) -> None:
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 "), data
    assert b"connection: close" in head.lower()
    message = f"Request Timeout: headers not received within {seconds:g} s"
    error = {"code": -32600, "message": message}
    assert json.loads(body) == {"jsonrpc": "2.0", "id": None, "error": error}


@pytest.mark.parametrize(
    "garbage",
    [
        b"FOO /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"\x16\x03\x01\x00\xa5\x01\x00",
        b"GET / HTTP/9\r\n\r\n",
    ],
    ids=["unknown-method", "tls-hello", "bad-version"],
)
def test_unparsable_requests_get_400_with_a_json_rpc_body(served: Running, garbage: bytes) -> None:
    with connect(served.port) as sock:
        sock.sendall(garbage)
        data = drain(sock)
    head, _, body = data.partition(b"\r\n\r\n")
    # httptools cannot parse an unknown method (400); h11 can, and the app refuses it (405)
    assert head.startswith((b"HTTP/1.1 400 ", b"HTTP/1.1 405 ")), data
    assert b"content-type: application/json" in head.lower()
    assert json.loads(body)["error"]["code"] == -32600
    assert_initialized(exchange(served.port, initialize()))


# -- (a), (b): one slow client, then a normal one -----------------------------------------


def test_slowloris_gets_408_after_the_header_timeout(served: Running) -> None:
    with connect(served.port) as sock:
        started = time.monotonic()
        sock.sendall(SLOW_START)
        data = trickle(sock, started + HEADER_TIMEOUT + MARGIN)
        elapsed = time.monotonic() - started
    assert_timed_out(data, HEADER_TIMEOUT)
    # Bytes kept coming every DRIP seconds: the deadline counts from the first one.
    assert HEADER_TIMEOUT - 0.05 <= elapsed <= HEADER_TIMEOUT + MARGIN


def test_a_normal_request_is_answered_after_a_slow_one(served: Running) -> None:
    with connect(served.port) as sock:
        sock.sendall(SLOW_START)
        trickle(sock, time.monotonic() + HEADER_TIMEOUT + MARGIN)
    assert_initialized(exchange(served.port, initialize()))


# -- (c), (d): keep-alive connections ------------------------------------------------------


def test_second_request_on_a_keep_alive_connection_is_timed_from_its_first_byte(
    served: Running,
) -> None:
    with connect(served.port) as sock:
        reader = Reader(sock)
        sock.sendall(request(served.port, initialize()))
        assert_initialized(reader.response())
        # Idle for longer than the header timeout: that is keep-alive's business, not ours.
        time.sleep(HEADER_TIMEOUT + 0.2)
        started = time.monotonic()
        sock.sendall(SLOW_START)
        data = reader.buffer + trickle(sock, started + HEADER_TIMEOUT + MARGIN)
        elapsed = time.monotonic() - started
    assert_timed_out(data, HEADER_TIMEOUT)
    assert HEADER_TIMEOUT - 0.05 <= elapsed <= HEADER_TIMEOUT + MARGIN


def test_an_idle_keep_alive_connection_is_not_cut_by_the_header_timeout(
    served: Running,
) -> None:
    with connect(served.port) as sock:
        reader = Reader(sock)
        sock.sendall(request(served.port, initialize(1)))
        assert_initialized(reader.response())
        readable, _, _ = select.select([sock], [], [], KEEP_ALIVE - 0.8)  # > header timeout
        assert not readable, "an idle connection got an answer or a close"
        sock.sendall(request(served.port, initialize(2)))
        assert_initialized(reader.response())


def test_a_connection_that_never_speaks_is_closed_as_idle(served: Running) -> None:
    """uvicorn's keep-alive timer, which it arms only after a response, closes it too."""
    with connect(served.port) as sock:
        started = time.monotonic()
        assert drain(sock) == b""  # closed without a word: nothing was asked
        elapsed = time.monotonic() - started
    assert KEEP_ALIVE - 0.05 <= elapsed <= KEEP_ALIVE + MARGIN


# -- (e): the headers are in, the request is the app's -------------------------------------


def legacy_session(port: int, sock: socket.socket, reader: Reader) -> str:
    sock.sendall(request(port, initialize()))
    response = reader.response()
    assert_initialized(response)
    session = response.headers["mcp-session-id"]
    sock.sendall(request(port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session))
    assert reader.response().status == 202
    return session


def progress_call(request_id: int) -> dict[str, Any]:
    params = {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": 7}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def assert_streamed(response: Response) -> None:
    assert response.status == 200, response
    assert response.headers["content-type"].startswith("text/event-stream")
    assert b"notifications/progress" in response.body
    assert b"Tool with progress executed successfully" in response.body


@pytest.mark.parametrize("http", IMPLS)
def test_a_stream_longer_than_the_header_timeout_is_not_cut(http: http_protocols.HttpImpl) -> None:
    timeout = 0.1  # the tool streams progress for ~0.15 s
    with running(http, timeout) as served, connect(served.port) as sock:
        reader = Reader(sock)
        session = legacy_session(served.port, sock, reader)
        started = time.monotonic()
        sock.sendall(request(served.port, progress_call(2), session))
        assert_streamed(reader.response())
        assert time.monotonic() - started > timeout
        # A partial request pipelined behind a long stream: its clock starts when the
        # stream is done, so the stream is whole and the 408 follows.
        sock.sendall(request(served.port, progress_call(3), session) + SLOW_START)
        assert_streamed(reader.response())
        data = reader.buffer + trickle(sock, time.monotonic() + timeout + MARGIN)
    assert_timed_out(data, timeout)


# -- (f): many at once ---------------------------------------------------------------------


def test_two_hundred_slow_clients_are_all_cut_off(served: Running) -> None:
    count = 200
    socks = [connect(served.port) for _ in range(count)]
    try:
        for sock in socks:
            sock.sendall(SLOW_START)
        deadline = time.monotonic() + HEADER_TIMEOUT + MARGIN + 1.0
        waiting = set(socks)
        answers: list[bytes] = []
        while waiting and time.monotonic() < deadline:
            readable, _, _ = select.select(list(waiting), [], [], DRIP)
            for sock in readable:
                answers.append(drain(sock))
                waiting.discard(sock)
            for sock in waiting - set(readable):
                try:
                    sock.sendall(b"a")
                except (BrokenPipeError, ConnectionResetError):
                    answers.append(drain(sock))
                    waiting.discard(sock)
        assert not waiting, f"{len(waiting)} of {count} slow clients were never cut off"
        got_408 = sum(answer.startswith(b"HTTP/1.1 408 ") for answer in answers)
        assert got_408 >= count * 0.9, f"only {got_408} of {count} got a 408"
    finally:
        for sock in socks:
            sock.close()
    assert_initialized(exchange(served.port, initialize()))


# -- the module's surface ------------------------------------------------------------------


def test_startup_announces_the_endpoint(capsys: pytest.CaptureFixture[str]) -> None:
    with running("auto", HEADER_TIMEOUT) as served:
        pass
    line = f"mcpgen: serving MCP at http://127.0.0.1:{served.port}/mcp\n"
    assert capsys.readouterr().err == line


def test_protocol_choice() -> None:
    assert http_protocols.protocol_class("h11") is http_protocols.GuardedH11
    assert http_protocols.protocol_class("httptools") is http_protocols.GuardedHttpTools
    assert http_protocols.protocol_class("auto") is http_protocols.GuardedHttpTools  # installed
    with pytest.raises(ValueError):
        http_protocols.protocol_class("zttp")  # type: ignore[arg-type]


def test_serve_takes_the_servers_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """``serve`` runs the app with the server's own limits unless given others."""
    ran: list[http_serve.Config] = []

    def run(self: http_serve.AnnouncingServer, sockets: Any = None) -> None:
        assert isinstance(self.config, http_serve.Config)
        ran.append(self.config)

    monkeypatch.setattr(http_serve.AnnouncingServer, "run", run)
    server = build_server()
    own = Limits(header_timeout=3.0)
    monkeypatch.setattr(server, "limits", own, raising=False)
    http_serve.serve(server, port=0, http="h11", path="/other")
    http_serve.serve(server, port=0, limits=Limits(header_timeout=4.0))
    assert [config.limits.header_timeout for config in ran] == [3.0, 4.0]
    assert ran[0].http is http_protocols.GuardedH11
    assert getattr(ran[0].app, "path") == "/other"
    assert ran[1].http is http_protocols.protocol_class("auto")
    assert ran[0].log_level == "warning"
