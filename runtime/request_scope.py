"""What a handler can do during one incoming request: read who the client is, require a
capability, report progress, log, ask the client for input (a request in the legacy era,
``input_required`` in the modern one) and notify. ``_support.RequestContext`` wraps it
for the generated bindings; the :class:`~runtime.session.Session` makes one per request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from msgspec import ValidationError, to_builtins

from .events import IncomingRequest
from .log_levels import level_at_least
from .errors import INTERNAL_ERROR, INVALID_PARAMS, MISSING_CLIENT_CAPABILITY, McpError
from .modern import InputRequired
from .negotiation import VersionInfo, has_capability

if TYPE_CHECKING:
    from .session import Session


class RequestScope:
    """The runtime's side of one incoming request (``_support.RequestContext``)."""

    __slots__ = (
        "session",
        "event",
        "request_id",
        "meta",
        "cancelled",
        "asked",
        "_calls",
    )

    def __init__(self, session: Session, event: IncomingRequest) -> None:
        self.session = session
        self.event = event
        self.request_id = event.id
        self.meta = event.meta
        self.cancelled = False
        #: Input requests a modern handler is waiting for, by key.
        self.asked: dict[str, Any] = {}
        self._calls = 0

    @property
    def protocol_version(self) -> str:
        if self.event.peer is not None:
            return self.event.peer.version.version
        version = self.session.conn.version
        return version.version if version is not None else ""

    @property
    def principal(self) -> Any:
        """Who the request's verified access token speaks for (a
        ``runtime.auth_principal.Principal``), on a protected HTTP endpoint; else None."""
        http = self.event.http
        return http.principal if http is not None else None

    @property
    def peer_version(self) -> VersionInfo | None:
        """The version the client speaks in this request (its session's when legacy)."""
        peer = self.event.peer
        return peer.version if peer is not None else self.session.conn.version

    @property
    def client_info(self) -> Mapping[str, Any]:
        peer = self.event.peer
        return peer.info if peer is not None else self.session.conn.peer_info

    @property
    def client_capabilities(self) -> Mapping[str, Any]:
        peer = self.event.peer
        return peer.capabilities if peer is not None else self.session.conn.peer_capabilities

    def require(self, *capability: str) -> None:
        """Fail the request unless the client declared ``capability`` (a path)."""
        if has_capability(self.client_capabilities, capability):
            return
        required: dict[str, Any] = {}
        node = required
        for part in capability:
            node = node.setdefault(part, {})
        raise McpError(
            MISSING_CLIENT_CAPABILITY,
            f"Missing required client capability: {'.'.join(capability)}",
            {"requiredCapabilities": required},
        )

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        token = self.meta.get("progressToken")
        if token is None or self.cancelled:
            return
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.session.notify("notifications/progress", params, related=self.request_id)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        conn = self.session.conn
        if "logging" not in conn.capabilities:
            return
        peer = self.event.peer
        if peer is not None:  # modern: only when this request set a level, and at or above it
            if peer.log_level is None or not level_at_least(level, peer.log_level):
                return
        elif not conn.log_allowed(level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self.session.notify("notifications/message", params, related=self.request_id)

    async def request(
        self, method: str, params: Any, result: Any = None, key: str | None = None
    ) -> Any:
        """Ask the client for input: a JSON-RPC request in the legacy era; in the modern era
        the answer from this request's input responses, or ``input_required`` when absent.
        """
        if self.event.peer is None:
            return await self.session.request(method, params, related=self.request_id)
        key = key or self.next_key(method)
        inputs = self.event.inputs
        if inputs is None:
            raise McpError(
                INTERNAL_ERROR,
                f"{self.event.spec.name} cannot ask the client for input",
            )
        if key in inputs.answers:
            return self.typed_answer(method, key, inputs.answers[key], result)
        self.require_for(method)
        self.asked[key] = {
            "method": method,
            "params": to_builtins(params) if params is not None else {},
        }
        await asyncio.sleep(0)  # let sibling requests (asyncio.gather) register too
        raise InputRequired(key)

    def next_key(self, method: str) -> str:
        """A key for the next input request of this handler (unique within the request,
        and the same when a modern request is made again with its answers)."""
        self._calls += 1
        return f"{method}#{self._calls}"

    def require_for(self, method: str) -> None:
        """Fail unless the client declared the capability ``method`` (sent to it) needs."""
        spec = self.session.conn.local.types_of("server", method)
        if spec is not None and spec.capability:
            self.require(*spec.capability)

    def typed_answer(self, method: str, key: str, answer: Any, result: Any = None) -> Any:
        """The client's ``answer`` to input request ``key`` as ``method``'s result type
        (-32602 when it is not one)."""
        spec = self.session.conn.local.types_of("server", method)
        try:
            return self.session.conn.local.binding.types.convert(
                answer, spec.result if spec else result
            )
        except ValidationError as exc:
            raise McpError(
                INVALID_PARAMS,
                f"Invalid params: inputResponses.{key}: {exc}",
                {"path": f"$.params.inputResponses.{key}"},
            ) from None

    async def notify(self, method: str, params: Any) -> None:
        await self.session.notify(method, params, related=self.request_id)


__all__ = ["RequestScope"]
