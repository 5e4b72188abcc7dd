"""What the HTTP transport needs of the server it serves, as a structural type: any
object with these members (``runtime.server.Server`` is one) can be served over HTTP."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from ..aio.session import RequestScope
from ..core.binding import Publish
from ..core.connection import Connection
from ..core.events import IncomingNotification, IncomingRequest
from ..core.limits import Limits
from ..core.negotiation import Versions
from ..core.tool_headers import ServerToolHeaders


class HttpServed(Protocol):
    """What the HTTP transport needs of the server it serves (``runtime.Server`` is one):
    the versions and limits, a connection per legacy session, dispatch, and the changes
    it announces, and what it runs beside its connections (started and closed with the app)."""

    @property
    def versions(self) -> Versions: ...
    @property
    def limits(self) -> Limits: ...
    @property
    def tool_headers(self) -> ServerToolHeaders:
        """The ``x-mcp-header`` annotations of its tools (``runtime.http.tool_params``)."""
        ...

    def connection(self) -> Connection: ...
    def dispatch(self, event: IncomingRequest, scope: RequestScope) -> Awaitable[Any]: ...
    async def on_notification(self, event: IncomingNotification) -> None: ...
    async def learn_tool_headers(self, event: IncomingRequest, scope: RequestScope) -> None: ...
    def subscribe(self, publish: Publish, *, own: bool = False) -> Callable[[], None]:
        """Have ``publish`` told of each change announced (``own``: only of those made in
        this process, not those other processes' bus brings)."""
        ...

    async def start(self) -> None:
        """Begin what runs beside the connections (once, whoever calls first)."""
        ...

    async def close(self) -> None: ...
    def health(self) -> dict[str, Any]:
        """Whether its shared stores can serve (the health endpoint's answer)."""
        ...


__all__ = ["HttpServed"]
