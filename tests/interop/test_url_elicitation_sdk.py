"""URL-mode elicitation with the official Python SDK (``mcp`` 2.3) on the other side, over
stdio with real processes, in 2025-11-25 (the version with ``elicitationId``, the
completion notification and -32042):

1. the SDK client meets our ``App`` (``tests/peers/url_elicitation_app.py``): its
   elicitation callback gets our URL-mode request, its message handler our
   ``notifications/elicitation/complete``, its ``call_tool`` our -32042 (which the SDK
   reads back as its ``UrlElicitationRequiredError``), and our ``serverInfo`` carries the
   description, icons and website;
2. our client meets an SDK ``MCPServer`` (``tests/peers/sdk_url_elicitation_server.py``):
   its ``ctx.elicit_url`` reaches our ``elicit`` handler, its completion our
   ``on_elicitation_complete``, and its ``UrlElicitationRequiredError`` raises our
   ``UrlElicitationRequired`` or, opted in, is visited and retried to success.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import mcp.types as sdk
from mcp import Client as SdkClient
from mcp import MCPError, StdioServerParameters, UrlElicitationRequiredError
from mcp.client.session import ClientRequestContext

from mcpgen.generated.v2025_11_25 import types as t
from mcpgen.generated.v2025_11_25.client import Client, ClientHandlers
from mcpgen.runtime.client import stdio_client
from mcpgen.runtime.core.errors import UrlElicitationRequired

ROOT = Path(__file__).resolve().parents[2]
OUR_APP = ROOT / "tests" / "peers" / "url_elicitation_app.py"
SDK_SERVER = ROOT / "tests" / "peers" / "sdk_url_elicitation_server.py"
URL = "https://auth.example.com/connect"
TIMEOUT = 30.0

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


class SdkSide:
    """The SDK client's callbacks: accepts every URL elicitation, keeps notifications."""

    def __init__(self) -> None:
        self.asked: list[sdk.ElicitRequestParams] = []
        self.notified: list[Any] = []

    async def on_elicit(
        self, context: ClientRequestContext, params: sdk.ElicitRequestParams
    ) -> sdk.ElicitResult:
        self.asked.append(params)
        return sdk.ElicitResult(action="accept")

    async def on_message(self, message: Any) -> None:
        self.notified.append(message)


async def test_the_sdk_client_gets_our_url_elicitation_completion_and_minus_32042() -> None:
    seen = SdkSide()
    # The SDK gives the child a minimal environment: this checkout's code must come first.
    server = StdioServerParameters(
        command=sys.executable,
        args=[str(OUR_APP)],
        cwd=str(ROOT),
        env={"PYTHONPATH": str(ROOT)},
    )
    with anyio.fail_after(TIMEOUT):
        async with SdkClient(
            server,
            mode="legacy",
            elicitation_callback=seen.on_elicit,
            message_handler=seen.on_message,
        ) as client:
            info = client.server_info
            assert info is not None
            assert info.description == "Sends users to pages the client must not see through"
            assert info.website_url == "https://example.com"
            assert [icon.src for icon in info.icons or []] == ["https://example.com/icon.png"]

            result = await client.call_tool("connect_account", {})
            assert result.content[0].text == "accept told=True"  # type: ignore[union-attr]
            (asked,) = seen.asked
            assert isinstance(asked, sdk.ElicitRequestURLParams)
            assert (asked.url, asked.elicitation_id) == (URL, "acct-1")
            assert asked.message == "Connect your account"
            with anyio.fail_after(5):
                while not any(isinstance(m, sdk.ElicitCompleteNotification) for m in seen.notified):
                    await anyio.sleep(0.01)
            (done,) = [m for m in seen.notified if isinstance(m, sdk.ElicitCompleteNotification)]
            assert done.params.elicitation_id == "acct-1"

            with pytest.raises(MCPError) as raised:
                await client.call_tool("needs_account", {})
            assert raised.value.code == -32042
            required = UrlElicitationRequiredError.from_error(raised.value.error)
            (elicitation,) = required.elicitations
            assert (elicitation.url, elicitation.elicitation_id) == (URL, "acct-2")


class OurSide(ClientHandlers):
    """Our client's handlers: accepts every URL elicitation, keeps the completions."""

    def __init__(self) -> None:
        self.asked: list[Any] = []
        self.completed: list[str] = []

    async def elicit(self, params: t.ElicitRequestParams, ctx: Any) -> t.ElicitResult:
        self.asked.append(params)
        return t.ElicitResult(action="accept")

    async def on_elicitation_complete(
        self, params: t.ElicitationCompleteNotificationParams
    ) -> None:
        self.completed.append(params.elicitation_id)


CAPABILITIES = {"elicitation": {"form": {}, "url": {}}}


async def test_our_client_gets_the_sdk_server_s_url_elicitation_and_completion() -> None:
    handlers = OurSide()
    with anyio.fail_after(TIMEOUT):
        async with stdio_client(
            Client,
            sys.executable,
            [str(SDK_SERVER)],
            handlers=handlers,
            cwd=str(ROOT),
            capabilities=CAPABILITIES,
        ) as client:
            assert client.protocol_version == "2025-11-25"
            result = await client.call_tool(name="connect_account", arguments={})
            assert isinstance(result.content[0], t.TextContent)
            assert result.content[0].text == "action=accept"
            (asked,) = handlers.asked
            assert isinstance(asked, t.ElicitRequestURLParams)
            assert (asked.url, asked.elicitation_id) == (URL, "sdk-1")
            with anyio.fail_after(5):
                while handlers.completed != ["sdk-1"]:
                    await anyio.sleep(0.01)

            with pytest.raises(UrlElicitationRequired) as raised:
                await client.call_tool(name="needs_account", arguments={})
            assert [e["elicitationId"] for e in raised.value.elicitations] == ["sdk-2"]


async def test_our_client_opted_in_visits_the_sdk_server_s_url_and_retries() -> None:
    """``url_elicitation_wait``: the SDK's -32042 is shown through our handler, the SDK's
    completion ends the wait, and the retried call succeeds."""
    handlers = OurSide()
    with anyio.fail_after(TIMEOUT):
        async with stdio_client(
            Client,
            sys.executable,
            [str(SDK_SERVER)],
            handlers=handlers,
            cwd=str(ROOT),
            capabilities=CAPABILITIES,
            url_elicitation_wait=10.0,
        ) as client:
            with anyio.fail_after(8):  # well within the wait: the completion ended it
                result = await client.call_tool(name="needs_account", arguments={})
            assert isinstance(result.content[0], t.TextContent)
            assert result.content[0].text == "connected"
            (asked,) = handlers.asked
            assert isinstance(asked, t.ElicitRequestURLParams)
            assert asked.elicitation_id == "sdk-2"
