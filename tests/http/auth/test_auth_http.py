"""The HTTP app as an OAuth 2.1 resource server, driven in process (``asgi_driver``) with
the test-only authorization server (``auth_server``) behind an ``httpx`` ASGI transport:
no socket, every wait bounded.

Protected resource metadata at the well-known paths; 401 with a ``WWW-Authenticate``
challenge for a missing or bad token (expired, early, another audience or issuer,
another key, ``alg: none``, tampered, HMAC with the public key), 400 for a malformed
header, 403 ``insufficient_scope`` naming the scopes per tool, resource template and
method, in both eras and in batches; 503 while the JWKS or introspection endpoint is
down or answers garbage, or its metadata names another issuer. No refusal is a 500 or
carries any data, the Host/Origin checks still come first, and after each refusal a
good request is served.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from support.asgi_driver import call, initialize, request
from support.bad_tokens import BAD_TOKENS
from mcpgen.runtime.http.auth import JwtVerifier, Principal
from mcpgen.runtime.http.auth.principal import InvalidToken
from mcpgen.runtime.tasks.engine import session_owner

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from peers.auth_app import BASE_SCOPE, ISSUER, RESOURCE, make_app  # noqa: E402
from support.protected_app import (  # noqa: E402
    META,
    MODERN,
    Setup,
    assert_refused,
    challenge,
    run,
)

LEGACY = "2025-11-25"


# -- metadata ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]
)
def test_protected_resource_metadata_at_both_well_known_paths(path: str) -> None:
    setup = Setup()
    reply = run(call(setup.app, "GET", path=path))
    assert reply.status == 200 and reply.headers["content-type"] == "application/json"
    assert reply.json() == {
        "resource": RESOURCE,
        "authorization_servers": [ISSUER],
        "bearer_methods_supported": ["header"],
        "scopes_supported": [BASE_SCOPE],
    }
    assert run(call(setup.app, "POST", path=path)).status == 405
    evil = run(call(setup.app, "GET", path=path, headers={"host": "evil.example"}))
    assert evil.status == 403 and "www-authenticate" not in evil.headers
    assert run(call(setup.app, "GET", path="/.well-known/oauth-protected-resource/x")).status == 404


# -- 401 -----------------------------------------------------------------------------------


def test_no_token_is_a_challenge_without_error_on_every_method() -> None:
    setup = Setup()

    async def scenario() -> None:
        params = assert_refused(await setup.tool("echo", None), 401, None)
        assert params["scope"] == BASE_SCOPE
        for method in ("GET", "DELETE", "PUT"):
            reply = await call(setup.app, method, headers={"accept": "text/event-stream"})
            assert_refused(reply, 401, None)
        basic = await setup.tool("echo", None, authorization="Basic dXNlcjpwYXNz")
        assert_refused(basic, 401, None)
        await setup.good()

    run(scenario())


@pytest.mark.parametrize("case", sorted(BAD_TOKENS))
def test_bad_tokens_are_refused_with_401_invalid_token(case: str) -> None:
    setup = Setup()
    make, said = BAD_TOKENS[case]

    async def scenario() -> None:
        reply = await setup.tool("echo", make(setup.az), {"text": "hi"})
        params = assert_refused(reply, 401, "invalid_token")
        assert said in params["error_description"], params
        await setup.good()

    run(scenario())


def test_an_es256_token_and_leeway_pass() -> None:
    setup = Setup()
    now = int(__import__("time").time())

    async def scenario() -> None:
        es = setup.az.mint(BASE_SCOPE, alg="ES256")
        assert (await setup.tool("echo", es, {"text": "x"})).status == 200
        skewed = setup.az.mint(BASE_SCOPE, nbf=now + 30, exp=now - 30)  # within 60 s leeway
        assert (await setup.tool("echo", skewed, {"text": "x"})).status == 200

    run(scenario())


MALFORMED = [
    "Bearer",
    "Bearer ",
    "Bearer two tokens",
    "Bearer tok\u00e9n",
    "Bearer tok,en",
    'Bearer "quoted"',
]


@pytest.mark.parametrize("header", MALFORMED)
def test_malformed_authorization_headers_are_400_invalid_request(header: str) -> None:
    setup = Setup()

    async def scenario() -> None:
        reply = await setup.tool("echo", None, authorization=header)
        if header.strip() == "Bearer":  # no token at all after the scheme
            assert reply.status in (400, 401)
        else:
            assert_refused(reply, 400, "invalid_request")
        await setup.good()

    run(scenario())


def test_an_oversized_token_is_refused_before_it_is_verified() -> None:
    setup = Setup()

    async def scenario() -> None:
        fetches = setup.az.jwks_fetches
        reply = await setup.tool("echo", "a" * 9000)
        params = assert_refused(reply, 401, "invalid_token")
        assert "longer than 8192" in params["error_description"]
        assert setup.az.jwks_fetches == fetches
        await setup.good()

    run(scenario())


# -- 403 -----------------------------------------------------------------------------------


def test_scopes_per_tool_template_and_method_in_the_modern_era() -> None:
    setup = Setup()

    async def scenario() -> None:
        base = setup.token()
        params = assert_refused(
            await setup.tool("write", base, {"path": "p"}), 403, "insufficient_scope"
        )
        assert params["scope"] == "files:write mcp:access"
        stepped = setup.token("mcp:access files:write")
        reply = await setup.tool("write", stepped, {"path": "p"})
        assert reply.json()["result"]["content"][0]["text"] == "wrote p"
        read = request(2, "resources/read", {"uri": "secret://x", "_meta": META})
        headers = {"mcp-protocol-version": MODERN, "authorization": f"Bearer {base}"}
        headers["mcp-method"] = "resources/read"
        reply = await call(setup.app, body=read, headers={**headers, "mcp-name": "secret://x"})
        params = assert_refused(reply, 403, "insufficient_scope")
        assert params["scope"] == "mcp:access secrets:read"
        public = request(3, "resources/read", {"uri": "notes://public", "_meta": META})
        reply = await call(
            setup.app, body=public, headers={**headers, "mcp-name": "notes://public"}
        )
        assert reply.status == 200 and "public note" in reply.body.decode()
        listing = request(4, "prompts/list", {"_meta": META})
        headers["mcp-method"] = "prompts/list"
        reply = await call(setup.app, body=listing, headers=headers)
        params = assert_refused(reply, 403, "insufficient_scope")
        assert params["scope"] == "mcp:access prompts:read"
        # a token without the base scope: refused before the body is read
        params = assert_refused(
            await setup.tool("echo", setup.token("")), 403, "insufficient_scope"
        )
        assert params["scope"] == BASE_SCOPE
        await setup.good()

    run(scenario())


def test_scopes_and_principal_in_a_legacy_session_and_a_batch() -> None:
    setup = Setup()

    async def scenario() -> None:
        token = setup.token()
        auth = {"authorization": f"Bearer {token}"}
        reply = await call(setup.app, body=initialize(LEGACY), headers=auth)
        assert reply.status == 200
        session = {
            "mcp-session-id": reply.headers["mcp-session-id"],
            "mcp-protocol-version": LEGACY,
        }
        note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
        assert (await call(setup.app, body=note, headers={**session, **auth})).status == 202
        assert_refused(await call(setup.app, body=note, headers=session), 401, None)
        write = request(5, "tools/call", {"name": "write", "arguments": {"path": "p"}})
        params = assert_refused(
            await call(setup.app, body=write, headers={**session, **auth}),
            403,
            "insufficient_scope",
        )
        assert params["scope"] == "files:write mcp:access"
        # a fresher token of the same principal, with the scope: same session
        stepped = {"authorization": f"Bearer {setup.token('mcp:access files:write')}"}
        reply = await call(setup.app, body=write, headers={**session, **stepped})
        assert reply.status == 200 and "wrote p" in reply.body.decode()
        who = request(6, "tools/call", {"name": "whoami", "arguments": {}})
        reply = await call(setup.app, body=who, headers={**session, **auth})
        seen = reply.messages()[0]["result"]["structuredContent"]
        assert seen == {
            "subject": "alice",
            "scopes": [BASE_SCOPE],
            "client_id": "test-client",
            "authorization_header_seen": None,  # the token never reaches a handler
        }
        # someone else's valid token does not open alice's session
        bob = {"authorization": f"Bearer {setup.token(sub='bob')}"}
        assert (await call(setup.app, body=who, headers={**session, **bob})).status == 404
        get = {**session, **bob, "accept": "text/event-stream"}
        assert (await call(setup.app, "GET", headers=get)).status == 404
        assert (await call(setup.app, "DELETE", headers={**session, **bob})).status == 404
        # a batch (2025-03-26) needs the union of its requests' scopes
        reply = await call(setup.app, body=initialize("2025-03-26"), headers=auth)
        old = {"mcp-session-id": reply.headers["mcp-session-id"], **auth}
        batch = b"[" + request(7, "tools/call", {"name": "echo", "arguments": {"text": "a"}})
        batch += b"," + request(8, "resources/read", {"uri": "secret://s"}) + b"]"
        params = assert_refused(
            await call(setup.app, body=batch, headers=old), 403, "insufficient_scope"
        )
        assert params["scope"] == "mcp:access secrets:read"
        assert (await call(setup.app, "DELETE", headers={**session, **auth})).status == 200

    run(scenario())


def test_tasks_belong_to_the_principal() -> None:
    class Http:
        def __init__(self, principal: Any, session: str | None) -> None:
            self.principal = principal
            self.session = session

        def header(self, name: str) -> str | None:
            return self.session if name == "mcp-session-id" else None

    class Scope:
        def __init__(self, http: Any) -> None:
            self.event = type("E", (), {"http": http})()

    alice = Principal("alice", ["a"], client_id="c", issuer=ISSUER)
    assert session_owner(Scope(Http(alice, "s1"))) == session_owner(Scope(Http(alice, "s2")))  # type: ignore[arg-type]
    bob = Principal("bob", client_id="c", issuer=ISSUER)
    assert session_owner(Scope(Http(alice, "s1"))) != session_owner(Scope(Http(bob, "s1")))  # type: ignore[arg-type]
    assert session_owner(Scope(Http(None, "s1"))) == "s1"  # type: ignore[arg-type]
    assert session_owner(Scope(None)) == ""  # type: ignore[arg-type]


# -- the JWKS: rotation, outages, garbage, discovery ---------------------------------------


def test_keys_rotate_and_unknown_kids_refetch_at_most_once_per_interval() -> None:
    setup = Setup(refetch_interval=3600)

    async def scenario() -> None:
        await setup.good()
        assert setup.az.jwks_fetches == 1
        for n in range(10):  # made-up key ids, just after a fetch: none is fetched
            reply = await setup.tool("echo", setup.token(header={"kid": f"nobody-{n}"}))
            assert_refused(reply, 401, "invalid_token")
        assert setup.az.jwks_fetches == 1
        setup.verifier.keys.tried_at -= 3600  # an interval later: one refetch, then none
        for n in range(10):
            reply = await setup.tool("echo", setup.token(header={"kid": f"nobody-{n}"}))
            assert_refused(reply, 401, "invalid_token")
        assert setup.az.jwks_fetches == 2
        for _ in range(5):  # verified once, then from the cache
            await setup.good()
        assert setup.az.jwks_fetches == 2

    run(scenario())
    setup = Setup(refetch_interval=0)

    async def rotation() -> None:
        await setup.good()
        from joserfc.jwk import RSAKey

        new = RSAKey.generate_key(2048, parameters={"kid": "rsa-2", "use": "sig"})
        setup.az.published = [new]  # rotated: the old key is gone
        setup.az.key = new
        await setup.good()  # a token naming rsa-2: the set is fetched again
        assert setup.az.jwks_fetches == 2

    run(rotation())


@pytest.mark.parametrize("mode", ["down", "garbage", "empty"])
def test_a_jwks_that_is_down_or_garbage_is_503_until_it_recovers(mode: str) -> None:
    setup = Setup(refetch_interval=0)

    async def scenario() -> None:
        setup.az.jwks_mode = mode
        reply = await setup.tool("echo", setup.token())
        assert reply.status == 503 and reply.headers["retry-after"] == "5", reply
        assert "www-authenticate" not in reply.headers and "error" in reply.json()
        setup.az.jwks_mode = "ok"
        await setup.good()
        setup.az.jwks_mode = mode  # later outages: the keys held are kept
        setup.verifier.keys.fetched_at = 0.0  # as if the TTL ran out
        await setup.good()

    run(scenario())


def test_the_jwks_found_through_metadata_and_a_metadata_naming_another_issuer() -> None:
    setup = Setup(jwks_uri=None, refetch_interval=0)

    async def scenario() -> None:
        setup.az.metadata_issuer = "http://evil.test"
        reply = await setup.tool("echo", setup.token())
        assert reply.status == 503, reply
        setup.az.metadata_issuer = None
        await setup.good()

    run(scenario())


def test_a_verifier_that_fails_is_401_never_500() -> None:
    setup = Setup()

    async def broken(token: str) -> Principal:
        raise RuntimeError("bug")

    setup.verifier.verify = broken

    async def scenario() -> None:
        reply = await setup.tool("echo", setup.token())
        params = assert_refused(reply, 401, "invalid_token")
        assert (
            "bug" not in reply.body.decode()
            and "could not be verified" in params["error_description"]
        )

    run(scenario())


def test_concurrent_requests_with_one_new_token_verify_it_once() -> None:
    setup = Setup()
    calls = 0
    real = setup.verifier.verify

    async def counting(token: str) -> Principal:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0.01)
        return await real(token)

    setup.verifier.verify = counting

    async def scenario() -> None:
        token = setup.token()
        replies = await asyncio.gather(
            *(setup.tool("echo", token, {"text": "x"}) for _ in range(10))
        )
        assert [r.status for r in replies] == [200] * 10
        bad = setup.az.mint(BASE_SCOPE, exp=1)
        replies = await asyncio.gather(*(setup.tool("echo", bad) for _ in range(5)))
        assert {r.status for r in replies} == {401}

    run(scenario())
    assert calls == 2


# -- introspection -------------------------------------------------------------------------


def test_introspection_accepts_active_tokens_for_this_resource_and_caches() -> None:
    setup = Setup("introspection")

    async def scenario() -> None:
        opaque = setup.az.opaque_token(BASE_SCOPE)
        for _ in range(3):
            assert (await setup.tool("echo", opaque, {"text": "x"})).status == 200
        assert setup.az.introspections == 1
        jwt_token = setup.token()  # the server introspects its JWTs too
        assert (await setup.tool("echo", jwt_token, {"text": "x"})).status == 200
        for token, said in [
            ("unknown-token", "not active"),
            (setup.az.opaque_token(BASE_SCOPE, aud="https://other.example"), "another audience"),
            (setup.az.opaque_token(BASE_SCOPE, aud=None), "names no audience"),
            (setup.az.opaque_token(BASE_SCOPE, iss="http://evil.test"), "another issuer"),
            (setup.az.opaque_token(BASE_SCOPE, nbf=4_000_000_000), "not valid yet"),
        ]:
            params = assert_refused(await setup.tool("echo", token), 401, "invalid_token")
            assert said in params["error_description"], (token, params)
        lacking = setup.az.opaque_token("")
        assert_refused(await setup.tool("echo", lacking), 403, "insufficient_scope")

    run(scenario())


@pytest.mark.parametrize("mode", ["down", "garbage", "empty"])
def test_introspection_down_or_garbage_is_503_then_recovers(mode: str) -> None:
    setup = Setup("introspection")

    async def scenario() -> None:
        setup.az.introspection_mode = mode
        opaque = setup.az.opaque_token(BASE_SCOPE)
        assert (await setup.tool("echo", opaque)).status == 503
        setup.az.introspection_mode = "ok"
        assert (await setup.tool("echo", opaque, {"text": "x"})).status == 200

    run(scenario())


# -- what holds whatever the token ---------------------------------------------------------


def test_dns_rebinding_checks_come_before_authentication() -> None:
    setup = Setup()

    async def scenario() -> None:
        token = setup.token()
        for headers in ({"host": "evil.example"}, {"origin": "http://evil.example"}):
            reply = await setup.tool("echo", token, {"text": "x"}, **headers)
            assert reply.status == 403 and "www-authenticate" not in reply.headers
            assert "not allowed" in reply.json()["error"]["message"]
        await setup.good()

    run(scenario())


def test_stdio_and_in_memory_clients_are_not_asked_for_tokens() -> None:
    setup = Setup()
    app = make_app(setup.verifier)

    async def scenario() -> None:
        for mode in ("legacy", "auto"):
            async with app.test_client(mode=mode) as client:
                result = await client.call_tool(name="echo", arguments={"text": "x"})
                assert result.content[0].text == "echo: x"

    run(scenario())


def test_construction_refuses_unsafe_settings() -> None:
    for algorithms in (["none"], ["HS256"], []):
        with pytest.raises(ValueError):
            JwtVerifier(issuer=ISSUER, audience=RESOURCE, algorithms=algorithms)
    with pytest.raises(ValueError):
        JwtVerifier(issuer=ISSUER, audience="not a uri")
    with pytest.raises(ValueError):
        JwtVerifier(issuer=ISSUER, audience="https://x.example/mcp#frag")
    with pytest.raises(ValueError):
        make_app(None, resource="https://x.example/mcp", issuer="nope")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        make_app(None, max_token_bytes=0)  # type: ignore[arg-type]
    assert InvalidToken("x").args == ("x",)


def test_the_documented_example_is_a_protected_server() -> None:
    """docs/authorization.md's server example, as pasted: 401 with the challenge, the metadata,
    and, with the verdict of a token in the cache, the principal in a handler and the
    per-tool scope."""
    text = (ROOT / "docs" / "authorization.md").read_text()
    section = text[text.index("## The server") : text.index("## The client")]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    namespace: dict[str, Any] = {"__name__": "readme_authorization"}
    exec(compile(code, "docs/authorization.md", "exec"), namespace)
    served = namespace["app"].http_app()
    resource = namespace["RESOURCE"]

    async def scenario() -> None:
        body = request(1, "tools/call", {"name": "whoami", "arguments": {}, "_meta": META})
        headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "whoami"}
        reply = await call(served, body=body, headers=headers)
        assert reply.status == 401
        assert challenge(reply) == {
            "resource_metadata": "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
            "scope": "mcp:access",
        }
        metadata = await call(served, "GET", path="/.well-known/oauth-protected-resource/mcp")
        assert metadata.json()["resource"] == resource
        assert metadata.json()["scopes_supported"] == ["mcp:access"]
        # a token verified before (its verdict cached; the issuer is not reachable here)
        auth = served.auth
        auth.cache.put(auth.cache.digest(b"known"), Principal("ann", ["mcp:access"]), 60)
        reply = await call(served, body=body, headers={**headers, "authorization": "Bearer known"})
        assert reply.json()["result"]["content"][0]["text"] == "ann"
        headers["mcp-name"] = "write"
        write = request(
            2,
            "tools/call",
            {"name": "write", "arguments": {"path": "p", "text": "t"}, "_meta": META},
        )
        reply = await call(served, body=write, headers={**headers, "authorization": "Bearer known"})
        assert reply.status == 403 and challenge(reply)["scope"] == "files:write mcp:access"

    run(scenario())


def test_the_runtime_imports_no_auth_library_until_a_verifier_is_made() -> None:
    """The core stays msgspec-only: serving (protected or not) imports neither joserfc
    nor httpx; a verifier does."""
    code = (
        "import sys, mcpgen.runtime.http.endpoint, mcpgen.runtime.http.auth as r\n"
        "r.ResourceServer; r.ScopePolicy; r.principal_of; r.Principal\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'joserfc', 'httpx'}))\n"
        "r.JwtVerifier\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'joserfc', 'httpx'}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split("\n")[:2] == ["[]", "['httpx', 'joserfc']"], done.stderr
