"""The headers-first lane of stateless HTTP requests (``runtime/http/stateless.py``) against the
general path (``Connection.receive_parsed``), sans-IO.

The property: the lane accepts exactly the single requests the general path accepts for
the server's own version (except those carrying round-trip state, which it leaves to the
general path on purpose), and makes the very same request of each: id, row, typed params,
``_meta``, peer, input bookkeeping. Everything else it declines, so the general path words
the refusal. The requests are mutations of valid ones for the everything server, plus
arbitrary bodies.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from msgspec import UNSET
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpgen.generated._support import undeclared
from mcpgen.runtime.core import jsonrpc
from mcpgen.runtime.core.events import IncomingRequest
from mcpgen.runtime.http.endpoint import McpHttpApp
from mcpgen.runtime.http.post_headers import mcp_headers

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # examples/ is not an installed package
    sys.path.append(str(ROOT))

from examples.everything.__main__ import build_server  # noqa: E402

MODERN = "2026-07-28"
V = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"
LEVEL = "io.modelcontextprotocol/logLevel"

#: Valid requests for the everything server: (method, params without ``_meta``).
BASES: list[tuple[str, dict[str, Any]]] = [
    ("tools/call", {"name": "test_simple_text", "arguments": {}}),
    ("tools/call", {"name": "test_x_mcp_header", "arguments": {"region": "eu-west1"}}),
    ("tools/list", {}),
    ("prompts/get", {"name": "test_simple_prompt"}),
    ("resources/read", {"uri": "test://static-text"}),
    ("resources/list", {"cursor": "page-2"}),
    ("resources/templates/list", {}),
]
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


class Case:
    """One request as the HTTP app receives it: its body and its headers."""

    def __init__(self, method: str, params: dict[str, Any]) -> None:
        self.message: Any = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
        params["_meta"] = {
            V: MODERN,
            CAPS: {"elicitation": {"form": {}}, "roots": {"listChanged": True}},
            INFO: {"name": "lane-test", "version": "1.0"},
        }
        self.headers: dict[str, str | None] = {
            "mcp-protocol-version": MODERN,
            "mcp-method": method,
        }
        if method in NAMED:
            self.headers["mcp-name"] = str(params[NAMED[method]])
        if params.get("name") == "test_x_mcp_header":
            self.headers["mcp-param-region"] = "eu-west1"
        self.raw: bytes | None = None

    @property
    def params(self) -> dict[str, Any]:
        return self.message["params"]

    @property
    def meta(self) -> dict[str, Any]:
        return self.params["_meta"]

    def body(self) -> bytes:
        return self.raw if self.raw is not None else json.dumps(self.message).encode()


def b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


def _set(target: Callable[[Case], dict[str, Any]], key: str, value: Any) -> Callable[[Case], None]:
    def change(case: Case) -> None:
        if value is None:
            target(case).pop(key, None)
        else:
            target(case)[key] = value

    return change


def _header(name: str, value: str | None) -> Callable[[Case], None]:
    return _set(lambda c: c.headers, name, value)  # type: ignore[arg-type, return-value]


def _named_b64(case: Case) -> None:
    name = case.headers.get("mcp-name")
    if name is not None:
        case.headers["mcp-name"] = b64(name)


def _batch(case: Case) -> None:
    case.message = [case.message]


def _raw(text: bytes) -> Callable[[Case], None]:
    def change(case: Case) -> None:
        case.raw = text

    return change


def _trailing(case: Case) -> None:
    case.raw = json.dumps(case.message).encode() + b" x"


def _meta_of(case: Case) -> dict[str, Any]:
    return case.meta


def _message_of(case: Case) -> dict[str, Any]:
    return case.message


def _params_of(case: Case) -> dict[str, Any]:
    return case.params


MUTATIONS: dict[str, Callable[[Case], None]] = {
    "unchanged": lambda case: None,
    # headers
    "version-header-other": _header("mcp-protocol-version", "2099-01-01"),
    "version-header-legacy": _header("mcp-protocol-version", "2025-11-25"),
    "version-header-missing": _header("mcp-protocol-version", None),
    "method-header-other": _header("mcp-method", "tools/list"),
    "method-header-missing": _header("mcp-method", None),
    "name-header-other": _header("mcp-name", "something-else"),
    "name-header-missing": _header("mcp-name", None),
    "name-header-base64": _named_b64,
    "name-header-bad-base64": _header("mcp-name", "=?base64?not base64!?="),
    "param-header-other": _header("mcp-param-region", "us-east1"),
    # _meta
    "meta-missing": _set(_params_of, "_meta", None),
    "meta-not-object": _set(_params_of, "_meta", [1]),
    "meta-version-missing": _set(_meta_of, V, None),
    "meta-version-other": _set(_meta_of, V, "2099-01-01"),
    "meta-version-number": _set(_meta_of, V, 2026),
    "meta-caps-missing": _set(_meta_of, CAPS, None),
    "meta-caps-null": lambda case: case.meta.__setitem__(CAPS, None),
    "meta-caps-string": _set(_meta_of, CAPS, "all"),
    "meta-caps-unknown-capability": _set(_meta_of, CAPS, {"com.example/x": {"on": True}}),
    "meta-info-missing": _set(_meta_of, INFO, None),
    "meta-info-extra-key": _set(_meta_of, INFO, {"name": "a", "version": "1", "vendor": 1}),
    "meta-info-lacks-version": _set(_meta_of, INFO, {"name": "a"}),
    "meta-level-debug": _set(_meta_of, LEVEL, "debug"),
    "meta-level-bogus": _set(_meta_of, LEVEL, "loudest"),
    "meta-vendor-key": _set(_meta_of, "com.example/trace", {"span": 1}),
    "meta-progress-token": _set(_meta_of, "progressToken", "tok-1"),
    # envelope
    "id-string": _set(_message_of, "id", "req-1"),
    "id-float": _set(_message_of, "id", 1.5),
    "id-whole-float": _set(_message_of, "id", 7.0),
    "id-bool": _set(_message_of, "id", True),
    "id-null": lambda case: case.message.__setitem__("id", None),
    "id-missing": _set(_message_of, "id", None),
    "jsonrpc-1": _set(_message_of, "jsonrpc", "1.0"),
    "jsonrpc-missing": _set(_message_of, "jsonrpc", None),
    "with-result": _set(_message_of, "result", {}),
    "with-error": _set(_message_of, "error", {"code": 1, "message": "x"}),
    "params-list": _set(_message_of, "params", [1, 2]),
    "params-missing": _set(_message_of, "params", None),
    "method-unknown": _set(_message_of, "method", "tools/unknown"),
    "extra-envelope-key": _set(_message_of, "com.example/extra", 1),
    "batch": _batch,
    # params
    "name-not-string": lambda case: case.params.__setitem__("name", 5),
    "arguments-not-object": _set(_params_of, "arguments", "x"),
    "request-state": _set(_params_of, "requestState", "abc"),
    "input-responses": _set(_params_of, "inputResponses", {}),
    # bodies
    "not-json": _raw(b"not json at all"),
    "truncated": _raw(b'{"jsonrpc": "2.0", "id": 1,'),
    "empty": _raw(b""),
    "not-utf8": _raw(b"\xff\xfe{}"),
    "trailing-garbage": _trailing,
}


@pytest.fixture(scope="module")
def app() -> McpHttpApp:
    return McpHttpApp(build_server())


def _headers(case: Case) -> dict[bytes, bytes]:
    return {k.encode(): v.encode() for k, v in case.headers.items() if v is not None}


def any_undeclared(value: Any, skip: str = "") -> bool:
    """Whether ``value`` (a decoded object) holds a key no definition declares, anywhere
    but in its attribute ``skip``."""
    if undeclared(value):
        return True
    if isinstance(value, list):
        return any(any_undeclared(v) for v in value)
    if isinstance(value, dict):
        return any(any_undeclared(v) for v in value.values())
    names = getattr(value, "__struct_fields__", ())
    return any(any_undeclared(getattr(value, n)) for n in names if n != skip)


def check(app: McpHttpApp, body: bytes, headers: dict[bytes, bytes]) -> bool:
    """Both paths read ``body``; the lane's answer must be the general path's. Returns
    whether the lane accepted."""
    version = headers.get(b"mcp-protocol-version")
    http = mcp_headers(headers, None if version is None else version.decode("latin-1"))
    direct = app.direct.read(body, http)
    general = app.stateless.receive_parsed(jsonrpc.parse(body), http)
    one = general[0] if len(general) == 1 else None
    expected = (
        isinstance(one, IncomingRequest)
        and one.peer is not None
        and one.peer.version is app.stateless.local
        and getattr(one.params, "request_state", UNSET) is UNSET
        and getattr(one.params, "input_responses", UNSET) is UNSET
        # keys the params do not declare (but in _meta): the general path keeps them
        and not any_undeclared(one.params, skip="meta")
    )
    assert (direct is not None) == expected, (body, headers, general)
    if direct is None:
        return False
    assert isinstance(one, IncomingRequest)
    assert (direct.id, direct.spec, direct.batch) == (one.id, one.spec, one.batch)
    assert direct.params == one.params and type(direct.params) is type(one.params)
    assert direct.meta == one.meta and type(direct.meta) is type(one.meta)
    assert direct.peer is not None and one.peer is not None
    assert direct.peer.version is one.peer.version
    assert direct.peer.info == one.peer.info
    assert direct.peer.capabilities == one.peer.capabilities
    assert direct.peer.log_level == one.peer.log_level
    assert direct.http is one.http
    if one.inputs is None:
        assert direct.inputs is None
    else:
        assert direct.inputs is not None
        assert direct.inputs.answers == one.inputs.answers
        assert direct.inputs.digest == one.inputs.digest
    return True


#: Mutations after which the request is still one the lane must take.
ACCEPTED = {
    "unchanged",
    "name-header-base64",
    "meta-caps-unknown-capability",
    "meta-info-missing",
    "meta-info-extra-key",
    "meta-level-debug",
    "meta-vendor-key",
    "meta-progress-token",
    "id-string",
    "extra-envelope-key",
}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_the_lane_takes_what_the_general_path_takes_and_reads_it_the_same(
    app: McpHttpApp, mutation: str
) -> None:
    accepted = []
    for method, params in BASES:
        case = Case(method, json.loads(json.dumps(params)))
        MUTATIONS[mutation](case)
        accepted.append(check(app, case.body(), _headers(case)))
    if mutation in ACCEPTED:  # the lane is really taken, not declined throughout
        assert all(accepted), accepted


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(
    base=st.sampled_from(BASES),
    where=st.sampled_from(["params", "_meta", "envelope"]),
    key=st.sampled_from(
        ["name", "uri", "arguments", "cursor", "id", "jsonrpc", "method", V, CAPS, INFO, LEVEL, "x"]
    ),
    value=JSON,
)
def test_arbitrary_values_anywhere_keep_the_two_paths_in_agreement(
    app: McpHttpApp, base: tuple[str, dict[str, Any]], where: str, key: str, value: Any
) -> None:
    method, params = base
    case = Case(method, json.loads(json.dumps(params)))
    target = {"params": case.params, "_meta": case.meta, "envelope": case.message}[where]
    target[key] = value
    check(app, case.body(), _headers(case))


@settings(max_examples=200, deadline=None)
@given(body=st.binary(max_size=64) | st.text(max_size=64).map(str.encode))
def test_arbitrary_bodies_are_declined_and_the_lane_still_reads_the_next_request(
    app: McpHttpApp, body: bytes
) -> None:
    case = Case("tools/call", {"name": "test_simple_text", "arguments": {}})
    assert not check(app, body, _headers(case))
    assert check(app, case.body(), _headers(case))


def _read(app: McpHttpApp, case: Case) -> IncomingRequest:
    headers = _headers(case)
    http = mcp_headers(headers, headers[b"mcp-protocol-version"].decode())
    event = app.direct.read(case.body(), http)
    assert event is not None
    return event


def test_a_repeated_meta_is_decoded_once_and_each_request_gets_its_own_copy() -> None:
    app = McpHttpApp(build_server())
    case = Case("tools/call", {"name": "test_simple_text", "arguments": {}})
    first = _read(app, case)
    first.params.meta["com.example/added"] = 1  # a handler writing to its request's _meta
    second = _read(app, case)
    assert "com.example/added" not in second.meta
    assert second.meta is not first.meta and type(second.meta) is type(first.meta)
    assert second.params.meta is second.meta
    assert check(app, case.body(), _headers(case))  # still what the general path reads
    assert len(app.direct._metas) == 1  # noqa: SLF001 - the cache under test


def test_the_meta_cache_stays_bounded_and_long_metas_are_not_kept() -> None:
    from mcpgen.runtime.http.stateless import META_CACHE_ENTRIES, META_CACHE_TEXT_BYTES

    app = McpHttpApp(build_server())
    metas = app.direct._metas  # noqa: SLF001 - the cache under test
    for n in range(3 * META_CACHE_ENTRIES):
        case = Case("tools/call", {"name": "test_simple_text", "arguments": {}})
        case.meta["progressToken"] = f"token-{n}"  # a distinct _meta per request
        assert _read(app, case).meta["progressToken"] == f"token-{n}"
        assert len(metas) <= META_CACHE_ENTRIES
    metas.clear()
    case = Case("tools/call", {"name": "test_simple_text", "arguments": {}})
    case.meta["com.example/padding"] = "x" * META_CACHE_TEXT_BYTES
    assert _read(app, case).meta["com.example/padding"] == "x" * META_CACHE_TEXT_BYTES
    assert not metas
    assert check(app, case.body(), _headers(case))


def test_a_bad_meta_is_declined_after_a_good_one_with_the_same_start() -> None:
    app = McpHttpApp(build_server())
    good = Case("tools/call", {"name": "test_simple_text", "arguments": {}})
    _read(app, good)
    bad = Case("tools/call", {"name": "test_simple_text", "arguments": {}})
    bad.meta[INFO] = {"name": "lane-test"}  # no version: not an Implementation
    assert not check(app, bad.body(), _headers(bad))
    assert check(app, good.body(), _headers(good))


def test_the_lane_and_the_connection_ask_the_same_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """No rule of the 2026-07-28 request order lives in two places: the ``_meta`` keys a
    request must carry and the agreement of its headers with its body are asked of
    ``modern.meta_refusal`` and ``modern.header_refusal`` by both readers."""
    from mcpgen.runtime.core import modern

    asked: list[str] = []
    for name in ("meta_refusal", "header_refusal"):
        real = getattr(modern, name)

        def counting(*args: Any, _real: Any = real, _name: str = name) -> Any:
            asked.append(_name)
            return _real(*args)

        monkeypatch.setattr(modern, name, counting)
    served = McpHttpApp(build_server())
    case = Case("tools/call", {"name": "test_simple_text", "arguments": {}})
    http = mcp_headers(_headers(case), MODERN)
    assert served.direct.read(case.body(), http) is not None
    assert sorted(set(asked)) == ["header_refusal", "meta_refusal"]
    asked.clear()
    events = served.stateless.receive_parsed(jsonrpc.parse(case.body()), http)
    assert isinstance(events[0], IncomingRequest)
    assert sorted(set(asked)) == ["header_refusal", "meta_refusal"]
