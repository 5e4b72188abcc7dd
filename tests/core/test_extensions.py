"""The extension point (``runtime.core.extensions``): a method outside every generated table,
served and called with typed params and results, advertised per era, and refused to a
peer that did not declare the extension. In memory and through the sans-IO connection
(fast), then over real stdio pipes and real HTTP sockets, in both eras.

The extension lives in ``tests/peers/extended_app.py`` and nowhere else."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest

from mcpgen.generated.v2026_07_28.client import Client
from mcpgen.runtime.client import ClientSession
from mcpgen.runtime import Extension, ExtensionMethod, McpError
from mcpgen.runtime.core.errors import METHOD_NOT_FOUND, MISSING_CLIENT_CAPABILITY
from mcpgen.runtime.client.session import Mode
from mcpgen.runtime.testing import connect

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from peers import extended_app  # noqa: E402
from peers.extended_app import ECHO, EchoParams, EchoResult, ShoutedParams, app  # noqa: E402

PEER = ROOT / "tests" / "peers" / "extended_app.py"
MODES: dict[Mode, str] = {"legacy": "2025-11-25", "auto": "2026-07-28"}
TIMEOUT = 20.0


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


def error_of(message: dict[str, Any]) -> dict[str, Any]:
    assert "error" in message, message
    return message["error"]


# -- in memory -------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_a_client_calls_the_extension_typed_in_both_eras(mode: Mode) -> None:
    async def scenario() -> tuple[Any, dict[str, Any], list[str]]:
        async with connect(app.server, Client, mode=mode, extensions=[ECHO]) as client:
            session: ClientSession = client.session
            answer = await session.request(
                "com.example/echo", EchoParams(text="hi", times=2), EchoResult
            )
            await session.notify("com.example/shouted", ShoutedParams(text=f"hey {mode}"))
            shouts = (await client.call_tool(name="shouts", arguments={})).content[0].text
            return answer, session.server_capabilities, shouts.splitlines()

    answer, capabilities, shouts = run(scenario())
    assert isinstance(answer, EchoResult)
    # the policy middleware upper-cased the params on their way to the handler
    assert answer == EchoResult(text="HI HI", era=MODES[mode])
    declared = "experimental" if mode == "legacy" else "extensions"
    assert capabilities[declared]["com.example/echo"] == {"maxTimes": 3}
    if mode == "auto":  # declared where the version has room for extensions, once
        assert "com.example/echo" not in capabilities.get("experimental", {})
    assert f"hey {mode}" in shouts  # delivered in both eras (modern: _meta says opted in)


def test_a_handler_error_of_an_extension_method_reaches_the_client() -> None:
    async def scenario() -> McpError:
        async with connect(app.server, Client, mode="auto", extensions=[ECHO]) as client:
            with pytest.raises(McpError) as refused:
                await client.session.request(
                    "com.example/echo", EchoParams(text="x", times=9), EchoResult
                )
            good = await client.session.request("com.example/echo", EchoParams(text="y"))
            assert good == EchoResult(text="Y", era="2026-07-28")  # typed by the row
            return refused.value

    error = run(scenario())
    assert error.code == -32602 and "maxTimes" in error.message


def test_a_client_without_the_extension_cannot_call_it() -> None:
    async def scenario() -> None:
        async with connect(app.server, Client, mode="auto") as client:
            with pytest.raises(McpError, match="not part of protocol"):
                await client.session.request("com.example/echo", {"text": "x"})

    run(scenario())


def test_a_client_does_not_call_an_extension_the_server_lacks() -> None:
    other = Extension(
        "org.example/other",
        [ExtensionMethod(name="org.example/ping", params=EchoParams, result=EchoResult)],
    )

    async def scenario() -> None:
        async with connect(app.server, Client, mode="auto", extensions=[other]) as client:
            with pytest.raises(McpError) as refused:
                await client.session.request("org.example/ping", EchoParams(text="x"))
            assert "org.example/other" in refused.value.message

    run(scenario())


def test_extension_definitions_are_checked() -> None:
    with pytest.raises(ValueError, match="vendor prefix"):
        Extension("echo", [])
    with pytest.raises(ValueError, match="twice"):
        method = ExtensionMethod(name="a.b/c")
        Extension("a.b/c", [method, method])
    with pytest.raises(ValueError, match="no result"):
        ExtensionMethod(name="a.b/n", kind="notification", result=EchoResult)
    clash = Extension("a.b/c", [ExtensionMethod(name="tools/list")])
    from mcpgen.generated.v2025_11_25 import server as stubs
    from mcpgen.runtime import Server

    with pytest.raises(ValueError, match="already defined by the protocol"):
        Server(stubs.ServerHandlers(), name="x", extensions=[clash])
    with pytest.raises(LookupError):
        app.handle("com.example/none")


# -- bad input, in process: the ASGI app -----------------------------------------------------

from support.asgi_driver import call as asgi_call  # noqa: E402
from support.asgi_driver import open_session, request  # noqa: E402


def modern_body(request_id: int, method: str, params: dict[str, Any], caps: Any) -> bytes:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    }
    return request(request_id, method, {**params, "_meta": meta})


def modern_headers(method: str) -> dict[str, str]:
    return {"mcp-protocol-version": "2026-07-28", "mcp-method": method}


def test_the_asgi_app_refuses_an_undeclared_extension_then_serves_a_declared_one() -> None:
    http = app.http_app()
    method = "com.example/echo"

    async def scenario() -> None:
        refused = await asgi_call(
            http, body=modern_body(1, method, {"text": "a"}, {}), headers=modern_headers(method)
        )
        error = error_of(refused.json())
        assert refused.status == 400 and error["code"] == MISSING_CLIENT_CAPABILITY
        assert error["data"]["requiredCapabilities"] == {"extensions": {method: {}}}
        declared = {"extensions": {"com.example/echo": {}}}
        served = await asgi_call(
            http,
            body=modern_body(2, method, {"text": "a"}, declared),
            headers=modern_headers(method),
        )
        assert served.status == 200, served
        result = served.json()["result"]
        assert result == {"text": "A", "era": "2026-07-28", "resultType": "complete"}
        # legacy: a session whose initialize declared nothing
        headers = await open_session(http, "2025-11-25")
        refused = await asgi_call(http, body=request(3, method, {"text": "b"}), headers=headers)
        error = error_of(refused.messages()[0])  # legacy: no -32021 there, "not served"
        assert (
            error["code"] == METHOD_NOT_FOUND and "com.example/echo extension" in error["message"]
        )
        listed = await asgi_call(http, body=request(4, "tools/list", {}), headers=headers)
        assert "result" in listed.messages()[0]

    run(scenario())


# -- real pipes and sockets -------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_over_stdio_an_undeclared_extension_is_refused_and_a_declared_one_served(
    version: str, tmp_path: Path
) -> None:
    from support.line_peer import LinePeer

    peer = LinePeer([str(PEER)], tmp_path / "stderr.log")
    method = "com.example/echo"
    try:
        if version == "2025-11-25":
            peer.initialize(version)
            refused = peer.request(method, {"text": "a"})
            assert error_of(refused)["code"] == METHOD_NOT_FOUND
        else:
            refused = peer.request(
                method, json.loads(modern_body(0, method, {"text": "a"}, {}))["params"]
            )
            assert error_of(refused)["code"] == MISSING_CLIENT_CAPABILITY
            required = {"extensions": {method: {}}}
            assert error_of(refused)["data"]["requiredCapabilities"] == required
        assert "com.example/echo extension" in error_of(refused)["message"]
        peer.send_raw(b'{"jsonrpc": "2.0", "id": 99, "method": "com.example/echo", "params": 7}')
        assert "error" in peer.response(99)
        peer.send_raw(b'{"jsonrpc": "2.0", "id": 100, "method": "com.example/echo", "params": {')
        assert error_of(peer.response(None))["code"] == -32700
        if version == "2025-11-25":  # and the session goes on
            assert "tools" in peer.request("tools/list", {})["result"]
        else:  # and the next request, declaring the extension, is served
            opted_in = {"extensions": {method: {}}}
            params = json.loads(modern_body(0, method, {"text": "b"}, opted_in))["params"]
            assert peer.request(method, params)["result"]["text"] == "B"
        assert peer.close() == 0
    finally:
        peer.kill()
    # the same server, a client that declared the extension: served, typed
    from mcpgen.runtime.client import stdio_client

    async def declared() -> Any:
        async with stdio_client(
            Client,
            sys.executable,
            [str(PEER)],
            mode="legacy" if version < "2026" else "auto",
            extensions=[ECHO],
        ) as client:
            return await client.session.request(method, EchoParams(text="ok"), EchoResult)

    assert run(declared()) == EchoResult(text="OK", era=version)


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    from support.processes import announced_http

    with announced_http([sys.executable, str(PEER), "--http"], ROOT) as url:
        yield url


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_over_http_an_undeclared_extension_is_refused_and_a_declared_one_served(
    mode: Mode, http_url: str
) -> None:
    from mcpgen.runtime.client import http_client

    method = "com.example/echo"
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    with httpx.Client(timeout=10) as raw:
        if mode == "auto":
            reply = raw.post(
                http_url,
                content=modern_body(1, method, {"text": "a"}, {}),
                headers={**headers, **modern_headers(method)},
            )
            assert reply.status_code == 400
            assert error_of(reply.json())["code"] == MISSING_CLIENT_CAPABILITY
        else:
            from support.asgi_driver import initialize

            opened = raw.post(http_url, content=initialize("2025-11-25"), headers=headers)
            session = {**headers, "mcp-session-id": opened.headers["mcp-session-id"]}
            note = b'{"jsonrpc": "2.0", "method": "notifications/initialized"}'
            raw.post(http_url, content=note, headers=session)
            reply = raw.post(http_url, content=request(2, method, {"text": "a"}), headers=session)
            assert error_of(reply.json())["code"] == METHOD_NOT_FOUND

    async def declared() -> Any:
        async with http_client(Client, http_url, mode=mode, extensions=[ECHO]) as client:
            return await client.session.request(method, EchoParams(text="ok"), EchoResult)

    assert run(declared()) == EchoResult(text="OK", era=MODES[mode])


def test_the_peer_module_is_the_app_the_tests_drive() -> None:
    assert extended_app.app is app and msgspec.structs.fields(EchoParams)[0].name == "text"


def test_extension_notifications_are_gated_both_ways() -> None:
    """An undeclared extension's notification is dropped by the server; a client does not
    send one to a server that does not offer it; a client declares once per version."""
    from mcpgen.generated.v2025_11_25 import server as stubs
    from mcpgen.runtime import Server
    from mcpgen.runtime.core.events import IncomingNotification

    conn = app.server.connection()
    initialize = request(
        0,
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    )
    conn.receive(initialize)
    conn.receive(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    shout = b'{"jsonrpc": "2.0", "method": "com.example/shouted", "params": {"text": "x"}}'
    assert conn.receive(shout) == []  # not declared: dropped
    declared = app.server.connection()
    opted = {"experimental": {"com.example/echo": {}}}
    declared.receive(
        request(
            0,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": opted,
                "clientInfo": {"name": "t", "version": "0"},
            },
        )
    )
    assert isinstance(declared.receive(shout)[0], IncomingNotification)

    plain = Server(stubs.ServerHandlers(), name="plain")

    async def scenario() -> None:
        async with connect(plain, Client, mode="legacy", extensions=[ECHO]) as client:
            with pytest.raises(McpError, match="did not declare"):
                await client.session.notify("com.example/shouted", ShoutedParams(text="x"))

    run(scenario())
    session = ClientSession(Client.__binding__, extensions=[ECHO])  # type: ignore[attr-defined]
    sent = json.loads(session.conn.initialize(("2025-11-25",)))["params"]["capabilities"]
    assert sent == {"experimental": {"com.example/echo": {"maxTimes": 3}}}


def test_extensions_cannot_shadow_what_the_runtime_answers_or_bend_their_names() -> None:
    from mcpgen.generated.v2025_11_25 import server as stubs
    from mcpgen.runtime import Server

    shadow = Extension("a.b/c", [ExtensionMethod(name="ping")])
    with pytest.raises(ValueError, match="runtime answers it"):
        Server(stubs.ServerHandlers(), name="x", extensions=[shadow])
    with pytest.raises(ValueError, match="vendor prefix"):
        Extension("com.example/echo\n", [])


@pytest.mark.parametrize("mode", MODES)
def test_what_both_sides_declare_is_valid_at_the_peers_version(mode: Mode) -> None:
    """The official schema judges the capabilities each side sends with the extension in:
    the server's (initialize or server/discover) and the client's."""
    if str(ROOT) not in sys.path:
        sys.path.append(str(ROOT))
    from support.wire_oracle import Schema

    version = MODES[mode]
    schema = Schema(version, ROOT / "schema" / version / "schema.json")

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with connect(app.server, Client, mode=mode, extensions=[ECHO]) as client:
            session: ClientSession = client.session
            info = session.conn.versions[version]
            from mcpgen.runtime.core.capabilities import capabilities_for

            mine = capabilities_for(session.conn.capabilities, "client", info)
            return session.server_capabilities, mine

    server_caps, client_caps = run(scenario())
    assert schema.error_of("ServerCapabilities", server_caps) is None
    assert schema.error_of("ClientCapabilities", client_caps) is None
    key = "experimental" if mode == "legacy" else "extensions"
    assert client_caps[key] == {"com.example/echo": {"maxTimes": 3}}
