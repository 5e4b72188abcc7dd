"""The client's OAuth flows (runtime/client/auth/) against a test authorization server
and an mcpgen server protected by it, in process (tests/support/oauth_world.py): each grant, each
way of being a client, scope selection and step-up, refresh, migration, both eras; and the
pieces (challenges, discovery URLs, resource and issuer rules) one by one."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest

pytest.importorskip("joserfc")

from support.oauth_world import AuthServer, Resource, World, connected, mcp_app, world  # noqa: E402

from mcpgen.runtime.client.auth.oauth import (  # noqa: E402
    AuthorizationError,
    AuthSettings,
    ClientCredentials,
    HeadlessAuthorizer,
    MemoryTokenStore,
    OAuth,
    Tokens,
)
from mcpgen.runtime.client.auth.discovery import (  # noqa: E402
    parse_challenge,
    resource_matches,
    resource_metadata_urls,
    server_metadata_urls,
)
from mcpgen.runtime.client.auth.grants import select_scope  # noqa: E402
from mcpgen.runtime.client.auth.types import ServerMetadata  # noqa: E402

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T], timeout: float = 20.0) -> T:
    return asyncio.run(asyncio.wait_for(coro, timeout))


def oauth(place: World, **options: Any) -> OAuth:
    http = place.http()
    return OAuth(authorizer=HeadlessAuthorizer(http=http), http=http, **options)


async def call_write(client: Any, text: str = "x") -> str:
    result = await client.call_tool(name="write", arguments={"text": text})
    return result.content[0].text


# --- the authorization code flow ----------------------------------------------------------


@pytest.mark.parametrize("mode", ["modern", "legacy"])
def test_a_protected_server_is_reached_after_one_authorization(mode: str) -> None:
    place, server, resource = world(challenge_scope="mcp:read")

    async def scenario() -> None:
        flow = oauth(place)
        async with connected(place, flow, mode=mode) as client:
            assert [t.name for t in (await client.list_tools()).tools] == ["read", "write"]
            assert await call_write(client) == "wrote x"
        async with connected(place, flow, mode=mode) as client:  # the token is kept
            assert await call_write(client, "y") == "wrote y"

    run(scenario())
    assert [kind for kind, _ in server.log] == ["metadata", "register", "authorize", "token"]
    (registration,) = server.seen("register")
    assert registration["redirect_uris"] == ["http://127.0.0.1:33418/callback"]
    assert registration["application_type"] == "native"
    assert registration["grant_types"] == ["authorization_code", "refresh_token"]
    assert registration["token_endpoint_auth_method"] == "none"
    assert registration["client_name"] == "mcpgen" and "client_uri" not in registration
    (request,) = server.seen("authorize")
    assert request["code_challenge_method"] == "S256" and len(request["state"]) >= 32
    assert request["resource"] == "https://mcp.test/mcp" and request["scope"] == "mcp:read"
    (token,) = server.seen("token")
    assert token["resource"] == request["resource"]
    assert token["redirect_uri"] == request["redirect_uri"]
    assert len(resource.accepted) >= 4


def test_a_client_id_metadata_document_replaces_registration_when_supported() -> None:
    url = "https://app.example/client.json"
    place, server, _ = world(AuthServer(cimd=True))

    async def scenario() -> None:
        async with connected(place, oauth(place, client_metadata_url=url)) as client:
            await client.list_tools()

    run(scenario())
    assert server.seen("register") == []
    assert server.seen("authorize")[0]["client_id"] == url
    assert server.seen("token")[0]["client_id"] == url


def test_without_cimd_support_the_client_registers_even_with_a_metadata_url() -> None:
    place, server, _ = world()

    async def scenario() -> None:
        flow = oauth(place, client_metadata_url="https://app.example/client.json")
        async with connected(place, flow) as client:
            await client.list_tools()

    run(scenario())
    assert len(server.seen("register")) == 1


def test_a_pre_registered_client_authenticates_with_its_secret() -> None:
    place, server, _ = world(AuthServer(registration=False, auth_methods=["client_secret_basic"]))
    server.clients["pre-registered"] = "s3cret:with/odd chars"

    async def scenario() -> None:
        flow = oauth(place, client_id="pre-registered", client_secret="s3cret:with/odd chars")
        async with connected(place, flow) as client:
            await client.list_tools()

    run(scenario())
    (token,) = server.seen("token")
    assert token["authorization"].startswith("Basic ") and "client_secret" not in token
    decoded = base64.b64decode(token["authorization"][6:]).decode()
    assert decoded == "pre-registered:s3cret%3Awith%2Fodd+chars"


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post", "none"])
def test_the_token_endpoint_authentication_the_registration_names_is_used(method: str) -> None:
    place, server, _ = world(AuthServer(auth_methods=[method], registered_method=method))

    async def scenario() -> None:
        async with connected(place, oauth(place)) as client:
            await client.list_tools()

    run(scenario())
    (token,) = server.seen("token")
    assert (token["authorization"] or "").startswith("Basic ") == (method == "client_secret_basic")
    assert ("client_secret" in token) == (method == "client_secret_post")


@pytest.mark.parametrize(
    ("challenge", "prm_scopes", "as_scopes", "expected"),
    [
        ("mcp:read", ["a", "b"], None, "mcp:read"),
        (None, ["a", "b"], None, "a b"),
        (None, None, ["a", "b"], None),
        (None, ["a"], ["a", "offline_access"], "a offline_access"),
        (None, None, ["offline_access"], None),
    ],
)
def test_scope_selection(
    challenge: str | None, prm_scopes: Any, as_scopes: Any, expected: str | None
) -> None:
    place, server, _ = world(
        AuthServer(scopes_supported=as_scopes), challenge_scope=challenge, prm_scopes=prm_scopes
    )

    async def scenario() -> None:
        async with connected(place, oauth(place)) as client:
            await client.list_tools()

    run(scenario())
    assert server.seen("authorize")[0].get("scope") == expected


def test_offline_access_is_not_asked_for_when_turned_off() -> None:
    place, server, _ = world(AuthServer(scopes_supported=["a", "offline_access"]), prm_scopes=["a"])

    async def scenario() -> None:
        flow = oauth(place, settings=AuthSettings(offline_access=False))
        async with connected(place, flow) as client:
            await client.list_tools()

    run(scenario())
    assert server.seen("authorize")[0]["scope"] == "a"


def test_step_up_asks_for_the_union_and_then_succeeds() -> None:
    place, server, _ = world(challenge_scope="mcp:read", needs={"tools/call": {"mcp:write"}})

    async def scenario() -> None:
        async with connected(place, oauth(place)) as client:
            await client.list_tools()
            assert await call_write(client) == "wrote x"
            assert await call_write(client) == "wrote x"  # no third authorization

    run(scenario())
    scopes = [entry.get("scope") for entry in server.seen("authorize")]
    assert scopes == ["mcp:read", "mcp:read mcp:write"]
    assert len(server.seen("register")) == 1  # the registration is reused


def test_concurrent_requests_share_one_authorization() -> None:
    place, server, _ = world()

    async def scenario() -> None:
        async with connected(place, oauth(place), mode="legacy") as client:
            results = await asyncio.gather(*(call_write(client, str(i)) for i in range(8)))
            assert results == [f"wrote {i}" for i in range(8)]

    run(scenario())
    assert len(server.seen("authorize")) == 1


# --- refresh, stores, migration -------------------------------------------------------------


def test_an_expiring_token_is_refreshed_before_use() -> None:
    place, server, _ = world(AuthServer(expires_in=10))  # inside refresh_skew (30 s)

    async def scenario() -> None:
        async with connected(place, oauth(place)) as client:
            await client.list_tools()
            await client.list_tools()

    run(scenario())
    grants = [entry["grant_type"] for entry in server.seen("token")]
    assert grants[0] == "authorization_code" and set(grants[1:]) == {"refresh_token"}
    assert len(server.seen("authorize")) == 1
    assert all(entry["resource"] == "https://mcp.test/mcp" for entry in server.seen("token"))


def test_a_refused_token_is_refreshed_and_a_refused_refresh_starts_over() -> None:
    place, server, _ = world()

    async def scenario() -> None:
        flow = oauth(place)
        async with connected(place, flow) as client:
            await client.list_tools()
            server.grants.clear()  # the server forgets every access token: 401
            await client.list_tools()
            assert [e["grant_type"] for e in server.seen("token")][-1] == "refresh_token"
            server.grants.clear()
            server.refresh.clear()  # and the refresh tokens: a new authorization
            await client.list_tools()

    run(scenario())
    assert [e["grant_type"] for e in server.seen("token")] == [
        "authorization_code",
        "refresh_token",
        "refresh_token",
        "authorization_code",
    ]


def test_a_shared_store_spares_a_second_authorization() -> None:
    place, server, _ = world()
    store = MemoryTokenStore()

    async def scenario() -> None:
        for _ in range(2):
            async with connected(place, oauth(place, store=store)) as client:
                await client.list_tools()

    run(scenario())
    assert len(server.seen("authorize")) == 1


def test_the_memory_store_is_bounded() -> None:
    store = MemoryTokenStore(max_entries=2)

    async def scenario() -> None:
        for name in ("a", "b", "c"):
            await store.save_tokens(name, Tokens(access_token=name))
        assert await store.load_tokens("a") is None
        assert (await store.load_tokens("c")) == Tokens(access_token="c")

    run(scenario())
    with pytest.raises(ValueError):
        MemoryTokenStore(0)


def test_a_migrated_authorization_server_gets_a_registration_of_its_own() -> None:
    first, second = AuthServer(), AuthServer(issuer="https://as2.test")
    place, _, resource = world(first)
    place.apps[second.host] = second

    async def scenario() -> None:
        async with connected(place, oauth(place)) as client:
            await client.list_tools()
            resource.servers = [second, first]  # now AS2; AS1's tokens are refused
            assert await call_write(client) == "wrote x"

    run(scenario())
    (old,) = first.seen("register")
    assert len(second.seen("register")) == 1
    old_ids = {e.get("client_id") for e in first.seen("token")}
    assert not old_ids & {
        e.get("client_id") for e in second.seen("authorize") + second.seen("token")
    }
    assert all(e["grant_type"] == "authorization_code" for e in second.seen("token"))
    del old


def test_2025_03_26_servers_without_resource_metadata() -> None:
    """The server's origin is the authorization server: its metadata, or the defaults."""

    async def scenario(metadata: bool) -> AuthServer:
        server = AuthServer(issuer="https://mcp.test", iss_supported=None)
        resource = Resource(mcp_app("mcp.test"), [server], prm_path=None)
        if not metadata:
            server.override[server.metadata_path] = (404, b"{}", {})

        async def both(scope: Any, receive: Any, send: Any) -> None:
            is_as = scope["path"] in ("/authorize", "/token", "/register", server.metadata_path)
            await (server if is_as else resource)(scope, receive, send)

        place = World({"mcp.test": both})
        async with connected(place, oauth(place), mode="legacy") as client:
            await client.list_tools()
        return server

    for metadata in (True, False):
        server = run(scenario(metadata))
        assert [kind for kind, _ in server.log][-3:] == ["register", "authorize", "token"]
        assert "resource" not in server.seen("authorize")[0]


