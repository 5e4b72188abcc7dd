"""Plumbing of the flood tests (tests/hostile/test_floods.py): a server subprocess with limits of
the test's choosing, its memory figures, and a raw HTTP/1.1 client.

The client is raw sockets because floods need what no HTTP client does: thousands of
pipelined requests on one connection, streams abandoned mid-way, bodies that never end.
Every socket has a timeout and every wait a deadline.
"""

from __future__ import annotations

import json
import os
import re
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SOCKET_TIMEOUT = 20.0
START_TIMEOUT = 20.0
LEGACY = "2025-11-25"
SIMPLE_TEXT = "This is a simple text response for testing."
_ANNOUNCED = re.compile(rb"serving MCP at http://127\.0\.0\.1:(\d+)/mcp")


def vm_kib(pid: int, name: str) -> int:
    """``VmRSS``, ``VmHWM``, … of ``pid`` in KiB, from ``/proc/<pid>/status``."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(name + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {name} in /proc/{pid}/status")


class ServerProcess:
    """``python -m tests.peers.flood_server`` with ``limits``; killed by :meth:`kill`."""

    def __init__(
        self,
        log: Path,
        transport: str,
        limits: dict[str, float],
        extra: Sequence[str] = (),
    ) -> None:
        options = [f"--limit={name}={value}" for name, value in limits.items()] + list(extra)
        self.log = log
        with open(log, "wb") as stderr:  # the child keeps its own descriptor
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "tests.peers.flood_server", "--transport", transport]
                + options,
                cwd=ROOT,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE if transport == "stdio" else subprocess.DEVNULL,
                stderr=stderr,
            )
        self.pid = self.proc.pid
        self.port = self._announced_port() if transport == "http" else 0

    def _announced_port(self) -> int:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            found = _ANNOUNCED.search(self.log.read_bytes())
            if found:
                return int(found.group(1))
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"the server did not announce its port: {self.log.read_text()}")

    def rss(self) -> int:
        return vm_kib(self.pid, "VmRSS")

    def peak(self) -> int:
        return vm_kib(self.pid, "VmHWM")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass


@dataclass
class Memory:
    """A server's memory figures around a flood, in KiB."""

    before: int
    after: int = 0
    peak: int = 0

    @classmethod
    def of(cls, server: ServerProcess) -> Memory:
        return cls(server.rss())

    def measure(self, server: ServerProcess) -> Memory:
        self.after, self.peak = server.rss(), server.peak()
        return self

    @property
    def growth(self) -> int:
        """How far the flood took the server above where it started: its peak."""
        return max(self.peak, self.after) - self.before

    def __str__(self) -> str:
        return (
            f"VmRSS {self.before / 1024:.1f} -> {self.after / 1024:.1f} MiB,"
            f" peak {self.peak / 1024:.1f} MiB (growth {self.growth / 1024:.1f} MiB)"
        )


# -- JSON-RPC messages -------------------------------------------------------------------------


def message(request_id: Any, method: str, params: Any = None) -> bytes:
    frame: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if request_id is not None:
        frame["id"] = request_id
    if params is not None:
        frame["params"] = params
    return json.dumps(frame, separators=(",", ":")).encode()


def initialize(version: str = LEGACY) -> bytes:
    client = {"name": "flood", "version": "1.0"}
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": client}
    return message(1, "initialize", params)


INITIALIZE = initialize()
INITIALIZED = message(None, "notifications/initialized")


def call(request_id: Any, tool: str, arguments: Any = None, progress: Any = None) -> bytes:
    params: dict[str, Any] = {"name": tool, "arguments": arguments or {}}
    if progress is not None:
        params["_meta"] = {"progressToken": progress}
    return message(request_id, "tools/call", params)


def nested(request_id: int, depth: int) -> bytes:
    """A ``ping`` whose params hold arrays ``depth`` deep."""
    return b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"x":%s%s}}' % (
        request_id,
        b"[" * depth,
        b"]" * depth,
    )


def tool_text(answer: Any) -> str:
    assert isinstance(answer, dict) and "result" in answer, answer
    return answer["result"]["content"][0]["text"]


# -- stdio -------------------------------------------------------------------------------------


class Lines:
    """The lines a stdio server writes, read with deadlines."""

    def __init__(self, server: ServerProcess) -> None:
        assert server.proc.stdout is not None
        self.fd = server.proc.stdout.fileno()
        self.buffer = b""

    def read(self, count: int, timeout: float = SOCKET_TIMEOUT) -> list[Any]:
        lines: list[bytes] = []
        deadline = time.monotonic() + timeout
        while len(lines) < count:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"{len(lines)} of {count} answers within {timeout} s"
            readable, _, _ = select.select([self.fd], [], [], remaining)
            if not readable:
                continue
            chunk = os.read(self.fd, 1 << 20)
            assert chunk, f"the server closed stdout after {len(lines)} of {count} answers"
            *whole, self.buffer = (self.buffer + chunk).split(b"\n")
            lines += whole
        assert len(lines) == count and not self.buffer, "more answers than requests"
        return [json.loads(line) for line in lines]


