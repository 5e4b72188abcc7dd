"""URL-mode elicitation from the official MCP Python SDK (``mcp`` 2.3), the peer of
``tests/interop/test_url_elicitation_sdk.py``: ``python tests/peers/sdk_url_elicitation_server.py``
serves over stdio.

Tools: ``connect_account`` asks the client in URL mode (``ctx.elicit_url``) and then sends
``notifications/elicitation/complete``; ``needs_account`` raises the SDK's
``UrlElicitationRequiredError`` (-32042) until its elicitation was completed, which it
announces right after the first refusal."""

from __future__ import annotations

import warnings

import anyio
import anyio.abc
from mcp import UrlElicitationRequiredError
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import ElicitRequestURLParams

warnings.simplefilter("ignore", MCPDeprecationWarning)

URL = "https://auth.example.com/connect"
server = MCPServer("sdk-url-elicitation")
#: Whether ``needs_account`` refused once (the user was then sent to the page).
asked = {"needs_account": False}


@server.tool()
async def connect_account(ctx: Context) -> str:
    """Send the user to the account page, then say that it is done."""
    result = await ctx.elicit_url("Connect your account", URL, "sdk-1")
    await ctx.session.send_elicit_complete("sdk-1")
    return f"action={result.action}"


@server.tool()
async def needs_account(ctx: Context) -> str:
    """-32042 the first time; the completion follows it shortly."""
    if not asked["needs_account"]:
        asked["needs_account"] = True
        session = ctx.session

        async def complete_later() -> None:
            await anyio.sleep(0.2)
            await session.send_elicit_complete("sdk-2")

        task_group.start_soon(complete_later)
        raise UrlElicitationRequiredError(
            [ElicitRequestURLParams(message="Connect first", url=URL, elicitation_id="sdk-2")]
        )
    return "connected"


async def main() -> None:
    global task_group
    async with anyio.create_task_group() as task_group:
        await server.run_stdio_async()
        task_group.cancel_scope.cancel()


task_group: anyio.abc.TaskGroup

if __name__ == "__main__":
    anyio.run(main)
