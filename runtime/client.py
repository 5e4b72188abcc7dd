"""Connect to an MCP server and get the generated typed ``Client`` for it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from msgspec import UNSET

from . import connection as c
from .errors import METHOD_NOT_FOUND, ConnectionClosed, McpError
from .negotiation import VersionInfo, Versions
from .server import derive_capabilities, implemented
from .session import ProgressCallback, RequestScope, Session, Transport

C = TypeVar("C")


class ClientSession:
    """One connection to a server, as the generated ``Client`` uses it (``Requester``).

    ``binding`` is the version the application is typed against (``Client.__binding__``);
    ``versions`` the versions it offers (default: every generated version of that era).
    """

    def __init__(
        self,
        binding: Any,
        handlers: Any = None,
        *,
        name: str = "mcpgen-client",
        version: str = "0.1.0",
        versions: Iterable[str] | None = None,
        capabilities: Mapping[str, Any] | None = None,
        request_timeout: float | None = 60.0,
    ) -> None:
        self.binding = binding
        self.handlers = handlers
        self.local = VersionInfo.of(binding)
        self.versions = Versions.around(binding, versions)
        bindings = [info.binding for info in self.versions.infos.values()]
        caps = (
            derive_capabilities(handlers, bindings, "server", capabilities)
            if handlers
            else dict(capabilities or {})
        )
        self.conn = c.Connection(
            role="client",
            versions=self.versions,
            local=self.local,
            info={"name": name, "version": version},
            capabilities=caps,
        )
        self.request_timeout = request_timeout
        self.session: Session | None = None
        self._reader: asyncio.Task[None] | None = None

    @property
    def protocol_version(self) -> str:
        return self.conn.version.version if self.conn.version is not None else ""

    @property
    def server_info(self) -> dict[str, Any]:
        return self.conn.peer_info

    @property
    def server_capabilities(self) -> dict[str, Any]:
        return self.conn.peer_capabilities

    async def connect(self, transport: Transport, timeout: float = 30.0) -> str:
        """Run the handshake over ``transport``; returns the negotiated version."""
        self.session = Session(
            self.conn,
            transport,
            self._dispatch,
            self._on_notification,
            self.request_timeout,
        )
        self._reader = asyncio.create_task(self.session.run())
        offered = tuple(self.versions.of_era("legacy"))
        try:
            await transport.send(self.conn.initialize(offered))
        except (ConnectionError, OSError) as exc:
            await self.close()
            raise ConnectionClosed(f"the server went away before the handshake ({exc})") from None
        try:
            return await asyncio.wait_for(asyncio.shield(self.session.negotiated), timeout)
        except asyncio.CancelledError:
            await self.close()
            if self.session.negotiated.cancelled():
                raise ConnectionClosed(
                    "the server closed the connection during the handshake"
                ) from None
            raise
        except BaseException:
            await self.close()
            raise

    async def request(
        self,
        method: str,
        params: Any = UNSET,
        result: Any = None,
        progress: ProgressCallback | None = None,
    ) -> Any:
        if self.session is None:
            raise RuntimeError("not connected")
        return await self.session.request(method, params, progress=progress)

    async def notify(self, method: str, params: Any = UNSET) -> None:
        if self.session is None:
            raise RuntimeError("not connected")
        await self.session.notify(method, params)

    async def _dispatch(self, event: c.IncomingRequest, scope: RequestScope) -> Any:
        handler = getattr(self.handlers, event.spec.handler, None) if self.handlers else None
        if handler is None or not implemented(self.handlers, event.spec.handler):
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {event.spec.name}")
        return await handler(event.params, scope)

    async def _on_notification(self, event: c.IncomingNotification) -> None:
        hook = getattr(self.handlers, event.spec.handler, None) if self.handlers else None
        if hook is not None and implemented(self.handlers, event.spec.handler):
            await hook(event.params)

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._reader, 5.0)


@contextlib.asynccontextmanager
async def stdio_client(
    client_class: type[C],
    command: str,
    args: Sequence[str] = (),
    *,
    handlers: Any = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    versions: Iterable[str] | None = None,
    name: str = "mcpgen-client",
    stderr: int | None = None,
) -> AsyncIterator[C]:
    """Spawn ``command`` and yield a typed client (``client_class`` is a generated
    ``Client``); the server is shut down (stdin closed, SIGTERM, SIGKILL) on exit."""
    from .stdio import StdioProcess

    process = await StdioProcess.spawn(command, args, env=env, cwd=cwd, stderr=stderr)
    session = ClientSession(
        getattr(client_class, "__binding__"), handlers, name=name, versions=versions
    )
    try:
        await session.connect(process)
        yield client_class(session)  # type: ignore[call-arg]
    finally:
        await session.close()
