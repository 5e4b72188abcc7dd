"""What a hostile or broken MCP server or authorization server can send the client's OAuth
flows: each is a clear error naming what was wrong, within the settings' bounds (never a
hang), nothing more is asked of the offender, and the client goes on working once the
server behaves (tests/support/oauth_world.py's servers, misbehaving on purpose)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

import pytest

pytest.importorskip("joserfc")

from support.oauth_world import AuthServer, World, connected, world  # noqa: E402

from mcpgen.runtime.client.auth.oauth import AuthSettings, HeadlessAuthorizer, OAuth  # noqa: E402
from mcpgen.runtime.core.errors import McpError  # noqa: E402

T = TypeVar("T")
FAST = AuthSettings(timeout=0.5)


def run(coro: Coroutine[Any, Any, T], timeout: float = 20.0) -> T:
    return asyncio.run(asyncio.wait_for(coro, timeout))


def oauth(place: World, **options: Any) -> OAuth:
    http = place.http()
    return OAuth(authorizer=HeadlessAuthorizer(http=http, timeout=2.0), http=http, **options)


async def refused(place: World, flow: OAuth, match: str, mode: str = "modern") -> str:
    """Connect and list tools; the authorization error it fails with (matching ``match``)."""
    with pytest.raises(McpError) as raised:
        async with connected(place, flow, mode=mode) as client:
            await client.list_tools()
    assert "authorization failed" in raised.value.message, raised.value.message
    assert match in raised.value.message, raised.value.message
    return raised.value.message


def test_metadata_naming_another_issuer_is_not_used() -> None:
    place, server, _ = world(AuthServer(metadata_issuer="https://attacker.test"))
    run(refused(place, oauth(place), "names issuer 'https://attacker.test'"))
    assert [kind for kind, _ in server.log] == ["metadata"]


@pytest.mark.parametrize(
    ("iss", "advertised", "match"),
    [
        ("wrong", True, "comes from issuer 'https://evil.test'"),
        ("wrong", None, "comes from issuer 'https://evil.test'"),
        ("normalized", True, "comes from issuer 'https://as.test/'"),
        ("omit", True, "lacks the iss parameter"),
    ],
)
def test_an_authorization_response_from_the_wrong_issuer_is_refused(
    iss: str, advertised: bool | None, match: str
) -> None:
    place, server, _ = world(AuthServer(iss=iss, iss_supported=advertised))
    flow = oauth(place)
    run(refused(place, flow, match))
    assert len(server.seen("authorize")) == 1 and server.seen("token") == []

    server.iss = "correct"  # the server mends its ways: the same flow gets through

    async def again() -> None:
        async with connected(place, flow) as client:
            await client.list_tools()

    run(again())
    assert len(server.seen("token")) == 1


def test_an_absent_iss_is_fine_when_not_advertised() -> None:
    place, server, _ = world(AuthServer(iss="omit", iss_supported=None))

    async def scenario() -> None:
        async with connected(place, oauth(place)) as client:
            await client.list_tools()

    run(scenario())
    assert len(server.seen("token")) == 1


def test_resource_metadata_for_another_resource_stops_everything() -> None:
    place, server, _ = world(prm_resource="https://evil.test/mcp")
    run(refused(place, oauth(place), "names resource 'https://evil.test/mcp'"))
    assert server.log == []


@pytest.mark.parametrize(
    ("body", "match"),
    [
        (b"<html>not json</html>", "is not a JSON object"),
        (b'{"resource": "https://mcp.test/mcp", "authorization_servers": "x"}', "is invalid"),
        (b'{"authorization_servers": []}', "is invalid"),
        (b"{" * 5000, "is not a JSON object"),
        (b"[1]", "is invalid: Expected `object`, got `array`"),
        (b'{"resource": "https://mcp.test/mcp", "authorization_servers": []}', "lists no"),
        (
            b'{"resource": "https://mcp.test/mcp", "authorization_servers": ["http://as.test"]}',
            "is not https",
        ),
        (
            b'{"resource": "https://mcp.test/mcp", "authorization_servers": ["javascript:x"]}',
            "not an absolute http(s) URL",
        ),
    ],
)
def test_broken_resource_metadata_is_a_clear_error(body: bytes, match: str) -> None:
    place, server, resource = world()
    assert resource.prm_path is not None
    resource.override[resource.prm_path] = (200, body, {"content-type": "application/json"})
    run(refused(place, oauth(place), match))
    assert server.log == []


def test_garbage_authorization_server_metadata_everywhere_is_a_clear_error() -> None:
    place, server, _ = world()
    server.override[server.metadata_path] = (200, b"\xff\xfe garbage", {})
    message = run(refused(place, oauth(place), "no authorization server metadata"))
    assert "is not a JSON object" in message and "openid-configuration: HTTP 404" in message


def test_oversized_answers_are_refused() -> None:
    place, server, resource = world()
    assert resource.prm_path is not None
    resource.override[resource.prm_path] = (200, b" " * 300_000 + b"{}", {})
    run(refused(place, oauth(place), "more than 262144 bytes"))
    small = AuthSettings(max_response_bytes=100)
    place, server, _ = world()
    run(refused(place, oauth(place, settings=small), "more than 100 bytes"))


def test_redirects_stay_within_the_origin() -> None:
    place, server, resource = world()
    assert resource.prm_path is not None
    away = {"location": "https://evil.test/prm"}
    resource.override[resource.prm_path] = (302, b"", away)
    run(refused(place, oauth(place), "redirects to another origin (https://evil.test)"))

    place, server, resource = world()
    assert resource.prm_path is not None
    moved = {"location": "/moved"}
    resource.override["/moved"] = resource.override.pop("/moved", (302, b"", moved))
    resource.override[resource.prm_path] = (301, b"", moved)  # a loop within the origin
    run(refused(place, oauth(place), "more than 3 redirects"))


def test_a_same_origin_redirect_is_followed() -> None:
    place, server, resource = world()
    assert resource.prm_path is not None
    resource.override["/.well-known/oauth-protected-resource/mcp"] = (
        307,
        b"",
        {"location": "/elsewhere/prm.json"},
    )
    resource.prm_path = "/elsewhere/prm.json"
    resource.resource_metadata_in_challenge = False

    async def scenario() -> None:
        async with connected(place, oauth(place)) as client:
            await client.list_tools()

    run(scenario())
    assert len(server.seen("token")) == 1


def test_an_authorization_server_without_pkce_is_refused() -> None:
    place, server, _ = world(AuthServer(pkce=False))
    run(refused(place, oauth(place), "does not advertise PKCE with S256"))
    assert server.seen("authorize") == []


def test_a_silent_authorization_server_costs_the_timeout_and_no_more() -> None:
    place, server, _ = world(AuthServer(delay=30))
    started = time.monotonic()
    run(refused(place, oauth(place, settings=FAST), "did not answer within 0.5 s"))
    assert time.monotonic() - started < 5


def test_a_server_refusing_every_token_is_given_up_on() -> None:
    place, server, _ = world(reject_all=True)
    run(refused(place, oauth(place), "still answers 401 after 2 new token(s)"))
    grants = [entry["grant_type"] for entry in server.seen("token")]
    assert grants == ["authorization_code", "refresh_token", "refresh_token"]
    place, server, _ = world(AuthServer(refresh_tokens=False), reject_all=True)
    run(refused(place, oauth(place), "still answers 401 after 2 new token(s)"))
    assert len(server.seen("authorize")) == 3


def test_endless_insufficient_scope_is_given_up_on_and_the_client_goes_on() -> None:
    place, server, resource = world(needs={"tools/call": {"mcp:admin"}})
    resource.deny_all = False
    flow = oauth(place)

    async def scenario() -> None:
        async with connected(place, flow) as client:
            await client.list_tools()
            resource.deny_all = True
            with pytest.raises(McpError, match="after 2 step-up"):
                await client.call_tool(name="write", arguments={"text": "x"})
            assert len(server.seen("authorize")) == 3
            with pytest.raises(McpError, match="after 2 step-up"):  # no more sign-ins for it
                await client.call_tool(name="write", arguments={"text": "x"})
            assert len(server.seen("authorize")) == 3
            resource.deny_all = False
            resource.needs = {}
            assert (await client.list_tools()).tools  # the client still works

    run(scenario())


@pytest.mark.parametrize(
    ("answer", "match"),
    [
        (b"not json", "is not a JSON object"),
        (b'{"access_token": "x", "token_type": "DPoP"}', "not a bearer token"),
        (b'{"access_token": "a\\r\\nX-Evil: 1", "token_type": "Bearer"}', "cannot go in a header"),
        (b'{"token_type": "Bearer"}', "is invalid"),
        (b'{"access_token": 5, "token_type": "Bearer"}', "is invalid"),
    ],
)
def test_a_broken_token_answer_is_a_clear_error(answer: bytes, match: str) -> None:
    place, server, _ = world()
    server.override["/token"] = (200, answer, {"content-type": "application/json"})
    run(refused(place, oauth(place), match))


def test_token_and_registration_refusals_carry_the_servers_error() -> None:
    place, server, _ = world()
    body = b'{"error": "invalid_client_metadata", "error_description": "no thanks"}'
    server.override["/register"] = (400, body, {})
    run(refused(place, oauth(place), "refused: invalid_client_metadata (no thanks)"))
    place, server, _ = world()
    server.override["/token"] = (500, b"<html>oops</html>", {})
    run(refused(place, oauth(place), "refused: HTTP 500"))


def test_no_way_to_be_a_client_is_a_clear_error() -> None:
    place, server, _ = world(AuthServer(registration=False))
    run(refused(place, oauth(place), "supports neither dynamic client registration"))


def test_an_authorization_endpoint_wanting_a_user_is_named_to_a_headless_client() -> None:
    place, server, _ = world()
    server.override["/authorize"] = (200, b"<form>log in</form>", {})
    run(refused(place, oauth(place), "instead of redirecting back"))


def test_an_authorization_refusal_is_named() -> None:
    place, server, _ = world()

    async def denied(scope: Any, receive: Any, send: Any) -> None:
        from urllib.parse import parse_qsl

        from support.oauth_world import respond

        query = dict(parse_qsl(scope["query_string"].decode()))
        target = f"{query['redirect_uri']}?error=access_denied&state={query['state']}"
        target += "&iss=https%3A%2F%2Fas.test"
        await respond(send, 302, b"", {"location": target})

    real = place.apps["as.test"]

    async def router(scope: Any, receive: Any, send: Any) -> None:
        await (denied if scope["path"] == "/authorize" else real)(scope, receive, send)

    place.apps["as.test"] = router
    run(refused(place, oauth(place), "the authorization server refused: access_denied"))
    assert server.seen("token") == []


def test_ending_a_session_never_starts_a_sign_in() -> None:
    place, server, resource = world()
    flow = oauth(place)

    async def scenario() -> None:
        async with connected(place, flow, mode="legacy") as client:
            await client.list_tools()
            resource.reject_all = True  # the DELETE at close gets 401: nobody signs in

    run(scenario())
    assert len(server.seen("authorize")) == 1


def test_an_endless_challenge_page_is_not_read_to_its_end() -> None:
    place, server, resource = world()
    header = 'Bearer resource_metadata="https://mcp.test/.well-known/oauth-protected-resource/mcp"'
    resource.override["/mcp"] = (401, b"x" * 2_000_000, {"www-authenticate": header})
    run(refused(place, oauth(place), "the server's challenge is over 262144 bytes"))
