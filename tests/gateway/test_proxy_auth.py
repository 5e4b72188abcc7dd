"""A proxy with OAuth in front of an unprotected upstream: the test-only authorization
server mints the tokens, every bad-token class of the resource server's own tests is
refused at the proxy, and nothing reaches the upstream without a valid token; a good
token's request reaches it, without the token; a mount's policy sees the token's
principal and decides what each client sees and uses. In process (``asgi_driver``), no
socket."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.runtime import App
from mcpgen.runtime.gateway import Access, Mount, Proxy, Upstream
from mcpgen.runtime.http.auth import JwtVerifier, ResourceServer
from peers.auth_app import BASE_SCOPE, ISSUER, RESOURCE
from support.asgi_driver import Reply, call, request
from support.auth_server import AuthServer
from support.bad_tokens import BAD_TOKENS
from support.protected_app import META, MODERN, assert_refused, run


class Recorded:
    """An unprotected upstream that notes every call it is asked to make."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.app = App("unprotected", binding=stubs)

        @self.app.tool
        def echo(text: str, ctx: stubs.Context) -> str:
            """Say it back."""
            self.calls.append({"text": text, "meta": dict(ctx.meta)})
            return f"echo: {text}"

        @self.app.tool
        def ping_back() -> str:
            """Anyone may."""
            return "pong"


class Gateway:
    """The authorization server, the upstream, and a protected proxy of it."""

    def __init__(self, policy: Any = None) -> None:
        self.az = AuthServer(ISSUER, RESOURCE)
        transport = httpx.ASGITransport(app=self.az)  # type: ignore[arg-type]
        http = httpx.AsyncClient(transport=transport, base_url=ISSUER)
        verifier = JwtVerifier(
            issuer=ISSUER, audience=RESOURCE, jwks_uri=f"{ISSUER}/jwks", http=http
        )
        auth = ResourceServer(
            verifier,
            resource=RESOURCE,
            authorization_servers=[ISSUER],
            required_scopes=[BASE_SCOPE],
        )
        self.upstream = Recorded()
        upstream = Upstream(server=self.upstream.app)
        self.proxy = Proxy(Mount(upstream, "", policy=policy), auth=auth)
        self.app = self.proxy.http_app()

    async def echo(self, token: str | None, text: str = "hi", **headers: str) -> Reply:
        params = {"name": "echo", "arguments": {"text": text}, "_meta": META}
        sent = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "echo"}
        if token is not None:
            sent["authorization"] = f"Bearer {token}"
        return await call(self.app, body=request(1, "tools/call", params), headers=sent | headers)

    async def tools(self, token: str) -> list[str]:
        sent = {"mcp-protocol-version": MODERN, "mcp-method": "tools/list"}
        sent["authorization"] = f"Bearer {token}"
        reply = await call(self.app, body=request(2, "tools/list", {"_meta": META}), headers=sent)
        assert reply.status == 200, reply
        return [tool["name"] for tool in reply.json()["result"]["tools"]]

    async def served(self, text: str) -> None:
        """A good token's call reaches the upstream, and the token is nowhere in what the
        upstream is given."""
        before = len(self.upstream.calls)
        reply = await self.echo(self.az.mint(BASE_SCOPE), text)
        assert reply.status == 200, reply
        assert reply.json()["result"]["content"][0]["text"] == f"echo: {text}"
        assert len(self.upstream.calls) == before + 1
        assert "Bearer" not in repr(self.upstream.calls[-1])


@pytest.mark.parametrize("case", sorted(BAD_TOKENS))
def test_a_bad_token_is_refused_at_the_proxy_and_nothing_reaches_the_upstream(case: str) -> None:
    gateway = Gateway()
    make, said = BAD_TOKENS[case]

    async def scenario() -> None:
        async with gateway.proxy:
            await gateway.served("first")
            reply = await gateway.echo(make(gateway.az))
            params = assert_refused(reply, 401, "invalid_token")
            assert said in params["error_description"], params
            assert [c["text"] for c in gateway.upstream.calls] == ["first"]
            await gateway.served("after")

    run(scenario())


def test_no_token_and_a_malformed_header_are_refused_at_the_proxy() -> None:
    gateway = Gateway()

    async def scenario() -> None:
        async with gateway.proxy:
            assert_refused(await gateway.echo(None), 401, None)
            malformed = await gateway.echo(None, authorization="Bearer")
            assert malformed.status in (400, 401), malformed
            assert gateway.upstream.calls == []
            metadata = await call(
                gateway.app, "GET", path="/.well-known/oauth-protected-resource/mcp"
            )
            assert metadata.json()["resource"] == RESOURCE
            await gateway.served("after")

    run(scenario())


def test_a_mounts_policy_sees_the_principal_and_hides_what_it_refuses() -> None:
    """A policy letting only tokens with the ``admin`` scope use ``echo``: another token
    neither sees it listed nor reaches it (-32602, as for an unknown tool), while it sees
    and uses the rest; an admin token sees and uses both. The policy is given the
    principal of the verified token and the upstream's own names."""
    asked: list[Access] = []

    def admins_echo(access: Access) -> bool:
        asked.append(access)
        return access.name != "echo" or "admin" in access.principal.scopes

    gateway = Gateway(policy=admins_echo)

    async def scenario() -> None:
        async with gateway.proxy:
            user, admin = gateway.az.mint(BASE_SCOPE), gateway.az.mint(f"{BASE_SCOPE} admin")
            assert await gateway.tools(user) == ["ping_back"]
            refused = await gateway.echo(user)
            assert refused.status == 200, refused
            assert refused.json()["error"]["code"] == -32602
            assert "Unknown tool: echo" in refused.json()["error"]["message"]
            assert gateway.upstream.calls == []
            assert await gateway.tools(admin) == ["echo", "ping_back"]
            reply = await gateway.echo(admin, "from an admin")
            assert reply.json()["result"]["content"][0]["text"] == "echo: from an admin"
            assert [c["text"] for c in gateway.upstream.calls] == ["from an admin"]
            assert {a.method for a in asked} == {"tools/call"}
            assert all(a.principal is not None and a.principal.subject for a in asked)

    run(scenario())


def test_a_policy_that_fails_refuses_and_the_proxy_goes_on() -> None:
    """A policy raising on a name refuses that name (logged), and serves the others."""

    def broken(access: Access) -> bool:
        if access.name == "echo":
            raise RuntimeError("the policy's own bug")
        return True

    gateway = Gateway(policy=broken)

    async def scenario() -> None:
        async with gateway.proxy:
            user = gateway.az.mint(BASE_SCOPE)
            assert await gateway.tools(user) == ["ping_back"]
            refused = await gateway.echo(user)
            assert refused.json()["error"]["code"] == -32602
            assert gateway.upstream.calls == []

    run(scenario())
