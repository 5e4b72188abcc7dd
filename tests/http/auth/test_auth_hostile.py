"""The resource server against a hostile or broken authorization server, and hostile
tokens: what it answers and what it logs.

Whatever the authorization server sends as its JWKS, its metadata or an introspection
answer (invalid UTF-8, JSON nested 100,000 deep, an array, members of the wrong type),
a request whose token cannot be checked gets 503 with ``Retry-After``: never a 401 (the
token may be good), never a 500. A token naming a key id the server does not hold while
the JWKS cannot be fetched is 503 too; with the JWKS up it is 401. A server that trickles
its answer is cut off at the verifier's ``timeout`` (the whole exchange, over real
sockets on 127.0.0.1). Malformed tokens (a header nested 2,500 deep, bad base64, invalid
UTF-8, a huge header) are 401 ``invalid_token`` and log nothing; an outage or a failing
verifier is logged once per cause, not once per request. After each, a good request is
served.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any
from urllib.parse import parse_qsl

import pytest

from support.asgi_driver import Reply, call, request
from support.auth_server import AuthServer, b64url
from support.checkout import REPORT
from mcpgen.runtime.http.auth import IntrospectionVerifier, JwtVerifier, Principal
from mcpgen.runtime.core.log_limit import MAX_CAUSES, OTHER, RateLimitedLog
from peers.auth_app import BASE_SCOPE, ISSUER, RESOURCE, make_app
from support.protected_app import META, MODERN, Setup, assert_refused, run

# -- what a broken authorization server sends ----------------------------------------------

#: Bodies no JWKS, metadata document or introspection answer can be read from.
UNREADABLE = {
    "invalid-utf8": b'{"keys": [{"kty": "RSA", "kid": "\xff\xfe"}], "active": "\xc3("}',
    "arrays-100k-deep": b'{"keys": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    "objects-40k-deep": b'{"a":' * 40_000 + b"1" + b"}" * 40_000,
    "an-array": b'[{"kty": "RSA", "kid": "rsa-1"}]',
    "a-string": b'"keys"',
    "null": b"null",
    "empty": b"",
    "truncated": b'{"keys": [{"kty": "RSA"',
}
#: Key sets of the wrong shape.
BAD_KEY_SETS = {
    "keys-a-string": b'{"keys": "rsa-1"}',
    "keys-an-object": b'{"keys": {"kty": "RSA", "kid": "rsa-1"}}',
    "keys-not-objects": b'{"keys": [1, null, "rsa-1", [], true]}',
    "members-of-wrong-types": b'{"keys": [{"kty": 5, "kid": 7, "n": [], "e": {}}]}',
    "rsa-members-wrong": b'{"keys": [{"kty": "RSA", "kid": "rsa-1", "n": 12, "e": true}]}',
}
#: Metadata of the wrong shape (for a JWT verifier and an introspection verifier).
BAD_METADATA = {
    "issuer-a-list": json.dumps({"issuer": [ISSUER], "jwks_uri": f"{ISSUER}/jwks"}).encode(),
    "endpoints-wrong-types": json.dumps(
        {"issuer": ISSUER, "jwks_uri": 5, "introspection_endpoint": {"a": 1}}
    ).encode(),
    "endpoints-bad-urls": json.dumps(
        {
            "issuer": ISSUER,
            "jwks_uri": "http://[::1/jwks",
            "introspection_endpoint": "http://[::1/introspect",
        }
    ).encode(),
}


#: Active introspection answers of the wrong shape: a member read has the wrong type.
BAD_ANSWERS: dict[str, dict[str, Any]] = {
    "active-a-string": {"active": "true"},
    "exp-a-string": {"exp": "tomorrow"},
    "exp-a-boolean": {"exp": True},
    "aud-a-number": {"aud": 5},
    "aud-a-list-of-objects": {"aud": [{"uri": RESOURCE}]},
    "iss-a-list": {"iss": [ISSUER]},
    "sub-an-object": {"sub": {"name": "alice"}},
    "client-id-a-number": {"client_id": 12},
}


def assert_unavailable(reply: Reply) -> None:
    """503 with ``Retry-After`` and a JSON-RPC error: the token could not be checked."""
    assert reply.status == 503, reply
    assert reply.headers["retry-after"] == "5", reply
    assert "www-authenticate" not in reply.headers
    body = reply.json()
    assert set(body) == {"jsonrpc", "id", "error"}, body


@pytest.mark.parametrize("case", sorted({**UNREADABLE, **BAD_KEY_SETS}))
def test_a_jwks_that_cannot_be_read_is_503_never_401_then_recovers(case: str) -> None:
    """Whatever the JWKS body, a good token gets 503 + Retry-After while it is so, and
    200 once the JWKS serves its keys again."""
    setup = Setup(refetch_interval=0)

    async def scenario() -> None:
        setup.az.forced["/jwks"] = {**UNREADABLE, **BAD_KEY_SETS}[case]
        assert_unavailable(await setup.tool("echo", setup.token()))
        del setup.az.forced["/jwks"]
        await setup.good()

    run(scenario())


@pytest.mark.parametrize("case", sorted({**UNREADABLE, **BAD_METADATA}))
@pytest.mark.parametrize("verifier", ["jwt", "introspection"])
def test_metadata_that_cannot_be_read_is_503_never_401_then_recovers(
    verifier: str, case: str
) -> None:
    """The authorization server's metadata (where the JWKS or the introspection endpoint
    is found), unreadable or of the wrong shape: 503 + Retry-After, then 200."""
    setup = Setup(
        verifier, **({"jwks_uri": None, "refetch_interval": 0} if verifier == "jwt" else {})
    )
    path = "/.well-known/oauth-authorization-server"

    async def scenario() -> None:
        setup.az.forced[path] = {**UNREADABLE, **BAD_METADATA}[case]
        token = setup.token() if verifier == "jwt" else setup.az.opaque_token(BASE_SCOPE)
        assert_unavailable(await setup.tool("echo", token))
        del setup.az.forced[path]
        reply = await setup.tool("echo", token, {"text": "hi"})
        assert reply.status == 200, reply

    run(scenario())


@pytest.mark.parametrize("case", sorted(UNREADABLE) + sorted(BAD_ANSWERS))
def test_an_introspection_answer_that_cannot_be_read_is_503_then_recovers(case: str) -> None:
    """An introspection answer unreadable, or active with a member of the wrong type (an
    ``exp`` that is no number must not make a token last forever; a ``sub`` that is no
    string must not pass as nobody): 503 + Retry-After, then 200."""
    setup = Setup("introspection")

    async def scenario() -> None:
        if case in UNREADABLE:
            setup.az.forced["/introspect"] = UNREADABLE[case]
        else:
            answer = {**setup.az.claims(BASE_SCOPE), "active": True, **BAD_ANSWERS[case]}
            setup.az.forced["/introspect"] = json.dumps(answer).encode()
        token = setup.az.opaque_token(BASE_SCOPE)
        assert_unavailable(await setup.tool("echo", token))
        del setup.az.forced["/introspect"]
        reply = await setup.tool("echo", token, {"text": "hi"})
        assert reply.status == 200, reply

    run(scenario())


# -- key ids -------------------------------------------------------------------------------


@pytest.mark.parametrize("refetch_interval", [0, 3600])
def test_an_unknown_kid_is_503_while_the_jwks_is_down_and_401_once_it_is_up(
    refetch_interval: float,
) -> None:
    """A token naming a key id not among the keys held may be signed with a rotated key:
    while the JWKS cannot be fetched, that is 503 (retry later), not a refusal; the keys
    held still serve the tokens they verify. Once a fetch succeeds and the key id is
    still unknown, 401 as before."""
    setup = Setup(refetch_interval=refetch_interval)
    keys = setup.verifier.keys

    async def scenario() -> None:
        await setup.good()
        setup.az.jwks_mode = "down"
        keys.tried_at = None  # a fetch is allowed now, whatever the interval
        for n in range(3):
            reply = await setup.tool("echo", setup.token(header={"kid": f"rotated-{n}"}))
            assert_unavailable(reply)
        await setup.good()  # a key held: still verified
        setup.az.jwks_mode = "ok"
        keys.tried_at = None
        reply = await setup.tool("echo", setup.token(header={"kid": "rotated-0"}))
        assert_refused(reply, 401, "invalid_token")
        assert keys.failure is None
        await setup.good()

    run(scenario())


def test_a_request_that_leaves_does_not_take_the_shared_jwks_fetch_with_it() -> None:
    """The first request starts the JWKS fetch and is cancelled (its client left) while
    the fetch waits on the authorization server: the fetch goes on, and the next request
    is served with its keys instead of 503 for a whole refetch interval."""
    setup = Setup()

    async def scenario() -> None:
        setup.az.jwks_gate, setup.az.jwks_asked = asyncio.Event(), asyncio.Event()
        first = asyncio.ensure_future(setup.tool("echo", setup.token()))
        await setup.az.jwks_asked.wait()
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        setup.az.jwks_gate.set()
        await setup.good()
        assert setup.az.jwks_fetches == 1

    run(scenario())


# -- malformed tokens ----------------------------------------------------------------------

_SIGNATURE = b64url(b"s" * 256)


def _token(header: bytes, az: AuthServer) -> str:
    return f"{b64url(header)}.{b64url(json.dumps(az.claims(BASE_SCOPE)).encode())}.{_SIGNATURE}"


def malformed_tokens(az: AuthServer) -> dict[str, str]:
    deep = b'{"alg": "RS256", "kid": "rsa-1", "x": ' + b"[" * 2500 + b"]" * 2500 + b"}"
    tokens = {
        "header-nested-2500-deep": _token(deep, az),
        "header-objects-800-deep": _token(b'{"a":' * 800 + b"1" + b"}" * 800, az),
        "bad-base64": "abcde." + _token(b"{}", az).split(".", 1)[1],
        "header-invalid-utf8": _token(b'{"alg": "RS256", "kid": "\xff\xfe"}', az),
        "header-not-json": _token(b"not json at all", az),
        "header-an-array": _token(b'["RS256"]', az),
        "huge-header": _token(
            json.dumps({"alg": "RS256", "kid": "rsa-1", "x": "a" * 5000}).encode(), az
        ),
        "header-350-members": _token(
            json.dumps({"alg": "RS256", **{f"m{n}": n for n in range(350)}}).encode(), az
        ),
    }
    assert len(tokens["header-nested-2500-deep"]) > 7000
    assert all(len(token) <= 8192 for token in tokens.values())  # under max_token_bytes
    return tokens


def auth_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("mcpgen")]


def test_malformed_tokens_are_401_and_200_of_them_log_no_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Tokens whose header is nested 2,500 deep (7 KB), not base64url, not UTF-8, not
    JSON, not an object, or huge: 401 ``invalid_token`` each; 200 requests with them log
    no traceback and at most two lines in all (a refused token is the client's business,
    told in its challenge)."""
    setup = Setup()
    tokens = malformed_tokens(setup.az)
    names = sorted(tokens)

    async def scenario() -> None:
        for n in range(200):
            reply = await setup.tool("echo", tokens[names[n % len(names)]])
            params = assert_refused(reply, 401, "invalid_token")
            assert "could not be verified" not in params["error_description"], params
        await setup.good()

    with caplog.at_level(logging.DEBUG, logger="mcpgen"):
        run(scenario())
    records = auth_records(caplog)
    assert len(records) <= 2, [r.getMessage() for r in records]
    assert not any(r.exc_info for r in records)
    REPORT["200 malformed tokens"] = f"{len(records)} log records, 0 tracebacks"


