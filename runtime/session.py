"""The asyncio side of a connection: feeds frames to the sans-IO ``Connection`` and acts
on its events — runs handlers concurrently, cancels them, awaits answers, sends frames.

A transport is anything with ``receive() -> bytes | None`` (``None`` at end of input),
``send(bytes)`` and ``close()``; stdio and HTTP both fit.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from msgspec import UNSET

from . import connection as c
from .errors import INTERNAL_ERROR, ConnectionClosed, McpError
from .jsonrpc import RequestId

log = logging.getLogger("mcpgen.runtime")

#: Answers an incoming request: (event, context) -> result.
Dispatch = Callable[[c.IncomingRequest, "RequestScope"], Awaitable[Any]]
NotificationHook = Callable[[c.IncomingNotification], Awaitable[None]]
ProgressCallback = Callable[
    [float, "float | None", "str | None"], Awaitable[None] | None
]


class Transport(Protocol):
    async def receive(self) -> bytes | None: ...
    async def send(self, data: bytes) -> None: ...
    async def close(self) -> None: ...


class RequestScope:
    """The runtime's side of one incoming request (``_support.RequestContext``)."""

    __slots__ = ("session", "request_id", "meta", "cancelled")

    def __init__(
        self, session: Session, request_id: RequestId, meta: Mapping[str, Any]
    ) -> None:
        self.session = session
        self.request_id = request_id
        self.meta = meta
        self.cancelled = False

    @property
    def protocol_version(self) -> str:
        version = self.session.conn.version
        return version.version if version is not None else ""

    @property
    def client_info(self) -> Mapping[str, Any]:
        return self.session.conn.peer_info

    @property
    def client_capabilities(self) -> Mapping[str, Any]:
        return self.session.conn.peer_capabilities

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
        await self.session.notify("notifications/progress", params)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        conn = self.session.conn
        if "logging" not in conn.capabilities or not conn.log_allowed(level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self.session.notify("notifications/message", params)

    async def request(self, method: str, params: Any, result: Any = None) -> Any:
        return await self.session.request(method, params)

    async def notify(self, method: str, params: Any) -> None:
        await self.session.notify(method, params)


class Session:
    """Runs one connection over one transport until the peer goes away."""

    def __init__(
        self,
        conn: c.Connection,
        transport: Transport,
        dispatch: Dispatch | None = None,
        on_notification: NotificationHook | None = None,
        request_timeout: float | None = 60.0,
    ) -> None:
        self.conn = conn
        self.transport = transport
        self.dispatch = dispatch
        self.on_notification = on_notification
        self.request_timeout = request_timeout
        self.negotiated: asyncio.Future[str] = (
            asyncio.get_running_loop().create_future()
        )
        self._handlers: dict[RequestId, tuple[asyncio.Task[None], RequestScope]] = {}
        self._waiting: dict[RequestId, asyncio.Future[Any]] = {}
        self._progress: dict[str | int, ProgressCallback] = {}
        self._batches: dict[int, tuple[int, list[bytes]]] = {}
        self._background: set[asyncio.Task[None]] = set()
        self._closed = False

    # -- the read loop ------------------------------------------------------------------

    async def run(self, drain_timeout: float = 10.0) -> None:
        """Read until end of input; then let running handlers finish (bounded) and stop."""
        try:
            while True:
                frame = await self.transport.receive()
                if frame is None:
                    break
                for event in self.conn.receive(frame):
                    await self._handle(event)
            running = [task for task, _ in self._handlers.values()]
            if running:
                await asyncio.wait(running, timeout=drain_timeout)
        finally:
            self._shutdown()

    def _shutdown(self) -> None:
        self._closed = True
        self.conn.state = c.State.CLOSED
        for task, _ in list(self._handlers.values()):
            task.cancel()
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(ConnectionClosed("connection closed"))
        self._waiting.clear()
        if not self.negotiated.done():
            self.negotiated.cancel()  # awaited only by clients, which report ConnectionClosed

    async def _handle(self, event: c.Event) -> None:
        if isinstance(event, c.Send):
            await self._send(event.data, event.batch)
        elif isinstance(event, c.IncomingRequest):
            scope = RequestScope(self, event.id, event.meta)
            task = asyncio.create_task(self._serve(event, scope))
            self._handlers[event.id] = (task, scope)
        elif isinstance(event, c.Answer):
            future = self._waiting.pop(event.id, None)
            if future is not None and not future.done():
                future.set_result(event.result)
        elif isinstance(event, c.Failure):
            future = self._waiting.pop(event.id, None)
            if future is not None and not future.done():
                future.set_exception(event.error)
        elif isinstance(event, c.Cancel):
            running = self._handlers.get(event.request_id)
            if running is not None:
                running[1].cancelled = True
                running[0].cancel()
        elif isinstance(event, c.Progress):
            callback = self._progress.get(event.token)
            if callback is not None:
                outcome = callback(event.progress, event.total, event.message)
                if outcome is not None:
                    await outcome
        elif isinstance(event, c.IncomingNotification):
            if self.on_notification is not None:
                self._spawn(self.on_notification(event))
        elif isinstance(event, c.BatchOpened):
            if event.expected:
                self._batches[event.batch] = (event.expected, [])
        elif isinstance(event, c.Negotiated):
            if not self.negotiated.done():
                self.negotiated.set_result(event.version)
        elif isinstance(event, c.Refused):
            if not self.negotiated.done():
                self.negotiated.set_exception(event.error)

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _serve(self, event: c.IncomingRequest, scope: RequestScope) -> None:
        try:
            if self.dispatch is None:
                raise McpError(INTERNAL_ERROR, "no handlers")
            result = await self.dispatch(event, scope)
            frame = self.conn.result(event.id, result, event.spec.name)
        except asyncio.CancelledError:
            if scope.cancelled or self._closed:
                return  # cancelled by the peer: no response is sent
            raise
        except McpError as exc:
            frame = self.conn.error(event.id, exc)
        except Exception:
            log.exception("handler for %s failed", event.spec.name)
            frame = self.conn.error(
                event.id, McpError(INTERNAL_ERROR, "Internal error")
            )
        finally:
            self._handlers.pop(event.id, None)
        if not scope.cancelled:
            await self._send(frame, event.batch)

    async def _send(self, data: bytes, batch: int | None = None) -> None:
        if batch is not None and batch in self._batches:
            expected, frames = self._batches[batch]
            frames.append(data)
            if len(frames) < expected:
                return
            del self._batches[batch]
            data = b"[" + b",".join(frames) + b"]"
        if self._closed:
            return
        try:
            await self.transport.send(data)
        except (ConnectionError, OSError) as exc:
            log.debug("send failed: %s", exc)

    # -- outgoing -----------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: Any = UNSET,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
    ) -> Any:
        """Send a request and wait for its (decoded) result; raises ``McpError`` on an error
        answer, ``TimeoutError`` (after cancelling it at the peer) when none comes in time.
        """
        if self._closed:
            raise ConnectionClosed("connection closed")
        request_id, frame = self.conn.request(method, params)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        token = None
        if progress is not None:
            token = f"p{request_id}"
            self._progress[token] = progress
            frame = self._with_progress_token(method, params, token, request_id)
        await self._send(frame)
        try:
            return await asyncio.wait_for(future, timeout or self.request_timeout)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            if self.conn.forget(request_id):
                await self.notify(
                    "notifications/cancelled",
                    {"requestId": request_id, "reason": "cancelled by sender"},
                )
            raise
        finally:
            self._waiting.pop(request_id, None)
            if token is not None:
                self._progress.pop(token, None)

    def _with_progress_token(
        self, method: str, params: Any, token: str, request_id: RequestId
    ) -> bytes:
        from . import jsonrpc
        from msgspec import to_builtins

        plain = to_builtins(params) if params is not UNSET else {}
        meta = dict(plain.get("_meta") or {})
        meta["progressToken"] = token
        plain["_meta"] = meta
        return jsonrpc.encode_request(request_id, method, plain)

    async def notify(self, method: str, params: Any = UNSET) -> None:
        await self._send(self.conn.notification(method, params))

    async def close(self) -> None:
        await self.transport.close()
