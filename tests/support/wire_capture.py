"""Taking what a server sends off the wire, for :mod:`wire_oracle`.

- stdio: run as a script, this is a tee, ``python wire_capture.py CAPTURE -- command args…``:
  it runs the server and copies every line each side writes to CAPTURE (``C``/``S``
  prefixed; ``P`` and the server's pid first, so a test can make sure it ended, and ``E``
  and its exit status last);
- HTTP: :class:`Recording`, an ASGI middleware keeping every request body and every
  response byte (JSON bodies and SSE events), and :func:`serving`, uvicorn on 127.0.0.1 in
  a thread, always stopped.

Imports nothing from mcpgen.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the tee process starts faster without the oracle's imports
    from support.wire_oracle import Oracle, Sent

# -- stdio --------------------------------------------------------------------------------


def read_capture(path: Path) -> Iterator[tuple[str, bytes]]:
    """The (side, line) records a tee wrote: side ``C`` (client) or ``S`` (server)."""
    for line in path.read_bytes().splitlines() if path.exists() else []:
        if line[:2] in (b"C ", b"S ") and line[2:].strip():
            yield line[:1].decode(), line[2:]


def stdio_messages(capture: Path, oracle: Oracle) -> list[Sent]:
    """What the server sent, checked: a stdio process is one connection."""
    from support.wire_oracle import Wire

    wire = Wire("stdio", oracle)
    for side, line in read_capture(capture):
        (wire.from_client if side == "C" else wire.from_server)(line)
    return wire.sent


def stdio_client_messages(capture: Path, oracle: Oracle) -> list[Sent]:
    """What the client of a tee'd stdio server sent, checked (see ``ClientWire``)."""
    from support.wire_oracle import ClientWire

    wire = ClientWire("stdio", oracle)
    for side, line in read_capture(capture):
        (wire.from_client if side == "C" else wire.from_server)(line)
    return wire.sent


def stop_captured(capture: Path, grace: float = 5.0) -> None:
    """The servers a tee started are gone within ``grace`` seconds (else killed), and the
    tee has written all it read (its ``E`` line)."""
    deadline = time.monotonic() + grace
    lines = capture.read_bytes().splitlines() if capture.exists() else []
    for pid in [int(line[2:]) for line in lines if line.startswith(b"P ")]:
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    while lines and time.monotonic() < deadline + 1.0:
        if any(line.startswith(b"E ") for line in capture.read_bytes().splitlines()):
            break
        time.sleep(0.05)


def _pump(source: Any, sink: Any, capture: Any, side: bytes, lock: threading.Lock) -> None:
    try:
        for line in iter(source.readline, b""):
            with lock:
                capture.write(side + (line if line.endswith(b"\n") else line + b"\n"))
                capture.flush()
            sink.write(line)
            sink.flush()
    except (BrokenPipeError, OSError, ValueError):
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.close()


def tee(capture_path: str, command: list[str]) -> int:
    """Run ``command`` between this process's stdin/stdout, recording both directions."""
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None

    def forward(signum: int, _frame: Any) -> None:
        if child.poll() is None:
            child.send_signal(signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    lock = threading.Lock()
    with open(capture_path, "ab") as capture:
        capture.write(b"P %d\n" % child.pid)
        capture.flush()
        stdin, stdout = os.fdopen(0, "rb"), os.fdopen(1, "wb")
        inbound = threading.Thread(
            target=_pump, args=(stdin, child.stdin, capture, b"C ", lock), daemon=True
        )
        inbound.start()
        _pump(child.stdout, stdout, capture, b"S ", lock)
        code = child.wait()
        with lock:
            capture.write(b"E %d\n" % code)
        return code


# -- HTTP ---------------------------------------------------------------------------------


@dataclass
class Exchange:
    """One HTTP request and its response, as the server app saw them; or one WebSocket
    (``frames``: what each side sent, in order)."""

    headers: dict[str, str]
    body: bytearray = field(default_factory=bytearray)
    response_headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)
    path: str = ""
    query: str = ""
    #: When the body came and when each chunk went (``Recording.clock``): HTTP+SSE's
    #: answers go down one stream while its requests come in POSTs of their own, and only
    #: these tell their order.
    body_at: int = 0
    chunks_at: list[int] = field(default_factory=list)
    #: A WebSocket's messages: (when, "client" or "server", text).
    frames: list[tuple[int, str, bytes]] = field(default_factory=list)


def _headers(raw: Any) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in raw}


