"""Serve an implementation of the generated ``ServerHandlers`` over any transport."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

import msgspec

from ..core import connection as c
from ..core.errors import METHOD_NOT_FOUND, McpError
from ..core.limits import DEFAULT, Limits
from ..core.binding import Binding
from ..core.capabilities import derive_capabilities, implemented
from ..core.negotiation import VersionInfo, Versions
from ..core.roles import role_of
from ..core.request_state import KeyRing
from .bus import Bus
from ..aio.session import RequestScope
from ..aio.session import RESOURCE_UPDATES, Session
from ..aio.transport import Transport
from ..core.subscriptions import subscribe_refusal
from ..core.binding import Publish
from ..core.extensions import Extension, declare, extension_row
from ..aio.middleware import Call, Chain, Middleware
from ..core.outgoing import CachePolicy
from ..core.tool_headers import LIST_TOOLS, ServerToolHeaders
from ..core.pages import pages
from ..core.json_values import as_object

if TYPE_CHECKING:  # the tasks machinery is imported by a server that runs tasks
    from ..tasks.engine import Tasks, TaskTools
    from ..tasks.extension import ModernTasks
    from ..tasks.legacy import LegacyTasks

CALL_TOOL = "tools/call"


def task_tools_of(given: TaskTools | Mapping[str, str] | None) -> TaskTools:
    """``Server(task_tools=...)`` as a :class:`TaskTools` (a table, or none at all)."""
    from ..tasks.engine import SupportTable

    if given is None or isinstance(given, Mapping):
        return SupportTable(given or {})
    return given


def legacy_task_capability() -> dict[str, Any]:
    from ..tasks.legacy import CAPABILITY as LEGACY_TASKS

    return msgspec.json.decode(msgspec.json.encode(LEGACY_TASKS))  # a copy of its own


log = logging.getLogger("mcpgen.runtime")
F = TypeVar("F", bound=Callable[..., Any])

SUBSCRIBE = "resources/subscribe"
#: Requests that (un)subscribe a legacy session to one resource's updates, once answered.
SUBSCRIBING: dict[str, Callable[[set[str], str], None]] = {
    SUBSCRIBE: set[str].add,
    "resources/unsubscribe": set[str].discard,
}
#: What changed → the notification announcing it and the listen filter that asks for it.
CHANGES = {
    "tools": ("notifications/tools/list_changed", "toolsListChanged"),
    "prompts": ("notifications/prompts/list_changed", "promptsListChanged"),
    "resources": ("notifications/resources/list_changed", "resourcesListChanged"),
    "resource": ("notifications/resources/updated", RESOURCE_UPDATES),
}


def server_info(local: VersionInfo, **fields: Any) -> dict[str, Any]:
    """The server's ``Implementation`` (plain JSON) of the ``fields`` given (None: left
    out), checked against ``local``'s definition where it has one; each client is sent
    the fields its version knows (``runtime.core.capabilities.info_for``)."""
    info = {k: v for k, v in fields.items() if v is not None}
    if "icons" in info:
        info["icons"] = [dict(icon) for icon in info["icons"]]
    implementation = role_of(local.binding.types, "Implementation")
    if implementation is not None:
        try:
            local.binding.types.convert(info, implementation)
        except msgspec.ValidationError as exc:
            raise ValueError(f"invalid server info: {exc}") from None
    return info


class Server:
    """An MCP server: your ``ServerHandlers`` subclass plus identity and options.

    ``versions`` are the protocol versions it accepts (default: every generated dated
    version); ``title``, ``description``, ``icons`` (``{"src": ..., "mimeType": ...,
    "sizes": [...], "theme": ...}`` mappings) and ``website_url`` join its name and version
    in the ``serverInfo`` clients see, each only for versions that define it
    (``description``, ``icons``, ``websiteUrl``: 2025-11-25 on); ``list_changed`` names the lists it announces changes of (``"tools"``,
    ``"prompts"``, ``"resources"``); ``logging`` advertises log messages. ``state_key``
    signs the ``requestState`` of multi-round requests: workers serving the same clients
    must share it (default: ``$MCPGEN_STATE_KEY`` as hex, with ``$MCPGEN_STATE_KEYS_ACCEPTED``
    still accepted, else a random key per process); a ``runtime.core.request_state.KeyRing``
    rotates keys.
    ``limits`` bound what clients can make it hold (``runtime.core.limits.Limits``); ``cache``
    gives 2026-07-28 results the caching hints their handlers left out. ``tasks`` runs
    tools as tasks (``runtime.tasks.engine``; e.g. ``Tasks(RedisTaskStore(...))``): those
    ``task_tools`` names (tool name -> "optional" or "required", or a
    ``runtime.tasks.engine.TaskTools`` such as an ``App``). ``auth`` (a
    ``runtime.http.auth.resource_server.ResourceServer``) protects its HTTP endpoint; stdio and
    in-memory transports are not affected (the spec leaves stdio to credentials from the
    environment). ``bus`` (``runtime.server.bus.Bus``, e.g. ``runtime.cluster.RedisBus``)
    carries announcements between the processes serving the same clients.
    """

    def __init__(
        self,
        handlers: Any,
        *,
        name: str,
        version: str = "0.1.0",
        title: str | None = None,
        description: str | None = None,
        icons: Iterable[Mapping[str, Any]] | None = None,
        website_url: str | None = None,
        instructions: str | None = None,
        versions: Iterable[str] | None = None,
        logging: bool = True,
        list_changed: Iterable[str] = (),
        capabilities: Mapping[str, Any] | None = None,
        state_key: bytes | KeyRing | None = None,
        limits: Limits | None = None,
        cache: CachePolicy | None = None,
        middleware: Iterable[Middleware] = (),
        extensions: Iterable[Extension] = (),
        tasks: Tasks | None = None,
        task_tools: TaskTools | Mapping[str, str] | None = None,
        auth: Any = None,
        bus: Bus | None = None,
    ) -> None:
        self.handlers = handlers
        #: Protects the HTTP endpoint (``runtime.http.auth.resource_server.ResourceServer``), if set.
        self.auth = auth
        #: Bounds on what a peer can make this server hold (see ``runtime.core.limits``).
        self.limits = limits or DEFAULT
        #: Caching hints of results whose handler set none (2026-07-28 ``ttlMs``,
        #: ``cacheScope``; see ``runtime.core.outgoing.CachePolicy``).
        self.cache = cache or CachePolicy()
        self.state_key: bytes | KeyRing = KeyRing.of(state_key)
        handlers_type: type[Any] = handlers.__class__
        binding: Binding = handlers_type.__binding__
        if tasks is not None:  # 2026-07-28 on, tasks are an extension
            from ..tasks.extension import EXTENSION as TASKS_EXTENSION

            extensions = (*extensions, TASKS_EXTENSION)
        self.versions = Versions.around(binding, versions, tuple(extensions))
        self.local = self.versions.local
        self.context_class = getattr(handlers_type, "__context__", None)
        self.info = server_info(
            self.local,
            name=name,
            version=version,
            title=title,
            description=description,
            icons=icons,
            websiteUrl=website_url,
        )
        self.instructions = instructions
        caps = derive_capabilities(handlers, self.versions, "client", capabilities)
        if logging:
            caps.setdefault("logging", {})
        for kind in list_changed:
            if kind in caps:
                caps[kind]["listChanged"] = True
        self.tasks = tasks
        self.legacy_tasks: LegacyTasks | None = None
        self.modern_tasks: ModernTasks | None = None
        if tasks is not None:
            tools = task_tools_of(task_tools)
            from ..tasks import extension as tasks_extension, legacy as tasks_legacy

            self.legacy_tasks = tasks_legacy.LegacyTasks(tasks, tools.task_support)
            self.modern_tasks = tasks_extension.ModernTasks(tasks, tools, self.announce)
            caps.setdefault("tasks", legacy_task_capability())
        self.capabilities = declare(caps, self.versions.extensions)
        #: Handler name → bound method, for every method the handlers implement.
        self.implemented = {
            row.handler: getattr(handlers, row.handler)
            for row in self.versions.all_rows()
            if row.sender == "client" and implemented(handlers, row.handler)
        }
        for extension in self.versions.extensions:  # methods named by their handlers
            for method in extension.methods:
                if method.direction == "client" and implemented(handlers, method.handler):
                    self.implemented[method.handler] = getattr(handlers, method.handler)
        if self.legacy_tasks is not None and self.modern_tasks is not None:
            served = {**self.legacy_tasks.handlers(), **self.modern_tasks.handlers()}
            for handler_name, task_handler in served.items():
                self.implemented.setdefault(handler_name, task_handler)
        #: Methods whose dispatch does more than call their handler (see :meth:`dispatch`).
        self._noted = frozenset(
            {LIST_TOOLS, *SUBSCRIBING, *([CALL_TOOL] if self.legacy_tasks is not None else [])}
        )
        self.sessions: set[Session] = set()
        #: Told of every change announced (HTTP apps: their sessions and listen streams).
        self._subscribers: list[Publish] = []
        #: Told only of the changes announced in this process.
        self._own_subscribers: list[Publish] = []
        #: Carries announcements to and from the other processes serving the same clients.
        self.bus = bus
        self._started = False
        #: The ``x-mcp-header`` annotations of this server's tools, for checking calls.
        self.tool_headers = ServerToolHeaders()
        #: Around every handler, in the order added (``runtime.aio.middleware``).
        self.middleware = Chain(self._after_middleware, middleware)
        #: Told of each ``subscriptions/listen`` stream opening (with the filter honoured)
        #: and ending (None), with its session and request id: a server whose resources
        #: live elsewhere (a proxy) learns which updates its clients wait for. Set it
        #: before connections are made.
        self.on_listen: Callable[[Any, Any, Mapping[str, Any] | None], None] | None = None

    def handle(self, method: str) -> Callable[[F], F]:
        """Decorate ``async def handler(params, ctx)`` as the handler of an extension's
        ``method`` (see ``runtime.core.extensions``)."""
        row = extension_row(self.versions.extensions, "client", method)

        def register(handler: F) -> F:
            self.implemented[row.handler] = handler
            return handler

        return register

    def use(self, middleware: Middleware) -> Middleware:
        """Add ``middleware`` around every handler, inside those added before (usable
        as a decorator)."""
        self.middleware.add(middleware)
        return middleware

    def connection(self) -> c.Connection:
        conn = c.Connection(
            role="server",
            versions=self.versions,
            local=self.local,
            info=self.info,
            capabilities=self.capabilities,
            instructions=self.instructions,
            state_key=self.state_key,
            limits=self.limits,
            cache=self.cache,
        )
        conn.on_listen = self.on_listen
        return conn

    def dispatch(self, event: c.IncomingRequest, scope: RequestScope) -> Awaitable[Any]:
        """The request's answer, to await. Most requests need nothing done around their
        handler: theirs is the handler's own awaitable, with no coroutine of this
        method's in between."""
        spec = event.spec
        handler = self.implemented.get(spec.handler)
        if handler is None:
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {spec.name}")
        if spec.name in self._noted or self.middleware.items:
            return self._dispatch_noted(event, scope, handler)
        # run_handler's body, inline: the path of every request
        context_class = self.context_class
        return handler(event.params, context_class(scope) if context_class is not None else scope)

    def _dispatch_noted(
        self, event: c.IncomingRequest, scope: RequestScope, handler: Callable[..., Any]
    ) -> Awaitable[Any]:
        """:meth:`dispatch` of a request with something done around its handler (a task,
        middleware, what the server notes of its answer)."""
        name = event.spec.name
        if self.legacy_tasks is not None and name == CALL_TOOL:
            era = self.legacy_tasks if event.peer is None else self.modern_tasks
            as_task = era.call(event, scope, self.run_handler) if era is not None else None
            if as_task is not None:
                return as_task
        ctx = self.context_class(scope) if self.context_class is not None else scope
        if self.middleware.items:
            return self.middleware.run(Call(event, scope, ctx))
        if name == LIST_TOOLS or name in SUBSCRIBING:
            return self._handle_then_note(event, scope, ctx, handler)
        return handler(event.params, ctx)

    def run_handler(self, event: c.IncomingRequest, scope: RequestScope) -> Awaitable[Any]:
        """The handler's answer to ``event`` in ``scope`` (middleware and all)."""
        ctx = self.context_class(scope) if self.context_class is not None else scope
        if self.middleware.items:
            return self.middleware.run(Call(event, scope, ctx))
        return self._handle(event, scope, ctx, self.implemented[event.spec.handler])

    def _after_middleware(self, call: Call) -> Awaitable[Any]:
        event = call.event
        handler = self.implemented[event.spec.handler]
        scope = cast(RequestScope, call.scope)  # what dispatch put in the call
        return self._handle(event, scope, call.context, handler)

    def _handle(
        self, event: c.IncomingRequest, scope: RequestScope, ctx: Any, handler: Callable[..., Any]
    ) -> Awaitable[Any]:
        name = event.spec.name
        if name == LIST_TOOLS or name in SUBSCRIBING:
            return self._handle_then_note(event, scope, ctx, handler)
        return handler(event.params, ctx)

    async def _handle_then_note(
        self, event: c.IncomingRequest, scope: RequestScope, ctx: Any, handler: Callable[..., Any]
    ) -> Any:
        """A request whose answer the server notes: a tool listing (its tools' header
        annotations), a (un)subscription the handler accepted."""
        name = event.spec.name
        if name != LIST_TOOLS:
            return await self._subscription(event, scope, ctx, handler)
        result = await handler(event.params, ctx)
        self.tool_headers.learn(result)
        return result

    async def _subscription(
        self, event: c.IncomingRequest, scope: RequestScope, ctx: Any, handler: Callable[..., Any]
    ) -> Any:
        """(Un)subscribe the session to a URI once the handler accepts (the handler decides
        which URIs name a resource). A subscription beyond the session's limits
        (``runtime.core.subscriptions``) is refused before the handler runs, and again should the
        session have filled up while it ran."""
        name, uri = event.spec.name, getattr(event.params, "uri", None)
        held, limits = scope.session.subscriptions, scope.session.conn.limits
        if name == SUBSCRIBE and (refusal := subscribe_refusal(held, uri, limits)) is not None:
            raise refusal
        result = await handler(event.params, ctx)
        if isinstance(uri, str):
            if name == SUBSCRIBE and (refusal := subscribe_refusal(held, uri, limits)):
                raise refusal
            SUBSCRIBING[name](held, uri)
            if scope.session.subscribed is not None:
                await scope.session.subscribed()
        return result

    async def learn_tool_headers(self, event: c.IncomingRequest, scope: RequestScope) -> None:
        """List this server's own tools (every page) to learn their header annotations,
        with the ``_meta`` of the request that needs them."""
        ctx = self.context_class(scope) if self.context_class is not None else scope
        spec = self.local.types_of("client", LIST_TOOLS)
        handler = self.implemented.get(spec.handler) if spec is not None else None
        if spec is None or spec.params is None or handler is None:
            return
        params_type = spec.params
        meta = msgspec.to_builtins(event.meta) if event.meta else None

        async def fetch(_: str, asked: Any) -> Any:
            raw: dict[str, Any] = {"_meta": meta} if meta else {}
            raw.update(as_object(asked) or {})  # the cursor of a page after the first
            return await handler(self.local.binding.types.convert(raw, params_type), ctx)

        try:
            async for page in pages(fetch, LIST_TOOLS, None, self.limits):
                self.tool_headers.learn(page)
        except Exception:  # the call goes on unchecked rather than failing for this
            log.exception("listing tools to learn their x-mcp-header annotations failed")

    async def on_notification(self, event: c.IncomingNotification) -> None:
        hook = self.implemented.get(event.spec.handler)
        if hook is not None:
            await hook(event.params)

    async def serve(self, transport: Transport) -> None:
        """Serve one connection until the peer closes it."""
        await self.start()
        session = Session(self.connection(), transport, self.dispatch, self.on_notification)
        self.sessions.add(session)
        try:
            # in a task of its own (cancelled with this one): every wait of the read loop
            # resumes a chain of coroutines, and this one and its callers stay out of it
            await asyncio.ensure_future(session.run())
        finally:
            self.sessions.discard(session)
            await transport.close()

    async def notify_changed(self, what: str, uri: str | None = None) -> None:
        """Announce that a list (``"tools"``, ``"prompts"``, ``"resources"``) or, with
        ``what="resource"``, one resource changed: to legacy sessions, and to every modern
        listen stream whose filter asked for it."""
        method, wanted = CHANGES[what]
        if what == "tools":
            self.tool_headers.forget()
        await self.announce(method, {"uri": uri} if uri is not None else {}, wanted)

    async def announce(self, method: str, params: dict[str, Any], wanted: str) -> None:
        """Send ``method`` to legacy sessions (see ``Session.publish``) and to the modern
        listen streams whose filter asked for ``wanted``: this process's, and, through the
        ``bus``, those of the other processes serving the same clients."""
        await self.deliver(method, params, wanted)
        for publish in list(self._own_subscribers):
            await publish(method, params, wanted)
        if self.bus is not None:
            await self.bus.publish(method, params, wanted)

    async def deliver(self, method: str, params: dict[str, Any], wanted: str) -> None:
        """An announcement to this process's sessions and listen streams alone."""
        for session in list(self.sessions):
            await session.publish(method, params, wanted)
        for publish in list(self._subscribers):
            await publish(method, params, wanted)

    def health(self) -> dict[str, Any]:
        """Whether the shared stores this server uses can serve, as last found (a health
        endpoint's answer): ``{"status": "ok" | "unavailable", "checks": {name: state}}``,
        one check per store that reports outages (the bus, the tasks' store)."""
        checks: dict[str, str] = {}
        store = self.tasks.store if self.tasks is not None else None
        for name, part in (("bus", self.bus), ("tasks", store)):
            outage = getattr(part, "outage", None)
            if outage is None:
                continue
            since = getattr(outage, "since", None)
            lasted = time.monotonic() - since if isinstance(since, float) else None
            checks[name] = "ok" if lasted is None else f"unreachable for {lasted:.0f} s"
        ok = all(state == "ok" for state in checks.values())
        return {"status": "ok" if ok else "unavailable", "checks": checks}

    async def start(self) -> None:
        """Begin what runs beside the connections (the bus's receiving); once, whoever
        calls first (an ASGI app at its startup, ``serve`` for each connection)."""
        if self._started:
            return
        self._started = True
        if self.bus is not None:
            await self.bus.start(self.deliver)

    async def close(self) -> None:
        """Stop what :meth:`start` began."""
        if self._started and self.bus is not None:
            await self.bus.close()
        self._started = False

    def subscribe(self, publish: Publish, *, own: bool = False) -> Callable[[], None]:
        """Have ``publish(method, params, wanted)`` announce each change too (a transport
        holding sessions of its own); ``own``: only the changes announced in this process,
        not those the ``bus`` brings from the others (a transport whose sessions every
        process shares tells them itself). Returns what ends the subscription."""
        subscribers = self._own_subscribers if own else self._subscribers
        subscribers.append(publish)
        return lambda: subscribers.remove(publish)
