"""What a handler's outcome answers: the frame (and HTTP status hint) for a result it
returned or an exception it raised, in the words of the peer's version.

A protocol error is answered as itself (with its HTTP status on the stateless era), a
modern handler waiting for input as ``input_required``, a request of the handler's own
that went unanswered as an internal error naming it, a URL elicitation as the client's
version takes it, and anything else (a failure, or a result that cannot be sent) as a
logged internal error that says nothing of the server's insides. A request the peer
cancelled meanwhile is answered with nothing. :func:`answer_now` answers a request whose
handler cannot suspend where it was read, before any session or task is made for it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from ..core import connection as c
from ..core import events as ev
from ..core.errors import INTERNAL_ERROR, McpError, RequestTimeout, UrlElicitationRequired
from ..core.modern import InputRequired, http_status
from .at_once import NOTHING, WAITS, at_once, failed

log = logging.getLogger("mcpgen.runtime")


class Answered(Protocol):
    """What of a request's scope its answer depends on (``session.RequestScope``)."""

    @property
    def cancelled(self) -> bool: ...

    @property
    def asked(self) -> dict[str, Any]: ...

    def url_elicitation_required(self, exc: UrlElicitationRequired) -> Exception: ...


S = TypeVar("S", bound=Answered)


def settled(
    conn: c.Connection,
    event: ev.IncomingRequest,
    scope: Answered,
    result: Any,
    exc: Exception | None,
) -> tuple[bytes, int | None] | None:
    """The answer to ``event`` whose handler returned ``result`` or raised ``exc``: its
    frame and HTTP status hint, or None when the peer cancelled the request."""
    version = event.peer.version if event.peer is not None else None
    status = None
    try:
        try:
            if exc is not None:
                if isinstance(exc, UrlElicitationRequired):
                    exc = scope.url_elicitation_required(exc)
                raise exc
            frame = conn.result(event.id, result, event.spec.name, version)
        except InputRequired:
            frame = conn.result(event.id, conn.input_required(event, scope.asked))
        except McpError as error:
            frame = conn.error(event.id, error, version)
            status = http_status(error.code) if version is not None else None
        except RequestTimeout as timeout:  # the handler's own request went unanswered
            frame = conn.error(event.id, McpError(INTERNAL_ERROR, str(timeout)), version)
    except Exception:  # the handler failed, or what it returned cannot be sent
        log.exception("handler for %s failed", event.spec.name)
        frame = conn.error(event.id, McpError(INTERNAL_ERROR, "Internal error"), version)
        status = None
    return None if scope.cancelled else (frame, status)


def answer_now(
    conn: c.Connection,
    dispatch: Callable[[ev.IncomingRequest, S], Awaitable[Any]] | None,
    event: ev.IncomingRequest,
    scope: S,
) -> tuple[bytes, int | None] | Awaitable[Any]:
    """The request's dispatch, and when its handler cannot suspend, its answer, framed
    (:data:`~.at_once.NOTHING` when none is to be sent: cancelled); else what is left to
    await for the answer (the handler's awaitable, run in a task or the request's own, as
    ``Session.answer`` does). A request of a batch is never answered here: its answer
    goes with the others'."""
    batch = event.batch
    try:
        if dispatch is None:
            raise McpError(INTERNAL_ERROR, "no handlers")
        pending = dispatch(event, scope)
    except (Exception, asyncio.CancelledError) as exc:
        if batch is not None:
            return failed(exc)
        if isinstance(exc, asyncio.CancelledError):
            return NOTHING  # as the task it ran in would have been: cancelled, silent
        return settled(conn, event, scope, None, exc) or NOTHING
    if batch is not None:
        return pending
    try:
        result = at_once(pending)
    except asyncio.CancelledError:
        return NOTHING
    except Exception as exc:
        return settled(conn, event, scope, None, exc) or NOTHING
    if result is WAITS:
        return pending
    if not scope.cancelled:  # settled's commonest case, a result, inline
        peer = event.peer
        try:
            version = peer.version if peer is not None else None
            return conn.result(event.id, result, event.spec.name, version), None
        except Exception:  # cannot be sent: settled says so (and logs it)
            pass
    return settled(conn, event, scope, result, None) or NOTHING
