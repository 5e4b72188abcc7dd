"""What a server says changed, as one stream of :class:`Change` in either era.

``async with session.listen(tools=True, uris=[...]) as changes: async for change in
changes: ...`` opens a 2026-07-28 ``subscriptions/listen`` stream (the server's
acknowledgement names what it honours: :attr:`Listener.honoured`), or, with a server of
the earlier revisions, subscribes to the URIs (``resources/subscribe``) and takes the
list changes and updates the session receives anyway (the HTTP GET stream, stdio). The
changes are the same either way.

A stream that drops is opened again (after a pause that doubles up to
:data:`MAX_PAUSE`): since the server resends nothing, every kind the stream carries is
then given once as ``missed`` (it may have changed meanwhile), so that a reader re-reads
what it depends on and loses nothing. Changes not read yet are held once each, however
often the server repeats them, and at most ``Limits.listen_backlog`` of them: beyond it
the resource updates collapse into one ``Change("resource", None)`` (re-read every
subscribed resource), so a server that floods cannot grow the client's memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from types import TracebackType
from typing import Any, Literal, Protocol

import msgspec

from ..aio.session import Session
from ..core.connection import Connection
from ..core.errors import INTERNAL_ERROR, ConnectionClosed, McpError, McpgenError
from ..core.json_values import as_array, as_object
from ..core.jsonrpc import RequestId

log = logging.getLogger("mcpgen.runtime.client")

LISTEN = "subscriptions/listen"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
#: A listen request waits this long for its answer (it comes only when the stream ends).
LISTEN_FOR = 10.0**9
#: Longest pause before a dropped stream is opened again, in seconds.
MAX_PAUSE = 30.0
#: Attempts in a row to open a dropped stream again before the reader is told it is lost.
MAX_REOPENS = 10
Kind = Literal["tools", "prompts", "resources", "resource"]
#: The notification of each kind of change.
NOTIFIED: dict[str, Kind] = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
    "notifications/resources/updated": "resource",
}
#: The listen filter flag of each list, and the server capability that offers it.
FLAGS: dict[Kind, str] = {
    "tools": "toolsListChanged",
    "prompts": "promptsListChanged",
    "resources": "resourcesListChanged",
}
URIS = "resourceSubscriptions"


class Change(msgspec.Struct, frozen=True):
    """One change: a list (``tools``, ``prompts``, ``resources``: the resources and their
    templates) or a subscribed resource (``resource``, its ``uri``; None: every
    subscribed resource). ``missed``: not told by the server, but possibly happened while
    the stream was down."""

    kind: Kind
    uri: str | None = None
    missed: bool = False


class ListenEnded(McpgenError):
    """The listen stream ended in a way the reader must hear of (the server refused it,
    or the connection went away for good)."""


class Host(Protocol):
    """What a listener needs of its client (``ClientSession``)."""

    @property
    def era(self) -> str: ...
    @property
    def server_capabilities(self) -> dict[str, Any]: ...
    @property
    def session(self) -> Session | None: ...
    @property
    def conn(self) -> Connection: ...
    async def hold(self, uris: Iterable[str]) -> None: ...
    async def release(self, uris: Iterable[str]) -> None: ...
    async def reopened(self) -> bool: ...
    def forget_listener(self, listener: Listener) -> None: ...


class Backlog:
    """The changes not read yet: each once, in the order first seen, at most ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._held: dict[tuple[str, str | None], Change] = {}
        self._ready = asyncio.Event()

    def __len__(self) -> int:
        return len(self._held)

    def add(self, change: Change) -> None:
        key = (change.kind, change.uri)
        if key in self._held or (change.kind == "resource" and ("resource", None) in self._held):
            return  # held already (an update of every resource covers this one)
        if change.kind == "resource" and len(self._held) >= self.limit:
            for held in [k for k in self._held if k[0] == "resource"]:
                del self._held[held]
            key, change = ("resource", None), Change("resource", None, change.missed)
        self._held[key] = change
        self._ready.set()

    def take(self) -> Change | None:
        if not self._held:
            self._ready.clear()
            return None
        key = next(iter(self._held))
        return self._held.pop(key)

    async def wait(self) -> None:
        await self._ready.wait()

    def wake(self) -> None:
        self._ready.set()


