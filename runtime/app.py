"""``App``: a server written as decorated Python functions, over any version's stubs.

::

    from mcpgen.generated.v2026_07_28 import server as stubs
    from mcpgen.runtime import App

    app = App("calculator", binding=stubs)

    @app.tool
    def add(a: int, b: int) -> int:
        \"\"\"Add two integers.\"\"\"
        return a + b

    app.run_stdio()

The app produces an ordinary :class:`~runtime.server.Server` (``app.server``): every
transport, both eras, version negotiation and re-shaping work as for hand-written
handlers. Tools, resources and prompts can be added and removed while serving; clients
are told (``list_changed``) in both eras.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any, TypeVar, overload

from .errors import INVALID_PARAMS, McpError
from .limits import Limits
from .pages import page
from .server import Server
from .tools import RegisteredTool
from .wire import CachePolicy

F = TypeVar("F", bound=Callable[..., Any])


class App:
    """A server's tools (and, as they are registered, resources and prompts) as
    functions. ``binding`` is a generated ``server`` module (``mcpgen.generated.vX.server``
    or a vendored one): the version the functions' values are typed against; clients of
    every version are served. The other options are :class:`Server`'s;
    ``page_size`` bounds the items of one list page.
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        binding: ModuleType,
        title: str | None = None,
        instructions: str | None = None,
        versions: Iterable[str] | None = None,
        limits: Limits | None = None,
        cache: CachePolicy | None = None,
        state_key: bytes | None = None,
        page_size: int = 100,
    ) -> None:
        if page_size < 1:
            raise ValueError(f"page_size must be positive, got {page_size}")
        self.name = name
        self.version = version
        self.binding = binding
        self.handlers_base: type = binding.ServerHandlers
        self.types: Any = self.handlers_base.__binding__.types  # type: ignore[attr-defined]
        self.context_type: type | None = getattr(binding, "Context", None)
        self.page_size = page_size
        self._options: dict[str, Any] = {
            "title": title,
            "instructions": instructions,
            "versions": versions,
            "limits": limits,
            "cache": cache,
            "state_key": state_key,
        }
        self._tools: dict[str, RegisteredTool] = {}
        self._server: Server | None = None
        self._announcing: set[asyncio.Task[None]] = set()

    # -- tools --------------------------------------------------------------------------

    @overload
    def tool(self, fn: F, /) -> F: ...
    @overload
    def tool(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        icons: list[Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        execution: Mapping[str, Any] | None = None,
    ) -> Callable[[F], F]: ...
    def tool(
        self,
        fn: Callable[..., Any] | None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: Mapping[str, Any] | None = None,
        icons: list[Mapping[str, Any]] | None = None,
        meta: Mapping[str, Any] | None = None,
        execution: Mapping[str, Any] | None = None,
    ) -> Any:
        """Register a function as a tool: ``@app.tool`` or ``@app.tool(name=...)``.

        Its parameters are the tool's arguments (a parameter typed as the generated
        ``Context`` receives the request context instead); its docstring the description;
        its return annotation the ``outputSchema``. ``annotations`` are the tool's hints
        (``{"readOnlyHint": True}``), by their wire names.
        """

        def register(function: Callable[..., Any]) -> Callable[..., Any]:
            self.add_tool(
                function,
                name=name,
                title=title,
                description=description,
                annotations=annotations,
                icons=icons,
                meta=meta,
                execution=execution,
            )
            return function

        return register(fn) if fn is not None else register

    def add_tool(self, fn: Callable[..., Any], **options: Any) -> RegisteredTool:
        """Register ``fn`` as a tool (options as for :meth:`tool`), also while serving."""
        tool = RegisteredTool(fn, self.types, self.context_type, **options)
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool
        self._changed("tools")
        return tool

    def remove_tool(self, name: str) -> None:
        """Stop offering the tool ``name`` (KeyError if there is none)."""
        del self._tools[name]
        self._changed("tools")

    async def _list_tools(self, params: Any, ctx: Any) -> Any:
        tools, after = page(list(self._tools.values()), _cursor(params), self.page_size)
        result: dict[str, Any] = {"tools": [tool.definition for tool in tools]}
        if after is not None:
            result["next_cursor"] = after
        return self.types.ListToolsResult(**result)

    async def _call_tool(self, params: Any, ctx: Any) -> Any:
        tool = self._tools.get(params.name)
        if tool is None:
            raise McpError(
                INVALID_PARAMS, f"Unknown tool: {params.name}", {"path": "$.params.name"}
            )
        return await tool.call(params.arguments, ctx)

    # -- the server ------------------------------------------------------------------------

    @property
    def server(self) -> Server:
        """The :class:`Server` this app is (made on first use, with the capabilities of
        what is registered by then)."""
        if self._server is None:
            handlers = self._handlers_class()()
            offered = [kind for kind, present in (("tools", self._tools),) if present]
            options = {k: v for k, v in self._options.items() if v is not None}
            self._server = Server(
                handlers, name=self.name, version=self.version, list_changed=offered, **options
            )
        return self._server

    def _handlers_class(self) -> type:
        """A subclass of the binding's ``ServerHandlers`` with a handler for each kind of
        thing registered (so capabilities follow what the app offers)."""
        app = self
        methods: dict[str, Any] = {}
        if self._tools:

            async def list_tools(_: Any, params: Any, ctx: Any) -> Any:
                return await app._list_tools(params, ctx)

            async def call_tool(_: Any, params: Any, ctx: Any) -> Any:
                return await app._call_tool(params, ctx)

            methods.update(list_tools=list_tools, call_tool=call_tool)
        return type(f"{_identifier(self.name)}Handlers", (self.handlers_base,), methods)

    def _changed(self, what: str) -> None:
        """Tell connected clients that a list changed (nobody is told before serving)."""
        server = self._server
        if server is None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        task = loop.create_task(server.notify_changed(what))
        self._announcing.add(task)
        task.add_done_callback(self._announcing.discard)

    def run_stdio(self) -> None:
        """Serve over this process's stdin/stdout until stdin closes."""
        self.server.run_stdio()

    def http_app(self, **options: Any) -> Any:
        """The ASGI app serving this app over Streamable HTTP (see ``runtime.http``)."""
        return self.server.http_app(**options)

    def serve_http(self, host: str = "127.0.0.1", port: int = 3001, **options: Any) -> None:
        """Serve over Streamable HTTP with uvicorn until interrupted (``runtime.http_serve``)."""
        from .http_serve import serve

        serve(self.server, host, port, **options)

    def test_client(self, **options: Any) -> Any:
        """``async with app.test_client(mode="legacy") as client:`` a client of this app
        in the same event loop, over in-memory transports (see ``runtime.testing``)."""
        from .testing import connect

        return connect(self.server, **options)


def _cursor(params: Any) -> str | None:
    cursor = getattr(params, "cursor", None)
    return cursor if isinstance(cursor, str) else None


def _identifier(name: str) -> str:
    text = "".join(c if c.isalnum() else "_" for c in name)
    return text[:1].upper() + text[1:] if text else "App"