def test_a_modern_server_without_resource_metadata_is_refused() -> None:
    place, server, _ = world(prm_path=None)

    async def scenario() -> None:
        async with connected(place, oauth(place)) as client:
            await client.list_tools()

    with pytest.raises(Exception, match="publishes no protected resource metadata"):
        run(scenario())
    assert server.log == []


# --- client credentials ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "method", ["client_secret_basic", "client_secret_post", "client_secret_jwt"]
)
def test_client_credentials_with_a_secret(method: str) -> None:
    secret = "a-long-enough-shared-secret-for-hs256!"
    place, server, _ = world(AuthServer(auth_methods=[method]), prm_scopes=["mcp:read"])
    server.clients["agent"] = secret
    if method == "client_secret_jwt":
        from joserfc.jwk import OctKey

        server.assertion_keys["agent"] = OctKey.import_key(secret)

    async def scenario() -> None:
        flow = ClientCredentials("agent", client_secret=secret, method=method, http=place.http())
        async with connected(place, flow) as client:
            assert await call_write(client) == "wrote x"

    run(scenario())
    (token,) = server.seen("token")
    assert token["grant_type"] == "client_credentials" and token["scope"] == "mcp:read"
    assert token["resource"] == "https://mcp.test/mcp"
    assert server.seen("authorize") == [] and server.seen("register") == []


