"""Rules of the stateless 2026-07-28 era: per-request ``_meta``, HTTP header agreement,
and the integrity-protected ``requestState`` of multi-round-trip requests."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from .errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
)
from .negotiation import VersionInfo

PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"

#: Requests that may be answered with ``input_required``.
INPUT_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
#: Methods whose ``Mcp-Name`` header mirrors a params field.
NAME_FIELDS = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    # the io.modelcontextprotocol/tasks extension's (SEP-2663): routed by the task
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}


class RequestMeta(msgspec.Struct):
    """The per-request ``_meta`` keys the runtime needs, read without the params' types."""

    protocol_version: str | UnsetType = msgspec.field(default=UNSET, name=PROTOCOL_VERSION)
    client_capabilities: dict[str, Any] | UnsetType = msgspec.field(
        default=UNSET, name=CLIENT_CAPABILITIES
    )
    client_info: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name=CLIENT_INFO)
    log_level: str | UnsetType = msgspec.field(default=UNSET, name=LOG_LEVEL)


class _Probe(msgspec.Struct):
    meta: RequestMeta | UnsetType = msgspec.field(default=UNSET, name="_meta")
    name: Any = UNSET
    uri: Any = UNSET
    taskId: Any = UNSET
    inputResponses: Any = UNSET
    requestState: Any = UNSET


_probe = msgspec.json.Decoder(_Probe)


def probe(params: msgspec.Raw | None) -> _Probe | None:
    """The runtime-relevant parts of a request's params (``None`` if they do not parse)."""
    try:
        return _probe.decode(params or b"{}")
    except msgspec.DecodeError:
        return None


class _ListenMeta(msgspec.Struct):
    subscription: int | str | None = msgspec.field(default=None, name=SUBSCRIPTION_ID)


class _ListenTag(msgspec.Struct):
    meta: _ListenMeta | None = msgspec.field(default=None, name="_meta")


_listen_tag = msgspec.json.Decoder(_ListenTag)


def subscription_of(params: msgspec.Raw | None) -> int | str | None:
    """The listen stream a notification (or a listen result) belongs to: its
    ``_meta.subscriptionId``, or None (none, or params that do not parse)."""
    if params is None or SUBSCRIPTION_ID.encode() not in bytes(params):
        return None
    try:
        meta = _listen_tag.decode(params).meta
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return meta.subscription if meta is not None else None


#: The per-request ``_meta`` keys every modern request carries (-32602 without one), and
#: the :class:`RequestMeta` field of each.
REQUIRED_META = {PROTOCOL_VERSION: "protocol_version", CLIENT_CAPABILITIES: "client_capabilities"}


def meta_refusal(has: Callable[[str], bool]) -> McpError | None:
    """The refusal of a request whose ``_meta`` lacks a required key (``has(key)``
    says whether it has ``key``); None when it has them all. The stateless lane and the
    connection both ask this."""
    for key in REQUIRED_META:
        if not has(key):
            return McpError(
                INVALID_PARAMS,
                f"Invalid params: _meta lacks {key}",
                {"path": f"$.params._meta.{key}"},
            )
    return None


def check_meta(p: _Probe) -> RequestMeta:
    """The required per-request ``_meta`` keys are present (-32602 otherwise)."""
    meta = p.meta
    if meta is UNSET:
        raise McpError(INVALID_PARAMS, "Invalid params: missing _meta", {"path": "$.params._meta"})
    refusal = meta_refusal(lambda key: getattr(meta, REQUIRED_META[key]) is not UNSET)
    if refusal is not None:
        raise refusal
    return meta


class Peer:
    """Who sent a modern request: what a legacy session would hold, read from the
    request's decoded ``_meta``. Client info and capabilities turn into plain JSON (what
    the schema declares of them, plus any capability it does not know) when first asked:
    most handlers never ask."""

    __slots__ = ("version", "meta", "_info", "_capabilities")

    def __init__(self, version: VersionInfo, meta: Mapping[str, Any]) -> None:
        self.version = version
        self.meta = meta
        self._info: Mapping[str, Any] | None = None
        self._capabilities: Mapping[str, Any] | None = None

    @property
    def info(self) -> Mapping[str, Any]:
        info = self._info
        if info is None:
            raw = self.meta.get(CLIENT_INFO)
            info = self._info = {} if raw is None else msgspec.to_builtins(raw)
        return info

    @property
    def capabilities(self) -> Mapping[str, Any]:
        capabilities = self._capabilities
        if capabilities is None:
            raw = self.meta.get(CLIENT_CAPABILITIES, {})
            capabilities = self._capabilities = msgspec.to_builtins(raw)
        return capabilities

    @property
    def log_level(self) -> str | None:
        level = self.meta.get(LOG_LEVEL)
        return level if isinstance(level, str) else None


# -- HTTP headers -------------------------------------------------------------------------


