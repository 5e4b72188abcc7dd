"""A protected app's WebSocket (uvicorn on 127.0.0.1; the authorization server in process):
the handshake needs a valid bearer token (refused with the 401 challenge otherwise, as an
HTTP answer), handlers see the token's principal, and a message needing a scope the token
lacks is refused alone (-32600 naming it) while the connection serves on."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from peers.auth_app import BASE_SCOPE, make_app
from support.http_servers import ThreadedUvicorn
from support.protected_app import Setup

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "ws", "version": "0"},
    },
}


def test_the_handshake_needs_a_token_and_each_message_its_scopes() -> None:
    setup = Setup()
    runner = ThreadedUvicorn(make_app(setup.verifier).http_app(websocket_path="/ws"))
    url = f"ws://127.0.0.1:{runner.port}/ws"
    runner.start()
    try:

        async def scenario() -> None:
            with pytest.raises(InvalidStatus) as refused:
                async with connect(url, subprotocols=["mcp"], open_timeout=5):  # type: ignore[list-item]
                    pass
            assert refused.value.response.status_code == 401
            assert "resource_metadata=" in refused.value.response.headers["www-authenticate"]
            with pytest.raises(InvalidStatus) as bad:
                headers = {"Authorization": "Bearer not-a-token"}
                async with connect(url, additional_headers=headers, open_timeout=5):
                    pass
            assert bad.value.response.status_code == 401

            token = setup.token(BASE_SCOPE)
            headers = {"Authorization": f"Bearer {token}"}
            async with connect(
                url, additional_headers=headers, subprotocols=["mcp"], open_timeout=5  # type: ignore[list-item]
            ) as socket:

                async def call(request_id: int, method: str, params: Any = None) -> Any:
                    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
                    if params is not None:
                        message["params"] = params
                    await socket.send(json.dumps(message))
                    while True:
                        found = json.loads(await asyncio.wait_for(socket.recv(), 5))
                        if found.get("id") == request_id:
                            return found

                assert (await call(0, "initialize", INIT["params"]))["result"]
                await socket.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
                who = await call(1, "tools/call", {"name": "whoami", "arguments": {}})
                seen = who["result"]["structuredContent"]
                assert seen["scopes"] == [BASE_SCOPE]
                assert seen["authorization_header_seen"] is None  # the token stays here
                write = await call(2, "tools/call", {"name": "write", "arguments": {"path": "x"}})
                assert write["error"]["code"] == -32600
                assert "files:write" in write["error"]["message"]
                echoed = await call(3, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
                assert echoed["result"]["content"][0]["text"] == "echo: hi"

        asyncio.run(asyncio.wait_for(scenario(), 30))
    finally:
        runner.stop()
