"""A proxy with OAuth in front of an unprotected upstream: the test-only authorization
server mints the tokens, every bad-token class of the resource server's own tests is
refused at the proxy, and nothing reaches the upstream without a valid token; a good
token's request reaches it, without the token. In process (``asgi_driver``), no socket."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.runtime import App
from mcpgen.runtime.gateway import Proxy, Upstream
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


class Gateway:
    """The authorization server, the upstream, and a protected proxy of it."""

    def __init__(self) -> None:
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
        self.proxy = Proxy(Upstream(server=self.upstream.app), auth=auth)
        self.app = self.proxy.http_app()

    async def echo(self, token: str | None, text: str = "hi", **headers: str) -> Reply:
        params = {"name": "echo", "arguments": {"text": text}, "_meta": META}
        sent = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "echo"}
        if token is not None:
            sent["authorization"] = f"Bearer {token}"
        return await call(self.app, body=request(1, "tools/call", params), headers=sent | headers)

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
