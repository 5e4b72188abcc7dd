"""The client's OAuth over real sockets: the browser authorizer's loopback callback server
(what it accepts, what it ignores, how long it waits), and ``http_client(..., auth=...)``
against the test authorization server and a protected mcpgen server served by uvicorn on
127.0.0.1, the "browser" a thread following the redirects as one would."""

from __future__ import annotations

import asyncio
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import pytest

pytest.importorskip("joserfc")
pytest.importorskip("uvicorn")

from support.oauth_world import AuthServer, Resource, World, mcp_app  # noqa: E402
from support.http_servers import ThreadedUvicorn  # noqa: E402

from mcpgen.runtime.client.auth.oauth import (  # noqa: E402
    AuthorizationError,
    BrowserAuthorizer,
    ClientCredentials,
    OAuth,
)

pytestmark = pytest.mark.slow
T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
    return asyncio.run(asyncio.wait_for(coro, timeout))


def fetch(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


# --- the loopback callback ------------------------------------------------------------------


def test_the_callback_takes_only_the_redirect_it_waits_for() -> None:
    seen: list[int] = []

    def browser(url: str) -> bool:
        base = authorizer.redirect_uri
        with socket.create_connection(("127.0.0.1", authorizer.port)):  # says nothing
            seen.append(fetch(base.replace("/callback", "/favicon.ico")))
            seen.append(fetch(f"{base}?code=stolen&state=other"))
            seen.append(fetch(f"{base}?code=good&state=s1&iss=https%3A%2F%2Fas.test"))
        return True

    authorizer = BrowserAuthorizer(open_url=browser, read_timeout=1.0)
    try:
        assert authorizer.redirect_uri == f"http://127.0.0.1:{authorizer.port}/callback"
        params = run(authorizer.authorize("https://as.test/authorize?x=1", "s1"))
        assert params == {"code": "good", "state": "s1", "iss": "https://as.test"}
        assert seen == [404, 400, 200]
        port = authorizer.port
        seen.clear()
        params = run(authorizer.authorize("https://as.test/authorize?x=2", "s1"))
        assert params["code"] == "good" and authorizer.port == port  # the same redirect URI
    finally:
        authorizer.close()


def test_nobody_signing_in_costs_the_timeout_and_no_more() -> None:
    authorizer = BrowserAuthorizer(open_url=lambda url: False, timeout=0.5)
    started = time.monotonic()
    try:
        with pytest.raises(AuthorizationError, match="within 0.5 s"):
            run(authorizer.authorize("https://as.test/authorize", "s"))
    finally:
        authorizer.close()
    assert time.monotonic() - started < 3


# --- end to end -----------------------------------------------------------------------------


class Served:
    """The test authorization server and a protected mcpgen server on two ports."""

    def __init__(self, **server: Any) -> None:
        self.place = World({})
        self.as_runner = ThreadedUvicorn(self.place)
        self.rs_runner = ThreadedUvicorn(self.place)
        issuer = f"http://127.0.0.1:{self.as_runner.port}"
        self.server = AuthServer(issuer=issuer, **server)
        self.url = f"http://127.0.0.1:{self.rs_runner.port}/mcp"
        self.resource = Resource(mcp_app(), [self.server], url=self.url, prm_scopes=["mcp:read"])
        self.place.apps[self.server.host] = self.server
        self.place.apps[self.resource.host] = self.resource


@pytest.fixture
def served() -> Iterator[Served]:
    world = Served(iss_supported=True)
    world.as_runner.start()
    world.rs_runner.start()
    try:
        yield world
    finally:
        world.as_runner.stop()
        world.rs_runner.stop()


def test_a_person_signs_in_through_the_browser_before_the_connection(served: Served) -> None:
    from mcpgen.generated.v2026_07_28 import client as c
    from mcpgen.runtime.client import http_client

    def browser(url: str) -> bool:  # a person approving at once, in their browser
        import httpx

        with httpx.Client() as http:
            answer = http.get(url, follow_redirects=False, timeout=5)
            assert http.get(answer.headers["location"], timeout=5).status_code == 200
        return True

    async def scenario() -> None:
        authorizer = BrowserAuthorizer(open_url=browser)
        flow = OAuth(authorizer=authorizer)
        try:
            for mode in ("auto", "legacy"):
                async with http_client(c.Client, served.url, auth=flow, mode=mode) as client:
                    result = await client.call_tool(name="write", arguments={"text": mode})
                    assert getattr(result.content[0], "text", None) == f"wrote {mode}"
        finally:
            authorizer.close()

    run(scenario())
    assert len(served.server.seen("authorize")) == 1
    (request,) = served.server.seen("authorize")
    assert request["resource"] == served.url and request["scope"] == "mcp:read"


def test_an_agent_with_client_credentials(served: Served) -> None:
    from mcpgen.generated.v2026_07_28 import client as c
    from mcpgen.runtime.client import http_client

    served.server.clients["agent"] = "secret"
    served.server.auth_methods = ["client_secret_basic"]

    async def scenario() -> None:
        flow = ClientCredentials("agent", client_secret="secret")
        async with http_client(c.Client, served.url, auth=flow) as client:
            assert (await client.list_tools()).tools

    run(scenario())
    assert [e["grant_type"] for e in served.server.seen("token")] == ["client_credentials"]


def test_an_agent_with_client_credentials_over_websocket(served: Served) -> None:
    """The refused handshake's 401 challenge starts the flow (discovery, then a token),
    the handshake is made again with the token, and a second connection reuses it."""
    from mcpgen.generated.v2026_07_28 import client as c
    from mcpgen.runtime.client import websocket_client

    served.server.clients["agent"] = "secret"
    served.server.auth_methods = ["client_secret_basic"]
    url = "ws" + served.url.removeprefix("http")

    async def scenario() -> None:
        flow = ClientCredentials("agent", client_secret="secret")
        async with websocket_client(c.Client, url, auth=flow) as client:
            assert (await client.call_tool(name="read")).content[0].text == "read ok"  # type: ignore[union-attr]
        async with websocket_client(c.Client, url, auth=flow) as client:
            assert (await client.list_tools()).tools

    run(scenario())
    assert [e["grant_type"] for e in served.server.seen("token")] == ["client_credentials"]
    assert len(served.resource.accepted) == 2  # two handshakes, one token


def test_a_websocket_whose_token_is_never_accepted_fails_with_the_flow_bound(
    served: Served,
) -> None:
    from mcpgen.generated.v2026_07_28 import client as c
    from mcpgen.runtime.client import websocket_client

    served.server.clients["agent"] = "secret"
    served.server.auth_methods = ["client_secret_basic"]
    served.resource.reject_all = True
    url = "ws" + served.url.removeprefix("http")

    async def scenario() -> None:
        flow = ClientCredentials("agent", client_secret="secret")
        with pytest.raises(AuthorizationError, match="still answers 401"):
            async with websocket_client(c.Client, url, auth=flow):
                pass

    run(scenario())
