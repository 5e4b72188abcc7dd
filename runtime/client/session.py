"""Connect to an MCP server of either era and get the generated typed ``Client`` for it.

``ClientSession.connect`` detects the era: it probes with ``server/discover`` (modern), and
falls back to the ``initialize`` handshake (legacy) unless the server answered with an
error only a modern server sends. Either way the session exposes the same ``request``,
and a modern server's ``input_required`` answers are fulfilled by the client handlers and
retried, so callers just get results.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import msgspec
from msgspec import UNSET

from ..core import connection as c
from ..core.errors import (
    HEADER_MISMATCH,
    INVALID_REQUEST,
    MODERN_ERRORS,
    UNSUPPORTED_PROTOCOL_VERSION,
    ConnectionClosed,
    McpError,
    NegotiationError,
)
from ..core import elicitation
from ..core.limits import CLIENT, Limits
from ..core.log_levels import LOG_LEVELS
from ..core.extensions import Extension, declare
from ..aio.middleware import Middleware
from ..core.negotiation import Versions
from ..core.json_values import as_array, as_object, member
from ..core.capabilities import derive_capabilities
from ..aio.session import ProgressCallback, Session
from ..aio.transport import Transport
from ..core.tool_headers import CALL_TOOL, LIST_TOOLS, ToolHeaders
from . import tasks as tc
from ..tasks.extension import EXTENSION as TASKS
from ..tasks.receiver import ClientTasks
from ..tasks.engine import Tasks
from .recovery import Recovery, Restart, SessionLost, SessionRenewed
from ..core import pages as pg
from .cache import CACHEABLE, STALE_AFTER, ResponseCache
from .eras import ERAS, EraStore, Known, learned
from .listen import ACKNOWLEDGED, NOTIFIED, Listener, wanted_filter
from .outputs import OutputValidation, ToolOutputs, call_tool_as
from .answers import Answers
from .url_elicitation import UrlElicitations

F = TypeVar("F", bound=Callable[..., Any])
log = logging.getLogger("mcpgen.runtime.client.session")
C = TypeVar("C")
T = TypeVar("T")
Mode = Literal["auto", "legacy", "modern"]
SUBSCRIBE, UNSUBSCRIBE = "resources/subscribe", "resources/unsubscribe"
SET_LEVEL = "logging/setLevel"


@dataclass
class _Keep:
    """A request whose result goes to ``cache``: its generation when sent, and the type
    the caller wants it as."""

    cache: ResponseCache
    generation: int
    result: Any


class ClientSession:
    """One connection to a server, as the generated ``Client`` uses it (``Requester``).

    ``binding`` is the version the application is typed against (``Client.__binding__``);
    ``versions`` the versions it offers (default: every generated dated version);
    ``limits`` bound what the server can make it hold and how long and how many rounds
    a request may take (``request_timeout``, ``max_input_rounds``; default
    ``runtime.core.limits.CLIENT``).
    ``tasks`` runs a 2025-11-25 server's task-augmented requests as tasks
    (``runtime.tasks.receiver``); ``task_polling`` bounds following ours (``runtime.client.tasks``).
    ``recovery`` says what follows when a legacy HTTP server loses the session: always a
    new ``initialize``, then the failed request again if its method is safe to repeat
    (``runtime.client.recovery``).
    ``cache`` keeps what a 2026-07-28 server says may be kept (``ttlMs``, ``cacheScope``;
    ``runtime.client.cache``): True, a memory cache of this session's own; a
    ``ResponseCache`` (on a store shared by several sessions, under an identity); False:
    nothing. ``eras`` is where the era found for a server is kept (``runtime.client.eras``;
    default: the process's memory).
    A request a 2025-11-25 server answers with -32042 raises ``UrlElicitationRequired``
    (its ``elicitations``); with ``url_elicitation_wait`` (seconds) set and an ``elicit``
    handler, each URL is shown to the user through the handler instead, and once every
    one was accepted the request is sent once more, when the server said all of them
    completed (``notifications/elicitation/complete``) or after that many seconds.
    ``output_validation``: what a ``tools/call`` result its tool's ``outputSchema`` refuses
    does: ``"error"`` raises ``OutputValidationError``, ``"warn"`` logs it, ``"off"``
    checks nothing (``runtime.client.outputs``).
    """

    def __init__(
        self,
        binding: Any,
        handlers: Any = None,
        *,
        name: str = "mcpgen-client",
        version: str = "0.1.0",
        versions: Iterable[str] | None = None,
        capabilities: Mapping[str, Any] | None = None,
        limits: Limits = CLIENT,
        middleware: Iterable[Middleware] = (),
        extensions: Iterable[Extension] = (),
        tasks: Tasks | None = None,
        task_polling: tc.TaskPolling | None = None,
        recovery: Recovery | None = None,
        telemetry: Any = None,
        cache: ResponseCache | bool = True,
        eras: EraStore | None = None,
        url_elicitation_wait: float | None = None,
        output_validation: OutputValidation = "error",
    ) -> None:
        self.binding = binding
        #: Traces each request (``runtime.server.telemetry.Telemetry``: a CLIENT span whose
        #: trace context goes in the request's ``_meta``, as the official SDKs send it).
        self.telemetry = telemetry
        declared = tuple(extensions)
        # The tasks extension's methods are known, for a request that declares it alone.
        known = declared if TASKS in declared else (*declared, TASKS)
        self.versions = Versions.around(binding, versions, known)
        self.local = self.versions.local
        caps = (
            derive_capabilities(handlers, self.versions, "server", capabilities)
            if handlers
            else dict(capabilities or {})
        )
        receiver = ClientTasks.answering(tasks, caps) if tasks is not None else None
        if receiver is not None:
            caps.setdefault("tasks", receiver.capability())
        caps = declare(caps, declared)
        #: What the client answers when the server asks (``runtime.client.answers``).
        self.answers = Answers(handlers, self.versions, caps, middleware, receiver)
        #: What a request answered -32042 does (``runtime.client.url_elicitation``).
        self.url_elicitations = UrlElicitations(url_elicitation_wait, self.answers, self.fulfil)
        self.task_polling = task_polling or tc.TaskPolling()
        self.task_watch = tc.TaskWatch()  # status notifications wake the polling handles
        #: Where the era found for a ``server_key`` is kept (the process's, by default).
        self.eras: EraStore = eras if eras is not None else ERAS
        #: Results kept for as long as the server says (None: none kept).
        self.cache: ResponseCache | None = (
            cache
            if isinstance(cache, ResponseCache)
            else ResponseCache(limits=limits) if cache else None
        )
        #: Who the server is, for what is kept of it (``connect(server_key=...)``; else
        #: this session alone).
        self.server_key = f"session-{id(self):x}"
        #: The 2026-07-28 connection was opened from a kept ``server/discover`` result
        #: (``_discovered``: the result it was opened with, or found).
        self._adopted = False
        self._discovered: dict[str, Any] | None = None
        self._probe_timeout = 5.0
        #: Open listens.
        self._listeners: list[Listener] = []
        #: URIs held subscribed by listens (legacy), and by how many.
        self._held: dict[str, int] = {}
        self._closing = False
        self._connection_args: dict[str, Any] = {
            "role": "client",
            "versions": self.versions,
            "local": self.local,
            "info": {"name": name, "version": version},
            "capabilities": caps,
            "limits": limits,
        }
        self.conn = c.Connection(**self._connection_args)
        #: Starts the server again when its process ended (``stdio_client(restart=...)``).
        self.reopen: Callable[[], Awaitable[Transport]] | None = None
        self.restart = Restart()
        self._restarted_at: list[float] = []
        self.session: Session | None = None
        self.transport: Transport | None = None
        self.tools = ToolHeaders()
        #: The tools' output schemas, and the checks of results against them.
        self.outputs = ToolOutputs(output_validation)
        self._reader: asyncio.Task[None] | None = None
        #: What happens when a legacy server loses the session (``runtime.client.recovery``).
        self.recovery = recovery or Recovery()
        #: Sessions the server lost that a new one replaced, in all and in a row (no
        #: request answered since); URIs subscribed, to subscribe again on a new session.
        self.renewals = self._renewals_in_a_row = self._losses_handled = 0
        self._renewing = asyncio.Lock()
        self._subscribed: dict[str, None] = {}
        self._handshake_timeout = 30.0
        #: The log level a legacy session was asked for (``set_logging_level``), asked
        #: again of a session that replaces it.
        self._log_level: str | None = None

    @property
    def protocol_version(self) -> str:
        return self.conn.version.version if self.conn.version is not None else ""

    @property
    def era(self) -> str:
        return self.conn.version.era if self.conn.version is not None else ""

    @property
    def server_info(self) -> dict[str, Any]:
        return self.conn.peer_info

    @property
    def server_capabilities(self) -> dict[str, Any]:
        return self.conn.peer_capabilities

    # -- connecting -------------------------------------------------------------------------

    async def connect(
        self,
        transport: Transport,
        mode: Mode = "auto",
        timeout: float = 30.0,
        probe_timeout: float = 5.0,
        server_key: str | None = None,
    ) -> str:
        """Start the session over ``transport`` and settle the version; returns it.

        ``server_key`` names the server (its URL or command line): the era ``auto`` finds
        is remembered under it, so a later ``auto`` connection to a server known to be
        legacy skips the probe; a failure forgets it, and the next connection probes again.
        """
        detect = mode == "auto"
        self._handshake_timeout = timeout
        if server_key is not None:
            self.server_key = server_key
        known = self.eras.get(server_key) if detect and server_key is not None else None
        if known is not None and known.era == "legacy":
            mode = "legacy"
        self.transport = transport
        self.session = Session(self.conn, transport, self.answers.dispatch, self._on_notification)
        self._reader = asyncio.create_task(self.session.run())
        param_headers = getattr(transport, "param_headers", UNSET)
        if param_headers is None:
            transport.param_headers = self.tools.headers  # type: ignore[attr-defined]
        try:
            modern_versions = self.versions.of_era("modern")
            found = self._adopt(known) if known is not None else None
            self._probe_timeout = probe_timeout
            if found is None and mode != "legacy" and modern_versions:
                found = await self._discover(
                    modern_versions, strict=mode == "modern", timeout=probe_timeout
                )
            if found is None:
                found = await self._initialize(timeout)
            if detect and server_key is not None and not self._adopted:
                kept = learned(self.era, found, self._discovered, self.eras.max_age)
                self.eras.remember(server_key, kept)
            return found
        except BaseException:
            if detect and server_key is not None:
                self.eras.forget(server_key)
            await self.close()
            raise

    def _adopt(self, known: Known) -> str | None:
        """Open a 2026-07-28 connection from a kept, fresh ``server/discover`` result,
        without asking again: its version, or None (none kept, or not one offered)."""
        discovered = known.fresh_discovery(time.time())
        if known.era != "modern" or discovered is None:
            return None
        if known.version not in self.versions.of_era("modern"):
            return None
        self.conn.discovered(self.versions[known.version], discovered)
        self._discovered, self._adopted = discovered, True
        return known.version

    async def _rediscover(self, refusal: McpError) -> None:
        """The server refused the version a kept ``server/discover`` result named: forget
        it and ask the server again (or fail with its refusal)."""
        self._adopted = False
        self.eras.forget(self.server_key)
        found = await self._discover(
            self.versions.of_era("modern"), strict=False, timeout=self._probe_timeout
        )
        if found is None:
            raise refusal
        self.eras.remember(
            self.server_key, learned("modern", found, self._discovered, self.eras.max_age)
        )

    async def _discover(self, offered: Sequence[str], strict: bool, timeout: float) -> str | None:
        """Probe with ``server/discover``; the version on success, None to fall back."""
        assert self.session is not None
        attempt = offered[-1]
        for _ in range(2):
            self.conn.version = self.versions[attempt]
            try:
                result = await self.session.request("server/discover", {}, timeout=timeout)
            except McpError as exc:
                if exc.code == UNSUPPORTED_PROTOCOL_VERSION:
                    supported = as_array(member(exc.data, "supported")) or []
                    common = [v for v in offered if v in supported]
                    if common:
                        attempt = common[-1]
                        continue
                    raise NegotiationError(
                        f"server speaks {supported}; this client offers {list(offered)}"
                    ) from None
                if strict or exc.code in MODERN_ERRORS:
                    raise
                break
            except (asyncio.TimeoutError, TimeoutError):
                if strict:
                    raise
                break
            plain = as_object(msgspec.to_builtins(result)) or {}
            supported = as_array(plain.get("supportedVersions")) or []
            common = [v for v in offered if v in supported]
            if not common:
                if strict:
                    raise NegotiationError(
                        f"server speaks {supported}; this client offers {offered}"
                    )
                break
            self.conn.discovered(self.versions[common[-1]], plain)
            self._discovered = plain
            return common[-1]
        self.conn.version = None
        return None

    async def _initialize(self, timeout: float) -> str:
        assert self.session is not None and self.transport is not None
        offered = tuple(self.versions.of_era("legacy"))
        if not offered:
            raise NegotiationError(
                "the server does not speak the modern era and this client offers no handshake version"
            )
        try:
            await self.transport.send(self.conn.initialize(offered))
        except (ConnectionError, OSError) as exc:
            raise ConnectionClosed(f"the server went away before the handshake ({exc})") from None
        try:
            version = await asyncio.wait_for(asyncio.shield(self.session.negotiated), timeout)
        except asyncio.TimeoutError:
            raise TimeoutError(
                f"the server did not answer initialize within {timeout:g} s (connect's timeout)"
            ) from None
        except asyncio.CancelledError:
            if self.session.negotiated.cancelled():
                raise ConnectionClosed(
                    "the server closed the connection during the handshake"
                ) from None
            raise
        if hasattr(self.transport, "protocol_version"):
            self.transport.protocol_version = version  # type: ignore[attr-defined]
        listen = getattr(self.transport, "listen", None)
        if callable(listen):
            listen()
        return version

    # -- requests -----------------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: Any = UNSET,
        result: Any = None,
        progress: ProgressCallback | None = None,
        *,
        task_result: Any = None,
        opt_in: Sequence[Extension] = (),
        capabilities: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Any:
        """Send a request and return its result (a ``result``); a modern server's
        ``input_required`` answers are fulfilled with the client handlers and the request
        retried. A task the server made of it is a ``task_result`` (``runtime.client.tasks``
        chooses by default). ``opt_in``: extensions declared for this request alone;
        ``capabilities``: what this request declares in place of the session's (a modern
        server reads them per request; e.g. a proxy declaring its own client's).
        ``progress(progress, total, message)`` hears the server's progress reports, in
        order, before the result. ``timeout``: seconds each message of the request waits
        for its answer, in place of ``Limits.request_timeout``; past it the request is
        cancelled at the server and ``RequestTimeout`` raised."""
        if self.session is None:
            raise RuntimeError("not connected")
        chosen = task_result or tc.task_result_of(self, method, params)
        options: dict[str, Any] = {"result": result, "task_result": chosen}
        if timeout is not None:
            if not timeout > 0:
                raise ValueError(f"timeout must be positive seconds, got {timeout!r}")
            options["timeout"] = timeout
        if opt_in or capabilities is not None:
            base = dict(capabilities) if capabilities is not None else self.conn.capabilities
            options["capabilities"] = declare(base, opt_in)
        followed = task_result is None  # a task the server makes is followed to its end
        keep = None
        if self.cache is not None and method in CACHEABLE and self.era == "modern":
            kept = await self.cache.lookup(self.server_key, method, params)
            if kept is not None:
                answer = self.conn.decode_result(method, msgspec.Raw(kept), result)
                self._learn(method, params, answer)  # e.g. a list kept by another session
                return answer
            keep = _Keep(self.cache, self.cache.generation(self.server_key, method), result)
            options["result"] = msgspec.Raw  # kept as sent, decoded below
        if self.telemetry is not None:
            with self.telemetry.client_span(method, params) as carrier:
                options["extra_meta"] = carrier
                return await self._requested(method, params, progress, options, followed, keep)
        return await self._requested(method, params, progress, options, followed, keep)

    async def _requested(
        self,
        method: str,
        params: Any,
        progress: ProgressCallback | None,
        options: dict[str, Any],
        followed: bool,
        keep: _Keep | None = None,
    ) -> Any:
        """:meth:`request`'s work: the request, its input rounds and (``followed``) the
        task it became; the result kept, when ``keep`` says so and the server allows."""
        refreshed = False
        rounds = self.conn.limits.max_input_rounds
        for answered in range(rounds + 1):
            try:
                answer = await self.url_elicitations.send(
                    functools.partial(self._sent, method, params, progress, options)
                )
            except McpError as exc:
                # The spec's advice for -32020 on a call: the tool's x-mcp-header
                # annotations may be new to us; list the tools again and retry once.
                if refreshed or not self._stale_headers(method, exc):
                    raise
                refreshed = True
                await self._relist_tools()
                answer = await self._sent(method, params, progress, options)
            if not isinstance(answer, c.InputRequiredAnswer):
                if keep is not None:
                    raw = answer
                    answer = self.conn.decode_result(method, raw, keep.result)
                    if not answered:  # the answers to input rounds are not kept
                        await keep.cache.keep(self.server_key, method, params, raw, keep.generation)
                self._learn(method, params, answer)
                done = await tc.follow(self, answer) if followed else answer
                if method == CALL_TOOL and followed:
                    await self.outputs.check(params, done, self._relist_tools)
                return done
            if answered == rounds:  # no more asking the user for what will not be used
                break
            params = await self.answers.retry_params(params, answer, self.protocol_version)
        raise McpError(INVALID_REQUEST, f"{method} still needs input after {rounds} rounds")

    def _learn(self, method: str, params: Any, answer: Any) -> None:
        """What the session keeps of an answer: a tool list's header annotations and
        output schemas, the URIs subscribed."""
        if method == LIST_TOOLS:
            self.tools.remember(answer, drop_invalid=self._header_safe())
            self.outputs.listed(params, answer)
        elif method in (SUBSCRIBE, UNSUBSCRIBE):
            self._note_subscription(method, params)

    async def _sent(
        self, method: str, params: Any, progress: ProgressCallback | None, options: dict[str, Any]
    ) -> Any:
        """The session's answer to one request; when the server lost the session meanwhile,
        a new one is initialized and the request sent once more if ``recovery`` allows."""
        assert self.session is not None
        while True:  # bounded: each turn renews, at most Recovery.max_renewals in a row
            lost = self._losses()
            if lost > self._losses_handled:  # lost between requests (an SSE stream dropped)
                await self._renew()
            try:
                answer = await self.session.request(method, params, progress=progress, **options)
            except McpError as exc:
                if self._adopted and exc.code == UNSUPPORTED_PROTOCOL_VERSION:
                    await self._rediscover(exc)
                    continue
                if self._losses() == lost:
                    raise
                await self._renew()
                if method not in self.recovery.retry:
                    raise SessionLost(method) from None
                continue
            except ConnectionClosed:
                if not await self._restarted():
                    raise
                if method not in self.recovery.retry:
                    raise SessionLost(method, "the server process ended") from None
                continue
            self._renewals_in_a_row = 0
            return answer

    async def _restarted(self) -> bool:
        """Start the server again, if ``reopen`` may (``Restart``): True once a new session
        is open; False when there is no restart to make."""
        if self.reopen is None or self.session is None:
            return False
        async with self._renewing:
            if not self.session.closed:
                return True  # another request restarted it meanwhile
            now = time.monotonic()
            recent = [t for t in self._restarted_at if now - t < self.restart.window]
            if len(recent) >= self.restart.max_restarts:
                return False
            self._restarted_at = [*recent, now]
            era = self.era
            if self._reader is not None:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await asyncio.wait_for(self._reader, 5.0)
            with contextlib.suppress(Exception):
                await self.session.close()
            transport = await self.reopen()
            level, self.conn = self.conn.log_level, c.Connection(**self._connection_args)
            self.conn.log_level = level  # a 2026-07-28 server is told on every request
            log.warning("the server process ended; a new one is started (%s era)", era)
            await self.connect(
                transport, "modern" if era == "modern" else "legacy", self._handshake_timeout
            )
            for uri in self._wanted_uris():
                await self.session.request(SUBSCRIBE, {"uri": uri})
            await self._ask_log_level()
            self._renewed()
            return True

    def _note_subscription(self, method: str, params: Any) -> None:
        plain = as_object(msgspec.to_builtins(params)) if params is not UNSET else None
        uri = plain.get("uri") if plain is not None else None
        if isinstance(uri, str) and method == SUBSCRIBE:
            self._subscribed[uri] = None
        elif isinstance(uri, str):
            self._subscribed.pop(uri, None)

    def _losses(self) -> int:
        return int(getattr(self.transport, "sessions_lost", 0))

    async def _renew(self) -> None:
        """Initialize a new session in place of the one the server lost (once, however
        many requests failed with it), subscribe again to what was subscribed, and say so."""
        assert self.session is not None
        async with self._renewing:
            losses = self._losses()
            if losses <= self._losses_handled:
                return  # another request renewed it
            if self._renewals_in_a_row >= self.recovery.max_renewals:
                raise ConnectionClosed(
                    f"the server lost {self._renewals_in_a_row} sessions in a row with no"
                    " request answered between (Recovery.max_renewals)"
                )
            lost = str(getattr(self.transport, "lost_session_id", None))
            self._renewals_in_a_row += 1
            self._losses_handled = losses
            if self.conn.session_lost():  # a legacy session: a new handshake
                self.session.renegotiate()
                version = await self._initialize(self._handshake_timeout)
            else:  # the 2026-07-28 revision keeps nothing in a session
                version = self.protocol_version
            for uri in self._wanted_uris():
                await self.session.request(SUBSCRIBE, {"uri": uri})
            await self._ask_log_level()
            self._renewed()
            self.renewals += 1
            log.info("session %s was lost; a new one is initialized (%s)", lost, version)
            event = SessionRenewed(lost, version, tuple(self._subscribed), self.renewals)
            if self.recovery.on_renewed is not None:
                told = self.recovery.on_renewed(event)
                if told is not None:
                    await told

    def _stale_headers(self, method: str, exc: McpError) -> bool:
        return exc.code == HEADER_MISMATCH and method == CALL_TOOL and self._header_safe()

    async def _relist_tools(self) -> None:
        """Every page of the server's tools (:meth:`request` remembers their annotations
        and schemas), from the server: a kept list is what made it needed."""
        if self.cache is not None:
            await self.cache.forget(self.server_key, LIST_TOOLS)

        async for _ in self.pages(LIST_TOOLS):
            pass

    def _header_safe(self) -> bool:
        """Over HTTP, tools whose ``x-mcp-header`` annotations are invalid are dropped."""
        return getattr(self.transport, "param_headers", None) is not None

    async def call_tool_as_task(
        self, name: str, arguments: dict[str, Any] | None = None, ttl_ms: int | None = None
    ) -> tc.TaskHandle:
        """Call tool ``name`` as a task: its handle (``runtime.client.tasks``)."""
        return await tc.call_tool_as_task(self, name, arguments, ttl_ms)

    async def call_tool_as(
        self,
        output_type: type[T],
        name: str,
        arguments: Mapping[str, Any] | None = None,
        progress: ProgressCallback | None = None,
        timeout: float | None = None,
    ) -> T:
        """Call tool ``name`` and return its ``structuredContent`` as ``output_type`` (a
        msgspec Struct, dataclass, TypedDict or builtin type), checked against the tool's
        ``outputSchema`` first (``runtime.client.outputs``); ``progress`` and ``timeout``
        as :meth:`request` takes them."""
        send = self.request if timeout is None else functools.partial(self.request, timeout=timeout)
        return await call_tool_as(send, output_type, name, arguments, progress=progress)

    async def list_tasks(self) -> list[tc.TaskInfo]:
        """The tasks the server lists for this client (2025-11-25 ``tasks/list``)."""
        return await tc.list_tasks(self)

    async def fulfil(self, key: str, ask: Any) -> Any:
        """The answer of this client's handler to a modern server's input request ``ask``
        (plain JSON ``{method, params}``), as plain JSON (``runtime.client.answers``)."""
        return await self.answers.fulfil(key, ask, self.protocol_version)

    async def notify(self, method: str, params: Any = UNSET) -> None:
        if self.session is None:
            raise RuntimeError("not connected")
        await self.session.notify(method, params)

    def set_log_level(self, level: str | None) -> None:
        """Modern era only: ask for log messages at ``level`` and above on every request
        (the ``_meta`` log level; None: no messages). :meth:`set_logging_level` does it in
        either era."""
        self.conn.log_level = level

    async def set_logging_level(self, level: str) -> None:
        """Receive the server's log messages (``notifications/message``, heard by the
        handlers' ``on_logging_message``) at ``level`` and above, in either era: a legacy
        server is sent ``logging/setLevel`` (one that declares no ``logging`` sends no
        messages and is not asked), a 2026-07-28 server is told on each request that follows
        (its ``_meta``). A session that replaces a lost one is asked again."""
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}: one of {', '.join(LOG_LEVELS)}")
        if self.session is None:
            raise RuntimeError("not connected")
        if self._logs_by_session():
            await self.request(SET_LEVEL, {"level": level})
            self._log_level = level
        self.set_log_level(level)

    def _logs_by_session(self) -> bool:
        """A legacy server that logs: its log level is set once for the session."""
        return self.era == "legacy" and "logging" in self.server_capabilities

    async def _ask_log_level(self) -> None:
        """Ask a new legacy session for the log level asked of the one it replaced."""
        if self._log_level is not None and self.session is not None and self._logs_by_session():
            await self.session.request(SET_LEVEL, {"level": self._log_level})

    # -- what the server asks of us ---------------------------------------------------------

    def handle(self, method: str) -> Callable[[F], F]:
        """Decorate ``async def handler(params, ctx)`` as this client's handler of an
        extension's ``method`` that the server sends."""
        return self.answers.handle(method)

    def use(self, middleware: Middleware) -> Middleware:
        """Add ``middleware`` around every handler, inside those added before."""
        return self.answers.use(middleware)

    async def _on_notification(self, event: c.IncomingNotification) -> None:
        name = event.spec.name
        if name == "notifications/tasks/status":
            self.task_watch.seen(event.params)
        elif name in NOTIFIED or name == ACKNOWLEDGED:
            self._heard(event)  # first, before any await: in the order they came
            if name == "notifications/tools/list_changed":
                self.outputs.changed()
            if name in STALE_AFTER and self.cache is not None:
                await self.cache.stale(self.server_key, name)
        elif name == elicitation.COMPLETE:
            self.url_elicitations.completed(event.params)
        await self.answers.notified(event)

    # -- listening ---------------------------------------------------------------------------

    def listen(
        self,
        *,
        tools: bool | None = None,
        prompts: bool | None = None,
        resources: bool | None = None,
        uris: Iterable[str] = (),
    ) -> Listener:
        """What the server says changed (``runtime.client.listen``), in either era:
        ``async with session.listen(uris=[...]) as changes: async for change in changes``.
        Each list is asked for when True, and by default when the server announces its
        changes; ``uris`` are the resources whose updates are wanted."""
        if self.session is None:
            raise RuntimeError("not connected")
        wanted = wanted_filter(self.server_capabilities, tools, prompts, resources, uris)
        limits = self.conn.limits
        listener = Listener(self, wanted, limits.listen_backlog, limits.request_timeout)
        self._listeners.append(listener)
        return listener

    def _heard(self, event: c.IncomingNotification) -> None:
        """Hand a change notification (or a listen's acknowledgement) to the listens it is for."""
        if event.subscription is not None:  # on a 2026-07-28 listen stream
            listener = next((x for x in self._listeners if x.stream == event.subscription), None)
            if listener is None:
                return
            if event.spec.name == ACKNOWLEDGED:
                listener.acknowledged(event.params)
            else:
                listener.notified(event.spec.name, event.params)
            return
        if self.era == "legacy":
            for listener in self._listeners:
                listener.notified(event.spec.name, event.params)

    def forget_listener(self, listener: Listener) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    async def hold(self, uris: Iterable[str]) -> None:
        """Subscribe (legacy) to ``uris`` for a listen, unless already subscribed."""
        for uri in uris:
            held = self._held.get(uri, 0)
            self._held[uri] = held + 1
            if not held and uri not in self._subscribed:
                try:
                    await self._sent(SUBSCRIBE, {"uri": uri}, None, {})
                except BaseException:
                    await self.release([uri])
                    raise

    async def release(self, uris: Iterable[str]) -> None:
        """A listen no longer wants ``uris``: unsubscribe from those nothing else wants."""
        for uri in uris:
            held = self._held.pop(uri, 0)
            if held > 1:
                self._held[uri] = held - 1
            elif held == 1 and uri not in self._subscribed and not self._closing:
                with contextlib.suppress(McpError, ConnectionClosed):
                    await self._sent(UNSUBSCRIBE, {"uri": uri}, None, {})

    async def reopened(self) -> bool:
        """A listen's stream was cut: True when the connection is (again) usable."""
        if self._closing:
            return False
        if self.session is not None and not self.session.closed:
            return True
        return await self._restarted()

    def _wanted_uris(self) -> list[str]:
        """What to subscribe to again on a new session: the caller's and the listens'."""
        return [*self._subscribed, *(u for u in self._held if u not in self._subscribed)]

    def _renewed(self) -> None:
        """A new session replaced a lost one: what the listens carry may have changed."""
        for listener in self._listeners:
            if self.era == "legacy":
                listener.missed()

    # -- lists --------------------------------------------------------------------------------

    def pages(self, method: str, params: Any = None, result: Any = None) -> AsyncIterator[Any]:
        """Each page of ``method``'s list (``tools/list``, ...), following the server's
        cursors (``runtime.core.pages``; ``Limits.max_pages``)."""
        return pg.pages(
            functools.partial(self.request, result=result), method, params, self.conn.limits
        )

    async def list_all(self, method: str, params: Any = None, result: Any = None) -> list[Any]:
        """Every item of ``method``'s list, from all its pages (``Limits.max_list_items``)."""
        fetch = functools.partial(self.request, result=result)
        return await pg.gather(fetch, method, params, self.conn.limits)

    async def close(self) -> None:
        self._closing = True
        for listener in list(self._listeners):
            await listener.close()
        if self.answers.receiver is not None:
            await self.answers.receiver.tasks.close()
        if self.session is not None:
            await self.session.close()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._reader, 5.0)
