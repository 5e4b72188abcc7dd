"""``runtime.http.protocols``: no client holds a connection of a served app without end.

A client that is patient rather than noisy must not pin connections: a refusal sent before
the request's body came ends the connection even when the client sends one more body byte
and then nothing (uvicorn's own keep-alive timer is cancelled by that byte and was never
armed again); bytes that begin no request do not extend a connection's idle deadline;
connections beyond ``Limits.max_connections`` get a cheap 503, and the operator is told.
The last test is the attack itself against a server process whose file-descriptor limit is
1,024: 1,100 pinned connections, plain and behind OAuth, and valid clients still served.

Real sockets on 127.0.0.1, both of uvicorn's HTTP/1.1 implementations, every socket with a
timeout and every wait with a deadline.
"""

from __future__ import annotations

import json
import logging
import select
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from support.flood_wire import SIMPLE_TEXT, ServerProcess, Wire, post, tool_text
from support.raw_http import (
    IMPLS,
    MARGIN,
    SOCKET_TIMEOUT,
    Reader,
    Running,
    assert_initialized,
    connect,
    drain,
    exchange,
    initialize,
    request,
    running,
)

from mcpgen.runtime.http.guard import ConnectionGuard
from mcpgen.runtime.http.protocols import HttpImpl
from mcpgen.runtime.core.limits import Limits

IDLE = 1.0
LINGER = 0.5
BODY_TIMEOUT = 0.5
LIMITS = Limits(
    header_timeout=5.0, idle_timeout=IDLE, linger_timeout=LINGER, body_timeout=BODY_TIMEOUT
)


@pytest.fixture(scope="module", params=IMPLS)
def served(request: pytest.FixtureRequest) -> Iterator[Running]:
    with running(request.param, limits=LIMITS) as server:
        yield server


def readable(socks: list[socket.socket], seconds: float) -> list[socket.socket]:
    """Those of ``socks`` with something to read (or closed) within ``seconds`` (poll, not
    select: the attack's descriptors go past select's 1,024)."""
    poller = select.poll()
    by_fd = {sock.fileno(): sock for sock in socks}
    for fd in by_fd:
        poller.register(fd, select.POLLIN)
    return [by_fd[fd] for fd, _ in poller.poll(max(0, int(seconds * 1000)))]


def closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes ``sock`` within ``seconds`` (what it still sends is read)."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        if not readable([sock], left):
            return False
        try:
            if not sock.recv(65536):
                return True
        except ConnectionResetError:
            return True
    return False


