"""A protected mcpgen server reached by the official Python SDK's client with its OAuth
support, over real sockets on 127.0.0.1: the test-only authorization server
(``tests/support/auth_server.py``) and the protected app (``tests/peers/auth_app.py``) each
served by uvicorn in a thread of its own.

In both eras (``mode="auto"``: stateless 2026-07-28; ``mode="legacy"``: a 2025-11-25
session) the SDK client is refused (401), finds the protected resource metadata and the
authorization server's (the verifier finds the JWKS through that metadata too), registers
(RFC 7591), authorizes with PKCE and the ``resource`` parameter, and calls; operations
needing more scopes are refused with 403 ``insufficient_scope`` and the client steps up.
Then what holds over a real socket whatever the client: no token, no data; a foreign
``Host`` refused before any token is looked at.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import pytest
import uvicorn

import mcp.types as sdk
from mcp import Client as SdkClient
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata
from mcp.shared.auth import OAuthToken

from support.auth_server import AuthServer
from mcpgen.runtime.http.auth import JwtVerifier

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from peers.auth_app import BASE_SCOPE, make_app  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]
TIMEOUT = 60.0


class Served:
    """uvicorn serving an app made once its port is known, in a daemon thread."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port: int = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.server: uvicorn.Server | None = None
        self.thread: threading.Thread | None = None

    def start(self, app: Any) -> None:
        config = uvicorn.Config(
            app, log_level="warning", lifespan="off", timeout_graceful_shutdown=2
        )
        self.server = server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)

    def stop(self) -> None:
        if self.server is not None and self.thread is not None:
            self.server.should_exit = True
            self.thread.join(10)
            assert not self.thread.is_alive(), "uvicorn did not stop"
        self.sock.close()


class Servers:
    def __init__(self, authorization: Served, mcp: Served, az: AuthServer) -> None:
        self.az = az
        self.issuer = authorization.url
        self.mcp_url = f"{mcp.url}/mcp"


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    authorization, mcp_server = Served(), Served()
    resource = f"{mcp_server.url}/mcp"
    az = AuthServer(authorization.url, resource)
    # The verifier finds the JWKS through the authorization server's RFC 8414 metadata.
    verifier = JwtVerifier(issuer=az.issuer, audience=resource, refetch_interval=1)
    app = make_app(verifier, resource=resource, issuer=az.issuer).http_app()
    try:
        authorization.start(az)
        mcp_server.start(app)
        yield Servers(authorization, mcp_server, az)
    finally:
        mcp_server.stop()
        authorization.stop()


class Memory:
    """The SDK's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Browser:
    """The user agent: follows the authorization URL (the test server approves at once)
    and hands the redirect's parameters to the client."""

    def __init__(self) -> None:
        self.result: AuthorizationCodeResult | None = None
        self.visits: list[dict[str, str]] = []

    async def redirect(self, url: str) -> None:
        asked = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
        self.visits.append(asked)
        async with httpx.AsyncClient() as http:
            reply = await http.get(url, follow_redirects=False)
        assert reply.status_code == 302, reply.text
        given = {k: v[0] for k, v in parse_qs(urlsplit(reply.headers["location"]).query).items()}
        self.result = AuthorizationCodeResult(
            code=given["code"], state=given.get("state"), iss=given.get("iss")
        )

    async def callback(self) -> AuthorizationCodeResult:
        assert self.result is not None
        return self.result


