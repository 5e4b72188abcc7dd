"""Capability gating, both ways: a client's requests for what the server did not offer, a
server's requests for what the client did not declare (or its version cannot carry), and a
handler that needs a client capability (MissingRequiredClientCapability, -32021)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpgen.generated.v2026_07_28 import server as s
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import McpError, Server
from mcpgen.runtime.testing import connect
from mcpgen.runtime.core.errors import METHOD_NOT_FOUND, MISSING_CLIENT_CAPABILITY
from mcpgen.runtime.core.events import IncomingRequest
from support.sansio import (
    MODERN,
    Completing,
    Tools,
    error,
    feed,
    handshake,
    modern,
    request,
    server,
)

COMPLETE = {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": "b"}}


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("prompts/list", {}),
        ("prompts/get", {"name": "p"}),
        ("resources/read", {"uri": "a://b"}),
        ("resources/subscribe", {"uri": "a://b"}),
    ],
)
def test_a_request_behind_a_capability_the_server_lacks_is_method_not_found(
    method: str, params: dict[str, Any]
) -> None:
    conn = server()  # tools only
    handshake(conn)
    refused = error(feed(conn, request(1, method, params)))
    assert refused["code"] == METHOD_NOT_FOUND and "capability not offered" in refused["message"]
    modern_refusal = error(feed(server(), modern(2, method, params)))
    assert modern_refusal["code"] == METHOD_NOT_FOUND


@pytest.mark.parametrize(
    ("version", "handlers", "routed"),
    [
        ("2024-11-05", Tools(), True),  # no completions capability in 2024-11-05: no gate
        ("2025-03-26", Tools(), False),
        ("2025-03-26", Completing(), True),
    ],
)
def test_completion_is_gated_from_the_version_that_has_the_capability(
    version: str, handlers: Any, routed: bool
) -> None:
    conn = server(handlers)
    handshake(conn, version)
    events = feed(conn, request(1, "completion/complete", COMPLETE))
    if routed:
        assert isinstance(events[0], IncomingRequest)
    else:
        assert error(events)["code"] == METHOD_NOT_FOUND


SAMPLE = t.CreateMessageRequestParams(messages=[], max_tokens=5)


def test_a_server_asks_only_for_what_the_client_declared() -> None:
    conn = server()
    handshake(conn, "2025-11-25", {"sampling": {}})
    request_id, frame = conn.request("sampling/createMessage", SAMPLE)
    assert request_id in conn.pending() and b'"method":"sampling/createMessage"' in frame
    for method, required in (("roots/list", "roots"), ("elicitation/create", "elicitation")):
        with pytest.raises(McpError) as refused:
            conn.request(method)
        assert refused.value.code == MISSING_CLIENT_CAPABILITY
        assert refused.value.data == {"requiredCapabilities": {required: {}}}


@pytest.mark.parametrize(("version", "method"), [("2025-03-26", "elicitation/create"), (MODERN, "sampling/createMessage")])  # fmt: skip
def test_a_server_request_the_version_lacks_is_refused_before_sending(
    version: str, method: str
) -> None:
    conn = server()
    if version == MODERN:  # the modern era has no server-to-client requests at all
        conn.version = conn.versions[MODERN]
    else:
        handshake(conn, version, {"elicitation": {}, "sampling": {}})
    with pytest.raises(McpError) as refused:
        conn.request(method, {})
    assert refused.value.code == MISSING_CLIENT_CAPABILITY
    assert f"not part of protocol {version}" in refused.value.message
    assert conn.pending() == []


class Needy(s.ServerHandlers):
    """Tools that need a client capability: one requires it, one asks the client."""

    async def call_tool(
        self, params: t.CallToolRequestParams, ctx: s.Context
    ) -> t.InputRequiredResultOrCallToolResult:
        if params.name == "require":
            ctx.require_capability("sampling")
        else:
            plain = {"type": "object", "properties": {}}
            schema = t.convert(plain, t.ElicitRequestFormParamsRequestedSchema)
            await ctx.elicit(t.ElicitRequestFormParams(message="ok?", requested_schema=schema))
        return t.CallToolResult(content=[])


@pytest.mark.parametrize("mode", ["modern", "legacy"])
@pytest.mark.parametrize(("tool", "capability"), [("require", "sampling"), ("elicit", "elicitation")])  # fmt: skip
def test_a_handler_needing_an_undeclared_client_capability_fails_with_32021(
    mode: Any, tool: str, capability: str
) -> None:
    """In process (in-memory transports): the error the client gets names what it lacks."""

    async def scenario() -> McpError:
        async with connect(Server(Needy(), name="needy"), mode=mode) as client:
            with pytest.raises(McpError) as refused:
                await client.call_tool(name=tool)
            return refused.value

    refused = asyncio.run(asyncio.wait_for(scenario(), 10))
    assert refused.code == MISSING_CLIENT_CAPABILITY
    assert refused.data == {"requiredCapabilities": {capability: {}}}
