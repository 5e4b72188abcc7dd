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

The app produces an ordinary :class:`~runtime.server.server.Server` (``app.server``): every
transport, both eras, version negotiation and re-shaping work as for hand-written
handlers. Tools, resources and prompts can be added and removed while serving; clients
are told (``list_changed``) in both eras.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast, overload

from ..core.errors import INVALID_PARAMS, McpError, resource_not_found
from ..core.json_values import as_object
from ..http.auth.policy import NAMED, scope_set
from .pages import page
from ..core.limits import Limits
from ..core.request_state import KeyRing
from ..server.bus import Bus
from ..cluster.config import Shared
from ..core.extensions import Extension, extension_row
from ..aio.middleware import Middleware
from . import tools
from .schemas import RegistrationError
from ..core.roles import RoleTypes
from ..aio.stdio import StdioServerTransport
from ..server.server import Server
from .tools import RegisteredTool
from ..core.outgoing import CachePolicy

if TYPE_CHECKING:  # imported by an app that has them (resources: RFC 6570 templates too)
    from ..tasks.engine import Tasks
    from .prompts import RegisteredPrompt
    from .resources import RegisteredResource, RegisteredTemplate

F = TypeVar("F", bound=Callable[..., Any])
#: Completes an argument: (value typed so far, the other arguments) -> candidates.
Completer = Callable[[str, dict[str, str]], Awaitable[Iterable[str]]]


