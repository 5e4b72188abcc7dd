"""The proxy against real processes and sockets on 127.0.0.1: an upstream stdio server
killed with SIGKILL in the middle of a call, an upstream that never answers, ``mcpgen
proxy`` as its own process serving HTTP (Streamable HTTP, HTTP+SSE) and stdio to clients
of both eras, 32 clients at once, and garbage fed to it before a good request."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

import httpx
import pytest

from mcpgen.generated._support import RequestContext
from mcpgen.generated.v2026_07_28 import client as c
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import McpError
from mcpgen.runtime.client import CLIENT_LIMITS, Mode, http_client, stdio_client, websocket_client
from mcpgen.runtime.gateway import Proxy, Upstream
from mcpgen.runtime.testing import connect
from support.app_scenarios import plain
from support.checkout import ROOT
from support.http_servers import children_of, cmdline, running
from support.processes import announced_http

pytestmark = pytest.mark.slow

#: The upstream: slow, cancellable tools that record what happened to them.
SLOW_SERVER = Upstream(
    name="slow", command=sys.executable, args=("-m", "tests.peers.slow_server"), cwd=str(ROOT)
)
#: ``mcpgen proxy`` as a process.
MCPGEN = [sys.executable, "-m", "mcpgen", "proxy"]
#: The conformance server as a stdio upstream.
EVERYTHING = [sys.executable, "-m", "examples.everything"]


def run(coro: Any, seconds: float = 60.0) -> Any:
    return asyncio.run(asyncio.wait_for(coro, seconds))


def text_of(result: Any) -> str:
    return str(plain(result)["content"][0]["text"])


def upstream_pids() -> list[int]:
    return [pid for pid in children_of(os.getpid()) if "tests.peers.slow_server" in cmdline(pid)]


async def events(client: Any) -> list[str]:
    return json.loads(text_of(await client.call_tool(name="events", arguments={})))


@pytest.mark.parametrize("down", ["legacy", "auto"])
def test_an_upstream_killed_mid_call_fails_the_call_at_once_then_is_started_again(
    down: Mode,
) -> None:
    """SIGKILL to the upstream process while a call waits on it: the call fails within
    seconds with an error saying the process ended, and the next call is served by a new
    upstream process (the restart policy)."""

    async def scenario() -> None:
        async with Proxy(SLOW_SERVER) as proxy:
            async with connect(proxy.server, mode=down) as client:
                (first,) = upstream_pids()
                call = asyncio.create_task(
                    client.call_tool(name="sleep", arguments={"seconds": 30, "label": "a"})
                )
                while "started:a" not in await events(client):
                    await asyncio.sleep(0.05)
                os.kill(first, signal.SIGKILL)
                killed_at = time.monotonic()
                with pytest.raises(McpError) as failed:
                    await asyncio.wait_for(call, 20)
                assert time.monotonic() - killed_at < 10
                assert "process ended" in failed.value.message, failed.value
                assert await events(client) == []  # a new process: nothing recorded yet
                (second,) = upstream_pids()
                assert second != first and not running(first)
        assert upstream_pids() == []  # closing the proxy ended its upstream

    run(scenario())


def test_an_upstream_that_never_answers_times_out_and_is_told_to_stop() -> None:
    """A call the upstream does not answer within the upstream limits' request timeout
    fails with an error saying so, the upstream is sent ``notifications/cancelled`` (its
    handler is cancelled), and the proxy serves on."""

    async def scenario() -> None:
        limits = CLIENT_LIMITS.replace(request_timeout=1.0)
        async with Proxy(SLOW_SERVER, upstream_limits=limits) as proxy:
            async with connect(proxy.server, mode="auto") as client:
                began = time.monotonic()
                with pytest.raises(McpError) as failed:
                    await client.call_tool(name="sleep", arguments={"seconds": 30, "label": "b"})
                assert time.monotonic() - began < 10
                assert "did not answer tools/call within 1 s" in failed.value.message
                for _ in range(100):
                    if "cancelled:b" in await events(client):
                        break
                    await asyncio.sleep(0.05)
                assert "cancelled:b" in await events(client)

    run(scenario())


class Echoing(c.ClientHandlers):
    """Answers sampling with the prompt's own words."""

    async def create_message(
        self, params: t.CreateMessageRequestParams, ctx: RequestContext
    ) -> t.CreateMessageResult:
        asked = params.messages[0].content
        assert isinstance(asked, t.TextContent)
        return t.CreateMessageResult(
            role="assistant", content=t.TextContent(text=f"echo: {asked.text}"), model="m"
        )


