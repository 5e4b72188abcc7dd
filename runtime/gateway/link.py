"""One open connection to an upstream, and what passes over it in both directions.

A :class:`Link` sends a downstream client's request on as the proxy's own (its protocol
``_meta`` replaced by the link's, progress relayed back) and routes what the upstream
sends its client to the downstream client it concerns:

* a request for input (sampling, elicitation, roots) that a 2026-07-28 upstream makes by
  answering ``input_required`` arrives in the task of the call it belongs to, which knows
  its downstream request (:data:`CALL`); one that a legacy upstream sends as a request of
  its own says nothing of its call, and goes to the one in flight over the link that can
  be asking (:meth:`Link._only_request`; on a link that serves one downstream session
  alone, to that session); for a 2026-07-28 client the call is parked across its input
  rounds (:mod:`~runtime.gateway.parking`);
* what the upstream may ask is what the downstream client declares (per request to a
  2026-07-28 upstream; per connection to a legacy one, :class:`~runtime.gateway.pool.Pool`
  keeping one per set of declarations);
* a change (``list_changed``, ``resources/updated``) is announced to the downstream
  clients the link serves;
* a log message goes with the downstream request in flight it can belong to.

Each downstream request is answered with the upstream's answer or error, code kept; a
downstream cancellation cancels the upstream request (``notifications/cancelled``), and
an upstream that ends fails every request waiting on it at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any

import msgspec
from msgspec import UNSET

from ..aio.session import RequestScope, Session
from ..client import ClientSession
from ..core.errors import INTERNAL_ERROR, ConnectionClosed, McpError
from ..core.json_values import as_array, as_object
from ..core.modern import InputRequired
from ..client.tasks import TaskHandle, legacy_tasks, modern_info
from ..tasks.engine import TaskScope
from ..tasks.legacy_wire import RELATED_TASK
from ..tasks.extension import EXTENSION as TASKS
from ..tasks.extension import DetailedTask
from .parking import ParkedCall, Parking
from .upstream import Upstream

log = logging.getLogger("mcpgen.runtime.gateway")

#: The downstream request a proxied call is made for, in the task making it.
CALL: ContextVar[RequestScope | ParkedCall | None] = ContextVar("mcpgen_gateway_call", default=None)
#: ``_meta`` keys of the protocol itself: each hop sets its own.
PROTOCOL_META = "io.modelcontextprotocol/"
#: Params that belong to one hop: a 2026-07-28 request's answered input and signed state,
#: and a task asked of the proxy (the proxy's own task, when it runs tasks; the upstream is
#: asked for one of its own only where that is how its tool runs).
HOP_PARAMS = ("inputResponses", "requestState", "task")
#: A change an upstream announces → what the proxy announces (``Server.notify_changed``).
CHANGED = {
    "on_tool_list_changed": "tools",
    "on_prompt_list_changed": "prompts",
    "on_resource_list_changed": "resources",
}
#: A 2026-07-28 upstream announces changes only on a listen stream, held open this long.
LISTEN = "subscriptions/listen"
LISTEN_FOR = 10.0**9
#: Lists whose changes may be announced → the listen filter asking for them.
LIST_FLAGS = {
    "tools": "toolsListChanged",
    "prompts": "promptsListChanged",
    "resources": "resourcesListChanged",
}
CALL_TOOL, LIST_TOOLS = "tools/call", "tools/list"
#: The most pages of an upstream's tool list read to learn which tools run only as tasks.
MAX_PAGES = 100
#: Questions a legacy upstream sends this close together are taken as one call's.
ASKED_TOGETHER = 0.05
#: Requests whose answer may wait for the client's input (``input_required`` in 2026-07-28).
BRIDGED = frozenset({"tools/call", "prompts/get", "resources/read"})
#: The capability each of those requests needs of the client: handler name → capability.
ASKED_OF = {"create_message": "sampling", "elicit": "elicitation", "list_roots": "roots"}
#: The requests for input an upstream may send its client: handler name → method.
ASKS = {
    "create_message": "sampling/createMessage",
    "elicit": "elicitation/create",
    "list_roots": "roots/list",
}

#: Told of a change the upstream announced: (what, uri, the session it concerns or None).
OnChange = Callable[[str, "str | None", "Session | None"], Awaitable[None]]


def hop_params(params: Any) -> dict[str, Any]:
    """A downstream request's params as the upstream request's: the protocol's ``_meta``
    keys, the progress token and a 2026-07-28 hop's input answers left out (the link's
    session sets its own)."""
    if params is None or params is UNSET:
        return {}
    plain = as_object(msgspec.to_builtins(params)) or {}
    for name in HOP_PARAMS:
        plain.pop(name, None)
    meta = as_object(plain.get("_meta"))
    if meta is not None:
        kept = {
            k: v
            for k, v in meta.items()
            if not k.startswith(PROTOCOL_META) and k != "progressToken"
        }
        if kept:
            plain["_meta"] = kept
        else:
            del plain["_meta"]
    return plain


class Link:
    """One connection to ``upstream``: shared by every downstream client, or serving
    ``owner`` (one downstream session) alone."""

    def __init__(
        self,
        upstream: Upstream,
        binding: Any,
        on_change: OnChange,
        parking: Parking,
        owner: Session | None = None,
        capabilities: Mapping[str, Any] | None = None,
    ) -> None:
        self.upstream = upstream
        #: What this connection declares its client can be asked (None: all the proxy
        #: relays): a legacy upstream checks them once, for the session.
        self.capabilities = capabilities
        self.binding = binding
        self.owner = owner
        self.parking = parking
        self._on_change = on_change
        self.session: ClientSession | None = None
        #: What is being answered over this link now: downstream requests, and calls
        #: parked between a 2026-07-28 client's input rounds.
        self.inflight: list[RequestScope | ParkedCall] = []
        #: URI → how many downstream subscriptions ask for its updates.
        self.subscriptions: dict[str, int] = {}
        self.last_used = time.monotonic()
        self._stack = contextlib.AsyncExitStack()
        self._listening: asyncio.Task[None] | None = None
        #: Targets of ``inflight`` with a question of theirs unanswered: id → how many;
        #: and the one the last question went to, when.
        self._asking: dict[int, int] = {}
        self._last_asked: tuple[int, float] = (0, 0.0)
        self._latest_began = 0.0  # when the latest of ``inflight`` began
        #: Each upstream tool's ``execution.taskSupport`` (None: not learned yet).
        self.task_support: dict[str, str] | None = None
        #: The upstream's tasks being followed, by id → the downstream request each is for.
        self.tasks_for: dict[str, RequestScope | ParkedCall] = {}
        #: Calls making an upstream task whose id they have not noted yet, and what is set
        #: (and replaced) each time one of them is done making it.
        self._making = 0
        self._made = asyncio.Event()
        self._learning = asyncio.Lock()

    @property
    def era(self) -> str:
        return self.session.era if self.session is not None else ""

    @property
    def capabilities_declared(self) -> dict[str, Any]:
        """What this connection declared its client can be asked."""
        declared = self.session.conn.capabilities if self.session is not None else {}
        return {name: declared[name] for name in ASKED_OF.values() if name in declared}

    @property
    def instructions(self) -> str | None:
        return self.session.conn.instructions if self.session is not None else None

    @property
    def closed(self) -> bool:
        inner = self.session.session if self.session is not None else None
        return inner is None or inner.closed

    async def open(self, client_handlers: type, **options: Any) -> ClientSession:
        """Connect; ``client_handlers`` is the binding's ``ClientHandlers``, subclassed here
        so that what the upstream asks of its client is relayed."""
        handlers = relaying_handlers(client_handlers, self, self.capabilities)()
        # Results pass through as they came: the downstream client checks them against the
        # outputSchema it was listed, and the proxy's hot path spends nothing on it.
        options.setdefault("output_validation", "off")
        if self.capabilities is not None:
            options["capabilities"] = dict(self.capabilities)
        # Nothing kept here: one connection serves several users, whose clients keep what
        # the upstream's ttlMs and cacheScope (relayed) allow them.
        options.setdefault("cache", False)
        try:
            self.session = await self._stack.enter_async_context(
                self.upstream.open(self.binding, handlers, **options)
            )
        except BaseException:
            await self._stack.aclose()
            raise
        if self.era == "legacy" and "logging" in self.session.server_capabilities:
            with contextlib.suppress(McpError):  # the downstream side filters by level
                await self.session.request("logging/setLevel", {"level": "debug"})
        self._relisten()
        return self.session

    async def close(self) -> None:
        self.session = None
        if self._listening is not None:
            self._listening.cancel()
        with contextlib.suppress(Exception):
            await self._stack.aclose()

    # -- what downstream clients wait for -------------------------------------------------------

    async def want(self, uri: str) -> None:
        """A downstream client subscribes to ``uri``'s updates: the upstream is asked for
        them with the first (``resources/subscribe``, or a 2026-07-28 listen filter)."""
        held = self.subscriptions.get(uri, 0)
        self.subscriptions[uri] = held + 1
        if held:
            return
        if self.era != "legacy":
            self._relisten()
            return
        try:
            await self._sent("resources/subscribe", {"uri": uri})
        except BaseException:
            self.subscriptions.pop(uri, None)
            raise

    async def adopt(self, subscriptions: dict[str, int]) -> None:
        """Take over the subscriptions of a connection this one replaces: the upstream is
        asked for their updates again (a URI it refuses now is dropped, and logged)."""
        for uri, held in list(subscriptions.items()):
            try:
                await self.want(uri)
            except (McpError, ConnectionClosed) as exc:
                log.warning("subscribing %s again at %s failed: %s", uri, self.upstream.where, exc)
                continue
            self.subscriptions[uri] = held

    async def unwant(self, uri: str) -> None:
        """A downstream subscription to ``uri`` ends; with the last, the upstream's."""
        held = self.subscriptions.pop(uri, 0)
        if held > 1:
            self.subscriptions[uri] = held - 1
        elif held == 1 and self.era == "legacy":
            with contextlib.suppress(McpError, ConnectionClosed):
                await self._sent("resources/unsubscribe", {"uri": uri})
        elif held == 1:
            self._relisten()

    async def _sent(self, method: str, params: dict[str, Any]) -> Any:
        if self.session is None:
            raise McpError(INTERNAL_ERROR, f"the upstream {self.upstream.name!r} is not connected")
        return await self.session.request(method, params)

    def _relisten(self) -> None:
        """(Re)open the listen stream of a 2026-07-28 upstream with what is wanted now: the
        list changes it announces, and the subscribed resources' updates."""
        session = self.session
        if session is None or self.era != "modern":
            return
        caps = session.server_capabilities
        wanted: dict[str, Any] = {
            flag: True
            for kind, flag in LIST_FLAGS.items()
            if (as_object(caps.get(kind)) or {}).get("listChanged")
        }
        if self.subscriptions:
            wanted["resourceSubscriptions"] = sorted(self.subscriptions)
        old, self._listening = self._listening, None
        if wanted:
            self._listening = asyncio.get_running_loop().create_task(self._listen(wanted))
        if old is not None:
            old.cancel()

    async def _listen(self, wanted: dict[str, Any]) -> None:
        """Hold a listen stream open; one that ends is opened again after a pause that
        doubles up to a minute while it keeps ending."""
        pause = 1.0
        while self.session is not None and self.session.session is not None:
            began = time.monotonic()
            try:
                await self.session.session.request(
                    LISTEN, {"notifications": wanted}, timeout=LISTEN_FOR
                )
            except (McpError, ConnectionClosed, TimeoutError) as exc:
                log.info("the listen stream of %s ended: %s", self.upstream.where, exc)
            if self.closed:
                return
            pause = 1.0 if time.monotonic() - began > 60 else min(pause * 2, 60.0)
            await asyncio.sleep(pause)

    async def call(self, method: str, params: Any, scope: RequestScope, client: Any) -> Any:
        """The upstream's answer to ``method`` for the downstream request ``scope`` of
        ``client`` (who it is, as the proxy tells clients apart)."""
        session = self.session
        if session is None:
            raise McpError(INTERNAL_ERROR, f"the upstream {self.upstream.name!r} is not connected")
        self.last_used = time.monotonic()
        rounds = scope.event.peer is not None and method in BRIDGED and not running_task(scope)
        parked = self.parking.returning(scope, client) if rounds else None
        if parked is not None:  # a 2026-07-28 client back with its answers
            return await self._round(parked, scope)
        as_task = method == CALL_TOOL and await self._only_as_task(session, params, scope)
        if rounds and (self.era == "legacy" or as_task):  # questions outside the answer
            return await self._bridged(session, method, params, scope, client, as_task)
        progress = _progress_to(lambda: scope) if "progressToken" in scope.meta else None
        declared = None
        if self.era == "modern":  # a 2026-07-28 upstream reads these per request
            session.conn.log_level = _log_level_of(scope)
            declared = self._as_declared_by(scope)
        opt_in = (TASKS,) if method == CALL_TOOL and self.runs_tasks else ()
        self._began(scope)
        token = CALL.set(scope)
        try:
            if as_task:
                return await self._as_task(session, params)
            answer = await session.request(
                method,
                hop_params(params),
                progress=progress,
                capabilities=declared,
                opt_in=opt_in,
                task_result=DetailedTask if opt_in else None,
            )
            if isinstance(answer, DetailedTask):  # the upstream made a task of the call
                handle = TaskHandle(session, modern_info(answer))
                if rounds:  # its questions come outside any answer: the call is parked
                    return await self._park(lambda: _followed(handle), scope, client)
                return await _followed(handle)
        finally:
            CALL.reset(token)
            if scope in self.inflight:
                self.inflight.remove(scope)
            self.last_used = time.monotonic()
        if method == LIST_TOOLS:
            self._learn_task_support(answer)
        return answer

    @property
    def runs_tasks(self) -> bool:
        """Whether a 2026-07-28 upstream may run a call as a task (declares the extension):
        its calls declare it too, and a task it makes of one is followed to its end."""
        session = self.session
        return (
            session is not None
            and self.era == "modern"
            and TASKS.declared("modern", session.server_capabilities)
        )

    # -- tools the upstream runs only as tasks ------------------------------------------------

    def _learn_task_support(self, listed: Any) -> None:
        learned = self.task_support if self.task_support is not None else {}
        self.task_support = _task_support_of(listed, learned)

    async def learn_task_support(self) -> dict[str, str]:
        """Each upstream tool's ``execution.taskSupport`` (its tools listed once to learn
        it, the first time it is needed)."""
        session = self.session
        if self.task_support is None and session is not None:
            async with self._learning:  # calls at once wait for one listing
                if self.task_support is None:
                    learned: dict[str, str] = {}
                    cursor: str | None = None
                    for _ in range(MAX_PAGES):
                        listed = {"cursor": cursor} if cursor else {}
                        page = await session.request(LIST_TOOLS, listed)
                        _task_support_of(page, learned)
                        after = getattr(page, "next_cursor", None)
                        if not isinstance(after, str) or not after:
                            break
                        cursor = after
                    self.task_support = learned
        return self.task_support or {}

    async def _only_as_task(self, session: ClientSession, params: Any, scope: RequestScope) -> bool:
        """Whether this call goes to a legacy upstream as a task: a tool it runs only as
        one, or one it may run as one called for a downstream task (which so waits on the
        upstream's task, not on a request held open). A 2026-07-28 upstream decides for
        itself (:attr:`runs_tasks`)."""
        if self.runs_tasks:  # (it decides; the call declares the extension)
            return False
        name = getattr(params, "name", None)
        if name is None:
            name = (as_object(params) or {}).get("name")
        support = (await self.learn_task_support()).get(str(name))
        if support == "optional":
            return running_task(scope) and legacy_tasks(session)
        return support == "required"

    async def _as_task(self, session: ClientSession, params: Any) -> Any:
        """Call as a task, and follow it to its result (cancelled with the call). What a
        legacy upstream asks for the task names it (its related-task ``_meta``): it goes
        to the downstream request the task is for, however many are in flight."""
        plain = hop_params(params)
        arguments = as_object(plain.get("arguments"))
        target = CALL.get()
        self._making += 1
        try:
            handle = await session.call_tool_as_task(str(plain.get("name")), arguments)
            if target is not None and handle.task_id:
                self.tasks_for[handle.task_id] = target
        finally:
            self._making -= 1
            made, self._made = self._made, asyncio.Event()
            made.set()  # questions waiting for their task to be known look again
        try:
            return await _followed(handle)
        finally:
            self.tasks_for.pop(handle.task_id, None)

    async def _bridged(
        self,
        session: ClientSession,
        method: str,
        params: Any,
        scope: RequestScope,
        client: Any,
        as_task: bool = False,
    ) -> Any:
        """A 2026-07-28 client's request that may be asked for input while it waits, not in
        an answer of its own: to a legacy upstream (which asks with requests), or run as an
        upstream task (whose questions come while it is followed)."""
        progress = [scope]
        relay = _progress_to(lambda: progress[0]) if "progressToken" in scope.meta else None

        async def call() -> Any:
            if as_task:
                return await self._as_task(session, params)
            return await session.request(method, hop_params(params), progress=relay)

        return await self._park(call, scope, client, progress)

    async def _park(
        self,
        call: Callable[[], Awaitable[Any]],
        scope: RequestScope,
        client: Any,
        rounds: list[RequestScope] | None = None,
    ) -> Any:
        """Run ``call`` parked across the client's rounds (:mod:`~runtime.gateway.parking`),
        itself what its questions are routed to (:data:`CALL`, in its task); ``rounds``
        (first and only item: the round under way) is shared with its progress relay."""
        holder: list[ParkedCall] = []

        async def parked_call() -> Any:
            CALL.set(holder[0])  # in this task only: its questions go to the parked call
            return await call()

        parked = self.parking.park(parked_call(), client)
        holder.append(parked)
        parked.rounds = rounds if rounds is not None else [scope]
        self._began(parked)
        parked.task.add_done_callback(lambda _: self.inflight.remove(parked))
        return await self._round(parked, scope)

    async def _round(self, parked: ParkedCall, scope: RequestScope) -> Any:
        """One downstream round of a parked call: its answer, or ``input_required``."""
        parked.rounds[0] = scope
        try:
            result = await parked.round(scope)
        except InputRequired:
            raise
        except asyncio.CancelledError:
            self.parking.abandon(parked)
            raise
        except BaseException:
            self.parking.done_with(parked)
            raise
        self.parking.done_with(parked)
        return result

    # -- what the upstream sends its client ---------------------------------------------------

    async def ask(self, method: str, params: Any, ctx: Any) -> Any:
        """Relay the upstream's request for input to the downstream client it concerns."""
        # A 2026-07-28 upstream's input request comes in the task of the call it is for,
        # keyed within it; a legacy upstream's is a request of its own (a RequestScope).
        key = None if isinstance(ctx, RequestScope) else str(ctx.request_id)
        if key is not None:
            target = CALL.get()
        else:
            target = await self._asked_for_task(params) or self._only_request(method)
        if target is None:
            return await self._ask_owner(method, params)
        self._asking[id(target)] = self._asking.get(id(target), 0) + 1
        try:
            if isinstance(target, ParkedCall):
                return await target.ask(method, params, self.parking.keep_for)
            return await target.request(method, params, None, key)
        finally:
            left = self._asking.pop(id(target)) - 1
            if left:
                self._asking[id(target)] = left

    async def _asked_for_task(self, params: Any) -> RequestScope | ParkedCall | None:
        """The downstream request following the upstream task a legacy upstream's request
        names (None: it names none, or one not followed here). The upstream asks as soon as
        its task runs, which can be before the call that made the task has noted its id
        (the answer read, the call not resumed yet): a question naming a task not known
        waits while calls are making tasks, until it is known or none is."""
        task_id = _related_task(params)
        if task_id is None:
            return None
        while task_id not in self.tasks_for and self._making:
            await self._made.wait()
        return self.tasks_for.get(task_id)

    def _as_declared_by(self, scope: RequestScope) -> dict[str, Any]:
        """The capabilities a request to a 2026-07-28 upstream declares: what the
        downstream client declares it can be asked, with the rest of the proxy's own."""
        assert self.session is not None
        own = self.session.conn.capabilities
        kept = {name: value for name, value in own.items() if name not in ASKED_OF.values()}
        return {**kept, **asked_capabilities(scope)}

    def _began(self, target: RequestScope | ParkedCall) -> None:
        self.inflight.append(target)
        self._latest_began = time.monotonic()

    def _only_request(self, method: str) -> RequestScope | ParkedCall | None:
        """The downstream request a legacy upstream's request can concern (its request
        says nothing of it): the one in flight over this link; else the one the previous
        question went to, when it came within :data:`ASKED_TOGETHER` and no call began
        since (a handler asking several things at once); else the one not already waiting for the answer to a
        question of its own (its upstream handler is waiting, not asking anew). None on a
        link of one downstream session with none in flight (the session itself is asked)."""
        waiting = {id(s): s for s in self.inflight}
        last, at = self._last_asked
        if len(waiting) == 1:
            chosen: RequestScope | ParkedCall | None = next(iter(waiting.values()))
        elif last in waiting and self._latest_began < at and time.monotonic() - at < ASKED_TOGETHER:
            chosen = waiting[last]  # questions sent together, no call begun since: its
        else:
            free = [s for key, s in waiting.items() if not self._asking.get(key)]
            chosen = free[0] if len(free) == 1 else None
        if chosen is not None:
            self._last_asked = (id(chosen), time.monotonic())
            return chosen
        if not waiting and self.owner is not None:
            return None
        raise McpError(
            INTERNAL_ERROR,
            f"{method} from the upstream {self.upstream.name!r} concerns none of the"
            f" {len(waiting)} requests in flight for certain: serve this upstream"
            " per_session for requests like it to reach their client",
        )

    async def _ask_owner(self, method: str, params: Any) -> Any:
        owner = self.owner
        if owner is None or owner.closed:
            raise McpError(INTERNAL_ERROR, f"no client to relay {method} to")
        return await owner.request(method, params)

    async def changed(self, what: str, uri: str | None = None) -> None:
        if what == "tools":
            self.task_support = None  # learned again when a call needs it
        await self._on_change(what, uri, self.owner)

    async def logged(self, params: Any) -> None:
        """A log message goes with the one downstream request in flight (or to the
        session this link serves), at the level that client asked for."""
        plain = as_object(msgspec.to_builtins(params)) or {}
        level, data, logger = plain.get("level"), plain.get("data"), plain.get("logger")
        if not isinstance(level, str):
            return
        targets = {id(s): s for s in self.inflight}
        if len(targets) == 1:
            target = next(iter(targets.values()))
            scope = target.rounds[0] if isinstance(target, ParkedCall) else target
            await scope.log(level, data, logger if isinstance(logger, str) else None)
        elif self.owner is not None and not self.owner.closed:
            conn = self.owner.conn
            if conn.version is not None and conn.log_allowed(level):
                await self.owner.notify("notifications/message", plain)


