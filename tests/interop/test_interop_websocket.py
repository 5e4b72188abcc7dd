"""MCP over WebSocket against peers nobody here wrote, over real sockets on 127.0.0.1
(every process stopped at the end, every run bounded in time):

1. the TypeScript SDK 1.x ``WebSocketClientTransport`` (``tests/peers/ts_transport_client.mjs``)
   lists, calls (answering an elicitation), reads and gets prompts of ``examples/everything``
   served with ``--transport websocket``;
2. the official Python SDK 1.x ``websocket_client`` (in a venv of its own:
   ``tests/support/py_peers.py``) does the same;
3. our ``websocket_client`` calls a Python SDK 1.x WebSocket server
   (``tests/peers/sdk1_websocket.py``), which speaks the handshake only.
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
from mcpgen.runtime import McpError
from mcpgen.runtime.client import websocket_client

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from support.node_tools import TS_SDK, node_bin, node_env, npm_package, wait_listening  # noqa: E402
from support.processes import free_port, stop  # noqa: E402
from support.py_peers import sdk1_python  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.anyio]
TS_CLIENT = ROOT / "tests" / "peers" / "ts_transport_client.mjs"
SDK1_PEER = ROOT / "tests" / "peers" / "sdk1_websocket.py"
RUN_TIMEOUT = 120
SIMPLE_TEXT = "This is a simple text response for testing."


def serve(command: list[str], port: int) -> Iterator[str]:
    process = subprocess.Popen(
        command,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, 60)
        yield f"ws://127.0.0.1:{port}"
    finally:
        stop(process)


@pytest.fixture(scope="module")
def ours() -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "examples.everything", "--transport", "websocket"]
    for base in serve([*command, "--port", str(port)], port):
        yield f"{base}/mcp"


@pytest.fixture(scope="module")
def sdk1_server() -> Iterator[str]:
    port = free_port()
    command = [str(sdk1_python()), str(SDK1_PEER), "server", "--port", str(port)]
    for base in serve(command, port):
        yield f"{base}/ws"


def test_the_typescript_sdk_websocket_client_uses_our_server(ours: str) -> None:
    env = {**node_env(), "TS_SDK_DIR": str(npm_package(TS_SDK))}
    done = subprocess.run(
        [str(node_bin() / "node"), str(TS_CLIENT), "websocket", ours],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["version"] == "mcpgen-everything"
    assert seen["called"] == SIMPLE_TEXT
    assert seen["elicited"] == (
        'User response: action=accept, content={"username": "ts", "email": "ts@example.com"}'
    )
    assert "test://static-text" in seen["resources"] and seen["read"]
    assert seen["promptRoles"] == ["user"]


def test_the_python_sdk_1_websocket_client_uses_our_server(ours: str) -> None:
    done = subprocess.run(
        [str(sdk1_python()), str(SDK1_PEER), "client", ours],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["server"] == "mcpgen-everything"
    assert seen["version"] in ("2025-06-18", "2025-11-25")
    assert "test_simple_text" in seen["tools"]
    assert seen["called"] == [SIMPLE_TEXT]
    assert seen["read"]
    assert seen["promptRoles"] == ["user"]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_our_client_calls_a_python_sdk_1_websocket_server(
    sdk1_server: str, mode: Any
) -> None:
    with anyio.fail_after(RUN_TIMEOUT):
        async with websocket_client(Client, sdk1_server, mode=mode) as client:
            assert client.session.server_info["name"] == "sdk1-websocket-peer"  # type: ignore[attr-defined]
            names = [tool.name for tool in (await client.list_tools()).tools]
            assert names == ["echo", "add"]
            echoed = await client.call_tool(name="echo", arguments={"text": "hé"})
            assert echoed.content[0].text == "hé"  # type: ignore[union-attr]
            added = await client.call_tool(name="add", arguments={"a": 2, "b": 3})
            assert added.content[0].text == "5"  # type: ignore[union-attr]
            with pytest.raises(McpError):
                await client.get_prompt(name="nope")
            readme = await client.read_resource(uri="sdk1://readme")
            assert readme.contents[0].text.startswith("Served over WebSocket")  # type: ignore[union-attr]
            greeting = await client.get_prompt(name="greet", arguments={"name": "Ada"})
            assert greeting.messages[0].content.text == "Hello, Ada!"  # type: ignore[union-attr]