class App:
    """A server's tools, resources and prompts as functions. ``binding`` is a generated
    ``server`` module (``mcpgen.generated.vX.server`` or a vendored one): the version the
    functions' values are typed against (default: the newest dated version generated in
    ``mcpgen.generated``); clients of every version are served. The other
    options are :class:`Server`'s (``title``, ``description``, ``icons`` and
    ``website_url`` describe the server in its ``serverInfo``); ``page_size`` bounds the items of one list page.
    ``auth`` (a ``runtime.http.auth.resource_server.ResourceServer``) protects the HTTP endpoint, and
    each tool, prompt and resource may then name the scopes a request for it needs
    (``@app.tool(scopes=["files:write"])``). ``shared`` (default: what ``MCPGEN_STORE``
    says, see ``runtime.cluster.config``; None: nothing) is where the app's processes share
    their tasks and announcements, unless ``tasks``/``bus`` are given. ``telemetry``
    (default: what ``MCPGEN_TELEMETRY`` says; True; a ``runtime.server.telemetry.Telemetry``
    of one's own) traces and measures every request with OpenTelemetry (the ``otel``
    extra).
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        binding: ModuleType | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: Iterable[Mapping[str, Any]] | None = None,
        website_url: str | None = None,
        instructions: str | None = None,
        versions: Iterable[str] | None = None,
        limits: Limits | None = None,
        cache: CachePolicy | None = None,
        state_key: bytes | KeyRing | None = None,
        page_size: int = 100,
        middleware: Iterable[Middleware] = (),
        extensions: Iterable[Extension] = (),
        tasks: Tasks | None = None,
        auth: Any = None,
        bus: Bus | None = None,
        shared: Shared | None | Literal["environment"] = "environment",
        telemetry: bool | Middleware | Literal["environment"] = "environment",
    ) -> None:
        if page_size < 1:
            raise ValueError(f"page_size must be positive, got {page_size}")
        if telemetry == "environment":
            telemetry = telemetry_from_environment()
        if telemetry is True:
            from ..server.telemetry import Telemetry

            telemetry = Telemetry()
        if shared == "environment":
            shared = Shared.from_environment()
        #: The stores the app's processes share (``MCPGEN_STORE``), if any: its bus and
        #: tasks unless given.
        self.shared = shared
        if shared is not None:
            bus = bus if bus is not None else shared.bus()
        self.name = name
        self.version = version
        binding = binding or newest_binding()
        self.binding = binding
        self.handlers_base: type = binding.ServerHandlers
        self.types: Any = RoleTypes(self.handlers_base.__binding__.types)  # type: ignore[attr-defined]
        self.context_type: type | None = getattr(binding, "Context", None)
        self.page_size = page_size
        self._options: dict[str, Any] = {
            "title": title,
            "description": description,
            "icons": list(icons) if icons is not None else None,
            "website_url": website_url,
            "instructions": instructions,
            "versions": versions,
            "limits": limits,
            "cache": cache,
            "state_key": state_key,
            "extensions": tuple(extensions),
            "bus": bus,
        }
        #: Runs the tools registered with ``task=`` (made when the first is, if not given).
        self.tasks = tasks
        #: Handlers of extension methods (``handle``), by method.
        self.extension_handlers: dict[str, Callable[..., Any]] = {}
        #: What is registered, in registration order (lists follow it): tools and prompts by
        #: name, resources by URI, templates by template (names of those need not differ).
        self.tools: dict[str, RegisteredTool] = {}
        self.prompts: dict[str, RegisteredPrompt] = {}
        self.resources: dict[str, RegisteredResource] = {}
        self.templates: dict[str, RegisteredTemplate] = {}
        #: ("prompt", name, argument) or ("resource", template, variable) -> completer.
        self.completions: dict[tuple[str, str, str], Completer] = {}
        self._server: Server | None = None
        self._asgi: Any = None
        #: The kinds the server was made with (those it has handlers and capabilities for).
        self._served: frozenset[str] = frozenset()
        self._announcing: set[asyncio.Task[None]] = set()
        self._middleware: list[Middleware] = list(middleware)
        if callable(telemetry):  # outermost: it times and traces everything inside
            self._middleware.insert(0, telemetry)
        #: Protects the HTTP endpoint (``runtime.http.auth.resource_server.ResourceServer``), if set.
        self.auth = auth
        #: Scopes a request for a tool, prompt, resource or template needs, by
        #: (``"tools"``, name), (``"prompts"``, name), (``"resources"``, URI) or
        #: (``"templates"``, template).
        self.scopes: dict[tuple[str, str], frozenset[str]] = {}

    def handle(self, method: str) -> Callable[[F], F]:
        """Decorate ``async def handler(params, ctx)`` as the handler of an extension's
        ``method`` (``runtime.core.extensions``; the extension is one of ``extensions``)."""
        extension_row(self._options["extensions"], "client", method)  # or LookupError

        def register(handler: F) -> F:
            self.extension_handlers[method] = handler
            if self._server is not None:
                self._server.handle(method)(handler)
            return handler

        return register

    def use(self, middleware: Middleware) -> Middleware:
        """Add ``middleware`` around every handler (``runtime.aio.middleware``), inside those
        added before; usable as a decorator."""
        if not callable(middleware):
            raise TypeError(f"middleware must be callable, not {type(middleware).__name__}")
        if self._server is not None:
            self._server.use(middleware)
        else:
            self._middleware.append(middleware)
        return middleware

    # -- registering ---------------------------------------------------------------------

    @overload
    def tool(self, fn: F, /) -> F: ...
    @overload
    def tool(self, fn: None = None, /, **options: Any) -> Callable[[F], F]: ...
    def tool(self, fn: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        """Register a function as a tool: ``@app.tool`` or ``@app.tool(name=...)``.

        Its parameters are the tool's arguments (a parameter typed as the generated
        ``Context`` receives the request context instead; an unannotated ``ctx`` is
        refused, as is every mistake of a signature: a ``RegistrationError`` saying the
        fix, see docs/serving.md); its docstring the description;
        its return annotation the ``outputSchema``. Options: ``name``, ``title``,
        ``description``, ``annotations`` (hints by wire name: ``{"readOnlyHint": True}``),
        ``icons``, ``meta``, ``execution``, ``task`` (``"optional"`` or ``"required"``:
        it may, or must, run as a task; see ``runtime.tasks.engine``), ``immediate_ms`` (how long
        a 2026-07-28 call may run before it becomes a task, what it asks meanwhile asked
        before the task; 0: a task at once), ``blocking`` (a sync function that waits on
        files, sockets or a database runs in a worker thread; otherwise sync functions run
        on the event loop, the fastest way for quick ones), and ``input_schema``: a JSON Schema listed
        instead of the derived one (for keywords no type annotation says, such as
        ``if``/``then``); the arguments are still decoded by the signature, so pair it with
        ``**arguments`` to receive them as they came. ``scopes``: the OAuth scopes a call
        needs on a protected HTTP endpoint (``App(auth=...)``; 403 without them).
        """
        return _decorate(fn, lambda f: self.add_tool(f, **options))

    def add_tool(self, fn: Callable[..., Any], **options: Any) -> RegisteredTool:
        """Register ``fn`` as a tool (options as for :meth:`tool`), also while serving."""
        _known("tool", fn, options, tools.OPTIONS)
        scopes = _scopes(options)
        tool = RegisteredTool(fn, self.types, self.context_type, **options)
        if tool.task_support != "forbidden" and self.tasks is None:
            if self._server is not None:
                raise RuntimeError(
                    "this app's server was made without tasks: give App(tasks=Tasks()) or "
                    "register a task tool before serving"
                )
            from ..tasks.engine import Tasks

            self.tasks = self.shared.tasks() if self.shared is not None else Tasks()
        self._add(self.tools, tool.name, tool, "tools")
        self._scoped("tools", tool.name, scopes)
        return tool

    def task_support(self, name: str) -> str:
        """Whether the tool ``name`` runs as a task ("forbidden" for no such tool)."""
        tool = self.tools.get(name)
        return tool.task_support if tool is not None else "forbidden"

    def task_immediate_ms(self, name: str) -> int | None:
        """How long a modern call of the tool ``name`` runs before it becomes a task."""
        tool = self.tools.get(name)
        return tool.immediate_ms if tool is not None else None

    def remove_tool(self, name: str) -> None:
        """Stop offering the tool ``name`` (KeyError if there is none)."""
        del self.tools[name]
        self.scopes.pop(("tools", name), None)
        self._changed("tools")

    @overload
    def prompt(self, fn: F, /) -> F: ...
    @overload
    def prompt(self, fn: None = None, /, **options: Any) -> Callable[[F], F]: ...
    def prompt(self, fn: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        """Register a function as a prompt: its parameters are the prompt's arguments, it
        returns a ``str``, a list of messages or a ``GetPromptResult``. Options: ``name``,
        ``title``, ``description``, ``icons``, ``meta``, ``blocking`` (as for tools)."""
        return _decorate(fn, lambda f: self.add_prompt(f, **options))

    def add_prompt(self, fn: Callable[..., Any], **options: Any) -> RegisteredPrompt:
        from . import prompts

        _known("prompt", fn, options, prompts.OPTIONS)
        scopes = _scopes(options)
        prompt = prompts.RegisteredPrompt(fn, self.types, self.context_type, **options)
        self._add(self.prompts, prompt.name, prompt, "prompts")
        self._scoped("prompts", prompt.name, scopes)
        return prompt

    def remove_prompt(self, name: str) -> None:
        del self.prompts[name]
        self.scopes.pop(("prompts", name), None)
        self._changed("prompts")

    def resource(self, uri: str, /, **options: Any) -> Callable[[F], F]:
        """Register a function as the resource at ``uri``, or, when ``uri`` is an RFC 6570
        template (``"notes://{folder}/{name}"``), as a resource template whose variables
        are the function's parameters. It returns text (``str``), bytes, ``File``, a list
        of those, or the version's contents. Options: ``name``, ``title``,
        ``description``, ``mime_type``, ``icons``, ``annotations``, ``meta``, ``blocking``
        (as for tools)."""
        if not isinstance(cast(object, uri), str):  # a function, when the URI was left out
            raise RegistrationError(
                f"resource {getattr(uri, '__name__', uri)!r}: @app.resource takes the URI "
                "first: @app.resource('notes://{name}')"
            )
        return lambda f: (self.add_resource(uri, f, **options), f)[1]

    def add_resource(
        self, uri: str, fn: Callable[..., Any], **options: Any
    ) -> RegisteredResource | RegisteredTemplate:
        from . import resources

        _known(f"resource {uri!r}", None, options, resources.OPTIONS)
        scopes = _scopes(options)
        if resources.is_template(uri):
            template = resources.RegisteredTemplate(
                uri, fn, self.types, self.context_type, **options
            )
            self._add(self.templates, uri, template, "resources")
            self._scoped("templates", uri, scopes)
            return template
        resource = resources.RegisteredResource(uri, fn, self.types, self.context_type, **options)
        self._add(self.resources, uri, resource, "resources")
        self._scoped("resources", uri, scopes)
        return resource

    def remove_resource(self, uri_or_name: str) -> None:
        """Stop offering a resource (by URI) or a resource template (by its template, or
        by name: the first so named)."""
        if uri_or_name in self.resources:
            del self.resources[uri_or_name]
            self.scopes.pop(("resources", uri_or_name), None)
        else:
            named = (key for key, t in self.templates.items() if t.name == uri_or_name)
            key = uri_or_name if uri_or_name in self.templates else next(named, uri_or_name)
            del self.templates[key]
            self.scopes.pop(("templates", key), None)
        self._changed("resources")

    def completion(
        self, *, argument: str, prompt: str | None = None, resource: str | None = None
    ) -> Callable[[F], F]:
        """Register a function completing ``argument`` of ``prompt`` (a prompt's name) or
        a variable of ``resource`` (a template, as registered): it takes the value typed
        so far and the other arguments, and returns candidates (sync or async)."""
        if (prompt is None) == (resource is None):
            raise ValueError("give exactly one of prompt= and resource=")
        key = (
            ("prompt", prompt, argument) if prompt is not None else ("resource", resource, argument)
        )
        # What is registered already must have the argument (either may come later).
        known = self.prompts.get(prompt) if prompt is not None else None
        template = self.templates.get(resource) if resource is not None else None
        if known is not None and argument not in known.signature.params:
            raise RegistrationError(
                f"completion of prompt {prompt!r}: it has no argument {argument!r} (its "
                f"arguments: {', '.join(known.signature.params) or 'none'}); name one of them"
            )
        if template is not None and argument not in template.template.variables:
            raise RegistrationError(
                f"completion of resource template {resource!r}: it has no variable "
                f"{argument!r} (its variables: {', '.join(template.template.variables)}); "
                "name one of them"
            )

        self._check_served("completions")

        def register(fn: F) -> F:
            async def complete(value: str, given: dict[str, str]) -> Iterable[str]:
                found = fn(value, given)
                return await found if inspect.isawaitable(found) else found

            self.completions[key] = complete  # type: ignore[index]
            return fn

        return register

    def _scoped(self, table: str, key: str, scopes: frozenset[str]) -> None:
        if scopes:
            self.scopes[(table, key)] = scopes

    def scopes_for(self, method: str, name: str | None) -> frozenset[str]:
        """The scopes a ``method`` request naming ``name`` needs by what is registered:
        a tool's or prompt's ``scopes=``, a resource's, or the first template's that
        matches a URI no resource has (as ``resources/read`` finds them)."""
        table = NAMED.get(method)
        if table is None or name is None or not self.scopes:
            return _NONE
        found = self.scopes.get((table, name))
        if found is not None or table != "resources" or name in self.resources:
            return found or _NONE
        for key, template in self.templates.items():
            if template.match(name) is not None:
                return self.scopes.get(("templates", key), _NONE)
        return _NONE

    async def resource_updated(self, uri: str) -> None:
        """Tell the sessions subscribed to ``uri`` (legacy), and the listen streams that
        asked for it (modern), that the resource changed."""
        await self.server.notify_changed("resource", uri)

    def _add(self, registry: dict[str, Any], key: str, item: Any, kind: str) -> None:
        if key in registry:
            kind = "resource template" if registry is self.templates else kind[:-1]
            again = "at another URI" if kind.startswith("resource") else "with another name="
            gone = "resource" if kind.startswith("resource") else kind
            raise RegistrationError(
                f"{kind} {key!r} is already registered; register this one {again}, or call "
                f"app.remove_{gone}({key!r}) first to replace it"
            )
        self._check_served(kind)
        registry[key] = item
        self._changed(kind)

    def _check_served(self, kind: str) -> None:
        """Refuse a first thing of a kind the server was made without: its capability was
        not declared and nothing would answer its requests."""
        if self._server is not None and kind not in self._served:
            raise RuntimeError(
                f"this app's server was made with no {kind}: register at least one before "
                "serving (app.server), and add or remove them freely after"
            )

    # -- the server ------------------------------------------------------------------------

    @property
    def server(self) -> Server:
        """The :class:`Server` this app is (made on first use, with the capabilities of
        what is registered by then)."""
        if self._server is None:
            handlers = handlers_class(self, self.handlers_base)()
            kinds = (
                ("tools", self.tools),
                ("prompts", self.prompts),
                ("resources", self.resources or self.templates),
            )
            options = {k: v for k, v in self._options.items() if v is not None}
            self._served = frozenset(
                [kind for kind, present in kinds if present]
                + (["completions"] if self.completions else [])
            )
            self._server = Server(
                handlers,
                name=self.name,
                version=self.version,
                list_changed=[kind for kind, present in kinds if present],
                middleware=self._middleware,
                tasks=self.tasks,
                task_tools=self,
                auth=self.auth.with_scopes(self.scopes_for) if self.auth is not None else None,
                **options,
            )
            for method, handler in self.extension_handlers.items():
                self._server.handle(method)(handler)
        return self._server

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

    def run(
        self,
        transport: Transport = "stdio",
        *,
        host: str = "127.0.0.1",
        port: int = 3001,
        **http_options: Any,
    ) -> None:
        """Serve until stdin closes (``stdio``) or until interrupted (``http``: Streamable
        HTTP with uvicorn, ``pip install 'mcpgen[http]'``, HTTP+SSE beside it; ``websocket``:
        MCP over WebSocket at ``ws://host:port/mcp``, ``mcpgen[http,websocket]``;
        ``http_options`` go to :class:`~runtime.http.endpoint.McpHttpApp` and
        ``runtime.http.serve.serve``)."""
        run(self, transport, host=host, port=port, **http_options)

    def http_app(self, **options: Any) -> Any:
        """The ASGI app serving this app over Streamable HTTP (see ``runtime.http.endpoint``);
        ``auth=`` protects it (the app's ``scopes=`` included), as ``App(auth=...)`` does."""
        from ..http.endpoint import McpHttpApp

        if self.shared is not None:  # legacy sessions any process serves
            options.setdefault("shared_sessions", self.shared.sessions())
        return McpHttpApp(self.server, **self.scoped_options(options))

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """The app is an ASGI application too (``uvicorn package.server:app``): its
        :meth:`http_app` with the app's own options, made on the first call."""
        if self._asgi is None:
            self._asgi = self.http_app()
        await self._asgi(scope, receive, send)

    def scoped_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """HTTP ``options`` whose ``auth`` also asks for the scopes this app's tools,
        prompts and resources name."""
        auth = options.get("auth")
        if auth is not None:
            options["auth"] = auth.with_scopes(self.scopes_for)
        return options

    def test_client(self, **options: Any) -> Any:
        """``async with app.test_client(mode="legacy") as client:`` a client of this app
        in the same event loop, over in-memory transports (see ``runtime.testing``)."""
        from ..client.in_memory import connect

        return connect(self.server, **options)


_NONE: frozenset[str] = frozenset()
#: What ``run`` serves over.
Transport = Literal["stdio", "http", "websocket"]


def _known(kind: str, fn: Any, options: Mapping[str, Any], known: frozenset[str]) -> None:
    """Refuse an option the registration does not take (a typo would be lost)."""
    unknown = sorted(set(options) - known - {"scopes"})
    if unknown:
        name = options.get("name") or getattr(fn, "__name__", None)
        what = f"{kind} {name!r}" if fn is not None else kind
        raise RegistrationError(
            f"{what}: there is no option {unknown[0]!r}; the options are "
            f"{', '.join(sorted(known | {'scopes'}))}"
        )


def _scopes(options: dict[str, Any]) -> frozenset[str]:
    """The ``scopes=`` option of a registration, taken out of ``options``."""
    return scope_set(options.pop("scopes", ()), "scope")


def _decorate(fn: Callable[..., Any] | None, register: Callable[[Any], Any]) -> Any:
    """``@decorator`` and ``@decorator(...)`` alike: register, and give the function back."""

    def decorator(function: Callable[..., Any]) -> Callable[..., Any]:
        register(function)
        return function

    return decorator(fn) if fn is not None else decorator


#: Turns OpenTelemetry on for every ``App`` not told otherwise (``1``/``otel``; ``0``).
TELEMETRY_ENV = "MCPGEN_TELEMETRY"


def telemetry_from_environment() -> bool:
    """What ``$MCPGEN_TELEMETRY`` says (off when unset); garbage there is refused."""
    said = os.environ.get(TELEMETRY_ENV, "").strip().lower()
    if said in ("", "0", "false", "no", "off"):
        return False
    if said in ("1", "true", "yes", "on", "otel"):
        return True
    raise ValueError(f"{TELEMETRY_ENV} must be 1 (or otel) or 0, not {said!r}")


def newest_binding() -> ModuleType:
    """The ``server`` module of the newest dated version in ``mcpgen.generated`` (an
    ``App`` without ``binding=``); a vendored package is passed as ``binding`` instead."""
    generated = importlib.import_module("mcpgen.generated")
    latest: str | None = generated.LATEST
    if latest is None:
        raise LookupError("mcpgen.generated has no dated protocol version: pass binding=")
    return generated.load(latest, "server")


def run(
    target: App | Server,
    transport: Transport = "stdio",
    *,
    host: str = "127.0.0.1",
    port: int = 3001,
    **http_options: Any,
) -> None:
    """Serve an ``App`` or a ``Server``: over this process's stdin/stdout until stdin
    closes (``stdio``), or with uvicorn at ``host:port`` until interrupted: Streamable HTTP
    (and HTTP+SSE beside it) for ``http``, WebSocket for ``websocket`` (at the app's path,
    ``/mcp``); ``http_options`` go to the HTTP app and ``runtime.http.serve``."""
    if transport == "stdio":
        if http_options:
            raise TypeError(f"options for HTTP given to a stdio server: {sorted(http_options)}")
        server = target.server if isinstance(target, App) else target
        asyncio.run(_serve_stdio(server))
    elif transport in ("http", "websocket"):
        from ..http.serve import serve

        if transport == "websocket":
            http_options.setdefault("websocket_path", http_options.get("path", "/mcp"))
        if isinstance(target, App):
            serve(target.server, host, port, **target.scoped_options(http_options))
        else:
            serve(target, host, port, **http_options)
    else:
        raise ValueError(f"transport must be 'stdio', 'http' or 'websocket', not {transport!r}")


async def _serve_stdio(server: Server) -> None:
    await server.serve(await StdioServerTransport.open(limits=server.limits))


# The ``ServerHandlers`` an app serves with: each request answered from its registries.
# A kind of thing the app has none of gets no handler, so the server's capabilities
# follow what is registered.

#: Most values one completion answer carries (the spec's bound).
MAX_COMPLETIONS = 100


def _cursor(params: Any) -> str | None:
    cursor = getattr(params, "cursor", None)
    return cursor if isinstance(cursor, str) else None


def _paged(app: App, items: Sequence[Any], params: Any, key: str, result: type) -> Any:
    """A list result of ``items``' definitions, one page of it."""
    shown, after = page(items, _cursor(params), app.page_size)
    fields: dict[str, Any] = {key: [item.definition for item in shown]}
    if after is not None:
        fields["next_cursor"] = after
    return result(**fields)


def _unknown(what: str, name: str, path: str) -> McpError:
    return McpError(INVALID_PARAMS, f"Unknown {what}: {name}", {"path": path})


def handlers_class(app: App, base: type) -> type:
    """A subclass of ``base`` (the binding's ``ServerHandlers``) answering from ``app``."""
    types = app.types
    methods: dict[str, Callable[..., Any]] = {}
    if app.tools:

        async def list_tools(_: Any, params: Any, ctx: Any) -> Any:
            return _paged(app, list(app.tools.values()), params, "tools", types.ListToolsResult)

        def call_tool(_: Any, params: Any, ctx: Any) -> Awaitable[Any]:
            # The tool's own coroutine is the handler's: no frame of this one in between.
            tool = app.tools.get(params.name)
            if tool is None:
                raise _unknown("tool", params.name, "$.params.name")
            return tool.call(params.arguments, ctx)

        methods.update(list_tools=list_tools, call_tool=call_tool)
    if app.prompts:

        async def list_prompts(_: Any, params: Any, ctx: Any) -> Any:
            prompts = list(app.prompts.values())
            return _paged(app, prompts, params, "prompts", types.ListPromptsResult)

        async def get_prompt(_: Any, params: Any, ctx: Any) -> Any:
            prompt = app.prompts.get(params.name)
            if prompt is None:
                raise _unknown("prompt", params.name, "$.params.name")
            arguments = as_object(params.arguments)
            return await prompt.get(arguments, ctx)

        methods.update(list_prompts=list_prompts, get_prompt=get_prompt)
    if app.resources or app.templates:

        async def list_resources(_: Any, params: Any, ctx: Any) -> Any:
            resources = list(app.resources.values())
            return _paged(app, resources, params, "resources", types.ListResourcesResult)

        async def list_resource_templates(_: Any, params: Any, ctx: Any) -> Any:
            templates = list(app.templates.values())
            return _paged(
                app, templates, params, "resource_templates", types.ListResourceTemplatesResult
            )

        async def read_resource(_: Any, params: Any, ctx: Any) -> Any:
            uri = params.uri
            resource = app.resources.get(uri)
            if resource is not None:
                return await resource.read(uri, {}, ctx)
            for template in app.templates.values():
                variables = template.match(uri)
                if variables is not None:
                    return await template.read(uri, variables, ctx)
            raise resource_not_found(uri)

        async def subscribe(_: Any, params: Any, ctx: Any) -> Any:
            """Only to a URI a resource has or a template matches (the runtime records the
            session's subscription, within its limits)."""
            uri = params.uri
            if uri not in app.resources and not any(
                template.match(uri) is not None for template in app.templates.values()
            ):
                raise resource_not_found(uri)
            return {}

        async def unsubscribe(_: Any, params: Any, ctx: Any) -> Any:
            return {}  # from anything: a resource removed since is let go of too

        methods.update(
            list_resources=list_resources,
            list_resource_templates=list_resource_templates,
            read_resource=read_resource,
            subscribe=subscribe,
            unsubscribe=unsubscribe,
        )
    if app.completions:

        async def complete(_: Any, params: Any, ctx: Any) -> Any:
            ref, argument = params.ref, params.argument
            if isinstance(ref, types.PromptReference):
                kind, target = "prompt", ref.name
                if target not in app.prompts:
                    raise _unknown("prompt", target, "$.params.ref.name")
            else:
                kind, target = "resource", str(getattr(ref, "uri", ""))
                if target not in app.resources and target not in app.templates:
                    raise _unknown("resource", target, "$.params.ref.uri")
            complete = app.completions.get((kind, target, argument.name))
            values: list[str] = []
            if complete is not None:
                context = getattr(params, "context", None)
                given = getattr(context, "arguments", None)
                values = list(await complete(argument.value, dict(given or {})))
            completion: dict[str, Any] = {
                "values": values[:MAX_COMPLETIONS],
                "total": len(values),
                "has_more": len(values) > MAX_COMPLETIONS,
            }
            return types.CompleteResult(completion=types.CompleteResultCompletion(**completion))

        methods.update(complete=complete)
    name = "".join(c if c.isalnum() else "_" for c in app.name).title().replace("_", "")
    return type(f"{name or 'App'}Handlers", (base,), methods)


__all__ = ["App", "Completer", "newest_binding", "run"]
