"""Servers run as their own process in tests: started, their address read from what they
announce, and stopped (terminated, killed if they linger) whatever the test did."""

from __future__ import annotations

import re
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago, for a server to be told to use."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


#: How long a server may take to say where it listens.
ANNOUNCE_TIMEOUT_S = 60.0
#: How long a server may take to end once terminated, before it is killed.
GRACE_S = 10.0


def stop(process: subprocess.Popen[Any], grace: float = GRACE_S) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(grace)


@contextmanager
def announced_http(
    command: Sequence[str], cwd: Path, timeout: float = ANNOUNCE_TIMEOUT_S
) -> Iterator[str]:
    """Run ``command`` (an HTTP server that announces where it listens on stderr,
    "mcpgen: serving MCP at http://127.0.0.1:PORT/mcp", or ``ws://`` for a WebSocket
    endpoint, within ``timeout`` seconds) and give that URL. Its stderr goes to a file,
    never a pipe left unread (a server that goes on logging would block on a full one)."""
    with tempfile.TemporaryFile("w+") as said:
        process = subprocess.Popen(
            list(command), cwd=cwd, stdin=subprocess.DEVNULL, stderr=said, text=True
        )
        try:
            deadline = time.monotonic() + timeout
            while True:
                said.seek(0)
                text = said.read()
                found = re.search(r"serving MCP at ((?:http|ws)://\S+)", text)
                if found is not None:
                    break
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"no address announced: {text[-3000:]!r}")
                time.sleep(0.05)
            yield found.group(1)
        finally:
            stop(process)