def stdio_session(server: ServerProcess, version: str = LEGACY) -> Lines:
    assert server.proc.stdin is not None
    server.proc.stdin.write(initialize(version) + b"\n" + INITIALIZED + b"\n")
    server.proc.stdin.flush()
    lines = Lines(server)
    assert lines.read(1)[0]["result"]["protocolVersion"] == version
    return lines


def stdio_ping(server: ServerProcess, lines: Lines) -> None:
    assert server.proc.stdin is not None
    server.proc.stdin.write(message("last", "ping") + b"\n")
    server.proc.stdin.flush()
    assert lines.read(1) == [{"jsonrpc": "2.0", "id": "last", "result": {}}]


def calls(first: int, count: int) -> bytes:
    return b"".join(call(i, "test_simple_text") + b"\n" for i in range(first, first + count))


# -- HTTP ----------------------------------------------------------------------------------------


def post(body: bytes, session: str | None = None, length: int | None = None) -> bytes:
    """The bytes of a POST to ``/mcp`` (headers and ``body``; ``length`` may claim more)."""
    lines = [
        b"POST /mcp HTTP/1.1",
        b"Host: 127.0.0.1",
        b"Content-Type: application/json",
        b"Accept: application/json, text/event-stream",
        b"Content-Length: %d" % (len(body) if length is None else length),
    ]
    if session is not None:
        lines += [
            b"Mcp-Session-Id: " + session.encode(),
            b"MCP-Protocol-Version: " + LEGACY.encode(),
        ]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def get(session: str, last_event: str | None = None) -> bytes:
    lines = [
        b"GET /mcp HTTP/1.1",
        b"Host: 127.0.0.1",
        b"Accept: text/event-stream",
        b"Mcp-Session-Id: " + session.encode(),
        b"MCP-Protocol-Version: " + LEGACY.encode(),
    ]
    if last_event is not None:
        lines.append(b"Last-Event-ID: " + last_event.encode())
    return b"\r\n".join(lines) + b"\r\n\r\n"


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes = b""
    #: The SSE events of a streamed body: (id, data), data decoded as JSON when present.
    events: list[tuple[str | None, Any]] = field(default_factory=list)

    def json(self) -> Any:
        if self.events:
            return self.events[-1][1]
        return json.loads(self.body)


class Wire:
    """One raw HTTP/1.1 connection to 127.0.0.1:``port``."""

    def __init__(self, port: int, timeout: float = SOCKET_TIMEOUT) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buffer = bytearray()
        self.sent = 0

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send_behind(self, data: bytes) -> threading.Thread:
        """Send ``data`` from a thread (while this one reads the answers): pipelining."""

        def run() -> None:
            view = memoryview(data)
            try:
                while view:
                    sent = self.sock.send(view[: 1 << 16])
                    self.sent += sent
                    view = view[sent:]
            except OSError:
                pass  # the server closed the connection: what it answered tells why

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread

    def _fill(self) -> None:
        data = self.sock.recv(1 << 16)
        if not data:
            raise EOFError("the server closed the connection")
        self.buffer += data

    def read_until(self, marker: bytes) -> bytes:
        """What has arrived once ``marker`` is among it (left in the buffer)."""
        while marker not in self.buffer:
            self._fill()
        return bytes(self.buffer)

    def _take_line(self) -> bytes:
        while (end := self.buffer.find(b"\r\n")) < 0:
            self._fill()
        line = bytes(self.buffer[:end])
        del self.buffer[: end + 2]
        return line

    def _take(self, size: int) -> bytes:
        while len(self.buffer) < size:
            self._fill()
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    def head(self) -> Response:
        """The status and headers of the next response."""
        status = int(self._take_line().split()[1])
        headers: dict[str, str] = {}
        while line := self._take_line():
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        return Response(status, headers)

    def chunk(self) -> bytes | None:
        """The next chunk of a chunked body; None at its end."""
        size = int(self._take_line().split(b";")[0], 16)
        data = self._take(size)
        self._take_line()
        return data or None

    def response(self) -> Response:
        """The next whole response (SSE events parsed)."""
        response = self.head()
        if "content-length" in response.headers:
            response.body = self._take(int(response.headers["content-length"]))
        elif response.headers.get("transfer-encoding") == "chunked":
            response.body = b"".join(iter(self.chunk, None))
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            response.events = sse_events(response.body)
        return response

    def exchange(self, request: bytes) -> Response:
        self.send(request)
        return self.response()

    def quiet(self, seconds: float) -> bool:
        """Whether nothing arrives (and the connection stays open) for ``seconds``."""
        if self.buffer:
            return False
        readable, _, _ = select.select([self.sock], [], [], seconds)
        return not readable

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def sse_events(body: bytes) -> list[tuple[str | None, Any]]:
    events: list[tuple[str | None, Any]] = []
    for block in body.split(b"\n\n"):
        event_id: str | None = None
        data: Any = None
        for line in block.split(b"\n"):
            if line.startswith(b"id: "):
                event_id = line[4:].decode()
            elif line.startswith(b"data: ") and line[6:]:
                data = json.loads(line[6:])
        if event_id is not None or data is not None:
            events.append((event_id, data))
    return events


