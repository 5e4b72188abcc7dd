"""Requests refused for their ``Host`` or ``Origin`` (the DNS-rebinding defence) are logged
for the operator: a warning naming the refused value and the setting that would allow it,
at most one line per value per ``host_log_interval``, a bounded number of lines however
many values a flood makes up, and the server serves the requests it allows meanwhile.
In process: the endpoint as an ASGI app, driven by httpx (no socket)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

import httpx
import pytest

from mcpgen.runtime import App
from mcpgen.runtime.core.log_limit import MAX_CAUSES

from support import messages

LOGGER = "mcpgen.runtime.http.endpoint"
ALLOWED = "mcp.example.test"
#: A legacy ``initialize``: answered by any server, no session needed first.
INITIALIZE = messages.initialize()
ACCEPT = {"accept": "application/json, text/event-stream"}


def app_with_a_tool() -> App:
    app = App("hosts")

    @app.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    return app


def run(scenario: Coroutine[Any, Any, None]) -> None:
    asyncio.run(asyncio.wait_for(scenario, 60))


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno == logging.WARNING
    ]


def test_refused_hosts_are_logged_once_per_interval_and_allowed_ones_served(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """200 requests for two foreign hosts and a foreign origin: 403 each, and one warning
    per value, naming it and ``allowed_hosts``/``--allow-host`` (or the origin's
    setting); once the interval has passed, one more line counts the repeats. Then a
    request for an allowed host is served."""
    endpoint = app_with_a_tool().http_app(allowed_hosts=[ALLOWED], host_log_interval=30.0)
    now = [1000.0]
    endpoint.hosts.log.clock = lambda: now[0]
    caplog.set_level(logging.WARNING, logger=LOGGER)

    async def scenario() -> None:
        transport = httpx.ASGITransport(app=endpoint)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:

            async def post(headers: dict[str, str]) -> httpx.Response:
                return await http.post("/mcp", json=INITIALIZE, headers={**ACCEPT, **headers})

            for i in range(200):
                headers = [
                    {"host": "evil.example"},
                    {"host": "rebound.example:3001"},
                    {"host": "localhost", "origin": "http://evil.example"},
                ][i % 3]
                refused = await post(headers)
                assert refused.status_code == 403, refused.text
                assert refused.json()["error"]["message"].startswith("Forbidden")
            said = warnings_of(caplog)
            assert len(said) == 3, said
            host, port, origin = said
            assert "Host 'evil.example'" in host and "allowed_hosts=['evil.example']" in host
            assert "--allow-host evil.example" in host
            assert "'rebound.example:3001'" in port and "--allow-host rebound.example" in port
            assert "Origin 'http://evil.example'" in origin and "allowed_origins" in origin
            assert "--allow-origin http://evil.example" in origin

            now[0] += 29.0  # within the interval: counted, not logged
            assert (await post({"host": "evil.example"})).status_code == 403
            assert len(warnings_of(caplog)) == 3
            now[0] += 2.0  # past it: one line, with the repeats left out since
            assert (await post({"host": "evil.example"})).status_code == 403
            latest = warnings_of(caplog)[3:]
            assert len(latest) == 1 and "(and 67 times more since" in latest[0], latest

            served = await post({"host": f"{ALLOWED}:3001"})
            assert served.status_code == 200, served.text
            assert served.json()["result"]["protocolVersion"] == "2025-11-25"
            assert len(warnings_of(caplog)) == 4

    run(scenario())


def test_a_flood_of_made_up_hosts_writes_a_bounded_number_of_lines(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """200 requests, each for a host of its own (and a Host too long to show whole, and
    one that is no host at all): at most one line per remembered value plus one shared by
    the rest, each line short; a local request is served after."""
    endpoint = app_with_a_tool().http_app()
    caplog.set_level(logging.WARNING, logger=LOGGER)

    async def scenario() -> None:
        transport = httpx.ASGITransport(app=endpoint)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            hosts = [f"h{i}.evil.example" for i in range(198)]
            hosts += ["x" * 5000 + ".example", "bad host/path"]
            for host in hosts:
                refused = await http.post("/mcp", json=INITIALIZE, headers={**ACCEPT, "host": host})
                assert refused.status_code == 403
            said = warnings_of(caplog)
            assert MAX_CAUSES <= len(said) <= MAX_CAUSES + 1, len(said)
            assert all(len(line) < 600 for line in said)
            served = await http.post("/mcp", json=INITIALIZE, headers=ACCEPT)
            assert served.status_code == 200, served.text

    run(scenario())
