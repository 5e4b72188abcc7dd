"""What a client answers when its server asks: the ``ClientHandlers`` (sampling,
elicitation, roots, the notification hooks), the handlers of an extension's methods and
the middleware around them, in either era — a legacy server's request, or a 2026-07-28
server's input request inside an ``input_required`` answer.

What the client did not declare is refused before any handler runs (a URL elicitation, a
form, sampling with tools: -32602), and a handler that fails is logged and answered with
-32603, its text kept from the server.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import msgspec
from msgspec import UNSET

from ..aio.middleware import Call, Chain, Middleware
from ..aio.session import RequestScope
from ..core import connection as c
from ..core import elicitation
from ..core.capabilities import ASKED_BY_PARAMS, implemented, refusal_when_asked
from ..core.errors import INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, McpError
from ..core.extensions import extension_row
from ..core.json_values import as_object, member
from ..core.modern import InputRequired
from ..core.negotiation import Versions
from ..tasks.receiver import ClientTasks, tied

F = TypeVar("F", bound=Callable[..., Any])
log = logging.getLogger("mcpgen.runtime.client.session")


@dataclass
class InputContext:
    """What client handlers see when they answer a modern server's input request."""

    request_id: str
    protocol_version: str
    meta: Mapping[str, Any] = field(default_factory=dict[str, Any])
    cancelled: bool = False


class Answers:
    """The client's handlers (``handlers``: a ``ClientHandlers`` instance, or None), those
    of extension methods (``handle``) and the middleware around them (``use``);
    ``capabilities`` are what the client declared, ``receiver`` runs a 2025-11-25 server's
    task-augmented requests as tasks."""

    def __init__(
        self,
        handlers: Any,
        versions: Versions,
        capabilities: Mapping[str, Any],
        middleware: Iterable[Middleware],
        receiver: ClientTasks | None,
    ) -> None:
        self.handlers = handlers
        self.versions = versions
        self.local = versions.local
        self.capabilities = capabilities
        self.receiver = receiver
        #: Around every handler of a server's request, in the order added.
        self.middleware = Chain(self._after_middleware, middleware)
        #: Handlers of extension methods a server sends, by handler name (``handle``).
        self.extension_handlers: dict[str, Callable[..., Any]] = {}
        if receiver is not None:
            self.extension_handlers.update(receiver.handlers())

    def answers(self, handler: str) -> bool:
        """Whether the client's handlers implement ``handler`` (e.g. ``"elicit"``)."""
        return bool(self.handlers) and implemented(self.handlers, handler)

    def handle(self, method: str) -> Callable[[F], F]:
        """Decorate ``async def handler(params, ctx)`` as this client's handler of an
        extension's ``method`` that the server sends."""
        row = extension_row(self.versions.extensions, "server", method)

        def register(handler: F) -> F:
            self.extension_handlers[row.handler] = handler
            return handler

        return register

    def use(self, middleware: Middleware) -> Middleware:
        """Add ``middleware`` around every handler, inside those added before."""
        self.middleware.add(middleware)
        return middleware

    # -- a legacy server's requests, and notifications ------------------------------------

    async def dispatch(self, event: c.IncomingRequest, scope: RequestScope) -> Any:
        """The answer to a server's request (as a task, when it asked for one)."""
        if event.spec.name in ASKED_BY_PARAMS:
            asked = msgspec.to_builtins(event.params)
            refusal = refusal_when_asked(event.spec.name, asked, self.capabilities)
            if refusal is not None:
                raise refusal
        as_task = self.receiver.call(event, scope, self._run) if self.receiver else None
        if as_task is not None:
            return await as_task
        return tied(await self._run(event, scope), event)

    async def _run(self, event: c.IncomingRequest, scope: RequestScope) -> Any:
        handler = self._handler_of(event)
        if self.middleware:
            return await self.middleware.run(Call(event, scope, scope))
        return await handler(event.params, scope)

    def _handler_of(self, event: c.IncomingRequest) -> Any:
        registered = self.extension_handlers.get(event.spec.handler)
        if registered is not None:
            return registered
        handler = getattr(self.handlers, event.spec.handler, None) if self.handlers else None
        if handler is None or not implemented(self.handlers, event.spec.handler):
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {event.spec.name}")
        return handler

    def _after_middleware(self, call: Call) -> Awaitable[Any]:
        return self._handler_of(call.event)(call.params, call.context)

    async def notified(self, event: c.IncomingNotification) -> None:
        """Call the hook of a notification (an extension's handler, or ``on_...``)."""
        registered = self.extension_handlers.get(event.spec.handler)
        if registered is not None:
            await registered(event.params)
            return
        hook = getattr(self.handlers, event.spec.handler, None) if self.handlers else None
        if hook is not None and implemented(self.handlers, event.spec.handler):
            await hook(event.params)

    # -- a modern server's input requests ---------------------------------------------------

    async def retry_params(
        self, params: Any, answer: c.InputRequiredAnswer, version: str
    ) -> dict[str, Any]:
        """``params`` of the request again, with the answers to every input request of
        ``answer`` and its ``requestState``."""
        responses: dict[str, Any] = {}
        missing: InputRequired | None = None
        for key, ask in answer.requests.items():
            try:
                responses[key] = await self.fulfil(key, ask, version)
            except InputRequired as exc:  # a handler that asks its own client: all at once
                missing = exc
        if missing is not None:
            raise missing
        given: Any = (
            msgspec.to_builtins(params) if params is not UNSET and params is not None else {}
        )
        plain = as_object(given)
        if plain is None:
            raise McpError(INVALID_REQUEST, "input-required retry of params that are no object")
        plain["inputResponses"] = responses
        if answer.state is not None:
            plain["requestState"] = answer.state
        else:
            plain.pop("requestState", None)
        return plain

    async def fulfil(self, key: str, ask: Any, version: str) -> Any:
        """The answer of this client's handler to a modern server's input request ``ask``
        (plain JSON ``{method, params}``), as plain JSON; ``version``: the connection's."""
        method = member(ask, "method")
        spec = self.local.types_of("server", method) if isinstance(method, str) else None
        handler = (
            getattr(self.handlers, spec.handler, None)
            if spec is not None and self.handlers
            else None
        )
        if spec is None or handler is None or not implemented(self.handlers, spec.handler):
            raise McpError(
                INVALID_REQUEST,
                f"the server asked for {method!r}, which this client does not answer",
            )
        asked: Any = member(ask, "params") or {}
        refusal = refusal_when_asked(spec.name, asked, self.capabilities)
        if refusal is not None:
            raise refusal
        plain = as_object(asked)
        if (
            spec.name == elicitation.METHOD
            and plain is not None
            and "url" == elicitation.mode_of(plain)
        ):
            # as the handler's version has it (2026-07-28 names none; 2025-11-25 needs one)
            asked = elicitation.url_params_for(dict(plain), self.local)
        params = self.local.binding.types.convert(asked, spec.params) if spec.params else None
        context = InputContext(key, version)
        try:
            if self.middleware.items:
                event = c.IncomingRequest(key, spec, params, {})
                answer = await self.middleware.run(Call(event, context, context))
            else:
                answer = await handler(params, context)
        except (McpError, InputRequired):  # InputRequired: a proxy asks its own client
            raise
        except Exception:  # as when a legacy server's request fails: logged, not passed on
            log.exception("answering the server's %s failed", method)
            raise McpError(INTERNAL_ERROR, "Internal error") from None
        return msgspec.to_builtins(answer)
