"""Streamable HTTP servers on real sockets of 127.0.0.1 for the tests, each stopped however
the test ends: ``ThreadedUvicorn`` (an ASGI app served by uvicorn in a daemon thread, on a
socket bound here), ``Probe`` (a test-only tool on the everything server that reports when
it is cancelled), and ``UvicornProcess`` (``uvicorn examples.everything.asgi:app`` as a
subprocess, with workers, stopped and killed by pid)."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from mcpgen.generated.v2026_07_28 import server as s
from mcpgen.runtime import App
from mcpgen.runtime.http.endpoint import McpHttpApp

from support.checkout import ROOT
from support.http_endpoint import PING, PLAIN, Endpoint
from support.processes import free_port

#: The in-process server's body limit (the default, 4 MiB, is checked on the subprocess).
SMALL_BODY = 64 * 1024
#: How long the in-process server waits for a body (the default is 30 s).
BODY_TIMEOUT = 1.0


#: The test-only tool of ``Probe``: reports progress, then sleeps (``seconds``, default 30)
#: and records whether it was cancelled.
HANG = "test_http_hang_until_cancelled"


class Probe:
    """``HANG`` on an everything app: a tool that reports progress and then waits until it
    is cancelled (which it records)."""

    def __init__(self, app: App) -> None:
        self.started = threading.Event()
        self.cancelled = threading.Event()
        app.add_tool(self.hang, name=HANG)

    async def hang(self, ctx: s.Context, seconds: float = 30) -> str:
        self.started.set()
        await ctx.report_progress(1, 2, "waiting to be cancelled")
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return "not cancelled"


@dataclass
class Served:
    endpoint: Endpoint
    probe: Probe
    app: McpHttpApp


class ThreadedUvicorn:
    """uvicorn serving ``app`` in a daemon thread on a socket bound here (127.0.0.1)."""

    def __init__(self, app: Any, port: int = 0) -> None:
        # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets that name it, and
        # without it every request waits out a delayed ACK (~40 ms).
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))  # a port given: a server restarted in its place
        self.port: int = self.sock.getsockname()[1]
        config = uvicorn.Config(
            app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def start(self, timeout: float = 10.0) -> None:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            assert self.thread.is_alive(), "uvicorn stopped while starting"
            assert time.monotonic() < deadline, "uvicorn did not start in time"
            time.sleep(0.02)

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        if self.thread.ident is not None:  # started
            self.thread.join(timeout)
        self.sock.close()
        assert not self.thread.is_alive(), "uvicorn did not stop in time"


def children_of(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        kids = [child for child, ppid in parents.items() if ppid == parent]
        found += kids
        frontier += kids
    return found


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (zombies count as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


class UvicornProcess:
    """``uvicorn examples.everything.asgi:app`` as a subprocess (cwd = repo root), its
    ``requestState`` signed with ``key`` (hex) and ``accepted`` keys still taken."""

    def __init__(self, key: str, log: Path, workers: int = 1, accepted: str = "") -> None:
        self.port = free_port()
        self.log = log
        args = ["examples.everything.asgi:app", "--host", "127.0.0.1", "--port", str(self.port)]
        if workers > 1:
            args += ["--workers", str(workers)]
        with open(log, "wb") as out:  # the child keeps its own descriptor
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "uvicorn", *args, "--log-level", "warning"],
                cwd=ROOT,
                env={
                    **os.environ,
                    "MCPGEN_STATE_KEY": key,
                    "MCPGEN_STATE_KEYS_ACCEPTED": accepted,
                },
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self.endpoint = Endpoint(self.port)
        self.descendants: list[int] = []

    def wait_ready(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            assert self.proc.poll() is None, f"uvicorn exited: {self.log.read_text()}"
            try:
                response = httpx.post(
                    self.endpoint.url,
                    headers=PLAIN,
                    content=PING,
                    timeout=httpx.Timeout(1.0),
                )
                if response.status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, f"uvicorn not ready: {self.log.read_text()}"
            time.sleep(0.05)
        self.descendants = children_of(self.proc.pid)

    @property
    def workers(self) -> list[int]:
        return [pid for pid in self.descendants if "spawn_main" in cmdline(pid)]

    def stop(self, timeout: float = 10.0) -> list[int]:
        """SIGTERM to the supervisor; returns the processes still running afterwards."""
        self.endpoint.close()
        self.descendants = sorted(set(self.descendants) | set(children_of(self.proc.pid)))
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
        deadline = time.monotonic() + timeout
        while any(map(running, self.descendants)) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [pid for pid in [self.proc.pid, *self.descendants] if running(pid)]
        return left

    def kill(self) -> None:
        """Teardown: whatever is still running is killed, each by its pid."""
        for pid in [*self.descendants, self.proc.pid]:
            if running(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if self.proc.poll() is None:
            self.proc.wait(5)
