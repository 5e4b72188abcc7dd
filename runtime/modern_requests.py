"""The modern era's requests on a server connection (2026-07-28 on): stateless, each
carrying its version, capabilities and client info in ``_meta`` (and, over HTTP, in
headers). They are checked in the order the spec sets, then routed like any request;
``server/discover`` and listen acknowledgements are answered here, and multi-round requests
carry their answers so far in a signed ``requestState``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import UNSET

from . import jsonrpc, modern
from .errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
)
from .events import Event, IncomingNotification, IncomingRequest, Inputs, Listen, Send
from .advertised import capabilities_for, client_meta, info_for, stamped
from .negotiation import VersionInfo, has_capability
from .plain import as_object
from .subscription_limits import listen_refusal, streams_refusal

if TYPE_CHECKING:
    from .connection import Connection

_MODERN_400 = frozenset(
    {
        INVALID_PARAMS,
        HEADER_MISMATCH,
        MISSING_CLIENT_CAPABILITY,
        UNSUPPORTED_PROTOCOL_VERSION,
    }
)
#: Listen filter key → server capability that must be offered to honour it.
_LISTEN_FILTERS: dict[str, tuple[str, ...]] = {
    "toolsListChanged": ("tools", "listChanged"),
    "promptsListChanged": ("prompts", "listChanged"),
    "resourcesListChanged": ("resources", "listChanged"),
    "resourceSubscriptions": ("resources", "subscribe"),
    # the io.modelcontextprotocol/tasks extension's: status of the tasks named
    "taskIds": ("extensions", "io.modelcontextprotocol/tasks"),
}
#: Listen filters the client may ask for only having declared a capability (-32021).
_LISTEN_NEEDS: dict[str, tuple[str, ...]] = {
    "taskIds": ("extensions", "io.modelcontextprotocol/tasks"),
}


class ModernRequests:
    """What ``conn`` (a server's connection) does with modern requests."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._signer: Any = None

    @property
    def signer(self) -> Any:
        """Signs and verifies ``requestState`` with the connection's ``state_key``
        (made on first use: most servers never need one)."""
        if self._signer is None:
            from .state import StateSigner

            key = self.conn.state_key
            self._signer = StateSigner(key) if key else StateSigner()
        return self._signer

    def takes(self, m: jsonrpc.Request, http: modern.HttpHeaders | None) -> bool:
        """A server takes a request down the stateless path when it is not in a legacy
        session and the request says it is modern (``_meta`` or header version that is
        not a handshake version, or a method only modern versions have)."""
        if self.conn.role != "server" or self.conn.version is not None:
            return False
        if not self.conn.versions.of_era("modern"):
            return False
        legacy = self.conn.versions.of_era("legacy")
        if http is not None and http.protocol_version is not None:
            return http.protocol_version not in legacy
        if m.params is not None and modern.PROTOCOL_VERSION.encode() in bytes(m.params):
            return True
        if m.method == "initialize":
            return False
        return not self.conn.versions.has("legacy", "client", m.method)

    def read(
        self, m: jsonrpc.Request, batch: int | None, http: modern.HttpHeaders | None
    ) -> list[Event]:
        """Validate in the order the spec sets: ``_meta`` keys, headers, version, method."""
        try:
            return self._checked(m, batch, http)
        except McpError as exc:
            status = (
                404 if exc.code == METHOD_NOT_FOUND else 400 if exc.code in _MODERN_400 else None
            )
            return [Send(jsonrpc.encode_mcp_error(m.id, exc), batch, m.id, status)]

    def _checked(
        self, m: jsonrpc.Request, batch: int | None, http: modern.HttpHeaders | None
    ) -> list[Event]:
        p = modern.probe(m.params)
        if p is None:
            raise McpError(
                INVALID_PARAMS,
                "Invalid params: params must be an object with _meta",
                {"path": "$.params"},
            )
        meta = modern.check_meta(p)
        if http is not None:
            modern.check_headers(http, m.method, meta, p)
        requested = str(meta.protocol_version)
        supported = self.conn.versions.of_era("modern")
        if requested not in supported:
            raise McpError(
                UNSUPPORTED_PROTOCOL_VERSION,
                f"Unsupported protocol version {requested!r}",
                {"supported": list(supported), "requested": requested},
            )
        version = self.conn.versions[requested]
        if m.method == "server/discover":
            return [Send(jsonrpc.encode_result(m.id, self.discover(version)), batch, m.id)]
        spec, local = self.conn.route(version, m.method)
        if version.extensions:
            version.require_opt_in("client", m.method, meta.client_capabilities or {}, "server")
        params = self.conn.incoming(m.params, spec, local, version)
        meta_map = as_object(getattr(params, "meta", None))
        if meta_map is None:  # params typed without _meta (an extension's): what it said
            meta_map = as_object(msgspec.to_builtins(meta)) or {}
        peer = modern.Peer(version, meta_map)
        if m.method == "subscriptions/listen":
            notifications = as_object(msgspec.to_builtins(getattr(params, "notifications", {})))
            for key, needed in _LISTEN_NEEDS.items():
                if (notifications or {}).get(key) and not has_capability(peer.capabilities, needed):
                    raise McpError(
                        MISSING_CLIENT_CAPABILITY,
                        f"Missing required client capability: {'.'.join(needed)} ({key})",
                        {"requiredCapabilities": {needed[0]: {needed[1]: {}}}},
                    )
            refusal = listen_refusal(notifications or {}, self.conn.limits)
            if refusal is not None:
                raise refusal
            return [Listen(m.id, notifications or {}, peer)]
        inputs = self._inputs(m, p) if m.method in modern.INPUT_METHODS else None
        return [
            IncomingRequest(
                m.id,
                local,
                params,
                meta_map,
                batch,
                peer,
                inputs,
                http,
            )
        ]

    def notification(self, m: jsonrpc.Notification) -> list[Event]:
        """A notification outside any session (a stateless server's): only an extension's
        is served, when its ``_meta`` names a modern version and declares the extension;
        anything else is dropped (no one to answer)."""
        conn = self.conn
        p = modern.probe(m.params) if conn.role == "server" else None
        meta = p.meta if p is not None else UNSET
        if meta is UNSET or meta.protocol_version not in conn.versions.of_era("modern"):
            return []
        version = conn.versions[str(meta.protocol_version)]
        capabilities = meta.client_capabilities or {}
        if version.extension_of("client", m.method) is None:
            return []
        if not version.opted_in("client", m.method, capabilities):
            return []
        spec, local = version.spec("client", m.method), conn.local.types_of("client", m.method)
        if spec is None or local is None or spec.kind != "notification":
            return []
        try:
            return [IncomingNotification(local, conn.incoming(m.params, spec, local, version))]
        except McpError:
            return []

    def extension_notification(self, version: VersionInfo, method: str, params: Any) -> Any:
        """The params of an extension's notification this side sends: refused (McpError)
        when the peer did not declare the extension; a modern client's carry the
        ``_meta`` its requests do, so a stateless server can tell it opted in."""
        conn = self.conn
        if version.extension_of(conn.role, method) is None:
            return params
        version.require_opt_in(conn.role, method, conn.peer_capabilities, "client")
        if conn.role == "client" and version.rules.stateless:
            meta = client_meta(version, conn.capabilities, conn.info, conn.log_level)
            return stamped(params, meta)
        return params

    def _inputs(self, m: jsonrpc.Request, p: Any) -> Inputs:
        """Answers the client gave so far: those carried by a verified ``requestState``
        plus this round's ``inputResponses``."""
        inputs = Inputs({}, m.params)
        if p.requestState is not UNSET:
            from .state import StateError

            if not isinstance(p.requestState, str):
                raise StateError("not a string")
            inputs.answers.update(self.signer.verify(p.requestState, m.method, inputs.digest))
        if p.inputResponses is not UNSET and p.inputResponses is not None:
            answers = as_object(p.inputResponses)
            if answers is None:
                raise McpError(
                    INVALID_PARAMS,
                    "Invalid params: inputResponses must be an object",
                    {"path": "$.params.inputResponses"},
                )
            inputs.answers.update(answers)
        return inputs

    def input_required(self, request: IncomingRequest, asked: Mapping[str, Any]) -> dict[str, Any]:
        """The ``input_required`` result asking for ``asked``, with a signed state that
        carries the answers so far."""
        assert request.inputs is not None
        state = self.signer.sign(request.spec.name, request.inputs.digest, request.inputs.answers)
        return {
            "resultType": "input_required",
            "inputRequests": dict(asked),
            "requestState": state,
        }

    def discover(self, version: VersionInfo) -> dict[str, Any]:
        hint = self.conn.wire.cache.hint("server/discover")
        result: dict[str, Any] = {
            "resultType": "complete",
            "supportedVersions": list(self.conn.versions.of_era("modern")),
            "capabilities": capabilities_for(self.conn.capabilities, "server", version),
            "ttlMs": hint.ttl_ms,
            "cacheScope": hint.scope,
            "_meta": {modern.SERVER_INFO: info_for(self.conn.info, version)},
        }
        if self.conn.instructions is not None:
            result["instructions"] = self.conn.instructions
        return result

    def acknowledge(
        self, listen: Listen, open_streams: Iterable[Mapping[str, Any]] = ()
    ) -> tuple[dict[str, bool | list[str]] | None, bytes]:
        """The filter this server honours for a listen request, and the acknowledgement;
        or None and the refusal, when with the filters of the connection's ``open_streams``
        it would name more than ``Limits.max_subscriptions`` things."""
        caps = self.conn.capabilities
        honoured: dict[str, Any] = {}
        for key, capability in _LISTEN_FILTERS.items():
            if listen.requested.get(key) and has_capability(caps, capability):
                honoured[key] = listen.requested[key]
        refusal = streams_refusal(open_streams, honoured, self.conn.limits)
        if refusal is not None:
            return None, self.conn.error(listen.id, refusal, listen.peer.version)
        params = {
            "notifications": honoured,
            "_meta": {modern.SUBSCRIPTION_ID: listen.id},
        }
        return honoured, jsonrpc.encode_notification(
            "notifications/subscriptions/acknowledged", params
        )
