"""The connections to one mounted upstream: one shared by every downstream client, or
one per client (``Upstream.per_session``), opened when first needed and closed when their
client is gone.

A legacy client is its session; a 2026-07-28 client belongs to no session, and is told
apart by its token's principal, else by its name and version. At most
``Limits.max_sessions`` per-client connections are open at once; those of sessions that
ended, and 2026-07-28 clients' unused for ``Limits.session_idle_timeout``, are closed.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..aio.session import RequestScope, Session
from ..core.errors import INTERNAL_ERROR, McpError
from ..core.limits import Limits
from .link import Link, asked_capabilities, close_all
from .mount import Mount
from .parking import Parking

#: Told of an upstream's change: (what, the URI as the downstream names it, the session
#: the connection serves or None, the connection it was heard on).
Announce = Callable[[str, "str | None", "Session | None", int], Awaitable[None]]


def client_of(scope: RequestScope) -> Any:
    """Who sent a downstream request, as far as the proxy can tell clients apart."""
    if scope.event.peer is None:
        return scope.session
    principal = scope.principal
    if principal is not None:
        return ("principal", getattr(principal, "subject", None) or repr(principal))
    info = scope.client_info
    return ("client", str(info.get("name", "")), str(info.get("version", "")))


#: The most sets of client capabilities a legacy upstream gets a connection of its own for.
CAPABILITY_SETS = 8


class Pool:
    """The open connections to ``mount``'s upstream."""

    def __init__(
        self,
        mount: Mount,
        binding: Any,
        client_handlers: type,
        upstream_limits: Limits,
        parking: Parking,
        announce: Announce,
    ) -> None:
        self.mount = mount
        self.upstream = mount.upstream
        self._binding = binding
        self._client_handlers = client_handlers
        self._upstream_limits = upstream_limits
        self._parking = parking
        self._announce = announce
        self.limits: Limits | None = None  # the proxy's, once its server is made
        self.shared: Link | None = None
        self.links: dict[Any, Link] = {}
        #: Shared connections to a legacy upstream declaring less than ``shared``, by
        #: what they declare (``_as_capable``).
        self.by_capabilities: dict[str, Link] = {}
        self._lock = asyncio.Lock()
        self._sweeping: asyncio.Task[None] | None = None
        #: What the upstream said of its tools as tasks when first connected (a live
        #: shared connection's own knowledge is newer), and whether it makes tasks itself.
        self._task_support: dict[str, str] = {}
        self.runs_tasks = False

    async def learn_tasks(self, link: Link) -> None:
        """Learn from ``link`` (the first connection) which tools the upstream runs as
        tasks, or whether it decides for itself (a 2026-07-28 upstream)."""
        self.runs_tasks = link.runs_tasks
        session = link.session
        if session is not None and "tools" in session.server_capabilities:
            self._task_support = dict(await link.learn_task_support())

    @property
    def task_support(self) -> dict[str, str]:
        """Each upstream tool's ``execution.taskSupport``, as last learned."""
        shared = self.shared
        if shared is not None and shared.task_support is not None:
            return shared.task_support
        return self._task_support

    async def open(
        self, owner: Session | None = None, capabilities: Mapping[str, Any] | None = None
    ) -> Link:
        """A new connection to the upstream (serving ``owner`` alone, if given; declaring
        only ``capabilities`` of what can be asked of its client, if given)."""

        heard_on: list[int] = []

        async def changed(what: str, uri: str | None, session: Session | None) -> None:
            outward = self.mount.outward("uri", uri) if uri is not None else None
            await self._announce(what, outward, session, heard_on[0])

        link = Link(self.upstream, self._binding, changed, self._parking, owner, capabilities)
        heard_on.append(id(link))
        try:
            await link.open(self._client_handlers, limits=self._upstream_limits)
        except McpError:
            raise
        except Exception as exc:
            raise McpError(
                INTERNAL_ERROR, f"cannot reach the upstream {self.upstream.where}: {exc}"
            ) from exc
        return link

    async def link_for(self, scope: RequestScope) -> Link:
        """The connection a downstream request goes over (opened if need be)."""
        if not self.upstream.per_session:
            shared = self.shared
            if shared is not None and not shared.closed:
                if shared.era != "legacy":
                    return shared  # a 2026-07-28 upstream is told per request
                return await self._as_capable(scope, shared)
            async with self._lock:  # the upstream ended for good: connect again, once
                if self.shared is None or self.shared.closed:
                    old, self.shared = self.shared, await self.open()
                    if old is not None:
                        await old.close()
                        await self.shared.adopt(old.subscriptions)
                return self.shared
        key = client_of(scope)
        link = self.links.get(key)
        if link is not None and not link.closed:
            return link
        asked = asked_capabilities(scope)
        async with self._lock:
            link = self.links.get(key)
            if link is None or link.closed:
                limits = self._limits()
                self.sweep()
                if len(self.links) >= limits.max_sessions:
                    raise McpError(
                        INTERNAL_ERROR,
                        f"the proxy holds {len(self.links)} connections to {self.upstream.name!r}"
                        " (Limits.max_sessions); try again later",
                    )
                owner = scope.session if scope.event.peer is None else None
                link = self.links[key] = await self.open(owner, asked)
                self._start_sweeping()
            return link

    async def _as_capable(self, scope: RequestScope, shared: Link) -> Link:
        """The shared connection to a legacy upstream that declares what the downstream
        client declares it can be asked (sampling, elicitation, roots): the upstream then
        judges what it may ask as it would for that client. One per set of capabilities
        clients declare, at most :data:`CAPABILITY_SETS` (beyond: the one declaring all
        the proxy relays); each client's requests, subscriptions included, all go over
        its one, where the upstream keeps what it keeps per session."""
        asked = asked_capabilities(scope)
        if asked == shared.capabilities_declared:
            return shared
        key = json.dumps(asked, sort_keys=True)
        link = self.by_capabilities.get(key)
        if link is not None and not link.closed:
            return link
        async with self._lock:
            link = self.by_capabilities.get(key)
            if link is None or link.closed:
                if link is None and len(self.by_capabilities) >= CAPABILITY_SETS:
                    return shared
                link = self.by_capabilities[key] = await self.open(None, asked)
                await link.adopt(dict(shared.subscriptions))  # what listen streams wait for
            return link

    def shared_links(self) -> list[Link]:
        """The connections every client may use: the shared one and those per set of
        capabilities (a listen stream's resources are subscribed on each)."""
        links = [self.shared, *self.by_capabilities.values()]
        return [link for link in links if link is not None and not link.closed]

    def _limits(self) -> Limits:
        assert self.limits is not None, "the pool serves once the proxy's server is made"
        return self.limits

    def sweep(self) -> None:
        """Close the links of sessions that ended, and 2026-07-28 clients' links idle
        for longer than ``Limits.session_idle_timeout``."""
        idle = self._limits().session_idle_timeout
        now = time.monotonic()
        for key, link in list(self.links.items()):
            gone = link.owner is not None and link.owner.closed
            stale = link.owner is None and not link.inflight and now - link.last_used > idle
            if gone or stale or link.closed:
                del self.links[key]
                asyncio.get_running_loop().create_task(link.close())

    def _start_sweeping(self) -> None:
        if self._sweeping is None or self._sweeping.done():
            self._sweeping = asyncio.get_running_loop().create_task(self._sweep_now_and_then())

    async def _sweep_now_and_then(self) -> None:
        period = min(60.0, self._limits().session_idle_timeout / 2)
        while self.links:
            await asyncio.sleep(period)
            self.sweep()

    async def close(self) -> None:
        links = [*self.links.values(), *self.by_capabilities.values()]
        links += [self.shared] if self.shared else []
        self.links.clear()
        self.by_capabilities.clear()
        self.shared = None
        if self._sweeping is not None:
            self._sweeping.cancel()
        await close_all(links)


__all__ = ["Announce", "Pool", "client_of"]
