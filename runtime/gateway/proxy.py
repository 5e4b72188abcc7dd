"""``Proxy``: an upstream MCP server served again, on any transport, to clients of any
protocol version.

::

    from mcpgen.runtime.gateway import Proxy

    Proxy("python -m some_server").run("http", port=8000)

The proxy is an ordinary :class:`~runtime.server.server.Server` whose handlers send each
request on to the upstream (:mod:`~runtime.gateway.link`): downstream clients negotiate
their own version with it, the upstream negotiates its own with the proxy's client, and
the runtime re-shapes every answer between the two, so a 2026-07-28 client reaches a
legacy server and the reverse. What the upstream offers (tools, prompts, resources,
completions, logging) is what the proxy declares; its name, version and instructions are
the upstream's unless given.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from types import ModuleType
from typing import Any, Literal

from ..aio.middleware import Middleware
from ..aio.session import RequestScope, Session
from ..aio.stdio import StdioServerTransport
from ..app.app import App, newest_binding
from ..core.errors import INTERNAL_ERROR, ConnectionClosed, McpError
from ..core.json_values import as_array, as_object
from ..core.limits import CLIENT, DEFAULT, Limits
from ..core.outgoing import CachePolicy
from ..server.server import CHANGES, Server
from .link import Link, close_all
from .parking import Parking
from .upstream import Upstream

log = logging.getLogger("mcpgen.runtime.gateway")

#: What an upstream may offer → the handlers that send its requests on, by method.
FORWARDED: dict[str, dict[str, str]] = {
    "tools": {"list_tools": "tools/list", "call_tool": "tools/call"},
    "prompts": {"list_prompts": "prompts/list", "get_prompt": "prompts/get"},
    "resources": {
        "list_resources": "resources/list",
        "list_resource_templates": "resources/templates/list",
        "read_resource": "resources/read",
    },
    "completions": {"complete": "completion/complete"},
}
#: Lists whose changes a legacy upstream announces on its session (a 2026-07-28 one only
#: on a ``subscriptions/listen`` stream, which the proxy does not open yet).
LISTS = ("tools", "prompts", "resources")
Transport = Literal["stdio", "http", "websocket"]


class Proxy:
    """Serve ``upstream`` (an :class:`Upstream`, a URL, a command line or its words, or a
    :class:`Server`/:class:`App` in this process) to clients of every version.

    ``binding`` is the generated ``server`` module the proxy is typed against (default:
    the newest dated version; a value the upstream sends that it cannot hold is dropped).
    ``name``/``version``/``title``/``instructions`` default to the upstream's.
    ``limits`` bound what downstream clients can make the proxy hold (and how many
    upstream connections a ``per_session`` upstream may have open: ``max_sessions``);
    ``upstream_limits`` bound what the upstream can (its ``request_timeout`` is how long
    a proxied request may wait). The other options are :class:`Server`'s.
    """

    def __init__(
        self,
        upstream: Upstream | str | Sequence[str] | Server | App,
        *,
        binding: ModuleType | None = None,
        name: str | None = None,
        version: str | None = None,
        title: str | None = None,
        instructions: str | None = None,
        versions: Iterable[str] | None = None,
        limits: Limits | None = None,
        upstream_limits: Limits = CLIENT,
        cache: CachePolicy | None = None,
        state_key: bytes | None = None,
        middleware: Iterable[Middleware] = (),
        auth: Any = None,
    ) -> None:
        self.upstream = upstream if isinstance(upstream, Upstream) else Upstream.of(upstream)
        self.binding = binding or newest_binding()
        self.upstream_limits = upstream_limits
        self.auth = auth
        self._identity = {"name": name, "version": version, "title": title}
        self._instructions = instructions
        self._options: dict[str, Any] = {
            "versions": versions,
            "limits": limits,
            "cache": cache,
            "state_key": state_key,
            "middleware": tuple(middleware),
        }
        self._server: Server | None = None
        self._shared: Link | None = None
        #: Links of a ``per_session`` upstream: by downstream session, or by client
        #: identity for 2026-07-28 requests (which belong to no session).
        self._links: dict[Any, Link] = {}
        self._lock = asyncio.Lock()
        #: Resources downstream listen streams wait for, by (session, request id).
        self._listened: dict[tuple[int, Any], list[str]] = {}
        self._background: set[asyncio.Task[None]] = set()
        #: Calls of legacy upstreams waiting on a 2026-07-28 client's next input round.
        chosen = limits or DEFAULT
        self.parking = Parking(chosen.max_in_flight, chosen.request_timeout)
        self._sweeping: asyncio.Task[None] | None = None

    # -- lifetime ------------------------------------------------------------------------------

    @property
    def server(self) -> Server:
        """The proxy's :class:`Server` (once :meth:`start` connected to the upstream)."""
        if self._server is None:
            raise RuntimeError("the proxy is not started: await proxy.start() first")
        return self._server

    @property
    def limits(self) -> Limits:
        return self.server.limits

    async def start(self) -> Server:
        """Connect to the upstream, learn what it offers, and make the proxy's server (a
        ``per_session`` upstream is connected once to learn it, then once per client)."""
        async with self._lock:
            if self._server is not None:
                return self._server
            link = await self._open_link(None)
            session = link.session
            assert session is not None
            self._server = self._server_like(
                session.server_capabilities, session.server_info, link.era, link.instructions
            )
            if self.upstream.per_session:
                await link.close()
            else:
                self._shared = link
            return self._server

    async def close(self) -> None:
        """Close every upstream connection (a command's processes shut down)."""
        links = [*self._links.values(), *([self._shared] if self._shared else [])]
        self._links.clear()
        self._shared = None
        if self._sweeping is not None:
            self._sweeping.cancel()
        await self.parking.close()
        await close_all(links)

    async def __aenter__(self) -> Proxy:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- serving -------------------------------------------------------------------------------

    def run(
        self,
        transport: Transport = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 3001,
        **http_options: Any,
    ) -> None:
        """Serve until stdin closes (``stdio``) or until interrupted (``http``: Streamable
        HTTP with HTTP+SSE beside it; ``websocket``: MCP over WebSocket at the app's path);
        ``http_options`` go to :class:`~runtime.http.endpoint.McpHttpApp` and
        ``runtime.http.serve.config``."""
        if transport == "stdio":
            if http_options:
                raise TypeError(f"options for HTTP given to a stdio proxy: {sorted(http_options)}")
            asyncio.run(self._serve_stdio())
            return
        if transport not in ("http", "websocket"):
            raise ValueError(f"transport must be 'stdio', 'http' or 'websocket', not {transport!r}")
        from ..http.serve import AnnouncingServer, config

        if transport == "websocket":
            http_options.setdefault("websocket_path", http_options.get("path", "/mcp"))
        serving = {k: http_options.pop(k) for k in ("http", "log_level") if k in http_options}
        app = self.http_app(**http_options)
        settings = config(app, host, port, self._options["limits"], **serving)
        with contextlib.suppress(KeyboardInterrupt):
            AnnouncingServer(settings).run()

    def http_app(self, **options: Any) -> ProxyHttpApp:
        """The ASGI app serving the proxy (see :class:`ProxyHttpApp`)."""
        if self.auth is not None:
            options.setdefault("auth", self.auth)
        return ProxyHttpApp(self, **options)

    async def _serve_stdio(self) -> None:
        server = await self.start()
        try:
            await server.serve(await StdioServerTransport.open(limits=server.limits))
        finally:
            await self.close()

    # -- links -----------------------------------------------------------------------------------

    async def link_for(self, scope: RequestScope) -> Link:
        """The upstream connection a downstream request goes over (opened if need be)."""
        shared = self._shared
        if not self.upstream.per_session:
            if shared is not None and not shared.closed:
                return shared
            async with self._lock:  # the upstream ended for good: connect again, once
                if self._shared is None or self._shared.closed:
                    old, self._shared = self._shared, await self._open_link(None)
                    if old is not None:
                        await old.close()
                return self._shared
        key = self._key_of(scope)
        link = self._links.get(key)
        if link is not None and not link.closed:
            return link
        async with self._lock:
            link = self._links.get(key)
            if link is None or link.closed:
                self._sweep()
                if len(self._links) >= self.server.limits.max_sessions:
                    raise McpError(
                        INTERNAL_ERROR,
                        f"the proxy holds {len(self._links)} upstream connections"
                        " (Limits.max_sessions); try again later",
                    )
                owner = scope.session if scope.event.peer is None else None
                link = self._links[key] = await self._open_link(owner)
                self._start_sweeping()
            return link

    def client_of(self, scope: RequestScope) -> Any:
        """Who sent a downstream request, as far as the proxy can tell clients apart."""
        return self._key_of(scope)

    def _key_of(self, scope: RequestScope) -> Any:
        """A legacy client's session; a 2026-07-28 client by who it is (its token's
        principal, else the client's name and version)."""
        if scope.event.peer is None:
            return scope.session
        principal = scope.principal
        if principal is not None:
            return ("principal", getattr(principal, "subject", None) or repr(principal))
        info = scope.client_info
        return ("client", str(info.get("name", "")), str(info.get("version", "")))

    async def _open_link(self, owner: Session | None) -> Link:
        link = Link(self.upstream, self._client_binding(), self._changed, self.parking, owner)
        try:
            await link.open(self._client_handlers(), limits=self.upstream_limits)
        except McpError:
            raise
        except Exception as exc:
            raise McpError(
                INTERNAL_ERROR, f"cannot reach the upstream {self.upstream.where}: {exc}"
            ) from exc
        return link

    def _client_binding(self) -> Any:
        return self.binding.ServerHandlers.__binding__

    def _client_handlers(self) -> type:
        version_package = self._client_binding().types.__name__.rsplit(".", 1)[0]
        module = importlib.import_module(version_package + ".client")
        return module.ClientHandlers

    def _sweep(self) -> None:
        """Close the links of sessions that ended, and 2026-07-28 clients' links idle
        for longer than ``Limits.session_idle_timeout``."""
        idle = self.server.limits.session_idle_timeout
        now = time.monotonic()
        for key, link in list(self._links.items()):
            gone = link.owner is not None and link.owner.closed
            stale = link.owner is None and not link.inflight and now - link.last_used > idle
            if gone or stale or link.closed:
                del self._links[key]
                asyncio.get_running_loop().create_task(link.close())

    def _start_sweeping(self) -> None:
        if self._sweeping is None or self._sweeping.done():
            self._sweeping = asyncio.get_running_loop().create_task(self._sweep_now_and_then())

    async def _sweep_now_and_then(self) -> None:
        period = min(60.0, self.server.limits.session_idle_timeout / 2)
        while self._links:
            await asyncio.sleep(period)
            self._sweep()

    # -- the server ----------------------------------------------------------------------------

    def _server_like(
        self, caps: dict[str, Any], info: dict[str, Any], era: str, instructions: str | None
    ) -> Server:
        """A server offering what the upstream offers, answering by sending it on."""
        offered = [kind for kind in FORWARDED if kind in caps]
        resources = as_object(caps.get("resources")) or {}
        subscribe = bool(resources.get("subscribe"))
        handlers = forwarding_handlers(self, self.binding.ServerHandlers, offered, subscribe)()
        changing = [kind for kind in LISTS if (as_object(caps.get(kind)) or {}).get("listChanged")]
        identity = {
            "name": self._identity["name"] or str(info.get("name") or self.upstream.name),
            "version": self._identity["version"] or str(info.get("version") or "0.1.0"),
        }
        title = self._identity["title"] or info.get("title")
        options = {k: v for k, v in self._options.items() if v is not None}
        server = Server(
            handlers,
            **identity,
            title=title if isinstance(title, str) else None,
            instructions=self._instructions or instructions,
            logging="logging" in caps,
            list_changed=changing,
            auth=self.auth,
            **options,
        )
        if subscribe:
            server.on_listen = self._listen_changed
        return server

    def _listen_changed(self, session: Any, request_id: Any, honoured: Any) -> None:
        """A downstream listen stream opened (or ended): the upstream is asked for the
        updates of the resources it names (or no longer, once nobody waits for them)."""
        key = (id(session), request_id)
        if honoured is None:
            uris = self._listened.pop(key, [])
            change = "unwant"
        else:
            wanted = as_array(honoured.get("resourceSubscriptions")) or []
            uris = [u for u in wanted if isinstance(u, str)]
            if uris:
                self._listened[key] = uris
            change = "want"
        link = self._shared
        if not uris or link is None:
            return
        task = asyncio.get_running_loop().create_task(self._rewant(link, change, uris))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _rewant(self, link: Link, change: str, uris: list[str]) -> None:
        for uri in uris:
            try:
                await (link.want(uri) if change == "want" else link.unwant(uri))
            except Exception as exc:  # the listen stays open; its updates may not come
                log.warning("subscribing the upstream to %s failed: %s", uri, exc)

    async def _changed(self, what: str, uri: str | None, owner: Session | None) -> None:
        """Announce an upstream's change to the clients it concerns: the one session its
        link serves, or every client."""
        server = self._server
        if server is None:
            return
        if owner is None:
            await server.notify_changed(what, uri)
            return
        method, wanted = CHANGES[what]
        await owner.publish(method, {"uri": uri} if uri is not None else {}, wanted)


