"""The WebSocket and HTTP+SSE drivers of the fuzz suite: the stdio driver's cases, sessions
and oracles (``fuzz_stdio``: one message per line, a sentinel request after each case),
carried over a persistent connection to ``python -m examples.everything --transport
websocket`` (its app serves HTTP+SSE at ``/sse`` too) on an ephemeral port of 127.0.0.1.

Each era gets a connection of its own instead of a process of its own (a connection is the
session on both transports); one server process serves them all, and its death is every
connection's crash. Over WebSocket each line is a text frame (a line that is not UTF-8
cannot be one: the case is skipped and counted); over HTTP+SSE each line is a POST to the
session's messages URL, whose refusal (a 4xx with a JSON-RPC error) is read as an answer
beside what comes down the stream, and a 5xx is a failure of its own.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from mcpgen.runtime.lowlevel import DEFAULT
from support.fuzz_report import Tally
from support.fuzz_stdio import Owed, Runner
from support.fuzzing import DEADLINE, STATE_KEY, Case, frame_of

ROOT = Path(__file__).resolve().parents[2]
#: A longer frame is refused by the WebSocket protocol itself: uvicorn's ``ws_max_size``,
#: which ``runtime.http.serve.config`` sets to twice the message limit.
WEBSOCKET_FRAME_LIMIT = 2 * DEFAULT.max_message_bytes
#: The close code of that refusal ("message too big").
TOO_BIG = 1009


class Server:
    """The everything server as a process, serving WebSocket at ``/mcp`` and HTTP+SSE at
    ``/sse``; what it writes to stderr is collected by a thread."""

    def __init__(self) -> None:
        env = dict(os.environ, MCPGEN_STATE_KEY=STATE_KEY.hex(), PYTHONPATH=str(ROOT))
        command = [sys.executable, "-m", "examples.everything", "--transport", "websocket"]
        self.proc = subprocess.Popen(
            [*command, "--port", "0"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        assert self.proc.stderr is not None
        self.err = bytearray()
        self.err_seen = 0
        self.port = 0
        announced = threading.Event()

        def collect() -> None:
            assert self.proc.stderr is not None
            for line in iter(self.proc.stderr.readline, b""):
                self.err += line
                found = re.search(rb"ws://127\.0\.0\.1:(\d+)/mcp", line)
                if found and not self.port:
                    self.port = int(found.group(1))
                    announced.set()
            announced.set()

        self.reader = threading.Thread(target=collect, daemon=True)
        self.reader.start()
        if not announced.wait(30) or not self.port:
            raise RuntimeError(f"the server did not start: {self.err[-2000:].decode()}")

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def new_stderr(self) -> str:
        text = self.err[self.err_seen :].decode("utf-8", "replace")
        self.err_seen = len(self.err)
        return text

    def stop(self) -> int | None:
        self.proc.terminate()
        try:
            return self.proc.wait(DEADLINE)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(DEADLINE)
            return None


class Connection:
    """What ``fuzz_stdio.Runner`` needs of its process, over one connection: ``write``
    lines, read answers with ``line``, stderr, ``close``."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.proc = server.proc  # what a hung case's retirement kills: the server
        self.lines: list[bytes] = []
        self.ready = threading.Condition()
        self.eof = False
        self.broken = False
        self.closed = False

    def received(self, data: bytes) -> None:
        with self.ready:
            self.lines.append(data)
            self.ready.notify_all()

    def ended(self) -> None:
        with self.ready:
            self.eof = True
            self.ready.notify_all()

    def line(self, deadline: float) -> bytes | None:
        with self.ready:
            while not self.lines:
                if self.eof:
                    raise EOFError
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self.ready.wait(remaining)
            return self.lines.pop(0)

    def new_stderr(self) -> str:
        return self.server.new_stderr()

    def stderr_tail(self) -> str:
        return self.server.err[-4000:].decode("utf-8", "replace")


class WebSocketConnection(Connection):
    def __init__(self, server: Server) -> None:
        super().__init__(server)
        self.socket: ClientConnection = connect(
            f"ws://127.0.0.1:{server.port}/mcp",
            subprotocols=["mcp"],  # type: ignore[list-item]
            max_size=None,
            compression=None,
            open_timeout=DEADLINE,
        )
        #: The close code the server sent, once it closed the connection.
        self.close_code: int | None = None
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for frame in self.socket:
                self.received(frame.encode() if isinstance(frame, str) else frame)
        except ConnectionClosed as exc:
            self.close_code = exc.rcvd.code if exc.rcvd is not None else None
        finally:
            self.ended()

    def write(self, data: bytes) -> None:
        for line in data.split(b"\n"):
            if not line or line.isspace():
                continue
            try:
                self.socket.send(line.decode())
            except ConnectionClosed as exc:
                self.close_code = exc.rcvd.code if exc.rcvd is not None else None
                self.broken = True
                return

    def close(self) -> int | None:
        self.closed = True
        self.socket.close()
        return 0 if self.server.alive else self.server.proc.poll()