def pipelined(
    port: int, requests: list[bytes], window: int = 64, deadline: float = 60.0
) -> list[Response]:
    """Send ``requests`` on one connection, ``window`` at a time back to back (pipelined),
    each window's responses read before the next is sent; the responses, in order.

    Windowed because uvicorn's httptools protocol buffers every pipelined request it can
    read (see ``test_pipelined_requests_are_read_as_they_are_served``): an unbounded
    pipeline would measure that, not the flood at hand.
    """
    wire = Wire(port)
    try:
        stop = time.monotonic() + deadline
        responses: list[Response] = []
        for start in range(0, len(requests), window):
            batch = requests[start : start + window]
            sender = wire.send_behind(b"".join(batch))
            for _ in batch:
                assert time.monotonic() < stop, f"{len(responses)} responses in {deadline} s"
                responses.append(wire.response())
            sender.join(SOCKET_TIMEOUT)
        return responses
    finally:
        wire.close()


def open_sessions(port: int, count: int) -> list[str]:
    """Start ``count`` legacy sessions (``initialize`` only, never closed); their ids."""
    responses = pipelined(port, [post(INITIALIZE)] * count)
    assert all(r.status == 200 for r in responses), {r.status for r in responses}
    return [r.headers["mcp-session-id"] for r in responses]


def works(port: int, session: str) -> None:
    """``session`` answers: a tool call gets its result."""
    wire = Wire(port)
    try:
        assert wire.exchange(post(INITIALIZED, session)).status == 202
        answer = wire.exchange(post(call(7, "test_simple_text"), session))
        assert answer.status == 200, answer
        assert tool_text(answer.json()) == SIMPLE_TEXT
    finally:
        wire.close()


def open_get(port: int, session: str) -> Wire:
    """A standalone GET stream of ``session``, its headers read."""
    wire = Wire(port)
    wire.send(get(session))
    response = wire.head()
    assert response.status == 200 and response.headers["content-type"] == "text/event-stream"
    return wire


def once(port: int, request: bytes) -> Response:
    """``request`` on a connection of its own, and its response."""
    wire = Wire(port)
    try:
        return wire.exchange(request)
    finally:
        wire.close()


def status_of(port: int, request: bytes) -> int:
    return once(port, request).status


def send_from_thread(fd: int, data: bytes) -> tuple[threading.Thread, list[int]]:
    """Write ``data`` to ``fd`` from a thread, blocking as the pipe fills; the thread and
    the count of bytes written so far (a one-item list, updated as it goes)."""
    written = [0]

    def run() -> None:
        view = memoryview(data)
        try:
            while view:
                count = os.write(fd, view[: 1 << 16])
                written[0] += count
                view = view[count:]
        except OSError:
            pass  # the server is gone

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, written


# -- HTTP+SSE and WebSocket ------------------------------------------------------------------


def open_sse(port: int) -> tuple[Wire, str]:
    """An HTTP+SSE session's stream, its headers and ``endpoint`` event read: the wire and
    the messages URL's path."""
    wire = Wire(port)
    wire.send(b"GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
    response = wire.head()
    assert response.status == 200, response
    event = wire.read_until(b"\n\n").split(b"data: ", 1)[1].split(b"\n", 1)[0]
    return wire, event.decode()


def sse_post(endpoint: str, body: bytes) -> bytes:
    """The bytes of a POST of ``body`` to an HTTP+SSE session's ``endpoint``."""
    lines = [
        b"POST " + endpoint.encode() + b" HTTP/1.1",
        b"Host: 127.0.0.1",
        b"Content-Type: application/json",
        b"Content-Length: %d" % len(body),
    ]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body