def head_of(port: int, *, path: str = "/mcp", length: int = 100, **headers: str) -> bytes:
    """A POST's headers claiming a ``length``-byte body, none of which is sent; ``headers``
    replace the usual ones (a ``_`` in a keyword stands for ``-``)."""
    fields = {
        "Host": f"127.0.0.1:{port}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Content-Length": str(length),
    }
    fields.update({name.replace("_", "-"): value for name, value in headers.items()})
    lines = [f"POST {path} HTTP/1.1", *(f"{name}: {value}" for name, value in fields.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


#: Refusals decided from the headers: (status, path, claimed body length, headers).
REFUSALS = {
    "415 content type": (415, "/mcp", 100, {"Content-Type": "text/plain"}),
    "406 accept": (406, "/mcp", 100, {"Accept": "text/html"}),
    "413 content length": (413, "/mcp", 5 * 1024 * 1024, {}),
    "404 path": (404, "/elsewhere", 100, {}),
    "403 host": (403, "/mcp", 100, {"Host": "evil.example"}),
}


@pytest.mark.parametrize("kind", list(REFUSALS))
def test_a_refusal_before_the_body_ends_the_connection_whatever_the_client_sends_later(
    served: Running, kind: str
) -> None:
    """The client reads the whole refusal, which says ``Connection: close`` (httptools);
    one more body byte does not keep it open."""
    status, path, length, headers = REFUSALS[kind]
    with connect(served.port) as sock:
        sock.sendall(head_of(served.port, path=path, length=length, **headers))
        response = Reader(sock).response()
        assert response.status == status, response
        assert json.loads(response.body)["error"]["code"] == -32600
        assert response.headers.get("connection") == said_close(served), response.headers
        sock.sendall(b"x")  # one more body byte, then nothing
        assert closed_within(sock, LINGER + MARGIN), "the refused connection was kept open"
    assert_initialized(exchange(served.port, initialize()))


def said_close(served: Running) -> str | None:
    """What a refusal before the body says of the connection: ``close`` under httptools
    (h11 would reset the connection under an unread body on that word, so says nothing)."""
    impl = getattr(served.server.config, "http", None)
    return "close" if getattr(impl, "__name__", "") == "GuardedHttpTools" else None


def test_a_body_over_the_limit_being_sent_still_gets_its_413(served: Running) -> None:
    """A client sending a body just over the limit, as fast as it can, reads its 413:
    the body is read and dropped first (for at most ``linger_timeout``), so the
    connection is not reset under it, and it stays open for the next request."""
    length = LIMITS.max_message_bytes + 100
    chunk = b"[" * 65536
    with connect(served.port) as sock:
        sock.sendall(head_of(served.port, length=length))
        sent = 0
        while sent < length and not readable([sock], 0):
            piece = chunk[: min(len(chunk), length - sent)]
            try:
                sock.sendall(piece)
            except (BrokenPipeError, ConnectionResetError):
                break  # the server stopped reading: its answer is there to read
            sent += len(piece)
        assert sent == length  # nothing was answered before the whole body was sent
        reader = Reader(sock)
        response = reader.response()
        assert response.status == 413, response
        assert response.headers.get("connection") is None  # the body was read: kept
        sock.sendall(request(served.port, initialize()))
        assert_initialized(reader.response())
    assert_initialized(exchange(served.port, initialize()))


def test_a_body_too_slow_gets_408_and_the_connection_ends(served: Running) -> None:
    with connect(served.port) as sock:
        sock.sendall(head_of(served.port) + b'{"jsonrpc"')
        response = Reader(sock).response()
        assert response.status == 408, response
        assert response.headers.get("connection") == said_close(served), response.headers
        sock.sendall(b":")
        assert closed_within(sock, LINGER + MARGIN)
    assert_initialized(exchange(served.port, initialize()))


def test_bytes_that_begin_no_request_do_not_extend_the_idle_deadline(served: Running) -> None:
    """After a response, blank lines every 0.2 s: the connection still ends, by the idle
    deadline (or, if the parser takes them for a request's start, the header deadline)."""
    with connect(served.port) as sock:
        reader = Reader(sock)
        sock.sendall(request(served.port, initialize()))
        assert_initialized(reader.response())
        deadline = time.monotonic() + IDLE + LIMITS.header_timeout + MARGIN
        while time.monotonic() < deadline:
            try:
                sock.sendall(b"\r\n")
            except (BrokenPipeError, ConnectionResetError):
                break
            if closed_within(sock, 0.2):
                break
        else:
            raise AssertionError("blank lines kept an idle connection open")


def test_a_refused_request_whose_body_did_come_keeps_the_connection(served: Running) -> None:
    """Only a refusal before the body ends the connection: one after it keeps alive."""
    with connect(served.port) as sock:
        reader = Reader(sock)
        sock.sendall(head_of(served.port, length=2, Content_Type="text/plain") + b"{}")
        refused = reader.response()
        assert refused.status == 415 and "connection" not in refused.headers
        sock.sendall(request(served.port, initialize()))
        assert_initialized(reader.response())


@contextmanager
def capped(http: HttpImpl, cap: int) -> Iterator[Running]:
    with running(http, limits=LIMITS.replace(max_connections=cap, idle_timeout=30.0)) as server:
        yield server


@pytest.mark.parametrize("http", IMPLS)
def test_connections_over_the_cap_get_503_and_the_operator_is_told(
    http: HttpImpl, caplog: pytest.LogCaptureFixture
) -> None:
    cap = 4
    caplog.set_level(logging.WARNING, logger="mcpgen.runtime.http.endpoint")
    with capped(http, cap) as served:
        held = [connect(served.port) for _ in range(cap)]
        try:
            for sock in held[:1]:  # admitted, and served
                reader = Reader(sock)
                sock.sendall(request(served.port, initialize()))
                assert_initialized(reader.response())
            with connect(served.port) as extra:
                data = drain(extra)
            head, _, body = data.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 503 "), data
            assert b"connection: close" in head.lower()
            assert "Limits.max_connections" in json.loads(body)["error"]["message"]
            guard = served.server.config.guard  # type: ignore[attr-defined]
            assert isinstance(guard, ConnectionGuard)
            assert guard.refused == 1
            warnings = [r.getMessage() for r in caplog.records if "refusing more" in r.getMessage()]
            assert len(warnings) == 1, warnings
            with connect(served.port) as again:  # a second refusal: counted, not logged again
                drain(again)
            assert guard.refused == 2
            assert sum("refusing more" in r.getMessage() for r in caplog.records) == 1
        finally:
            for sock in held:
                sock.close()
        deadline = time.monotonic() + 5
        while True:  # the server notices the closes, and has room again
            try:
                assert_initialized(exchange(served.port, initialize()))
                break
            except (AssertionError, EOFError, ConnectionError):
                assert time.monotonic() < deadline, "no room after the connections closed"
                time.sleep(0.05)


# -- the attack, against a server process limited to 1,024 file descriptors ---------------

ATTACKERS = 1_100
FILES = 1_024
TOKEN = "valid-token-for-the-flood-test"
#: How long the valid client may wait for the server to have room again: every pinned
#: connection lingers ``linger_timeout`` (2 s by default) after its refusal.
SERVED_WITHIN = 20.0
#: How long, once a valid client was served, the last pinned connections may take to be
#: ended: those refused last still linger ``linger_timeout`` (2 s), later on a loaded machine.
ENDED_WITHIN = 10.0


@pytest.fixture
def attacked(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[ServerProcess]:
    protected: bool = request.param
    extra = ["--max-files", str(FILES)] + (["--auth-token", TOKEN] if protected else [])
    server = ServerProcess(tmp_path / "server.log", "http", {}, extra)
    try:
        yield server
    finally:
        server.kill()


def valid_call(port: int, protected: bool) -> str:
    """A stateless 2026-07-28 tools/call on a new connection; its text."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    params = {"name": "test_simple_text", "arguments": {}, "_meta": meta}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    modern = b"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n"
    modern += b"Mcp-Name: test_simple_text\r\n\r\n"
    head = post(body.encode()).replace(b"\r\n\r\n", b"\r\n" + modern, 1)
    if protected:
        head = head.replace(b"\r\n\r\n", f"\r\nAuthorization: Bearer {TOKEN}\r\n\r\n".encode(), 1)
    wire = Wire(port, timeout=3.0)
    try:
        answer = wire.exchange(head)
        assert answer.status == 200, answer
        return tool_text(answer.json())
    finally:
        wire.close()


@pytest.mark.slow
@pytest.mark.parametrize("attacked", [False, True], ids=["plain", "oauth"], indirect=True)
def test_a_thousand_pinned_connections_leave_valid_clients_served(
    attacked: ServerProcess,
) -> None:
    """1,100 connections, each refused from its headers (415; behind OAuth, 401 for no
    token), each then sent one more body byte and held open by the client: the server ends
    every one, and a valid client is served while the attackers still hold their sockets."""
    port = attacked.port
    protected = "--auth-token" in attacked.proc.args  # type: ignore[operator]
    refused_head = head_of(port, Content_Type="application/json" if protected else "text/plain")
    sockets: list[socket.socket] = []
    try:
        for _ in range(ATTACKERS):
            sock = socket.create_connection(("127.0.0.1", port), timeout=SOCKET_TIMEOUT)
            sock.sendall(refused_head)
            sockets.append(sock)
        statuses: dict[int, int] = {}
        pending = set(sockets)
        deadline = time.monotonic() + 30
        while pending and time.monotonic() < deadline:
            for sock in readable(list(pending), 1.0):
                pending.discard(sock)
                try:
                    line = sock.recv(64).split(b"\r\n", 1)[0]
                    status = int(line.split()[1]) if line else 0
                except (ConnectionResetError, IndexError, ValueError):
                    status = 0
                statuses[status] = statuses.get(status, 0) + 1
                try:
                    sock.sendall(b"x")  # one more body byte, then nothing
                except OSError:
                    pass
        expected = 401 if protected else 415
        assert not pending, f"{len(pending)} connections got no answer; {statuses}"
        assert set(statuses) <= {expected, 503, 0}, statuses
        assert statuses.get(expected, 0) >= FILES // 2, statuses
        served_at = time.monotonic()
        while True:
            try:
                assert valid_call(port, protected) == SIMPLE_TEXT
                break
            except (AssertionError, OSError, EOFError) as exc:
                assert time.monotonic() - served_at < SERVED_WITHIN, f"never served: {exc!r}"
                time.sleep(0.25)
        ends_by = time.monotonic() + ENDED_WITHIN
        still_open = [
            s for s in sockets if not closed_within(s, max(0.01, ends_by - time.monotonic()))
        ]
        assert not still_open, f"{len(still_open)} pinned connections still open"
    finally:
        for sock in sockets:
            sock.close()
    assert attacked.alive()
    assert valid_call(port, protected) == SIMPLE_TEXT
