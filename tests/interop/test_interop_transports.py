"""The 2024-11-05 HTTP+SSE transport against peers nobody here wrote, over real sockets
on 127.0.0.1 (every process stopped at the end, every run bounded in time):

1. the TypeScript SDK 1.x ``SSEClientTransport`` (``tests/peers/ts_transport_client.mjs``)
   lists, calls (one call answering an elicitation over the stream), reads and gets prompts
   of ``examples/everything`` at ``/sse``;
2. the MCP inspector's CLI with ``--transport sse`` lists and calls tools, reads a
   resource and gets a prompt there;
3. our ``http_client`` reaches the TypeScript reference server, server-everything, in its
   ``sse`` mode, explicitly and by the automatic fallback.

The npm packages are pinned (``tests/support/node_tools.py``) and installed into ``.cache``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpgen.generated.v2025_11_25.client import Client
from mcpgen.runtime.client import ClientSession, http_client

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from support.node_tools import INSPECTOR, SERVER_EVERYTHING, TS_SDK  # noqa: E402
from support.node_tools import node_bin, node_env, npm_package, wait_listening  # noqa: E402
from support.processes import free_port, stop  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.anyio]
TS_CLIENT = ROOT / "tests" / "peers" / "ts_transport_client.mjs"
RUN_TIMEOUT = 120
SIMPLE_TEXT = "This is a simple text response for testing."


def serve(command: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run a server until the test module ends; yields its base URL."""
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env or {**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, 30)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


@pytest.fixture(scope="module")
def ours() -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "examples.everything", "--transport", "http"]
    yield from serve([*command, "--port", str(port)], port)


@pytest.fixture(scope="module")
def ts_sse_server() -> Iterator[str]:
    """server-everything in its ``sse`` mode (GET ``/sse``, POST ``/message``)."""
    entry = npm_package(SERVER_EVERYTHING) / "node_modules" / "@modelcontextprotocol"
    entry = entry / "server-everything" / "dist" / "index.js"
    port = free_port()
    env = {**node_env(), "PORT": str(port)}
    yield from serve([str(node_bin() / "node"), str(entry), "sse"], port, env)


def node(script: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(node_bin() / "node"), *script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )


def test_the_typescript_sdk_sse_client_uses_our_server(ours: str) -> None:
    env = {**node_env(), "TS_SDK_DIR": str(npm_package(TS_SDK))}
    done = node([str(TS_CLIENT), "sse", f"{ours}/sse"], env)
    assert done.returncode == 0, done.stderr[-3000:]
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["version"] == "mcpgen-everything"
    assert {"test_simple_text", "test_elicitation"} <= set(seen["tools"])
    assert seen["called"] == SIMPLE_TEXT
    assert seen["elicited"] == (
        'User response: action=accept, content={"username": "ts", "email": "ts@example.com"}'
    )
    assert "test://static-text" in seen["resources"] and seen["read"]
    assert "test_prompt_with_arguments" in seen["prompts"]
    assert seen["promptRoles"] == ["user"]


def inspect_cli(url: str, *args: str) -> Any:
    folder = npm_package(INSPECTOR)
    launcher = folder / "node_modules" / ".bin" / "mcp-inspector"
    done = subprocess.run(
        [str(launcher), "--cli", url, "--transport", "sse", *args],
        cwd=folder,
        env=node_env(),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert done.returncode == 0, (args, done.stdout[-2000:], done.stderr[-2000:])
    return json.loads(done.stdout)


def test_the_inspector_cli_uses_our_server_over_sse(ours: str) -> None:
    url = f"{ours}/sse"
    tools = inspect_cli(url, "--method", "tools/list")["tools"]
    assert "test_simple_text" in [tool["name"] for tool in tools]
    called = inspect_cli(url, "--method", "tools/call", "--tool-name", "test_simple_text")
    assert called["content"] == [{"type": "text", "text": SIMPLE_TEXT}]
    read = inspect_cli(url, "--method", "resources/read", "--uri", "test://static-text")
    assert read["contents"][0]["uri"] == "test://static-text"
    prompt = inspect_cli(url, "--method", "prompts/get", "--prompt-name", "test_simple_prompt")
    assert prompt["messages"][0]["role"] == "user"


@pytest.mark.parametrize("transport", ["sse", "auto"])
async def test_our_client_uses_the_typescript_reference_server_over_sse(
    ts_sse_server: str, transport: Any
) -> None:
    with anyio.fail_after(RUN_TIMEOUT):
        url = f"{ts_sse_server}/sse"
        async with http_client(Client, url, transport=transport, mode="legacy") as client:
            session = client.session
            assert isinstance(session, ClientSession)
            assert type(session.transport).__name__ == "SseClientTransport"
            names = [tool.name for tool in (await client.list_tools()).tools]
            assert "echo" in names
            echoed = await client.call_tool(name="echo", arguments={"message": "hé"})
            assert "hé" in echoed.content[0].text  # type: ignore[union-attr]
            assert (await client.list_prompts()).prompts
            assert (await client.list_resources()).resources