class Recording:
    """ASGI middleware keeping every request body and every response byte."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.exchanges: list[Exchange] = []
        self.clock = itertools.count()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        exchange = Exchange(_headers(scope["headers"]), path=scope["path"])
        exchange.query = scope.get("query_string", b"").decode("latin-1")
        self.exchanges.append(exchange)
        clock = self.clock

        async def receive_recorded() -> Any:
            message = await receive()
            if message["type"] == "http.request":
                if not exchange.body:
                    exchange.body_at = next(clock)
                exchange.body += message.get("body", b"")
            elif message["type"] == "websocket.receive" and message.get("text") is not None:
                exchange.frames.append((next(clock), "client", message["text"].encode()))
            return message

        async def send_recorded(message: Any) -> None:
            if message["type"] == "http.response.start":
                exchange.response_headers = _headers(message.get("headers", []))
            elif message["type"] == "http.response.body":
                exchange.chunks.append(bytes(message.get("body", b"")))
                exchange.chunks_at.append(next(clock))
            elif message["type"] == "websocket.send" and message.get("text") is not None:
                exchange.frames.append((next(clock), "server", message["text"].encode()))
            await send(message)

        await self.app(scope, receive_recorded, send_recorded)

    def messages(self, oracle: Oracle) -> list[Sent]:
        """What the server sent, checked: a legacy session (``Mcp-Session-Id``) is one
        connection, and so is each exchange outside one (stateless modern requests)."""
        from support.wire_oracle import Wire

        wires: dict[str, Wire] = {}
        streams: dict[str, list[tuple[int, str, bytes]]] = {}  # persistent connections
        for n, exchange in enumerate(self.exchanges):
            if exchange.frames:  # a WebSocket: one connection
                streams[f"websocket {n}"] = exchange.frames
                continue
            if exchange.path == "/sse":  # an HTTP+SSE session's stream: its answers
                events = list(_sse_stream(exchange))
                if events and events[0][1] == "endpoint":
                    session = events[0][2].decode().rpartition("session_id=")[2]
                    stream = streams.setdefault(f"http+sse {session}", [])
                    stream += [(at, "server", data) for at, _, data in events[1:]]
                continue
            if exchange.path == "/messages":  # a POST to it: a request
                session = exchange.query.rpartition("session_id=")[2]
                stream = streams.setdefault(f"http+sse {session}", [])
                stream.append((exchange.body_at, "client", bytes(exchange.body)))
                continue
            session = exchange.headers.get("mcp-session-id") or exchange.response_headers.get(
                "mcp-session-id"
            )
            scope = f"http session {session}" if session else f"http exchange {n}"
            wire = wires.setdefault(scope, Wire(scope, oracle))
            hint = exchange.headers.get("mcp-protocol-version")
            if exchange.body.strip():
                wire.from_client(bytes(exchange.body), hint)
            body = b"".join(exchange.chunks)
            if "text/event-stream" in exchange.response_headers.get("content-type", ""):
                for data in sse_data(body):
                    wire.from_server(data, hint)
            elif body.strip():
                wire.from_server(body, hint)
        for scope, traffic in streams.items():
            wire = wires.setdefault(scope, Wire(scope, oracle))
            for _, side, data in sorted(traffic, key=lambda item: item[0]):
                if side == "client":
                    wire.from_client(data)
                else:
                    wire.from_server(data)
        return [sent for wire in wires.values() for sent in wire.sent]


def _sse_stream(exchange: Exchange) -> Iterator[tuple[int, str, bytes]]:
    """The events of an SSE response: (when its chunk went, its type, its data)."""
    for at, chunk in zip(exchange.chunks_at, exchange.chunks):
        for event in re.split(rb"\r\n\r\n|\n\n|\r\r", chunk):
            lines = re.split(rb"\r\n|\n|\r", event)
            kinds = [line[6:].strip() for line in lines if line.startswith(b"event:")]
            data = b"\n".join(
                line[5:].removeprefix(b" ") for line in lines if line.startswith(b"data:")
            )
            if data.strip():
                yield at, (kinds[-1].decode() if kinds else "message"), data


def sse_data(stream: bytes) -> Iterator[bytes]:
    """The data of each server-sent event (events without data, e.g. priming, skipped)."""
    for event in re.split(rb"\r\n\r\n|\n\n|\r\r", stream):
        lines = [line for line in re.split(rb"\r\n|\n|\r", event) if line.startswith(b"data:")]
        data = b"\n".join(line[5:].removeprefix(b" ") for line in lines)
        if data.strip():
            yield data


@contextlib.asynccontextmanager
async def serving(app: Any, start_timeout: float = 15.0) -> AsyncIterator[str]:
    """``app`` under uvicorn on 127.0.0.1 (an ephemeral port), in a thread; always stopped."""
    import anyio
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        with anyio.fail_after(start_timeout):
            while not server.started:
                assert thread.is_alive(), "uvicorn exited while starting"
                await anyio.sleep(0.02)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        await anyio.to_thread.run_sync(thread.join, 10.0)
        if thread.is_alive():
            server.force_exit = True
            await anyio.to_thread.run_sync(thread.join, 5.0)
        sock.close()
        assert not thread.is_alive(), "uvicorn did not stop"


if __name__ == "__main__":
    separator = sys.argv.index("--")
    sys.exit(tee(sys.argv[1], sys.argv[separator + 1 :]))