class SseConnection(Connection):
    def __init__(self, server: Server) -> None:
        super().__init__(server)
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=DEADLINE)
        self.endpoint: str | None = None
        self.errors_5xx: list[str] = []
        #: A POST over the body limit could not be sent whole: the server closed it.
        self.cut_off = False
        found = threading.Event()

        def read() -> None:
            try:
                headers = {"accept": "text/event-stream"}
                with self.http.stream("GET", "/sse", headers=headers, timeout=None) as got:
                    kind, data = "message", []
                    for text in got.iter_lines():
                        if text:
                            field, _, value = text.partition(":")
                            value = value[1:] if value.startswith(" ") else value
                            if field == "event":
                                kind = value
                            elif field == "data":
                                data.append(value)
                            continue
                        if kind == "endpoint":
                            self.endpoint = "\n".join(data)
                            found.set()
                        elif data:
                            self.received("\n".join(data).encode())
                        kind, data = "message", []
            except httpx.HTTPError:
                pass
            finally:
                found.set()
                self.ended()

        threading.Thread(target=read, daemon=True).start()
        if not found.wait(DEADLINE) or self.endpoint is None:
            raise RuntimeError("no endpoint event from /sse")

    def write(self, data: bytes) -> None:
        assert self.endpoint is not None
        for line in data.split(b"\n"):
            if not line or line.isspace():
                continue
            try:
                sent = self.http.post(
                    self.endpoint, content=line, headers={"content-type": "application/json"}
                )
            except httpx.HTTPError:
                # A body over the limit is refused (413) before it is read, and the
                # connection closed once Limits.linger_timeout has passed: a client still
                # sending by then (a loaded machine) sees it cut off.
                self.cut_off = len(line) > DEFAULT.max_message_bytes
                self.broken = True
                return
            if sent.status_code >= 500:
                self.errors_5xx.append(f"{sent.status_code}: {sent.text[:200]}")
            elif sent.status_code != 202 and sent.content:
                # Refused with its own error: an answer, unless what was refused is a
                # notification (the transport's refusal, as over Streamable HTTP, is no
                # answer to it: nobody waits for one).
                if frame_of(line).kind != "notification":
                    self.received(sent.content)

    def close(self) -> int | None:
        self.closed = True
        self.http.close()
        return 0 if self.server.alive else self.server.proc.poll()


class SocketRunner(Runner):
    """``fuzz_stdio.Runner`` over connections to one server (``kind``: ``websocket`` or
    ``sse``)."""

    def __init__(self, tally: Tally, kind: str) -> None:
        super().__init__(tally)
        self.kind = kind
        self.server = Server()
        self.skipped = 0

    def retire(self, era: str, kill: bool = False, crashed: bool = False) -> int | None:
        # A hung case closes its connection; the server serves the others on (and if it
        # hangs for all, the next case says so).
        return super().retire(era, kill=False, crashed=crashed)

    def new_process(self) -> Connection:  # type: ignore[override]  # a connection here
        if not self.server.alive:
            self.server = Server()
        if self.kind == "websocket":
            return WebSocketConnection(self.server)
        return SseConnection(self.server)

    def judge(self, case: Case, proc: Any, dead: bool, alive: bool, owed: Owed) -> None:
        """A frame over the limit that ends its connection, as documented, the server
        serving on, is an outcome, not a crash: over WebSocket, one over the protocol's
        limit closes it with 1009; over HTTP+SSE, a POST over the body limit is cut off
        if it is still being sent when the server's linger ends."""
        ended = dead or proc.broken
        over = any(
            len(line) > WEBSOCKET_FRAME_LIMIT for f in case.frames for line in f.split(b"\n")
        )
        if ended and self.server.alive:
            # (the close frame's 1009 may not be read before the write fails, on a busy
            # machine: the connection ending under a frame over the limit is enough)
            if over and getattr(proc, "close_code", None) in (TOO_BIG, None):
                self.tally.outcomes["closed 1009 (a frame over the WebSocket limit)"] += 1
                self.retire(case.era, crashed=True)
                return
            if getattr(proc, "cut_off", False):
                self.tally.outcomes["413, the rest of the body cut off (linger_timeout)"] += 1
                self.retire(case.era, crashed=True)
                return
        super().judge(case, proc, dead, alive, owed)

    def run_case(self, case: Case) -> None:
        if self.kind == "websocket" and not all(_utf8(frame) for frame in case.frames):
            self.skipped += 1  # no text frame can carry it
            return
        super().run_case(case)
        connection = self.procs.get(case.era)
        if isinstance(connection, SseConnection) and connection.errors_5xx:
            self.tally.fail("5xx", connection.errors_5xx[0][:80], case, "")
            connection.errors_5xx.clear()


def _utf8(data: bytes) -> bool:
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


def run(kind: str, cases: Iterable[Case], budget: float | None = None) -> Tally:
    tally = Tally(kind)
    runner = SocketRunner(tally, kind)
    started = time.monotonic()
    try:
        for case in cases:
            if budget is not None and time.monotonic() - started > budget:
                tally.notes.append(f"stopped by the time budget ({budget:.0f} s)")
                break
            runner.run_case(case)
            tally.cases += 1
    finally:
        for era in list(runner.procs):
            runner.retire(era)
        code = runner.server.stop()
        if code not in (0, -15, None):
            tally.notes.append(f"the server exited with {code}")
    if runner.skipped:
        tally.notes.append(f"{runner.skipped} cases not valid UTF-8: no text frame carries them")
    tally.notes.append(f"{runner.spawned} connections")
    return tally.finish()