@pytest.mark.parametrize("algorithm", ["ES256", "RS256", "Ed25519"])
def test_client_credentials_with_a_private_key_jwt(algorithm: str) -> None:
    from joserfc.jwk import ECKey, OKPKey, RSAKey

    key: Any = {
        "ES256": lambda: ECKey.generate_key("P-256"),
        "RS256": lambda: RSAKey.generate_key(2048),
        "Ed25519": lambda: OKPKey.generate_key("Ed25519"),
    }[algorithm]()
    place, server, _ = world(AuthServer(auth_methods=["private_key_jwt"]))
    server.assertion_keys["agent"] = key
    pem = key.as_pem(private=True)

    async def scenario() -> None:
        flow = ClientCredentials("agent", private_key=pem, algorithm=algorithm, http=place.http())
        async with connected(place, flow) as client:
            await client.list_tools()

    run(scenario())
    (token,) = server.seen("token")
    assert (
        token["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    )


def test_client_credentials_refused_is_a_clear_error() -> None:
    place, server, _ = world(AuthServer(auth_methods=["client_secret_basic"]))
    server.clients["agent"] = "right"

    async def scenario() -> None:
        flow = ClientCredentials("agent", client_secret="wrong", http=place.http())
        async with connected(place, flow) as client:
            await client.list_tools()

    with pytest.raises(Exception, match="refused: invalid_client"):
        run(scenario())
    with pytest.raises(ValueError):
        ClientCredentials("agent")


# --- the pieces -----------------------------------------------------------------------------


def test_challenges_are_parsed_as_rfc_9110_says() -> None:
    header = (
        'DPoP algs="ES256", Bearer realm="mcp", error="insufficient_scope", '
        'scope="a b", resource_metadata="https://x.test/.well-known/oauth-protected-resource",'
        ' error_description="needs \\"b\\""'
    )
    challenge = parse_challenge(403, [header])
    assert challenge.error == "insufficient_scope" and challenge.scope == "a b"
    assert challenge.resource_metadata == "https://x.test/.well-known/oauth-protected-resource"
    assert challenge.error_description == 'needs "b"'
    assert parse_challenge(401, ["Bearer"]).scope is None
    assert parse_challenge(401, ["Basic realm=x", "bearer scope=c"]).scope == "c"
    assert parse_challenge(401, []).error is None
    assert parse_challenge(401, ['error="x"', ",,,", '"', "Bearer scope"]).scope is None


def test_discovery_urls_in_the_prescribed_order() -> None:
    assert resource_metadata_urls("https://s.test/a/mcp", "https://m.test/x") == [
        "https://m.test/x",
        "https://s.test/.well-known/oauth-protected-resource/a/mcp",
        "https://s.test/.well-known/oauth-protected-resource",
    ]
    assert resource_metadata_urls("https://s.test", None) == [
        "https://s.test/.well-known/oauth-protected-resource"
    ]
    assert server_metadata_urls("https://as.test/tenant1") == [
        "https://as.test/.well-known/oauth-authorization-server/tenant1",
        "https://as.test/.well-known/openid-configuration/tenant1",
        "https://as.test/tenant1/.well-known/openid-configuration",
    ]
    assert server_metadata_urls("https://as.test") == [
        "https://as.test/.well-known/oauth-authorization-server",
        "https://as.test/.well-known/openid-configuration",
    ]


@pytest.mark.parametrize(
    ("resource", "matches"),
    [
        ("https://s.test/mcp", True),
        ("https://S.test:443/mcp/", True),
        ("https://s.test", True),
        ("https://s.test/", True),
        ("https://s.test/mc", False),
        ("https://s.test/mcp/deeper", False),
        ("http://s.test/mcp", False),
        ("https://evil.test/mcp", False),
        ("https://s.test:8443/mcp", False),
        ("https://s.test/mcp#frag", False),
    ],
)
def test_the_resource_must_name_the_server(resource: str, matches: bool) -> None:
    assert resource_matches(resource, "https://s.test/mcp") is matches


def test_step_up_scopes_keep_what_was_asked_before() -> None:
    metadata = ServerMetadata(issuer="https://as.test", scopes_supported=["offline_access"])
    settings = AuthSettings()
    assert select_scope("b", None, metadata, "a", settings) == "a b offline_access"
    assert select_scope("a", None, metadata, "a b", settings) == "a b offline_access"
    assert select_scope(None, None, metadata, None, settings) is None


def test_settings_refuse_nonsense() -> None:
    with pytest.raises(ValueError):
        AuthSettings(timeout=0)
    with pytest.raises(ValueError):
        AuthSettings(max_step_ups=-1)
    with pytest.raises(ValueError):
        OAuth(client_metadata_url="http://app.example/client.json")


def test_a_token_expiry_is_read_from_expires_at() -> None:
    assert Tokens(access_token="t", expires_at=time.time() - 1).expired()
    assert not Tokens(access_token="t", expires_at=time.time() + 60).expired(skew=30)
    assert not Tokens(access_token="t").expired(skew=1e9)


def test_the_sync_httpx_client_is_refused() -> None:
    import httpx

    with pytest.raises(RuntimeError, match="AsyncClient"):
        with httpx.Client(auth=OAuth(authorizer=HeadlessAuthorizer())) as http:
            http.get("https://mcp.test/mcp")


def test_flow_errors_are_httpx_errors_naming_the_step() -> None:
    error = AuthorizationError("the server said no")
    assert str(error) == "authorization failed: the server said no"
    assert error.reason == "the server said no"


def test_the_default_authorizer_is_the_browser_and_its_port_is_released() -> None:
    from mcpgen.runtime.client.auth.oauth import BrowserAuthorizer

    flow = OAuth()
    assert flow.login_before_connect  # a person signs in: before the connection
    authorizer = flow.authorizer
    assert isinstance(authorizer, BrowserAuthorizer)
    assert authorizer.redirect_uri.startswith("http://127.0.0.1:")
    flow.close()
    assert not OAuth(authorizer=HeadlessAuthorizer()).login_before_connect


def test_the_runtime_imports_no_authorization_until_asked() -> None:
    import subprocess
    import sys

    code = (
        "import sys, mcpgen.runtime\n"
        "from mcpgen.runtime.client import http_client\n"
        "assert not [m for m in sys.modules if 'client.auth' in m], 'auth imported'\n"
        "import mcpgen.runtime.client.auth.oauth\n"
        "assert 'joserfc' not in sys.modules, 'joserfc imported before a JWT is signed'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
