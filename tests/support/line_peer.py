"""A server subprocess driven with raw JSON lines over its stdin and stdout (``LinePeer``:
``subprocess`` plus a reader thread; it writes raw frames, so it can send anything, and
reads with a timeout on every line), and what reading its answers needs."""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from support.checkout import ROOT
from support.messages import notification, request

EVERYTHING = ("-m", "examples.everything", "--transport", "stdio")


LATEST_LEGACY = "2025-11-25"


READ_TIMEOUT = 5.0


SIMPLE_TEXT = "This is a simple text response for testing."


class LinePeer:
    """A server subprocess driven with raw JSON lines; every read is bounded in time."""

    def __init__(self, args: Sequence[str], stderr_path: Path) -> None:
        self.stderr_path = stderr_path
        with open(stderr_path, "wb") as stderr:  # the child keeps its own descriptor
            self.proc = subprocess.Popen(
                [sys.executable, *args],
                cwd=ROOT,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
            )
        #: Every line the server wrote to stdout, raw.
        self.lines: list[bytes] = []
        #: Messages read while waiting for something else.
        self.backlog: list[Any] = []
        self._queue: queue.Queue[bytes | None] = queue.Queue()
        self._eof = False
        self._ids = itertools.count(1)
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._queue.put(line)
        self._queue.put(None)

    # writing

    def send_raw(self, frame: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(frame + b"\n")
        self.proc.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_raw(json.dumps(message).encode())

    def next_id(self) -> int:
        return next(self._ids)

    def notify(self, method: str, params: Any = None) -> None:
        self.send(notification(method, params))

    def start_request(self, method: str, params: Any = None) -> int:
        request_id = self.next_id()
        self.send(request(request_id, method, params))
        return request_id

    def request(
        self, method: str, params: Any = None, timeout: float = READ_TIMEOUT
    ) -> dict[str, Any]:
        """Send a request and return its response (the whole JSON-RPC message)."""
        return self.response(self.start_request(method, params), timeout)

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        return self.request("tools/call", {"name": name, "arguments": arguments or {}})

    # reading

    def read(self, timeout: float = READ_TIMEOUT) -> Any:
        """The next message from stdout (the backlog is not consulted)."""
        if self._eof:
            raise EOFError("the server closed its stdout")
        try:
            line = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"nothing from the server within {timeout}s") from None
        if line is None:
            self._eof = True
            raise EOFError("the server closed its stdout")
        self.lines.append(line)
        return json.loads(line)

    def expect(self, wanted: Callable[[Any], bool], timeout: float = READ_TIMEOUT) -> Any:
        """The first message (backlog first) ``wanted`` accepts; others go to the backlog."""
        for index, message in enumerate(self.backlog):
            if wanted(message):
                return self.backlog.pop(index)
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no wanted message within {timeout}s; got {self.backlog}")
            message = self.read(remaining)
            if wanted(message):
                return message
            self.backlog.append(message)

    def response(self, request_id: Any, timeout: float = READ_TIMEOUT) -> Any:
        return self.expect(lambda m: is_response(m, request_id), timeout)

    def server_request(self, method: str, timeout: float = READ_TIMEOUT) -> Any:
        return self.expect(
            lambda m: isinstance(m, dict) and m.get("method") == method and "id" in m,
            timeout,
        )

    def collect(self, duration: float) -> list[Any]:
        """Everything that arrives within ``duration`` seconds (also kept in the backlog)."""
        got: list[Any] = []
        deadline = time.monotonic() + duration
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                got.append(self.read(remaining))
            except TimeoutError:
                break
        self.backlog += got
        return got

    # lifecycle

    def initialize(
        self, version: str = LATEST_LEGACY, capabilities: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """The legacy handshake; returns the ``initialize`` result."""
        answer = self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": capabilities or {},
                "clientInfo": {"name": "line-peer", "version": "1.0"},
            },
        )
        assert "result" in answer, answer
        self.notify("notifications/initialized")
        return answer["result"]

    def close(self, timeout: float = READ_TIMEOUT) -> int:
        """Close stdin (end of input) and wait for the exit code."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        finally:
            self.kill()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(READ_TIMEOUT)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")


def is_response(message: Any, request_id: Any) -> bool:
    return (
        isinstance(message, dict)
        and "method" not in message
        and message.get("id") == request_id
        and ("result" in message or "error" in message)
    )


def error_code(message: Any) -> int:
    assert isinstance(message, dict) and "error" in message, message
    return message["error"]["code"]


def tool_text(answer: Any) -> str:
    assert "result" in answer, answer
    return answer["result"]["content"][0]["text"]