def forwarding_handlers(proxy: Proxy, base: type, offered: Sequence[str], subscribe: bool) -> type:
    """A subclass of ``base`` (the binding's ``ServerHandlers``) sending on the requests
    of what the upstream ``offered`` (and (un)subscriptions, when it takes them)."""
    methods: dict[str, Callable[..., Awaitable[Any]]] = {}
    for kind in offered:
        for handler, method in FORWARDED[kind].items():
            methods[handler] = _forwarding(proxy, method)
    if subscribe:
        methods["subscribe"] = _subscribing(proxy, True)
        methods["unsubscribe"] = _subscribing(proxy, False)
    return type("ProxyHandlers", (base,), methods)


async def _sent_on(proxy: Proxy, method: str, params: Any, scope: RequestScope) -> Any:
    link = await proxy.link_for(scope)
    try:
        return await link.call(method, params, scope, proxy.client_of(scope))
    except ConnectionClosed as exc:
        raise McpError(
            INTERNAL_ERROR, f"the upstream {proxy.upstream.where} went away: {exc}"
        ) from None


def _forwarding(proxy: Proxy, method: str) -> Callable[..., Awaitable[Any]]:
    async def forward(_: Any, params: Any, ctx: Any) -> Any:
        return await _sent_on(proxy, method, params, getattr(ctx, "raw", ctx))

    return forward