def _task_support_of(listed: Any, learned: dict[str, str]) -> dict[str, str]:
    """``learned`` with each tool of a ``tools/list`` page's ``execution.taskSupport``."""
    plain = as_object(msgspec.to_builtins(listed)) or {}
    for tool in as_array(plain.get("tools")) or []:
        fields = as_object(tool) or {}
        execution = as_object(fields.get("execution")) or {}
        support = execution.get("taskSupport")
        if isinstance(fields.get("name"), str) and isinstance(support, str):
            learned[str(fields["name"])] = support
    return learned


def _related_task(params: Any) -> str | None:
    """The upstream task a legacy upstream's request names (related-task ``_meta``)."""
    plain = as_object(msgspec.to_builtins(params)) or {}
    meta = as_object(plain.get("_meta")) or {}
    related = as_object(meta.get(RELATED_TASK)) or {}
    task_id = related.get("taskId")
    return task_id if isinstance(task_id, str) else None


def running_task(scope: RequestScope) -> bool:
    """Whether ``scope`` is a downstream request running as the proxy's task (what it
    asks of its client goes through the task, not through rounds of its request)."""
    return isinstance(scope, TaskScope) and scope.run is not None


async def _followed(handle: TaskHandle) -> Any:
    """An upstream task followed to its result; cancelled upstream with its follower."""
    try:
        return await handle.result()
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await asyncio.shield(handle.cancel())
        raise


