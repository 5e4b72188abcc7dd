"""A server stopped with SIGTERM (``examples.everything`` over HTTP, a real process on
127.0.0.1, run by ``serve`` or by plain uvicorn): it stops accepting, its legacy GET stream
ends at once with a ``retry`` hint (the client goes elsewhere), the call in flight is
answered, and the process exits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import httpx
import pytest

from support.checkout import ROOT
from support.http_endpoint import Endpoint, open_session
from support.node_tools import wait_listening
from support.processes import free_port, stop

pytestmark = pytest.mark.slow
VERSION = "2025-11-25"


RUNNERS = {
    "serve": ["-m", "examples.everything", "--transport", "http", "--port"],
    "uvicorn": ["-m", "uvicorn", "examples.everything.asgi:app", "--port"],
}


@pytest.mark.parametrize("runner", sorted(RUNNERS))
def test_sigterm_closes_streams_with_a_retry_hint_and_answers_the_call_in_flight(
    runner: str,
) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    command = [sys.executable, *RUNNERS[runner], str(port)]
    server = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, 30)
        sent = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        hello = {
            "protocolVersion": VERSION,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        begun = httpx.post(
            url,
            headers=sent,
            json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello},
        )
        session = {
            **sent,
            "mcp-session-id": begun.headers["mcp-session-id"],
            "mcp-protocol-version": VERSION,
        }
        httpx.post(
            url, headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
        )
        lines: list[str] = []
        ended: list[float] = []
        opened = threading.Event()

        def listen() -> None:
            get = {**session, "accept": "text/event-stream"}
            with httpx.stream("GET", url, headers=get, timeout=30) as stream:
                opened.set()
                for line in stream.iter_lines():
                    lines.append(line)
            ended.append(time.monotonic())

        answers: list[Any] = []

        def call() -> None:
            params = {"name": "slow_compute", "arguments": {"seconds": 1.5, "label": "drain"}}
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
            answers.append(httpx.post(url, headers=session, json=body, timeout=30))

        threads = [
            threading.Thread(target=listen, daemon=True),
            threading.Thread(target=call, daemon=True),
        ]
        for thread in threads:
            thread.start()
        assert opened.wait(10)
        time.sleep(0.3)  # the call runs
        stopped_at = time.monotonic()
        server.send_signal(signal.SIGTERM)
        threads[0].join(10)
        assert ended and ended[0] - stopped_at < 1.0, "the GET stream did not end at once"
        assert any(line.startswith("retry:") for line in lines), lines
        threads[1].join(20)
        assert answers and answers[0].status_code == 200, answers
        assert "drain: computed for 1.5s" in answers[0].text
        server.wait(20)
        with pytest.raises(httpx.TransportError):
            httpx.post(
                url, headers=sent, json={"jsonrpc": "2.0", "id": 2, "method": "ping"}, timeout=2
            )
    finally:
        stop(server)


def test_with_a_stop_delay_sigterm_fails_readiness_at_once_and_serves_on_until_it_ends() -> None:
    """``MCPGEN_STOP_DELAY=2`` under plain uvicorn: right after SIGTERM ``/readyz`` says
    503 ``stopping`` while calls are still answered; after the delay the process stops
    accepting and exits."""
    port = free_port()
    env = {**os.environ, "MCPGEN_STOP_DELAY": "2"}
    command = [sys.executable, *RUNNERS["uvicorn"], str(port)]
    server = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, 30)
        assert httpx.get(f"http://127.0.0.1:{port}/readyz").status_code == 200
        stopped_at = time.monotonic()
        server.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        ready = httpx.get(f"http://127.0.0.1:{port}/readyz")
        assert ready.status_code == 503 and ready.json() == {"status": "stopping"}
        session = open_session(Endpoint(port), VERSION)  # (asserts it is served)
        assert session.session_id
        server.wait(20)
        assert time.monotonic() - stopped_at >= 2.0
    finally:
        stop(server)