def test_what_a_malformed_header_is_refused_for_is_told_in_the_challenge() -> None:
    """The ``error_description`` names what is wrong with the header, never a decoder's
    internals."""
    setup = Setup()
    tokens = malformed_tokens(setup.az)
    said = {
        "header-nested-2500-deep": "nested deeper than 32 levels",
        "bad-base64": "not base64url",
        "header-invalid-utf8": "not UTF-8",
        "header-not-json": "not JSON",
        "header-an-array": "not a JSON object",
        "huge-header": "does not verify",
    }

    async def scenario() -> None:
        for name, words in said.items():
            params = assert_refused(await setup.tool("echo", tokens[name]), 401, "invalid_token")
            assert words in params["error_description"], (name, params)
        await setup.good()

    run(scenario())


# -- what an outage logs -------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["down", "garbage"])
def test_fifty_requests_during_a_jwks_outage_log_it_once(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    """With no keys held and the JWKS failing, every request gets 503 (each fetching
    again: ``refetch_interval=0``), and the outage is one log line, no traceback."""
    setup = Setup(refetch_interval=0)

    async def scenario() -> None:
        setup.az.jwks_mode = mode
        for _ in range(50):
            assert_unavailable(await setup.tool("echo", setup.token()))
        assert setup.az.jwks_fetches == 50
        setup.az.jwks_mode = "ok"
        await setup.good()

    with caplog.at_level(logging.DEBUG, logger="mcpgen"):
        run(scenario())
    records = auth_records(caplog)
    assert len(records) == 1, [r.getMessage() for r in records]
    assert "cannot verify a token now" in records[0].getMessage()
    assert not records[0].exc_info
    REPORT[f"50 requests, JWKS {mode}"] = f"{len(records)} log record"


def test_a_failing_refresh_while_keys_are_held_is_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The keys held outlive their TTL while the JWKS is down: 50 new tokens are served
    with them (each request trying a fetch), and the failing fetch is one line."""
    setup = Setup(refetch_interval=0)

    async def scenario() -> None:
        await setup.good()
        setup.az.jwks_mode = "down"
        setup.verifier.keys.fetched_at = 0.0  # as if the TTL ran out
        for _ in range(50):
            await setup.good()
        assert setup.az.jwks_fetches == 51

    with caplog.at_level(logging.DEBUG, logger="mcpgen"):
        run(scenario())
    records = auth_records(caplog)
    assert len(records) == 1, [r.getMessage() for r in records]
    assert "keeping the keys held" in records[0].getMessage()


def test_fifty_requests_during_an_introspection_outage_log_it_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Introspection down: 50 requests (each asking it) get 503 and log one line."""
    setup = Setup("introspection")

    async def scenario() -> None:
        setup.az.introspection_mode = "down"
        for _ in range(50):
            assert_unavailable(await setup.tool("echo", setup.az.opaque_token(BASE_SCOPE)))
        assert setup.az.introspections == 50
        setup.az.introspection_mode = "ok"
        assert (await setup.tool("echo", setup.az.opaque_token(BASE_SCOPE))).status == 200

    with caplog.at_level(logging.DEBUG, logger="mcpgen"):
        run(scenario())
    assert len(auth_records(caplog)) == 1, [r.getMessage() for r in auth_records(caplog)]


def test_a_failing_verifier_logs_one_traceback_not_one_per_request(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A verifier with a bug: each request is 401 (never a 500, never access), and 50
    of them log its traceback once."""
    setup = Setup()
    real = setup.verifier.verify

    async def broken(token: str) -> Principal:
        raise RuntimeError("bug")

    async def scenario() -> None:
        setup.verifier.verify = broken
        for _ in range(50):
            assert_refused(await setup.tool("echo", setup.token()), 401, "invalid_token")
        setup.verifier.verify = real
        await setup.good()

    with caplog.at_level(logging.DEBUG, logger="mcpgen"):
        run(scenario())
    records = auth_records(caplog)
    assert len(records) == 1, [r.getMessage() for r in records]
    assert records[0].exc_info is not None and "RuntimeError" in records[0].getMessage()


def test_the_rate_limited_log_says_each_cause_once_per_interval_and_counts_the_rest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """One line per cause per interval; the next one, an interval later, counts the
    repeats left out; causes beyond ``MAX_CAUSES`` at once share one line."""
    now = [0.0]
    limited = RateLimitedLog(logging.getLogger("mcpgen.test"), 60.0, clock=lambda: now[0])
    with caplog.at_level(logging.DEBUG, logger="mcpgen"):
        assert [limited.warning("a", "cause %s", "a") for _ in range(5)] == [True] + [False] * 4
        assert limited.warning("b", "cause b")
        now[0] = 59.0
        assert not limited.warning("a", "cause a")
        now[0] = 60.0
        assert limited.warning("a", "cause %s", "a")
        lines = [r.getMessage() for r in caplog.records]
        assert lines == [
            "cause a",
            "cause b",
            "cause a (and 5 times more since the last line about it)",
        ]
    crowded = RateLimitedLog(logging.getLogger("mcpgen.test"), 60.0, clock=lambda: now[0])
    with caplog.at_level(logging.DEBUG, logger="mcpgen"):
        caplog.clear()
        logged = [crowded.warning(f"c{n}", f"cause c{n}") for n in range(MAX_CAUSES * 2)]
        assert sum(logged) == MAX_CAUSES + 1  # each of the first, then one for the rest
        assert [r.getMessage() for r in caplog.records[-2:]] == [
            f"cause c{MAX_CAUSES - 1}",
            f"cause c{MAX_CAUSES}",
        ]
        assert crowded.seen[OTHER][1] == MAX_CAUSES - 1  # the rest, counted
        now[0] += 60.0  # an interval on: the old causes are forgotten, new ones logged
        assert crowded.warning("new", "cause new")
        assert OTHER not in crowded.seen
    with pytest.raises(ValueError):
        RateLimitedLog(logging.getLogger("mcpgen.test"), 0)


def test_new_settings_are_checked_at_construction() -> None:
    """``max_depth`` and ``log_interval`` must be positive."""
    with pytest.raises(ValueError):
        JwtVerifier(issuer=ISSUER, audience=RESOURCE, max_depth=0)
    with pytest.raises(ValueError):
        JwtVerifier(issuer=ISSUER, audience=RESOURCE, log_interval=0)
    with pytest.raises(ValueError):
        IntrospectionVerifier(audience=RESOURCE, endpoint=f"{ISSUER}/i", max_depth=-1)
    verifier = JwtVerifier(issuer=ISSUER, audience=RESOURCE)
    with pytest.raises(ValueError):
        make_app(verifier, log_interval=0)


# -- a trickling authorization server, over real sockets -----------------------------------


class Trickler:
    """An authorization server on 127.0.0.1 serving ``az``'s metadata, JWKS and
    introspection answers, except on the paths in ``trickle``: ``"headers"`` sends the
    status line then a header a byte every ``every`` seconds, ``"body"`` the headers
    then a body a byte at a time, never finishing. Its handlers end when it closes."""

    def __init__(self, every: float = 0.2) -> None:
        self.every = every
        self.trickle: dict[str, str] = {}
        self.connections = 0
        #: Trickling connections the verifier hung up on, and an event per new one.
        self.hung_up = 0
        self.hang_up = asyncio.Event()
        self.handlers: set[asyncio.Task[Any]] = set()
        self.az: AuthServer | None = None

    async def __aenter__(self) -> Trickler:
        self.server = await asyncio.start_server(self.serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()
        for task in self.handlers:
            task.cancel()
        await asyncio.gather(*self.handlers, return_exceptions=True)
        await self.server.wait_closed()

    async def hung_up_on(self, count: int) -> None:
        """Until the verifier has hung up on ``count`` trickling connections."""
        while self.hung_up < count:
            self.hang_up.clear()
            await self.hang_up.wait()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None and self.az is not None
        self.handlers.add(task)
        self.connections += 1
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").lower()
            path = head.split(" ")[1]
            length = 0
            for line in head.split("\r\n"):
                if line.startswith("content-length:"):
                    length = int(line.split(":")[1])
            form = dict(parse_qsl((await reader.readexactly(length)).decode()))
            how = self.trickle.get(path)
            if how is not None:
                start, drop = {
                    "headers": (b"HTTP/1.1 200 OK\r\nx-slow: ", b"a"),
                    "body": (b"HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\n{", b" "),
                }[how]
                writer.write(start)
                while not reader.at_eof():  # until the verifier hangs up
                    writer.write(drop)
                    await writer.drain()
                    await asyncio.sleep(self.every)  # the trickle's pace
                self.hung_up += 1
                self.hang_up.set()
                return
            document = {
                "/.well-known/oauth-authorization-server": self.az.metadata(),
                "/jwks": self.az.jwks(),
                "/introspect": self.az.introspect(form),
            }.get(path)
            body = json.dumps(document).encode()
            status = b"200 OK" if document is not None else b"404 Not Found"
            writer.write(
                b"HTTP/1.1 " + status + b"\r\ncontent-type: application/json\r\n"
                b"connection: close\r\ncontent-length: %d\r\n\r\n" % len(body) + body
            )
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            self.hung_up += 1  # the verifier hung up: what it does at its deadline
            self.hang_up.set()
        except asyncio.CancelledError:
            pass  # closing: the handler ends quietly (asyncio logs a cancelled one)
        finally:
            writer.close()
            self.handlers.discard(task)


async def _tool(app: Any, token: str) -> Reply:
    body = request(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}, "_meta": META})
    headers = {
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/call",
        "mcp-name": "echo",
        "authorization": f"Bearer {token}",
    }
    return await call(app, body=body, headers=headers, timeout=15)


TIMEOUT = 1.0
#: What a loaded machine may add to the timeout before the 503 is out.
SLACK = 3.0


@pytest.mark.slow
@pytest.mark.parametrize(
    "verifier, where",
    [("jwks", "headers"), ("jwks", "body"), ("metadata", "headers"), ("introspection", "body")],
)
def test_a_trickling_authorization_server_is_cut_off_at_the_timeout_then_recovers(
    verifier: str, where: str
) -> None:
    """The JWKS, the metadata or the introspection endpoint trickles its headers or its
    body a byte every 0.2 s (each read well within the 1 s timeout): three concurrent
    requests get 503 + Retry-After within the timeout (plus slack for a loaded machine),
    not when the trickle ends, and the verifier hangs up on the trickling connections;
    once the server answers normally, a good token gets 200."""

    async def scenario() -> None:
        async with Trickler() as server:
            az = server.az = AuthServer(server.url, RESOURCE)
            path = {"jwks": "/jwks", "metadata": "/.well-known/oauth-authorization-server"}
            server.trickle = {path.get(verifier, "/introspect"): where}
            if verifier == "introspection":
                checker: Any = IntrospectionVerifier(
                    audience=RESOURCE, endpoint=f"{server.url}/introspect", timeout=TIMEOUT
                )
                tokens = [az.opaque_token(BASE_SCOPE) for _ in range(4)]
            else:
                jwks_uri = f"{server.url}/jwks" if verifier == "jwks" else None
                checker = JwtVerifier(
                    issuer=server.url,
                    audience=RESOURCE,
                    jwks_uri=jwks_uri,
                    timeout=TIMEOUT,
                    refetch_interval=0,
                )
                tokens = [az.mint(BASE_SCOPE) for _ in range(4)]
            app = make_app(checker, issuer=server.url).http_app()
            try:
                started = time.monotonic()
                replies = await asyncio.gather(*(_tool(app, token) for token in tokens[:3]))
                waited = time.monotonic() - started
                for reply in replies:
                    assert_unavailable(reply)
                assert waited < TIMEOUT + SLACK, waited
                REPORT[f"trickling {verifier} {where}"] = f"503 after {waited:.2f} s (timeout 1 s)"
                trickled = server.connections
                if verifier == "jwks":  # one fetch shared by the three
                    assert trickled == 1
                await asyncio.wait_for(server.hung_up_on(trickled), 5)  # no socket left open
                server.trickle = {}
                reply = await _tool(app, tokens[3])
                assert reply.status == 200, reply
                assert reply.json()["result"]["content"][0]["text"] == "echo: hi"
            finally:
                await checker.aclose()

    run(scenario())
