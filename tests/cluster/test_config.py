"""One setting for every shared store: ``MCPGEN_STORE`` (and ``MCPGEN_STORE_PREFIX``)
read into ``Shared``, an ``App`` taking its bus and tasks from it, errors naming the
variable; and two uvicorn processes of ``examples/everything/asgi.py`` given only that
setting and a real redis-server: a tool list change made in one heard on a listen stream
held by the other, in both eras, and a 2025-11-25 session begun on one served by both."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from mcpgen.generated.v2026_07_28 import client as c
from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import App, RedisTaskStore
from mcpgen.runtime.client import ClientSession, http_client
from mcpgen.runtime.cluster import RedisBus, Shared
from support.checkout import ROOT
from support.node_tools import wait_listening
from support.processes import free_port, stop
from support.redis_server import RedisServer


def test_the_setting_is_read_and_checked() -> None:
    assert Shared.from_environment({}) is None
    shared = Shared.from_environment({"MCPGEN_STORE": "redis://10.0.0.2:6379/1"})
    assert shared == Shared("redis://10.0.0.2:6379/1", "mcpgen:")
    env = {"MCPGEN_STORE": "unix:///run/redis.sock", "MCPGEN_STORE_PREFIX": "weather:"}
    assert Shared.from_environment(env) == Shared("unix:///run/redis.sock", "weather:")
    with pytest.raises(ValueError) as refused:
        Shared.from_environment({"MCPGEN_STORE": "http://redis:6379"})
    assert "MCPGEN_STORE must be a Redis URL" in str(refused.value)


def test_an_app_takes_its_bus_and_tasks_from_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPGEN_STORE", "redis://127.0.0.1:1/0")  # never connected here
    monkeypatch.setenv("MCPGEN_STORE_PREFIX", "app-a:")
    app = App("shared", binding=stubs)

    @app.tool(task="optional")
    async def long() -> str:
        """Runs as a task."""
        return "done"

    bus = app.server.bus
    assert isinstance(bus, RedisBus) and bus.channel == "app-a:announcements"
    assert app.tasks is not None and isinstance(app.tasks.store, RedisTaskStore)
    assert app.tasks.store.prefix == "app-a:tasks:"
    monkeypatch.delenv("MCPGEN_STORE")
    alone = App("alone", binding=stubs)
    assert alone.server.bus is None
    assert App("told", binding=stubs, shared=None).shared is None


class Heard:
    """A client noting the tool list changes it is told of."""

    def __init__(self) -> None:
        self.heard = asyncio.Event()

    async def on_tool_list_changed(self, params: t.NotificationParams) -> None:
        self.heard.set()


class Handlers(c.ClientHandlers):
    def __init__(self, heard: Heard) -> None:
        self.noted = heard

    async def on_tool_list_changed(self, params: t.NotificationParams) -> None:
        await self.noted.on_tool_list_changed(params)


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    """Two uvicorn processes of the everything server, sharing one Redis by the setting."""
    logs = tmp_path_factory.mktemp("workers")
    with RedisServer() as redis:
        env = {**os.environ, "MCPGEN_STORE": redis.url, "PYTHONPATH": str(ROOT)}
        env.pop("MCPGEN_TASK_STORE", None)
        started: list[subprocess.Popen[bytes]] = []
        urls: list[str] = []
        try:
            for n in range(2):
                port = free_port()
                command = [sys.executable, "-m", "uvicorn", "examples.everything.asgi:app"]
                command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
                with open(logs / f"worker{n}.log", "wb") as out:
                    started.append(
                        subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=out)
                    )
                urls.append(f"http://127.0.0.1:{port}/mcp")
            for url in urls:
                wait_listening(int(url.split(":")[2].split("/")[0]), 30)
            yield urls
        finally:
            for process in started:
                stop(process)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_a_change_made_in_one_worker_reaches_a_client_held_by_the_other(
    two_workers: list[str], mode: Any
) -> None:
    async def scenario() -> None:
        heard = Heard()
        async with http_client(
            c.Client, two_workers[0], handlers=Handlers(heard), mode=mode
        ) as held:
            session = held.session
            assert isinstance(session, ClientSession) and session.session is not None
            listen = None
            if mode == "auto":  # a 2026-07-28 client hears changes on a listen stream
                filters = {"toolsListChanged": True}
                raw = session.session
                listen = asyncio.create_task(
                    raw.request("subscriptions/listen", {"notifications": filters}, timeout=30)
                )
            else:  # a legacy one on its session's GET stream
                await session.request("tools/list", {})
            await asyncio.sleep(0.5)  # the stream is open
            async with http_client(c.Client, two_workers[1], mode=mode) as other:
                await other.call_tool(name="test_trigger_tool_change", arguments={})
            await asyncio.wait_for(heard.heard.wait(), 10)
            if listen is not None:
                listen.cancel()

    asyncio.run(asyncio.wait_for(scenario(), 30))


@pytest.mark.slow
def test_a_legacy_session_begun_on_one_worker_is_served_by_both(two_workers: list[str]) -> None:
    import httpx

    sent = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    hello = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "rr", "version": "1"},
    }
    begun = httpx.post(
        two_workers[0],
        headers=sent,
        json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello},
    )
    session = {
        **sent,
        "mcp-session-id": begun.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }
    done = httpx.post(
        two_workers[1],
        headers=session,
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
    )
    assert done.status_code == 202
    for n in range(1, 9):
        call = {"name": "test_simple_text", "arguments": {}}
        answer = httpx.post(
            two_workers[n % 2],
            headers=session,
            json={"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": call},
        )
        assert answer.status_code == 200, answer.text
        assert "simple text response" in answer.text