class HttpHeaders(msgspec.Struct, frozen=True):
    """The headers of one HTTP request: the MCP ones read, and all of them as sent."""

    protocol_version: str | None = None
    method: str | None = None
    name: str | None = None
    #: The ``Mcp-Param-*`` headers, keyed by the lower-cased rest of their name.
    params: Mapping[str, str] = msgspec.field(default_factory=dict[str, str])
    #: Every header of the request: lower-cased name → value, as bytes (ASGI's form).
    request: Mapping[bytes, bytes] = msgspec.field(default_factory=dict[bytes, bytes])
    #: Who the request's verified access token speaks for (``runtime.http.auth.principal``),
    #: when the app is protected; its ``Authorization`` header is then gone from
    #: ``request``, so nothing behind the app can forward the token.
    principal: Any = None
    #: The MCP headers belong to this one message (a Streamable HTTP request), so they
    #: must agree with it. False over a persistent connection (WebSocket, HTTP+SSE): the
    #: headers are the handshake's, and only who the client is (``principal``) is known.
    per_request: bool = True

    def header(self, name: str) -> str | None:
        """A request header's value (``name`` in any case), or None."""
        value = self.request.get(name.lower().encode("latin-1"))
        return None if value is None else value.decode("latin-1")


def decode_header_value(value: str) -> str:
    """Undo the ``=?base64?…?=`` sentinel form (values are otherwise literal)."""
    if value.startswith("=?base64?") and value.endswith("?="):
        body = value[len("=?base64?") : -2]
        try:
            return base64.b64decode(body, validate=True).decode("utf-8")
        except (binascii.Error, ValueError) as exc:
            raise McpError(
                HEADER_MISMATCH, f"Header mismatch: invalid base64 header value ({exc})"
            ) from None
    return value


def encode_header_value(value: str | int | bool) -> str:
    """A header value in the form the spec prescribes (base64 sentinel when not plain ASCII)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    plain = all(0x20 <= ord(ch) < 0x7F for ch in text) and text == text.strip()
    if plain and not (text.startswith("=?base64?") and text.endswith("?=")):
        return text
    return "=?base64?" + base64.b64encode(text.encode("utf-8")).decode("ascii") + "?="


def header_refusal(
    headers: HttpHeaders, method: str, protocol_version: Any, params: Any
) -> McpError | None:
    """The refusal (-32020) of a request whose headers disagree with its body: the
    version its ``_meta`` names, its ``method``, and the name or URI ``params`` carries
    (``NAME_FIELDS``); None when they agree. The stateless lane and the connection both
    ask this, the connection after ``check_meta``."""
    if headers.protocol_version is None:
        return McpError(HEADER_MISMATCH, "Header mismatch: MCP-Protocol-Version header is required")
    if headers.protocol_version != protocol_version:
        return McpError(
            HEADER_MISMATCH,
            f"Header mismatch: MCP-Protocol-Version {headers.protocol_version!r} but _meta says "
            f"{protocol_version!r}",
        )
    if headers.method != method:
        return McpError(
            HEADER_MISMATCH,
            f"Header mismatch: Mcp-Method {headers.method!r} but the body says {method!r}",
        )
    field_name = NAME_FIELDS.get(method)
    if field_name is None:
        return None
    value, name = getattr(params, field_name), headers.name
    if name is not None and name == value and not name.startswith("=?"):
        return None  # name_agrees's literal case, inline: the path of every stateless call
    if not name_agrees(name, value):
        return McpError(
            HEADER_MISMATCH, f"Header mismatch: Mcp-Name must equal params.{field_name}"
        )
    return None


def name_agrees(header: str | None, value: Any) -> bool:
    """Whether an ``Mcp-Name`` header says ``value`` (literally, or in the base64 form)."""
    if header is None:
        return False
    if header == value and not header.startswith("=?"):  # literal and equal: nothing to undo
        return True
    try:
        return decode_header_value(header.strip()) == value
    except McpError:
        return False


def check_headers(headers: HttpHeaders, method: str, meta: RequestMeta, p: _Probe) -> None:
    """Headers must agree with the body (-32020 otherwise); checked after ``check_meta``."""
    refusal = header_refusal(headers, method, meta.protocol_version, p)
    if refusal is not None:
        raise refusal


def http_status(code: int, protocol: bool = False) -> int | None:
    """The HTTP status a modern error answer takes (None: 200). ``protocol`` marks errors
    the runtime found in the request itself, where invalid params mean a bad request."""
    if code == METHOD_NOT_FOUND:
        return 404
    if code in (HEADER_MISMATCH, MISSING_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION):
        return 400
    if protocol and code == INVALID_PARAMS:
        return 400
    return None


class InputRequired(Exception):
    """Raised inside a modern-era handler that needs input the client has not given yet.

    A signal the session answers (``input_required``), not a failure: it is no
    ``McpgenError``, so a handler's ``except McpgenError`` around a question to the
    client does not swallow it."""
