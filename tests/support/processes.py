"""Servers run as their own process in tests: started, their address read from what they
announce, and stopped (terminated, killed if they linger) whatever the test did."""

from __future__ import annotations

import re
import socket
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago, for a server to be told to use."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


#: The most lines of stderr a server may write before it says where it listens.
ANNOUNCED_WITHIN = 50
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
def announced_http(command: Sequence[str], cwd: Path) -> Iterator[str]:
    """Run ``command`` (an HTTP server that announces where it listens on stderr,
    "mcpgen: serving MCP at http://127.0.0.1:PORT/mcp", or ``ws://`` for a WebSocket
    endpoint, after at most a few lines of its
    own or of a process it starts) and give that URL."""
    process = subprocess.Popen(list(command), cwd=cwd, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        said: list[str] = []
        found = None
        while found is None and len(said) < ANNOUNCED_WITHIN:
            line = process.stderr.readline()
            if not line:
                break
            said.append(line)
            found = re.search(r"serving MCP at ((?:http|ws)://\S+)", line)
        assert found, f"no address announced: {''.join(said)!r}"
        yield found.group(1)
    finally:
        stop(process)
