"""Middleware around dispatch, on either side: code that sees each incoming request on its
way to the handler, and its result (or error) on the way back.

A middleware is ``async def mw(call: Call, call_next: Next) -> Any``: it may look at the
request (method, params, context, protocol version, HTTP headers when it came over HTTP),
refuse it by raising (an ``McpError`` is answered as it is; any other exception as an
internal error, logged, its text kept from the peer), change what the handler gets
(``call_next(call.replace(params=...))``) or what goes back (the value it returns). They
run in the order added, the first outermost::

    async def timed(call: Call, call_next: Next) -> Any:
        started = time.perf_counter()
        try:
            return await call_next(call)
        finally:
            log.info("%s took %.1f ms", call.method, (time.perf_counter() - started) * 1e3)

    server.use(timed)          # or Server(..., middleware=[timed]); App.use; ClientSession.use

A server or client with no middleware dispatches as before: nothing is built per request.

What runs before middleware: the protocol's own checks (version, capabilities, an
extension's opt-in) and, over HTTP, the transport's (``Mcp-Param-*`` headers, for which a
server that has not listed its tools yet lists them once, with the caller's ``_meta``).
Refusing a caller outright (authentication) belongs in the HTTP layer, before all of it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Protocol

import msgspec

from ..core.events import IncomingRequest
from ..core.jsonrpc import RequestId
from ..core.modern import HttpHeaders


class Scope(Protocol):
    """The runtime's side of one request (a server's ``RequestScope``; on a client, what
    answers a modern server's input request)."""

    @property
    def protocol_version(self) -> str: ...


class Call:
    """One incoming request as middleware sees it."""

    __slots__ = ("event", "scope", "context")

    def __init__(self, event: IncomingRequest, scope: Scope, context: Any) -> None:
        self.event = event
        #: The runtime's side of the request (progress, logging, asking the peer).
        self.scope = scope
        #: What the handler receives as its context (the generated ``Context`` wrapper).
        self.context = context

    @property
    def method(self) -> str:
        return self.event.spec.name

    @property
    def params(self) -> Any:
        """The params, decoded to the application's types."""
        return self.event.params

    @property
    def request_id(self) -> RequestId:
        return self.event.id

    @property
    def meta(self) -> Mapping[str, Any]:
        """The request's ``_meta`` (modern: the client's version, capabilities, info)."""
        return self.event.meta

    @property
    def protocol_version(self) -> str:
        return self.scope.protocol_version

    @property
    def http(self) -> HttpHeaders | None:
        """The HTTP request's headers when the request came over HTTP, else None."""
        return self.event.http

    @property
    def principal(self) -> Any:
        """Who the request's verified access token speaks for (``runtime.http.auth.principal``),
        on a protected HTTP endpoint; else None. The token itself is not among the
        headers then: nothing behind the endpoint can pass it on."""
        http = self.event.http
        return http.principal if http is not None else None

    def header(self, name: str) -> str | None:
        """An HTTP request header (any case), or None (also over stdio and in memory)."""
        http = self.event.http
        return http.header(name) if http is not None else None

    def replace(self, *, params: Any) -> Call:
        """This call with other params for the handler (of the type it expects)."""
        return Call(msgspec.structs.replace(self.event, params=params), self.scope, self.context)


Next = Callable[[Call], Awaitable[Any]]
Middleware = Callable[[Call, Next], Awaitable[Any]]


class Chain:
    """Middleware in the order added (the first outermost) around ``last``, the dispatch
    that finds and runs the handler."""

    __slots__ = ("items", "last")

    def __init__(self, last: Next, items: Iterable[Middleware] = ()) -> None:
        self.last = last
        self.items: list[Middleware] = []
        for middleware in items:
            self.add(middleware)

    def __bool__(self) -> bool:
        return bool(self.items)

    def add(self, middleware: Middleware) -> None:
        if not callable(middleware):
            raise TypeError(f"middleware must be callable, not {type(middleware).__name__}")
        self.items.append(middleware)

    def run(self, call: Call) -> Awaitable[Any]:
        return self._step(0)(call)

    def _step(self, index: int) -> Next:
        if index == len(self.items):
            return self.last
        middleware, after = self.items[index], self._step(index + 1)

        def step(call: Call) -> Awaitable[Any]:
            return middleware(call, after)

        return step