def test_mcpgen_proxy_serves_a_stdio_server_over_http_to_clients_of_both_eras() -> None:
    """``mcpgen proxy --transport http -- python -m examples.everything``: Streamable HTTP
    in both eras and HTTP+SSE reach the upstream's tools; 32 clients at once, each asked
    by the upstream for a sampling of its own words, get their own answers; garbage bodies
    get 4xx and the next request is served."""
    command = [*MCPGEN, "--transport", "http", "--port", "0", "--", *EVERYTHING]
    with announced_http(command, ROOT) as url:

        async def scenario() -> None:
            for mode in ("legacy", "auto"):
                async with http_client(c.Client, url, mode=mode) as client:
                    expected = "2025-11-25" if mode == "legacy" else "2026-07-28"
                    assert client.session.protocol_version == expected
                    tools = await client.list_tools()
                    assert "test_simple_text" in [tool.name for tool in tools.tools]
                    result = await client.call_tool(name="test_simple_text", arguments={})
                    assert "simple text" in text_of(result)
            sse = url.removesuffix("/mcp") + "/sse"
            async with http_client(c.Client, sse, transport="sse", mode="legacy") as client:
                result = await client.call_tool(name="test_simple_text", arguments={})
                assert "simple text" in text_of(result)

            async def one_client(n: int) -> None:
                mode: Mode = "legacy" if n % 2 else "auto"
                async with http_client(c.Client, url, mode=mode, handlers=Echoing()) as client:
                    for round_ in range(3):
                        prompt = f"client {n} round {round_}"
                        result = await client.call_tool(
                            name="test_sampling", arguments={"prompt": prompt}
                        )
                        assert text_of(result) == f"LLM response: echo: {prompt}"

            # each call asks its own client (sampling) through the proxy: 32 clients, both
            # eras, 96 calls, each answer carrying its own client's words
            await asyncio.gather(*(one_client(n) for n in range(32)))

        run(scenario(), 120)
        for garbage in (b"{", b"[]", b'{"jsonrpc":"2.0","id":1}', b"\xff\xfe"):
            answer = httpx.post(
                url,
                content=garbage,
                headers={
                    "content-type": "application/json",
                    "accept": "application/json, text/event-stream",
                },
                timeout=10,
            )
            assert 400 <= answer.status_code < 500, (garbage, answer.status_code)

        async def still_served() -> None:
            async with http_client(c.Client, url, mode="auto") as client:
                result = await client.call_tool(name="test_simple_text", arguments={})
                assert "simple text" in text_of(result)

        run(still_served())


def test_mcpgen_proxy_over_stdio_takes_garbage_then_serves() -> None:
    """``mcpgen proxy -- python -m examples.everything`` on stdio: lines that are not
    JSON-RPC get errors, and then a client of each era is served through it."""
    proc = subprocess.Popen(
        [*MCPGEN, "--", *EVERYTHING],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        out, _ = proc.communicate(b'{\n[]\n{"jsonrpc":"2.0","id":7,"method":"ping"}\n', 60)
    finally:
        if proc.poll() is None:
            proc.kill()
    answers = [json.loads(line) for line in out.splitlines()]
    assert [a.get("error", {}).get("code") for a in answers[:2]] == [-32700, -32600]
    assert answers[2] == {"jsonrpc": "2.0", "id": 7, "result": {}}

    async def scenario() -> None:
        for mode in ("legacy", "auto"):
            async with stdio_client(
                c.Client, MCPGEN[0], [*MCPGEN[1:], "--", *EVERYTHING], mode=mode, cwd=str(ROOT)
            ) as client:
                result = await client.call_tool(name="test_simple_text", arguments={})
                assert "simple text" in text_of(result)

    run(scenario())


def test_mcpgen_proxy_with_auth_options_asks_every_request_for_a_token() -> None:
    """``--auth-issuer``/``--auth-audience``: a request without a token is refused with
    the challenge naming the metadata, which names the issuer; nothing is served bare."""
    issuer = "https://login.example"
    command = [
        *MCPGEN,
        "--transport",
        "http",
        "--port",
        "0",
        "--auth-issuer",
        issuer,
        "--auth-audience",
        "http://127.0.0.1/mcp",
        "--auth-scope",
        "mcp:access",
        "--",
        sys.executable,
        str(ROOT / "tests/peers/add_app.py"),
    ]
    with announced_http(command, ROOT) as url:
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        }
        body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        refused = httpx.post(url, json=body, headers=headers, timeout=10)
        assert refused.status_code == 401
        assert "resource_metadata=" in refused.headers["www-authenticate"]
        base = url.removesuffix("/mcp")
        metadata = httpx.get(f"{base}/.well-known/oauth-protected-resource/mcp", timeout=10)
        assert metadata.json()["authorization_servers"] == [issuer]
        assert metadata.json()["scopes_supported"] == ["mcp:access"]


def test_mcpgen_proxy_serves_a_stdio_server_over_websocket() -> None:
    """``mcpgen proxy --transport websocket``: a client of each era calls the upstream's
    tool at ``ws://…/mcp``."""
    adder = [sys.executable, str(ROOT / "tests/peers/add_app.py")]
    command = [*MCPGEN, "--transport", "websocket", "--port", "0", "--", *adder]
    with announced_http(command, ROOT) as url:

        async def scenario() -> None:
            for mode in ("legacy", "auto"):
                async with websocket_client(c.Client, url, mode=mode) as client:
                    added = await client.call_tool(name="add", arguments={"a": 20, "b": 22})
                    assert plain(added)["structuredContent"] == {"result": 42}

        run(scenario())
