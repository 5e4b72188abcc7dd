"""``Proxy``: upstream MCP servers served again, on any transport, to clients of any
protocol version.

::

    from mcpgen.runtime.gateway import Proxy

    Proxy("python -m some_server").run("http", port=8000)

The proxy is an ordinary :class:`~runtime.server.server.Server` whose handlers send each
request on to an upstream (:mod:`~runtime.gateway.link`): downstream clients negotiate
their own version with it, the upstream negotiates its own with the proxy's client, and
the runtime re-shapes every answer between the two, so a 2026-07-28 client reaches a
legacy server and the reverse. What the upstreams offer (tools, prompts, resources,
completions, logging) is what the proxy declares. One upstream is served as it is, with
its name, version and instructions unless given; several are mounted under prefixes
(:mod:`~runtime.gateway.mount`), their lists merged.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from types import ModuleType
from typing import Any, Literal

import msgspec

from ..aio.middleware import Middleware
from ..aio.session import RequestScope, Session
from ..aio.stdio import StdioServerTransport
from ..app.app import App, newest_binding
from ..app.pages import page
from ..core.errors import INTERNAL_ERROR, ConnectionClosed, McpError
from ..core.json_values import as_array, as_object
from ..core.limits import CLIENT, DEFAULT, Limits
from ..core.outgoing import CachePolicy
from ..core.request_state import KeyRing
from ..server.server import CHANGES, Server
from .mount import Mount, check_mounts, outward_result, owner_of, unknown
from .parking import Parking
from .pool import Pool, client_of
from .quota import ClientQuota
from .upstream import Upstream
from ..tasks.engine import IMMEDIATE_MS, Tasks

log = logging.getLogger("mcpgen.runtime.gateway")
#: A change heard again this soon (on another connection to the same upstream) is the same.
ONCE_WITHIN = 0.5
#: Each client's bounds unless a proxy is given others (``quota=None``: none).
DEFAULT_QUOTA = ClientQuota()

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
#: A list method → the key of its items, and the capability that offers it.
LISTED = {
    "tools/list": ("tools", "tools"),
    "prompts/list": ("prompts", "prompts"),
    "resources/list": ("resources", "resources"),
    "resources/templates/list": ("resourceTemplates", "resources"),
}
CALL_TOOL, LIST_TOOLS = "tools/call", "tools/list"
#: Lists whose changes an upstream may announce.
LISTS = ("tools", "prompts", "resources")
Transport = Literal["stdio", "http", "websocket"]
#: What a proxy may be given as its upstream(s).
Target = Upstream | Mount | str | Sequence[str] | Server | App


def mounts_of(given: Target | Sequence[Upstream | Mount]) -> list[Mount]:
    """The mounts of what a proxy is given: one upstream as it is, or several, each under
    its name unless its ``Mount`` says otherwise."""
    if isinstance(given, (list, tuple)) and all(isinstance(g, (Upstream, Mount)) for g in given):
        items: list[Upstream | Mount] = [g for g in given if isinstance(g, (Upstream, Mount))]
        if not items:
            raise ValueError("a proxy needs at least one upstream")
        as_is = "" if len(items) == 1 else None
        return [i if isinstance(i, Mount) else Mount(i, as_is) for i in items]
    if isinstance(given, Mount):
        return [given]
    if isinstance(given, Upstream):
        return [Mount(given, "")]
    if isinstance(given, (Server, App, str)):
        return [Mount(Upstream.of(given), "")]
    return [Mount(Upstream.of([str(word) for word in given]), "")]


class UpstreamUnreachable(McpError):
    """The proxy cannot start: an upstream cannot be reached (its command exits or fails
    to start, its URL does not answer as an MCP server). The message names each one."""


class Proxy:
    """Serve ``upstream`` (an :class:`Upstream`, a URL, a command line or its words, a
    :class:`Server`/:class:`App` in this process, or a list of upstreams and
    :class:`~runtime.gateway.mount.Mount` s) to clients of every version.

    ``binding`` is the generated ``server`` module the proxy is typed against (default:
    the newest dated version; a value an upstream sends that it cannot hold is dropped).
    ``name``/``version``/``title``/``instructions`` default to the upstream's (with
    several, ``mcpgen-proxy`` and each upstream's instructions under its prefix).
    ``limits`` bound what downstream clients can make the proxy hold (and how many
    upstream connections a ``per_session`` upstream may have open: ``max_sessions``);
    ``upstream_limits`` bound what an upstream can (its ``request_timeout`` is how long
    a proxied request may wait). The proxy runs tasks of its own (``tasks``, default in
    memory) when an upstream runs tasks or ``task_after_ms`` is set: a call slower than
    that many milliseconds becomes a task for a client that takes tasks, kept until it
    asks for its result (see :meth:`task_support` and ``strict_tasks``). ``quota`` bounds each client's requests per second and
    in flight (:class:`~runtime.gateway.quota.ClientQuota`; None: no bound). With several
    upstreams, each list is fetched whole from each (at most ``list_pages`` pages) and
    served in pages of ``page_size``. The other options are :class:`Server`'s.
    """

    def __init__(
        self,
        upstream: Target | Sequence[Upstream | Mount],
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
        state_key: bytes | KeyRing | None = None,
        middleware: Iterable[Middleware] = (),
        auth: Any = None,
        page_size: int = 100,
        list_pages: int = 100,
        quota: ClientQuota | None = DEFAULT_QUOTA,
        tasks: Tasks | None = None,
        task_after_ms: int | None = None,
        strict_tasks: bool = False,
    ) -> None:
        if page_size < 1 or list_pages < 1:
            raise ValueError("page_size and list_pages must be positive")
        if task_after_ms is not None and task_after_ms < 0:
            raise ValueError("task_after_ms must not be negative")
        self.mounts = mounts_of(upstream)
        check_mounts(self.mounts)
        self.binding = binding or newest_binding()
        self.upstream_limits = upstream_limits
        self.auth = auth
        self.page_size = page_size
        self.list_pages = list_pages
        self._identity = {"name": name, "version": version, "title": title}
        self._instructions = instructions
        self._options: dict[str, Any] = {
            "versions": versions,
            "limits": limits,
            "cache": cache,
            "state_key": state_key,
            "middleware": (*([quota.meter()] if quota is not None else []), *middleware),
        }
        #: The proxy's own tasks (made at start when not given and needed) and, when set,
        #: how long any call runs before a client that takes tasks gets one instead.
        self.tasks = tasks
        self.task_after_ms = task_after_ms
        self.strict_tasks = strict_tasks
        self._server: Server | None = None
        self._lock = asyncio.Lock()
        #: Calls of legacy upstreams waiting on a 2026-07-28 client's next input round.
        chosen = limits or DEFAULT
        self.parking = Parking(chosen.max_in_flight, chosen.request_timeout)
        self.pools = [
            Pool(m, self._client_binding(), self._client_handlers(), upstream_limits,
                 self.parking, self._changed)
            for m in self.mounts
        ]  # fmt: skip
        #: One upstream served with its own names: requests and answers go as they are.
        self._as_is = (
            len(self.mounts) == 1 and not self.mounts[0].at and _unfiltered(self.mounts[0])
        )
        #: Resources downstream listen streams wait for, by (session, request id).
        self._listened: dict[tuple[int, Any], list[str]] = {}
        self._background: set[asyncio.Task[None]] = set()
        #: Where and when each change was last heard: (what, uri, session) → (link, time).
        self._announced: dict[tuple[str, str | None, int], tuple[int, float]] = {}

    @property
    def upstream(self) -> Upstream:
        """The (first) upstream."""
        return self.mounts[0].upstream

    # -- lifetime ------------------------------------------------------------------------------

    @property
    def server(self) -> Server:
        """The proxy's :class:`Server` (once :meth:`start` connected to the upstreams)."""
        if self._server is None:
            raise RuntimeError("the proxy is not started: await proxy.start() first")
        return self._server

    @property
    def limits(self) -> Limits:
        return self.server.limits

    async def start(self) -> Server:
        """Connect to every upstream, learn what each offers, and make the proxy's
        server (a ``per_session`` upstream is connected once to learn it, then once per
        client). An upstream that cannot be reached fails the start, naming it."""
        async with self._lock:
            if self._server is not None:
                return self._server
            opened = await asyncio.gather(*(p.open() for p in self.pools), return_exceptions=True)
            failed = [o for o in opened if isinstance(o, BaseException)]
            links = [o for o in opened if not isinstance(o, BaseException)]
            if failed:
                for link in links:
                    await link.close()
                if any(not isinstance(exc, McpError) for exc in failed):
                    raise next(e for e in failed if not isinstance(e, McpError))  # a bug
                said = [
                    (
                        o.message
                        if "upstream" in o.message
                        else f"upstream {p.upstream.where}: {o.message}"
                    )
                    for p, o in zip(self.pools, opened)
                    if isinstance(o, McpError)
                ]
                raise UpstreamUnreachable(INTERNAL_ERROR, "; ".join(said)) from failed[0]
            for pool, link in zip(self.pools, links):
                await pool.learn_tasks(link)
            self._server = self._server_like(links)
            for pool, link in zip(self.pools, links):
                pool.limits = self._server.limits
                if pool.upstream.per_session:
                    await link.close()
                else:
                    pool.shared = link
            return self._server

    async def close(self) -> None:
        """Close every upstream connection (a command's processes shut down)."""
        await self.parking.close()
        if self.tasks is not None:
            await self.tasks.close()
        await asyncio.gather(*(pool.close() for pool in self.pools), return_exceptions=True)

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
        ``runtime.http.serve.serve_app``."""
        if transport == "stdio":
            if http_options:
                raise TypeError(f"options for HTTP given to a stdio proxy: {sorted(http_options)}")
            asyncio.run(self._serve_stdio())
            return
        if transport not in ("http", "websocket"):
            raise ValueError(f"transport must be 'stdio', 'http' or 'websocket', not {transport!r}")
        from ..http.serve import serve_app

        if transport == "websocket":
            http_options.setdefault("websocket_path", http_options.get("path", "/mcp"))
        serving = {k: http_options.pop(k) for k in ("http", "log_level") if k in http_options}
        app = self.http_app(**http_options)
        serve_app(app, host, port, limits=self._options["limits"], **serving)

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

    def _client_binding(self) -> Any:
        return self.binding.ServerHandlers.__binding__

    def _client_handlers(self) -> type:
        version_package = self._client_binding().types.__name__.rsplit(".", 1)[0]
        module = importlib.import_module(version_package + ".client")
        return module.ClientHandlers

    # -- sending on ----------------------------------------------------------------------------

    async def forward(self, method: str, params: Any, scope: RequestScope) -> Any:
        """The answer to a downstream request, from the upstream it belongs to (lists:
        from every upstream, merged)."""
        if self._as_is:
            answer = await self._sent(self.pools[0], method, params, scope)
            return self._with_task_support(answer) if method == LIST_TOOLS else answer
        if method in LISTED:
            answer = await self._merged(method, params, scope)
            return self._with_task_support(answer) if method == LIST_TOOLS else answer
        plain = as_object(msgspec.to_builtins(params)) if params is not None else None
        mount, inner = owner_of(self.mounts, method, plain or {})
        if not mount.permitted(scope.principal, scope.client_info, method, inner):
            raise unknown(method, plain)
        pool = self.pools[self.mounts.index(mount)]
        result = await self._sent(pool, method, inner, scope)
        return outward_result(mount, method, msgspec.to_builtins(result))

    async def _sent(self, pool: Pool, method: str, params: Any, scope: RequestScope) -> Any:
        link = await pool.link_for(scope)
        try:
            return await link.call(method, params, scope, client_of(scope))
        except ConnectionClosed as exc:
            raise McpError(
                INTERNAL_ERROR, f"the upstream {pool.upstream.where} went away: {exc}"
            ) from None

    async def _merged(self, method: str, params: Any, scope: RequestScope) -> Any:
        """Every upstream's whole list, renamed, served in pages of ``page_size``."""
        pools = self._offering.get(LISTED[method][1], [])
        lists = await asyncio.gather(*(self._whole(p, method, scope) for p in pools))
        items = [item for listed in lists for item in listed]
        cursor = getattr(params, "cursor", None)
        shown, after = page(items, cursor if isinstance(cursor, str) else None, self.page_size)
        result: dict[str, Any] = {LISTED[method][0]: list(shown)}
        if after is not None:
            result["nextCursor"] = after
        return result

    async def _whole(self, pool: Pool, method: str, scope: RequestScope) -> list[Any]:
        items: list[Any] = []
        cursor: str | None = None
        for _ in range(self.list_pages):
            params = {"cursor": cursor} if cursor else {}
            answer = msgspec.to_builtins(await self._sent(pool, method, params, scope))
            answer = pool.mount.shown(scope.principal, scope.client_info, method, answer)
            renamed = as_object(outward_result(pool.mount, method, answer)) or {}
            items += as_array(renamed.get(LISTED[method][0])) or []
            after = renamed.get("nextCursor")
            if not isinstance(after, str) or not after:
                return items
            cursor = after
        log.warning(
            "%s of %s has more than %d pages (Proxy(list_pages=...)): the rest is left out",
            method,
            pool.upstream.where,
            self.list_pages,
        )
        return items

    # -- tasks -------------------------------------------------------------------------------

    def task_support(self, name: str) -> str:
        """How the proxy runs the tool ``name`` (its downstream name) as a task:
        "optional" where its upstream runs it as one (a client that takes no tasks is
        answered in the foreground, the proxy following the upstream's task; with
        ``strict_tasks`` a tool the upstream runs only as one is "required", refused as a
        plain call as the upstream refuses it) or where ``task_after_ms`` is set (the
        proxy keeps the call in a task of its own), else "forbidden"."""
        upstream = self._upstream_support(name)
        if upstream == "required" and self.strict_tasks:
            return "required"
        if upstream != "forbidden" or self.task_after_ms is not None:
            return "optional"
        return "forbidden"

    def task_immediate_ms(self, name: str) -> int | None:
        """A tool its upstream runs only as a task is the proxy's task at once (what it
        asks goes through the task); others after ``Tasks.immediate_ms``."""
        return 0 if self._upstream_support(name) == "required" else None

    def _upstream_support(self, name: str) -> str:
        """The upstream's ``taskSupport`` of the tool ``name`` ("optional" for a 2026-07-28
        upstream that runs tasks: it decides per call)."""
        try:
            mount, inner = owner_of(self.mounts, CALL_TOOL, {"name": name})
        except McpError:
            return "forbidden"
        pool = self.pools[self.mounts.index(mount)]
        learned = pool.task_support.get(str(inner.get("name")))
        if learned is None:
            return "optional" if pool.runs_tasks else "forbidden"
        return learned

    def _with_task_support(self, listed: Any) -> Any:
        """A tool list saying how the proxy runs each tool as a task (it, not the upstream,
        is who the client asks), when it runs tasks."""
        if self.tasks is None:
            return listed
        plain = as_object(msgspec.to_builtins(listed)) or {}
        for tool in as_array(plain.get("tools")) or []:
            fields = as_object(tool)
            if fields is not None and isinstance(fields.get("name"), str):
                execution = as_object(fields.get("execution")) or {}
                fields["execution"] = {
                    **execution,
                    "taskSupport": self.task_support(str(fields["name"])),
                }
        return plain

    def _tasks_for(self, links: Sequence[Any]) -> Tasks | None:
        """The proxy's tasks: as given; else made when it has tasks to run (an upstream
        that runs tasks, or ``task_after_ms``)."""
        if self.tasks is None and (
            self.task_after_ms is not None
            or any(pool.runs_tasks or _tasks_in(pool.task_support) for pool in self.pools)
        ):
            self.tasks = Tasks(
                immediate_ms=IMMEDIATE_MS if self.task_after_ms is None else self.task_after_ms
            )
        elif self.tasks is not None and self.task_after_ms is not None:
            self.tasks.immediate_ms = self.task_after_ms
        return self.tasks

    # -- the server ----------------------------------------------------------------------------

    def _server_like(self, links: Sequence[Any]) -> Server:
        """A server offering what the upstreams offer, answering by sending it on."""
        caps_of = [link.session.server_capabilities for link in links]
        self._offering: dict[str, list[Pool]] = {
            kind: [pool for pool, caps in zip(self.pools, caps_of) if kind in caps]
            for kind in FORWARDED
        }
        offered = [kind for kind, pools in self._offering.items() if pools]
        subscribe = any(
            (as_object(caps.get("resources")) or {}).get("subscribe") for caps in caps_of
        )
        handlers = forwarding_handlers(self, self.binding.ServerHandlers, offered, subscribe)()
        changing = [
            kind
            for kind in LISTS
            if any((as_object(caps.get(kind)) or {}).get("listChanged") for caps in caps_of)
        ]
        options = {k: v for k, v in self._options.items() if v is not None}
        tasks = self._tasks_for(links) if "tools" in offered else None
        server = Server(
            handlers,
            **self._identity_of(links),
            tasks=tasks,
            task_tools=self if tasks is not None else None,
            logging=any("logging" in caps for caps in caps_of),
            list_changed=changing,
            auth=self.auth,
            **options,
        )
        if subscribe:
            server.on_listen = self._listen_changed
        return server

    def _identity_of(self, links: Sequence[Any]) -> dict[str, Any]:
        given = self._identity
        if len(links) == 1:
            info = links[0].session.server_info
            title = given["title"] or info.get("title")
            return {
                "name": given["name"] or str(info.get("name") or self.upstream.name),
                "version": given["version"] or str(info.get("version") or "0.1.0"),
                "title": title if isinstance(title, str) else None,
                "instructions": self._instructions or links[0].instructions,
            }
        told = [
            f"{mount.at}: {link.instructions}"
            for mount, link in zip(self.mounts, links)
            if link.instructions
        ]
        return {
            "name": given["name"] or "mcpgen-proxy",
            "version": given["version"] or "0.1.0",
            "title": given["title"],
            "instructions": self._instructions or ("\n\n".join(told) or None),
        }

    async def _changed(
        self, what: str, uri: str | None, owner: Session | None, heard_on: int
    ) -> None:
        """Announce an upstream's change to the clients it concerns: the one session its
        link serves, or every client. The same change heard on another connection to the
        upstream within :data:`ONCE_WITHIN` seconds (an upstream telling each of its
        sessions) is the same change, announced once; one heard again on the same
        connection is a change again."""
        server = self._server
        if server is None:
            return
        now = time.monotonic()
        key = (what, uri, id(owner))
        last_on, last_at = self._announced.get(key, (heard_on, -ONCE_WITHIN))
        if last_on != heard_on and now - last_at < ONCE_WITHIN:
            return
        self._announced[key] = (heard_on, now)
        if len(self._announced) > 1024:  # forget the old ones
            self._announced = {
                k: (on, at) for k, (on, at) in self._announced.items() if now - at < ONCE_WITHIN
            }
        if owner is None:
            await server.notify_changed(what, uri)
            return
        method, wanted = CHANGES[what]
        await owner.publish(method, {"uri": uri} if uri is not None else {}, wanted)

    def _listen_changed(self, session: Any, request_id: Any, honoured: Any) -> None:
        """A downstream listen stream opened (or ended): the upstreams are asked for the
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
        if uris:
            task = asyncio.get_running_loop().create_task(self._rewant(change, uris))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _rewant(self, change: str, uris: list[str]) -> None:
        """(Un)subscribe each shared connection to the upstream owning each URI (per-
        session connections follow their own clients' requests)."""
        for uri in uris:
            try:
                mount, params = owner_of(self.mounts, "resources/subscribe", {"uri": uri})
                inner = str(params["uri"])
                for link in self.pools[self.mounts.index(mount)].shared_links():
                    await (link.want(inner) if change == "want" else link.unwant(inner))
            except Exception as exc:  # the listen stays open; its updates may not come
                log.warning("subscribing the upstream to %s failed: %s", uri, exc)

    async def subscription(self, on: bool, params: Any, scope: RequestScope) -> Any:
        """A legacy client's (un)subscription: the upstream's is made with the first
        downstream subscription to a URI and ended with the last (:meth:`Link.want`)."""
        uri = str(getattr(params, "uri", ""))
        if (uri in scope.session.subscriptions) == on:
            return {}  # this session holds it already, or never did
        mount, inner = owner_of(self.mounts, "resources/subscribe", {"uri": uri})
        if not mount.permitted(scope.principal, scope.client_info, "resources/subscribe", inner):
            raise unknown("resources/subscribe", {"uri": uri})
        pool = self.pools[self.mounts.index(mount)]
        link = await pool.link_for(scope)
        try:
            await (link.want(str(inner["uri"])) if on else link.unwant(str(inner["uri"])))
        except ConnectionClosed as exc:
            raise McpError(
                INTERNAL_ERROR, f"the upstream {pool.upstream.where} went away: {exc}"
            ) from None
        return {}


def _tasks_in(support: dict[str, str]) -> bool:
    return any(value in ("optional", "required") for value in support.values())


def _unfiltered(mount: Mount) -> bool:
    return mount.tools is None and not mount.hidden_tools and mount.policy is None


def forwarding_handlers(proxy: Proxy, base: type, offered: Sequence[str], subscribe: bool) -> type:
    """A subclass of ``base`` (the binding's ``ServerHandlers``) sending on the requests
    of what the upstreams ``offered`` (and (un)subscriptions, when one takes them)."""
    methods: dict[str, Callable[..., Awaitable[Any]]] = {}
    for kind in offered:
        for handler, method in FORWARDED[kind].items():
            methods[handler] = _forwarding(proxy, method)
    if subscribe:
        methods["subscribe"] = _subscribing(proxy, True)
        methods["unsubscribe"] = _subscribing(proxy, False)
    return type("ProxyHandlers", (base,), methods)


def _forwarding(proxy: Proxy, method: str) -> Callable[..., Awaitable[Any]]:
    async def forward(_: Any, params: Any, ctx: Any) -> Any:
        return await proxy.forward(method, params, getattr(ctx, "raw", ctx))

    return forward


def _subscribing(proxy: Proxy, on: bool) -> Callable[..., Awaitable[Any]]:
    async def subscription(_: Any, params: Any, ctx: Any) -> Any:
        return await proxy.subscription(on, params, getattr(ctx, "raw", ctx))

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

    async def drain(self) -> None:
        """The server stops: the served app closes its long-lived streams."""
        if self.app is not None:
            await self.app.drain()

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
