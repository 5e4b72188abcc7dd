"""HTTP mutations of the fuzz suite (``tests/support/fuzzing.py``): headers, request methods, paths.

Each header the runtime reads (``Content-Type``, ``Accept``, ``Host``, ``Origin``,
``MCP-Protocol-Version``, ``Mcp-Session-Id``, ``Mcp-Method``, ``Mcp-Name`` with its
``=?base64?...?=`` form, ``Mcp-Param-*``, ``Last-Event-ID``) is dropped, doubled or set to a
hostile value; or the request goes with another method, to another path, with a query.
"""

from __future__ import annotations

import random

from support.fuzz_mutators import METHODS, VERSIONS

Headers = list[tuple[bytes, bytes]]

HEADER_VALUES: dict[bytes, tuple[bytes, ...]] = {
    b"content-type": (
        b"text/plain", b"application/json; charset=utf-8", b"application/json;charset=latin-1",
        b"APPLICATION/JSON", b"application/jsonx", b"application/json-seq", b"", b"\xff",
        b"application/x-www-form-urlencoded", b"multipart/form-data; boundary=x", b"*/*",
    ),
    b"accept": (
        b"application/json", b"text/event-stream", b"*/*", b"application/*", b"",
        b"text/event-stream, application/json;q=0", b"APPLICATION/JSON, TEXT/EVENT-STREAM",
        b"application/json,text/event-stream", b"\xff\xfe", b"text/html",
    ),
    b"host": (
        b"evil.com", b"127.0.0.1:3001", b"localhost", b"[::1]:3001", b"[::1].evil.com",
        b"[::1]evil", b"localhost:evil", b"127.0.0.1.nip.io", b"", b"\xff", b"LOCALHOST:1",
        b"user@localhost", b"localhost.", b"127.0.0.1:99999", b"[::1", b"h" * 5000, b"0x7f.1",
    ),
    b"origin": (
        b"http://evil.com", b"null", b"http://localhost:3001", b"http://127.0.0.1",
        b"http://localhost.evil.com", b"file://", b"", b"\xc3", b"http://[::1]:3001",
        b"http://[::1].evil.com", b"https://localhost@evil.com", b"localhost",
    ),
    b"mcp-protocol-version": tuple(v.encode() for v in VERSIONS) + (b"\xff",),
    b"mcp-session-id": (b"", b"nope", b"\xff", b" ", b"s" * 5000, b"a b", b"../../etc"),
    b"mcp-method": tuple(m.encode() for m in METHODS[:20]) + (b"", b"\xc3", b"TOOLS/CALL"),
    b"mcp-name": (
        b"test_simple_text", b"nope", b"", b"=?base64?dGVzdF9zaW1wbGVfdGV4dA==?=",
        b"=?base64?!!!?=", b"=?base64??=", b"=?base64?w6k=?=", b"=?base64?/w==?=",
        b"=?BASE64?dGVzdF9zaW1wbGVfdGV4dA==?=", b"=?base64?dGVzdA", b"test://static-text",
        b"=?base64?" + b"QUFB" * 2000 + b"?=", b"\xc3\xa9", b"\xff",
    ),
    b"mcp-param-region": (b"eu-west1", b"us", b"", b"=?base64?ZXUtd2VzdDE=?=", b"\xff", b"=?base64?"),
    b"mcp-param-priority": (b"1", b"abc", b"1e400", b"-0", b"99999999999999999999", b""),
    b"mcp-param-verbose": (b"true", b"maybe", b"TRUE", b"1", b""),
    b"mcp-param-unknown": (b"x", b""),
    b"last-event-id": (b"x", b"x.1", b"0", b"", b"\xff", b"s" * 3000, b"r.99999999999999999999"),
}  # fmt: skip
HTTP_METHODS = ("GET", "DELETE", "PUT", "PATCH", "OPTIONS", "HEAD", "FOO", "post", "TRACE")
PATHS = ("/mcp/", "/", "/mcp/x", "/MCP", "//mcp", "/mcp\u0000", "/mcp/../mcp", "/" + "m" * 5000)


class HttpCase:
    """The mutable HTTP side of a case while it is being mutated."""

    def __init__(self, headers: Headers) -> None:
        self.method = "POST"
        self.path = "/mcp"
        self.query = b""
        self.headers = headers


def mutate_http(rng: random.Random, http: HttpCase) -> str:
    """One header, method or path mutation of ``http``; returns what it did."""
    roll = rng.random()
    if roll < 0.12:
        http.method = rng.choice(HTTP_METHODS)
        if http.method == "GET" and rng.random() < 0.5:
            http.headers = [(k, v) for k, v in http.headers if k != b"accept"]
            http.headers.append((b"accept", b"text/event-stream"))
        return f"method {http.method}"
    if roll < 0.18:
        if rng.random() < 0.3:
            http.query = rng.choice([b"x=1", b"sessionId=abc", b"\xff", b"a" * 3000])
            return f"query {http.query[:20]!r}"
        http.path = rng.choice(PATHS)
        return f"path {http.path[:20]!r}"
    name = rng.choice(list(HEADER_VALUES))
    action = rng.random()
    if action < 0.25:
        http.headers = [(k, v) for k, v in http.headers if k != name]
        return f"drop {name.decode()}"
    value = rng.choice(HEADER_VALUES[name])
    if action < 0.35:
        http.headers.append((name, value))
        return f"add another {name.decode()}: {value[:40]!r}"
    http.headers = [(k, v) for k, v in http.headers if k != name] + [(name, value)]
    return f"{name.decode()}: {value[:40]!r}"
