"""What a ``Connection`` tells its driver: small frozen records, one per kind of event."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from . import jsonrpc
from .errors import INVALID_REQUEST, McpError, NegotiationError
from .jsonrpc import RequestId
from .modern import HttpHeaders, Peer
from .binding import MethodSpec


class Send(msgspec.Struct, frozen=True):
    """Write these bytes to the peer (one frame)."""

    data: bytes
    batch: int | None = None
    #: The request this frame answers or belongs to (HTTP routes it to that stream).
    related: RequestId | None = None
    #: HTTP status the transport should use when this frame answers a modern request.
    status: int | None = None
    #: The frame answers a request (or the frame that came in): nothing follows it.
    final: bool = True


class Inputs:
    """Multi-round-trip bookkeeping of one modern request: answers so far, and the params
    the ``requestState`` it hands out must bind to (digested only when a state is signed
    or checked: most requests need neither). ``body``, when given instead of ``params``,
    is the whole request, whose params are read out of it only for the digest."""

    __slots__ = ("answers", "params", "body", "_digest")

    def __init__(
        self, answers: dict[str, Any], params: msgspec.Raw | None, body: bytes | None = None
    ) -> None:
        self.answers = answers
        self.params = params
        self.body = body
        self._digest: str | None = None

    @property
    def digest(self) -> str:
        if self._digest is None:
            from .request_state import params_digest

            params = self.params
            if self.body is not None:
                params = _ParamsOf.decode(self.body).params
            self._digest = params_digest(params)
        return self._digest


class _RequestParams(msgspec.Struct):
    params: msgspec.Raw = msgspec.Raw(b"{}")


_ParamsOf = msgspec.json.Decoder(_RequestParams)


class BatchOpened(msgspec.Struct, frozen=True):
    """A batch arrived; its replies go out together once ``expected`` are ready."""

    batch: int
    expected: int


class IncomingRequest(msgspec.Struct, frozen=True):
    id: RequestId
    spec: MethodSpec
    params: Any
    meta: Mapping[str, Any]
    batch: int | None = None
    #: Set for modern requests (legacy requests rely on the session's state).
    peer: Peer | None = None
    inputs: Inputs | None = None
    #: The HTTP request's headers, when it came over HTTP (either era); None otherwise.
    http: HttpHeaders | None = None
    #: A legacy request's params as the peer sent them (what its application types may
    #: leave out, e.g. 2025-11-25's ``params.task`` to an application typed against
    #: 2026-07-28, is read from them when needed: ``params.augmentation``).
    raw_params: msgspec.Raw | None = None


class Listen(msgspec.Struct, frozen=True):
    """A modern ``subscriptions/listen``: keep its stream open and tag what goes on it."""

    id: RequestId
    #: The notification types asked for (the filter), as plain JSON.
    requested: Mapping[str, Any]
    peer: Peer


class IncomingNotification(msgspec.Struct, frozen=True):
    spec: MethodSpec
    params: Any
    #: The 2026-07-28 listen stream it came on (a modern client's; None otherwise).
    subscription: RequestId | None = None


#: The notification that cancels a request (over 2026-07-28 HTTP: closing its stream).
CANCELLED = "notifications/cancelled"


class Cancel(msgspec.Struct, frozen=True):
    request_id: RequestId
    reason: str | None


class Progress(msgspec.Struct, frozen=True):
    token: str | int
    progress: float
    total: float | None
    message: str | None


class Answer(msgspec.Struct, frozen=True):
    id: RequestId
    result: Any


class Failure(msgspec.Struct, frozen=True):
    id: RequestId
    error: McpError


class Negotiated(msgspec.Struct, frozen=True):
    """The handshake settled on ``version`` (server: initialize answered; client: accepted)."""

    version: str


class Refused(msgspec.Struct, frozen=True):
    """The handshake failed: the server refused ``initialize`` (its error) or answered a
    version the client cannot speak (a ``NegotiationError``)."""

    error: McpError | NegotiationError


Event = (
    Send
    | Listen
    | BatchOpened
    | IncomingRequest
    | IncomingNotification
    | Cancel
    | Progress
    | Answer
    | Failure
    | Negotiated
    | Refused
)


# -- the state machine ----------------------------------------------------------------------


class InputRequiredAnswer(msgspec.Struct, frozen=True):
    """A modern server needs input before it can answer; the client fulfils ``requests``
    and retries with the answers and ``state`` (passed back unchanged)."""

    requests: dict[str, Any]
    state: str | None


class _CancelParams(msgspec.Struct):
    requestId: str | int | None = None
    reason: str | None = None


class _ProgressParams(msgspec.Struct):
    progressToken: str | int
    progress: float
    total: float | None = None
    message: str | None = None


def read_cancel(params: msgspec.Raw | None) -> list[Event]:
    """The event a ``notifications/cancelled`` means (none without a request id); raises
    ``msgspec.ValidationError`` when its params are malformed."""
    p = msgspec.json.decode(params or b"{}", type=_CancelParams)
    return [] if p.requestId is None else [Cancel(p.requestId, p.reason)]


def read_progress(params: msgspec.Raw | None) -> Progress:
    """The event a ``notifications/progress`` means; raises ``msgspec.ValidationError``
    when its params are malformed."""
    q = msgspec.json.decode(params or b"{}", type=_ProgressParams)
    return Progress(q.progressToken, q.progress, q.total, q.message)


def refused_batch(why: str) -> list[Event]:
    """A whole batch refused (HTTP 400), with no id to answer."""
    error = jsonrpc.encode_error(None, INVALID_REQUEST, f"Invalid request: {why}")
    return [Send(error, status=400)]