class Statuses:
    """What the MCP endpoint answered, in order (``httpx2`` event hook)."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint
        self.seen: list[tuple[str, int, str]] = []

    async def on_response(self, response: httpx2.Response) -> None:
        if str(response.request.url) == self.endpoint:
            challenge = response.headers.get("www-authenticate", "")
            self.seen.append((response.request.method, response.status_code, challenge))


async def scenario(servers: Servers, mode: Literal["auto", "legacy"]) -> None:
    browser, statuses = Browser(), Statuses(servers.mcp_url)
    provider = OAuthClientProvider(
        server_url=servers.mcp_url,
        client_metadata=OAuthClientMetadata(
            redirect_uris=["http://127.0.0.1:9/callback"],  # type: ignore[list-item]
            client_name="sdk test client",
            grant_types=["authorization_code", "refresh_token"],
        ),
        storage=Memory(),
        redirect_handler=browser.redirect,
        callback_handler=browser.callback,
    )
    hooks = {"response": [statuses.on_response]}
    async with httpx2.AsyncClient(auth=provider, timeout=30, event_hooks=hooks) as http:
        async with SdkClient(
            streamable_http_client(servers.mcp_url, http_client=http), mode=mode
        ) as c:
            assert c.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
            tools = {tool.name for tool in (await c.list_tools()).tools}
            assert {"echo", "write", "whoami"} <= tools
            echoed = await c.call_tool("echo", {"text": "hi"})
            assert isinstance(echoed.content[0], sdk.TextContent)
            assert echoed.content[0].text == "echo: hi"
            who = await c.call_tool("whoami", {})
            assert who.structured_content is not None
            assert who.structured_content["subject"] == "alice"
            assert who.structured_content["authorization_header_seen"] is None
            # step-up: each needs a scope the first token lacks
            wrote = await c.call_tool("write", {"path": "notes.txt"})
            assert isinstance(wrote.content[0], sdk.TextContent)
            assert wrote.content[0].text == "wrote notes.txt"
            secret = await c.read_resource("secret://plans")
            assert isinstance(secret.contents[0], sdk.TextResourceContents)
            assert secret.contents[0].text == "the secret plans"
            prompts = await c.list_prompts()
            assert [p.name for p in prompts.prompts] == ["explain"]
            final = await c.call_tool("whoami", {})
            assert final.structured_content is not None
            granted = set(final.structured_content["scopes"])
            assert {BASE_SCOPE, "files:write", "secrets:read", "prompts:read"} <= granted
    codes = [status for _, status, _ in statuses.seen]
    assert codes[0] == 401 and 'scope="mcp:access"' in statuses.seen[0][2]
    refused = [challenge for _, status, challenge in statuses.seen if status == 403]
    assert len(refused) == 3 and all('error="insufficient_scope"' in c for c in refused)
    assert all(status in (200, 202, 401, 403) for status in codes), statuses.seen
    # every authorization request named this resource (RFC 8707) and used PKCE
    assert len(browser.visits) == 4
    for visit in browser.visits:
        assert visit["resource"] == servers.mcp_url and visit["code_challenge_method"] == "S256"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_sdk_client_authorizes_steps_up_and_calls(servers: Servers, mode: Any) -> None:
    asyncio.run(asyncio.wait_for(scenario(servers, mode), TIMEOUT))


def test_over_a_real_socket_no_token_no_data_and_hosts_checked_first(servers: Servers) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "x"}},
    }
    headers = {
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": "2025-11-25",
    }
    with httpx.Client(timeout=10) as http:
        reply = http.post(servers.mcp_url, json=body, headers=headers)
        assert reply.status_code == 401 and "echo:" not in reply.text
        assert reply.headers["www-authenticate"].startswith('Bearer resource_metadata="')
        evil = http.post(servers.mcp_url, json=body, headers={**headers, "host": "evil.example"})
        assert evil.status_code == 403 and "www-authenticate" not in evil.headers
        token = servers.az.mint(BASE_SCOPE, aud=servers.mcp_url, exp=int(time.time()) - 3600)
        expired = http.post(
            servers.mcp_url, json=body, headers={**headers, "authorization": f"Bearer {token}"}
        )
        assert (
            expired.status_code == 401
            and 'error="invalid_token"' in expired.headers["www-authenticate"]
        )
        metadata = http.get(
            servers.mcp_url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
        )
        assert metadata.json()["resource"] == servers.mcp_url
        assert metadata.json()["authorization_servers"] == [servers.issuer]


async def ours(servers: Servers, mode: Literal["auto", "legacy"]) -> None:
    """Our client (``http_client(..., auth=OAuth(...))``) against our protected server."""
    from mcpgen.generated.v2026_07_28 import client as c
    from mcpgen.runtime.client import http_client
    from mcpgen.runtime.client.auth.oauth import OAuth
    from mcpgen.runtime.client.auth.interactive import HeadlessAuthorizer
    from mcpgen.runtime.core.errors import McpError

    flow = OAuth(authorizer=HeadlessAuthorizer("http://127.0.0.1:9/callback"))
    async with http_client(c.Client, servers.mcp_url, auth=flow, mode=mode) as client:
        assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
        echoed = await client.call_tool(name="echo", arguments={"text": "ours"})
        assert echoed.content[0].text == "echo: ours"  # type: ignore[union-attr]
        wrote = await client.call_tool(name="write", arguments={"path": "a.txt"})  # step-up
        assert wrote.content[0].text == "wrote a.txt"  # type: ignore[union-attr]
        who = await client.call_tool(name="whoami", arguments={})
        seen = who.structured_content
        assert isinstance(seen, dict) and seen["subject"] == "alice"
        assert {BASE_SCOPE, "files:write"} <= set(seen["scopes"])
        try:
            await client.call_tool(name="no-such-tool", arguments={})
        except McpError:
            pass  # an ordinary protocol error, not an authorization one
        again = await client.call_tool(name="echo", arguments={"text": "still"})
        assert again.content[0].text == "echo: still"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_our_client_reaches_our_protected_server(
    servers: Servers, mode: Literal["auto", "legacy"]
) -> None:
    asyncio.run(asyncio.wait_for(ours(servers, mode), TIMEOUT))
