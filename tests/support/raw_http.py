"""A served app on a real socket and a raw HTTP/1.1 client for it: ``running`` starts uvicorn
as ``mcpgen`` serves (``runtime.http.serve``: the guarded protocols, the header and idle
timeouts) in a daemon thread on an ephemeral port of 127.0.0.1, and stops it; the client is
raw sockets, to send what no HTTP client would. Every socket has a timeout and every wait
a deadline."""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from mcpgen.runtime import Server
from mcpgen.runtime.core.limits import Limits
from mcpgen.runtime.http import protocols as http_protocols
from mcpgen.runtime.http import serve as http_serve
from mcpgen.runtime.http.endpoint import McpHttpApp

from support.checkout import ROOT

if str(ROOT) not in sys.path:  # examples/ is not an installed package
    sys.path.append(str(ROOT))

from examples.everything.__main__ import build_server  # noqa: E402

IMPLS = ["httptools", "h11"]


HEADER_TIMEOUT = 0.5


#: uvicorn's idle timer between requests, well above the header timeout so that an idle
#: connection outliving the header timeout tells the two apart.
KEEP_ALIVE = 2.0


#: How late past its deadline a cut may come on a busy 2-core machine.
MARGIN = 1.5


SOCKET_TIMEOUT = 5.0


LEGACY = "2025-06-18"


BOTH = "application/json, text/event-stream"


@dataclass
class Running:
    """A uvicorn server in a daemon thread and the port it bound."""

    server: http_serve.AnnouncingServer
    port: int


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@contextmanager
def running(
    http: http_protocols.HttpImpl,
    header_timeout: float = HEADER_TIMEOUT,
    limits: Limits | None = None,
    server: Server | None = None,
) -> Iterator[Running]:
    """``server`` (default: the everything server) behind ``http_serve.config``, on an
    ephemeral port, with ``limits`` (default: the header timeout and an idle timeout of
    ``KEEP_ALIVE``)."""
    if limits is None:
        limits = Limits(header_timeout=header_timeout, idle_timeout=KEEP_ALIVE)
    app = McpHttpApp((server or build_server(limits=limits)), limits=limits)
    settings = http_serve.config(app, "127.0.0.1", 0, limits, http, lifespan="on")
    uvicorn_server = http_serve.AnnouncingServer(settings)
    thread = threading.Thread(target=uvicorn_server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not uvicorn_server.started:
            assert thread.is_alive(), "uvicorn stopped while starting"
            assert time.monotonic() < deadline, "uvicorn did not start in time"
            time.sleep(0.02)
        port = uvicorn_server.servers[0].sockets[0].getsockname()[1]
        yield Running(uvicorn_server, port)
    finally:
        uvicorn_server.should_exit = True
        thread.join(10)
        assert not thread.is_alive(), "uvicorn did not stop in time"


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=SOCKET_TIMEOUT)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def request(port: int, message: Any, session: str | None = None) -> bytes:
    """A whole POST of ``message`` that the app accepts (its Host, Accept, Content-Type)."""
    body = json.dumps(message).encode()
    headers = [
        "POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        f"Accept: {BOTH}",
        f"Content-Length: {len(body)}",
    ]
    if session is not None:
        headers += [f"Mcp-Session-Id: {session}", f"MCP-Protocol-Version: {LEGACY}"]
    return ("\r\n".join(headers) + "\r\n\r\n").encode() + body


def initialize(request_id: int = 1) -> dict[str, Any]:
    client = {"name": "test_http_serve", "version": "0"}
    params = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": client}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


class Reader:
    """Reads HTTP/1.1 responses off one socket (Content-Length or chunked bodies)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def _fill(self) -> None:
        data = self.sock.recv(65536)
        if not data:
            raise EOFError("connection closed mid-response")
        self.buffer += data

    def _until(self, marker: bytes) -> bytes:
        while marker not in self.buffer:
            self._fill()
        head, self.buffer = self.buffer.split(marker, 1)
        return head

    def _exactly(self, size: int) -> bytes:
        while len(self.buffer) < size:
            self._fill()
        data, self.buffer = self.buffer[:size], self.buffer[size:]
        return data

    def response(self) -> Response:
        head = self._until(b"\r\n\r\n").decode("latin-1").split("\r\n")
        status = int(head[0].split(" ")[1])
        headers = {}
        for line in head[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding") == "chunked":
            body = b""
            while size := int(self._until(b"\r\n"), 16):
                body += self._exactly(size)
                self._exactly(2)
            self._exactly(2)
        else:
            body = self._exactly(int(headers.get("content-length", "0")))
        return Response(status, headers, body)


def exchange(port: int, message: Any) -> Response:
    """One request on a new connection, and its answer."""
    with connect(port) as sock:
        sock.sendall(request(port, message))
        return Reader(sock).response()


def drain(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes (a reset after its answer included)."""
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    return data


def assert_initialized(response: Response) -> None:
    assert response.status == 200, response
    assert response.json()["result"]["protocolVersion"] == LEGACY