class Listener:
    """One listen: an async context manager, and an async iterator of :class:`Change`."""

    def __init__(self, host: Host, wanted: dict[str, Any], backlog: int, timeout: float) -> None:
        self._host = host
        #: The filter asked for (``subscriptions/listen``'s ``notifications``).
        self.wanted = wanted
        #: What the server honours (its acknowledgement; legacy: what its capabilities allow).
        self.honoured: dict[str, Any] = {}
        #: Times the stream was opened again after it dropped.
        self.reconnects = 0
        self.backlog = Backlog(backlog)
        self._timeout = timeout
        self._acked = asyncio.Event()
        self._acks = 0
        self._task: asyncio.Task[None] | None = None
        self._started = self._ended = False
        self._error: BaseException | None = None
        self._held: tuple[str, ...] = ()  # legacy: the URIs this listen subscribed to
        #: The request id of the open stream (modern), by which its notifications come.
        self.stream: RequestId | None = None

    # -- the reader's side -------------------------------------------------------------

    async def __aenter__(self) -> Listener:
        await self.start()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.close()

    def __aiter__(self) -> Listener:
        return self

    async def __anext__(self) -> Change:
        if not self._started:
            await self.start()
        while True:
            change = self.backlog.take()
            if change is not None:
                return change
            if self._ended:
                if self._error is not None:
                    error, self._error = self._error, None
                    raise error
                raise StopAsyncIteration
            await self.backlog.wait()

    async def start(self) -> None:
        """Open the stream and wait for the server to acknowledge it."""
        host = self._host
        if host.session is None:
            raise RuntimeError("not connected")
        if self._started:
            raise RuntimeError("this listen was started already")
        self._started = True
        if host.era == "modern":
            self._task = asyncio.get_running_loop().create_task(self._follow())
            waiting = asyncio.ensure_future(self._acked.wait())
            try:
                done, _ = await asyncio.wait(
                    {waiting, self._task}, timeout=self._timeout, return_when="FIRST_COMPLETED"
                )
            finally:
                waiting.cancel()
            if not done:
                await self.close()
                raise ListenEnded(
                    f"the server did not acknowledge {LISTEN} within {self._timeout:g} s"
                )
            if not self._acked.is_set():
                error = self._error or ListenEnded(f"the server ended {LISTEN} at once")
                self._error = None
                await self.close()
                raise error
            return
        self.honoured = legacy_honoured(self.wanted, host.server_capabilities)
        self._held = tuple(as_array(self.honoured.get(URIS)) or ())
        await host.hold(self._held)

    async def close(self) -> None:
        """Stop listening (the modern stream is cancelled; a legacy subscription made for
        this listen alone ends)."""
        if self._ended:
            return
        self._ended = True
        self.backlog.wake()
        self._host.forget_listener(self)
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        held, self._held = self._held, ()
        if held:
            with contextlib.suppress(McpgenError):
                await self._host.release(held)

    # -- the client's side -------------------------------------------------------------

    def acknowledged(self, params: Any) -> None:
        """The server's acknowledgement: what it honours. Every one after the first
        follows a reconnect, so whatever the stream carries may have changed meanwhile."""
        plain = as_object(msgspec.to_builtins(params)) or {}
        self.honoured = as_object(plain.get("notifications")) or {}
        if self._acked.is_set():
            self.missed()
        self._acks += 1
        self._acked.set()

    def notified(self, method: str, params: Any) -> None:
        """A change notification for this listen (modern: it came on this stream);
        dropped when it is of a kind not honoured."""
        kind = NOTIFIED.get(method)
        if kind is None or self._ended:
            return
        if kind != "resource":
            if self.honoured.get(FLAGS[kind]):
                self.backlog.add(Change(kind))
            return
        uri = getattr(params, "uri", None)
        if uri is None:
            uri = (as_object(params) or {}).get("uri")
        subscribed = as_array(self.honoured.get(URIS)) or []
        if isinstance(uri, str) and any(_within(uri, s) for s in subscribed if isinstance(s, str)):
            self.backlog.add(Change("resource", uri))

    def missed(self) -> None:
        """The stream was down: everything it carries may have changed."""
        for kind, flag in FLAGS.items():
            if self.honoured.get(flag):
                self.backlog.add(Change(kind, missed=True))
        if as_array(self.honoured.get(URIS)):
            self.backlog.add(Change("resource", None, missed=True))

    def ended(self, error: BaseException | None = None) -> None:
        """No more changes: the reader finishes what is held, then stops (or gets ``error``)."""
        self._ended = True
        self._error = error
        self.backlog.wake()

    async def _follow(self) -> None:
        """Hold the modern stream open, opening it again when it drops (refused when it
        first opens, or again after it dropped: the reader gets the error)."""
        pause, failures = 0.5, 0
        host = self._host
        while not self._ended:
            session = host.session
            if session is None:
                return self.ended(ListenEnded("the client closed"))
            acks = self._acks
            self.stream = host.conn.next_id  # the id the request below gets
            try:
                await session.request(LISTEN, {"notifications": self.wanted}, timeout=LISTEN_FOR)
            except McpError as exc:  # over HTTP, a dropped stream is a -32603 too
                if exc.code != INTERNAL_ERROR or not self._acked.is_set():
                    return self.ended(exc)
                problem: BaseException = exc
            except (ConnectionClosed, OSError) as exc:
                if not await host.reopened():
                    return self.ended(ListenEnded(f"the listen stream was lost: {exc}"))
                problem = exc
            else:  # the server ended it gracefully
                return self.ended()
            if not self._acked.is_set():
                return self.ended(ListenEnded(f"the listen stream dropped at once: {problem}"))
            if self._acks > acks:  # it was up: a new run of failures starts
                pause, failures = 0.5, 0
            failures += 1
            if failures > MAX_REOPENS:
                return self.ended(
                    ListenEnded(f"the listen stream could not be opened again: {problem}")
                )
            log.info("the listen stream dropped (%s); opening it again", problem)
            await asyncio.sleep(pause)
            pause = min(pause * 2, MAX_PAUSE)
            self.reconnects += 1