def _subscribing(proxy: Proxy, on: bool) -> Callable[..., Awaitable[Any]]:
    """A legacy client's (un)subscription: the upstream's is made with the first
    downstream subscription to a URI and ended with the last (:meth:`Link.want`)."""

    async def subscription(_: Any, params: Any, ctx: Any) -> Any:
        scope: RequestScope = getattr(ctx, "raw", ctx)
        uri = str(getattr(params, "uri", ""))
        if (uri in scope.session.subscriptions) == on:
            return {}  # this session holds it already, or never did
        link = await proxy.link_for(scope)
        try:
            await (link.want(uri) if on else link.unwant(uri))
        except ConnectionClosed as exc:
            raise McpError(
                INTERNAL_ERROR, f"the upstream {proxy.upstream.where} went away: {exc}"
            ) from None
        return {}

    return subscription


class ProxyHttpApp:
    """The ASGI app of a :class:`Proxy`: connects to the upstream at the server's startup
    (or on the first request, under a server that sends no lifespan events), then serves
    as :class:`~runtime.http.endpoint.McpHttpApp` does with ``options``; closes the
    upstream connections at shutdown."""

    def __init__(self, proxy: Proxy, **options: Any) -> None:
        self.proxy = proxy
        self.options = options
        self.path: str = options.get("path", "/mcp")
        self.websocket_path: str | None = options.get("websocket_path")
        self.app: Any = None
        self._starting = asyncio.Lock()

    async def _started(self) -> Any:
        async with self._starting:
            if self.app is None:
                from ..http.endpoint import McpHttpApp

                self.app = McpHttpApp(await self.proxy.start(), **self.options)
            return self.app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        app = self.app or await self._started()
        await app(scope, receive, send)

    async def _lifespan(self, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self._started()
                except Exception as exc:
                    log.error("the proxy cannot start: %s", exc)
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.proxy.close()
                await send({"type": "lifespan.shutdown.complete"})
                return


__all__ = ["Proxy", "ProxyHttpApp", "forwarding_handlers"]