def _log_level_of(scope: RequestScope) -> str | None:
    """The lowest log level the downstream client of ``scope`` asked for (None: none)."""
    peer = scope.event.peer
    return peer.log_level if peer is not None else scope.session.conn.log_level


def _progress_to(
    scope: Callable[[], RequestScope],
) -> Callable[[float, float | None, str | None], Any]:
    """Relays progress to the downstream request ``scope()`` (the current round's)."""

    def relay(progress: float, total: float | None, message: str | None) -> Awaitable[None]:
        return scope().progress(progress, total, message)

    return relay


def asked_capabilities(scope: RequestScope) -> dict[str, Any]:
    """What the downstream client of ``scope`` declares it can be asked."""
    declared = scope.client_capabilities
    return {name: declared[name] for name in ASKED_OF.values() if name in declared}


def relaying_handlers(
    base: type, link: Link, capabilities: Mapping[str, Any] | None = None
) -> type:
    """A subclass of the binding's ``ClientHandlers`` relaying to ``link``'s clients:
    answering what the upstream may ask of them, or only what ``capabilities`` name (so
    that the connection declares no more)."""
    methods: dict[str, Any] = {}
    for handler, method in ASKS.items():
        if capabilities is None or ASKED_OF[handler] in capabilities:
            methods[handler] = _asking(link, method)
    for hook, what in CHANGED.items():
        methods[hook] = _announcing(link, what)

    async def on_resource_updated(_: Any, params: Any) -> None:
        uri = getattr(params, "uri", None)
        if isinstance(uri, str):
            await link.changed("resource", uri)

    async def on_logging_message(_: Any, params: Any) -> None:
        await link.logged(params)

    methods.update(on_resource_updated=on_resource_updated, on_logging_message=on_logging_message)
    return type("RelayingHandlers", (base,), methods)


def _asking(link: Link, method: str) -> Callable[..., Awaitable[Any]]:
    async def ask(_: Any, params: Any, ctx: Any) -> Any:
        return await link.ask(method, params, ctx)

    return ask


def _announcing(link: Link, what: str) -> Callable[..., Awaitable[None]]:
    async def announce(_: Any, params: Any) -> None:
        await link.changed(what)

    return announce


async def close_all(links: list[Link]) -> None:
    await asyncio.gather(*(link.close() for link in links), return_exceptions=True)


__all__ = ["CALL", "Link", "hop_params", "relaying_handlers"]