def _within(uri: str, subscribed: str) -> bool:
    """``uri`` is the subscribed resource or one under it (the spec lets an update name a
    sub-resource of the one subscribed)."""
    return uri == subscribed or (
        uri.startswith(subscribed) and subscribed.endswith(("/", ":", "#"))
    )


def wanted_filter(
    capabilities: dict[str, Any],
    tools: bool | None,
    prompts: bool | None,
    resources: bool | None,
    uris: Iterable[str],
) -> dict[str, Any]:
    """The filter a listen asks for: each list asked for (None: if the server announces
    its changes), and the URIs."""
    wanted: dict[str, Any] = {}
    for (kind, flag), asked in zip(FLAGS.items(), (tools, prompts, resources)):
        offered = bool((as_object(capabilities.get(kind)) or {}).get("listChanged"))
        if asked or (asked is None and offered):
            wanted[flag] = True
    listed = sorted(set(uris))
    if listed:
        wanted[URIS] = listed
    return wanted


def legacy_honoured(wanted: dict[str, Any], capabilities: dict[str, Any]) -> dict[str, Any]:
    """What a server of the earlier revisions will send of ``wanted``: the lists whose
    changes it announces, and the URIs when it offers subscriptions."""
    honoured: dict[str, Any] = {}
    for kind, flag in FLAGS.items():
        if wanted.get(flag) and (as_object(capabilities.get(kind)) or {}).get("listChanged"):
            honoured[flag] = True
    resources = as_object(capabilities.get("resources")) or {}
    if wanted.get(URIS) and resources.get("subscribe"):
        honoured[URIS] = list(as_array(wanted[URIS]) or [])
    return honoured
