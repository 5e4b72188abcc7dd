"""The server's task engine: a request run as a task, in the background, its outcome
kept in a :class:`~runtime.tasks.store.TaskStore`.

Both eras use it: 2025-11-25's task-augmented requests (``runtime.tasks.legacy``) and
2026-07-28's ``io.modelcontextprotocol/tasks`` extension (``runtime.tasks.extension``)
differ in their wire forms, not in what happens here:

- :meth:`Tasks.start` makes the record (``working``) and runs the handler in a task of
  its own, with a :class:`TaskScope` as its context; the request is answered at once.
- The handler's outcome goes to the store as the peer will read it: its result, or its
  error object (a tool's ``isError`` result fails a 2025-11-25 task, the result kept).
- A handler that asks the client for input (``ctx.elicit``, ``ctx.create_message``)
  moves its task to ``input_required`` until answered: by a request over the session in
  the legacy era, by ``tasks/update`` (``TaskStore.respond``) in the modern one, through
  whichever process got it.
- One watcher per running task follows its record in the store: answers reach the
  waiting handler, and a cancellation made anywhere cancels the handler here.

A task runs in the process that created it; its record outlives that process only in a
shared store (Redis), which fails a task whose process died.

Tasks running here and kept in the store are bounded per owner (``runtime.tasks.owner``)
and for all; a request past a bound, or one the store cannot take now, gets -32000
saying which (retry later), and nothing of other owners' changes.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from ..core.errors import INTERNAL_ERROR, INVALID_PARAMS, SERVER_BUSY, McpError
from ..core.events import IncomingRequest
from ..core.json_values import as_object
from ..aio.session import RequestScope
from .owner import session_owner
from .legacy_wire import related
from .store import MemoryTaskStore, TaskConflict, TaskError, TaskLimitReached, TaskRecord
from .store import TaskStatus, TaskStore, TaskStoreUnavailable

if TYPE_CHECKING:
    from ..aio.session import Session

log = logging.getLogger("mcpgen.runtime.tasks.engine")

#: Tasks one process runs at once, by default; a request for one more is refused.
MAX_RUNNING = 1_000
#: Of them, one owner's (a principal or a legacy session), by default: a tenth.
MAX_RUNNING_PER_OWNER = 100
#: How often a task's outcome is offered to a failing store, and the pause between.
FINISH_ATTEMPTS, FINISH_RETRY_S = 5, 0.5
#: How long a modern call of a task-capable tool runs before it becomes a task, by
#: default (milliseconds): quicker ones are answered as ordinary calls.
IMMEDIATE_MS = 100

#: Told of every change the engine makes to a task (the era's status notification).
Announce = Callable[[TaskRecord], Awaitable[None]]
#: Runs the task's request with its scope; returns the result (plain JSON, the peer's).
Work = Callable[["TaskScope"], Awaitable[Any]]


class TaskRun:
    """One task running in this process: its handler, its watcher, what it waits for."""

    __slots__ = ("task_id", "owner", "handler", "watcher", "asked", "announce", "revision")

    def __init__(self, record: TaskRecord, announce: Announce | None) -> None:
        self.task_id = record.task_id
        self.owner = record.owner
        self.revision = record.revision
        self.handler: asyncio.Task[None] | None = None
        self.watcher: asyncio.Task[None] | None = None
        #: Input requests asked and not answered yet: key -> (request, answer future).
        self.asked: dict[str, tuple[dict[str, Any], asyncio.Future[Any]]] = {}
        self.announce = announce


class TaskTools(Protocol):
    """Which tools of a server run as tasks (an ``App`` is one: its ``@tool(task=...)``)."""

    def task_support(self, name: str) -> str:
        """ "forbidden", "optional" or "required" for the tool ``name``."""
        ...

    def task_immediate_ms(self, name: str) -> int | None:
        """How long a modern call of ``name`` runs before it becomes a task (None:
        ``Tasks.immediate_ms``)."""
        ...


class SupportTable:
    """:class:`TaskTools` from a table of tool name → task support (others: forbidden)."""

    def __init__(self, support: Mapping[str, str]) -> None:
        self.support = dict(support)

    def task_support(self, name: str) -> str:
        return self.support.get(name, "forbidden")

    def task_immediate_ms(self, name: str) -> int | None:
        return None


class Tasks:
    """The tasks of one server: where they are kept (``store``, default in memory), how
    many run here at once (``max_running``, of them ``max_running_per_owner`` one
    owner's), whose they are (``owner``: the key that keeps requesters apart, from a
    request's scope; default ``task_owner.session_owner``), and how long a modern call
    may run before it becomes a task (``immediate_ms``)."""

    def __init__(
        self,
        store: TaskStore | None = None,
        *,
        max_running: int = MAX_RUNNING,
        owner: Callable[[RequestScope], str] | None = None,
        immediate_ms: int = IMMEDIATE_MS,
        max_running_per_owner: int = MAX_RUNNING_PER_OWNER,
    ) -> None:
        if max_running < 1 or max_running_per_owner < 1:
            raise ValueError("max_running and max_running_per_owner must be positive")
        if immediate_ms < 0:
            raise ValueError("immediate_ms must not be negative")
        self.immediate_ms = immediate_ms
        self.store: TaskStore = store if store is not None else MemoryTaskStore()
        self.max_running = max_running
        self.max_running_per_owner = max_running_per_owner
        self.owner_of = owner or session_owner
        #: Tasks running in this process, by id; how many each owner has and all have,
        #: counted from the check on (while the store creates one), so none slips past.
        self.runs: dict[str, TaskRun] = {}
        self.running: dict[str, int] = {}
        self.held = 0

    # -- starting and running -------------------------------------------------------------

    async def start(
        self,
        scope: RequestScope,
        ttl_ms: int | None,
        work: Work,
        announce: Announce | None = None,
        tool_errors_fail: bool = False,
        task_scope: TaskScope | None = None,
    ) -> TaskRecord:
        """Create the task of ``scope``'s request and run ``work`` as it (with
        ``task_scope``, the scope its handler already runs in, when it started before it
        became a task); its record as created (``working``). ``tool_errors_fail``: a
        tool's ``isError`` result ends the task ``failed`` (2025-11-25) rather than
        ``completed`` (2026-07-28)."""
        owner = self.owner_of(scope)
        if owner and self.running.get(owner, 0) >= self.max_running_per_owner:
            raise busy(
                f"too many tasks running for this requester (at most"
                f" {self.max_running_per_owner} per owner: max_running_per_owner); retry once"
                " one has ended"
            )
        if self.held >= self.max_running:
            raise busy(f"too many tasks running (at most {self.max_running}: max_running)")
        self.running[owner] = self.running.get(owner, 0) + 1  # held while the store works
        self.held += 1
        try:
            record = await self.store.create(scope.event.spec.name, owner, ttl_ms)
        except BaseException as exc:
            self._release(owner)
            if isinstance(exc, (TaskError, TaskStoreUnavailable)):
                raise refusal(exc) from None
            raise
        run = TaskRun(record, announce)
        self.runs[record.task_id] = run
        if task_scope is None:
            task_scope = TaskScope(scope.session, scope.event, self)
        task_scope.run = run
        run.handler = asyncio.ensure_future(self._execute(run, work, task_scope, tool_errors_fail))
        run.watcher = asyncio.ensure_future(self._watch(run))
        return record

    async def _execute(
        self, run: TaskRun, work: Work, scope: TaskScope, tool_errors_fail: bool
    ) -> None:
        status: TaskStatus = "completed"
        result: Any = None
        error: dict[str, Any] | None = None
        try:
            result = await work(scope)
            if tool_errors_fail and (as_object(result) or {}).get("isError") is True:
                status = "failed"  # a tool's own failure: its result is the outcome
        except asyncio.CancelledError:
            if run.task_id in self.runs:  # not by tasks/cancel: the server is stopping
                await self._finish(run, "failed", None, stopped(run.task_id))
            raise
        except McpError as exc:
            status, error = "failed", scope.wire_error(exc)
        except Exception:
            log.exception("task %s failed", run.task_id)
            status, error = "failed", scope.wire_error(McpError(INTERNAL_ERROR, "Internal error"))
        await self._finish(run, status, result, error)

    def _forget(self, task_id: str) -> TaskRun | None:
        """No longer running here: the task's run (None when it was not)."""
        run = self.runs.pop(task_id, None)
        if run is not None:
            self._release(run.owner)
        return run

    def _release(self, owner: str) -> None:
        self.held -= 1
        left = self.running.pop(owner) - 1
        if left:
            self.running[owner] = left

    async def _finish(
        self, run: TaskRun, status: TaskStatus, result: Any, error: dict[str, Any] | None
    ) -> None:
        self._forget(run.task_id)
        if run.watcher is not None:
            run.watcher.cancel()
        message = None  # a failure says why (what requesters show beside the status)
        if error is not None:
            message = str(error.get("message") or "") or None
        elif status == "failed":
            message = "The tool reported an error"
        for attempt in range(FINISH_ATTEMPTS):
            try:
                record = await self.store.update(
                    run.task_id, status, message=message, result=result, error=error
                )
            except TaskError as exc:  # cancelled or expired meanwhile: that outcome stands
                log.debug("task %s ended as %s, not kept: %s", run.task_id, status, exc)
                return
            except Exception as exc:  # the store is away (a shared one restarting): try again
                if not isinstance(exc, TaskStoreUnavailable):  # (the store logs an outage)
                    log.exception(
                        "keeping task %s's outcome failed (try %d)", run.task_id, attempt + 1
                    )
                await asyncio.sleep(FINISH_RETRY_S * (attempt + 1))
                continue
            await self._announce(run, record)
            return
        log.error("task %s's outcome (%s) is lost: the store kept failing", run.task_id, status)

    async def _watch(self, run: TaskRun) -> None:
        """Follow the task's record: hand answers to the handler, stop it when the task
        was cancelled (or went) elsewhere."""
        while True:
            try:
                record = await self.store.watch(run.task_id, run.revision)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # gone (expired), or the store failed: stop it
                log.warning("task %s can no longer be followed: %s", run.task_id, exc)
                record = None
            if record is None or record.terminal:
                self._forget(run.task_id)
                if run.handler is not None:
                    run.handler.cancel()
                return
            run.revision = record.revision
            if record.input_responses:
                await self._sync(run)

    async def _sync(self, run: TaskRun, message: str | None = None) -> None:
        """Bring the task's record in line with its handler: hand it the answers given so
        far, then record what it still waits for (``input_required`` with those requests,
        or ``working``) and ``message``. Made against the revision read, and read again
        when an answer came in meanwhile: no answer is lost between the two."""
        while run.task_id in self.runs:
            try:
                record = await self.store.get(run.task_id, run.owner)
            except TaskError:
                return  # gone: the watcher stops the handler
            except TaskStoreUnavailable:  # away (the store logs it): the next change syncs
                return
            except Exception:  # the store failed otherwise: the next change syncs again
                log.exception("reading task %s failed", run.task_id)
                return
            if record.terminal:
                return
            for key, answer in (record.input_responses or {}).items():
                asked = run.asked.get(key)
                if asked is not None and not asked[1].done():
                    asked[1].set_result(answer)
            pending = {k: request for k, (request, done) in run.asked.items() if not done.done()}
            status: TaskStatus = "input_required" if pending else "working"
            if message is None:
                message = record.status_message
            try:
                record = await self.store.update(
                    run.task_id,
                    status,
                    message=message,
                    input_requests=pending or None,
                    revision=record.revision,
                )
            except TaskConflict:
                continue
            except (TaskError, TaskStoreUnavailable):
                return
            except Exception:
                log.exception("updating task %s failed", run.task_id)
                return
            run.revision = max(run.revision, record.revision)
            await self._announce(run, record)
            return

    async def ask(self, run: TaskRun, key: str, request: dict[str, Any]) -> Any:
        """The answer to an input request of the task (``key``: unique within it),
        given through the store (modern era)."""
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        run.asked[key] = (request, future)
        await self._sync(run)
        try:
            return await future
        finally:
            run.asked.pop(key, None)

    async def waiting_on(self, run: TaskRun, key: str, request: dict[str, Any]) -> None:
        """Note that the task waits for ``request`` answered elsewhere (legacy era: a
        request over the session); :meth:`answered` ends it."""
        run.asked[key] = (request, asyncio.get_running_loop().create_future())
        await self._sync(run)

    async def answered(self, run: TaskRun, key: str) -> None:
        run.asked.pop(key, None)
        await self._sync(run)

    async def note(self, run: TaskRun, message: str) -> None:
        """Set the running task's status message (its progress)."""
        await self._sync(run, message)

    async def _announce(self, run: TaskRun, record: TaskRecord) -> None:
        if run.announce is None:
            return
        try:
            await run.announce(record)
        except Exception:  # a status notification is optional: never fail the task
            log.exception("announcing task %s failed", run.task_id)

    # -- the requester's side ---------------------------------------------------------------

    async def get(self, scope: RequestScope, task_id: str) -> TaskRecord:
        """The task, if it is the requester's (-32602 otherwise)."""
        try:
            return await self.store.get(task_id, self.owner_of(scope))
        except (TaskError, TaskStoreUnavailable) as exc:
            raise refusal(exc) from None

    async def cancel(self, scope: RequestScope, task_id: str) -> TaskRecord:
        """Cancel the task (-32602 when it is unknown or already terminal); its handler,
        here or in the process running it, is cancelled."""
        record = await self.get(scope, task_id)
        try:
            record = await self.store.update(record.task_id, "cancelled")
        except (TaskError, TaskStoreUnavailable) as exc:
            raise refusal(exc) from None
        run = self._forget(task_id)
        if run is not None:
            if run.handler is not None:
                run.handler.cancel()
            await self._announce(run, record)
        return record

    async def outcome(self, scope: RequestScope, task_id: str) -> TaskRecord:
        """The task once terminal (-32602 when unknown, or gone before it ended)."""
        try:
            return await self.store.wait(task_id, self.owner_of(scope))
        except (TaskError, TaskStoreUnavailable) as exc:
            raise refusal(exc) from None

    async def listed(
        self, scope: RequestScope, cursor: str | None, limit: int
    ) -> tuple[list[TaskRecord], str | None]:
        try:
            return await self.store.list(self.owner_of(scope), cursor, limit)
        except (TaskError, TaskStoreUnavailable) as exc:
            raise refusal(exc) from None

    async def respond(
        self, scope: RequestScope, task_id: str, answers: Mapping[str, Any]
    ) -> TaskRecord:
        """Record the requester's answers to the task's input requests (-32602 for keys
        it did not ask)."""
        try:
            return await self.store.respond(task_id, answers, self.owner_of(scope))
        except (TaskError, TaskStoreUnavailable) as exc:
            raise refusal(exc) from None

    async def close(self) -> None:
        """Stop every task running here (each ends ``failed``: the server stopped)."""
        handlers = [run.handler for run in self.runs.values() if run.handler is not None]
        for handler in handlers:
            handler.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)


class TaskScope(RequestScope):
    """The context of a request running as a task: asking the client for input moves
    the task to ``input_required``; progress is also the task's status message."""

    __slots__ = ("tasks", "run")

    def __init__(
        self, session: Session, event: IncomingRequest, tasks: Tasks, run: TaskRun | None = None
    ) -> None:
        super().__init__(session, event)
        self.tasks = tasks
        #: The task, once the request is one (a modern call may start as an ordinary
        #: request and become a task when it runs long).
        self.run = run

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        await super().progress(progress, total, message)
        if self.run is not None:
            shown = f"{progress:g}" if total is None else f"{progress:g}/{total:g}"
            await self.tasks.note(self.run, message or shown)

    async def request(
        self, method: str, params: Any, result: Any = None, key: str | None = None
    ) -> Any:
        run = self.run
        if run is None:  # not a task (yet): asked as any request asks
            return await super().request(method, params, result, key)
        plain: dict[str, Any] = as_object(msgspec.to_builtins(params)) or {}
        key = key or self.next_key(method)
        asked: dict[str, Any] = {"method": method, "params": plain}
        if self.event.peer is None:  # legacy: a request over the session, tied to the task
            meta = {**(as_object(plain.get("_meta")) or {}), **related(run.task_id)}
            await self.tasks.waiting_on(run, key, asked)
            try:
                return await self.session.request(
                    method, {**plain, "_meta": meta}, related=self.request_id
                )
            finally:
                await self.tasks.answered(run, key)
        asked["params"] = self.prepared(method, plain)
        answer = await self.tasks.ask(run, key, asked)
        return self.typed_answer(method, key, answer, result)

    def wire_result(self, value: Any) -> Any:
        """The handler's ``value`` as the result the peer's version reads (plain JSON)."""
        frame = self.session.conn.result(0, value, self.event.spec.name, self.peer_version)
        return msgspec.json.decode(frame)["result"]

    def wire_error(self, exc: McpError) -> dict[str, Any]:
        """``exc`` as the error object the peer's version reads."""
        frame = self.session.conn.error(None, exc, self.peer_version)
        return msgspec.json.decode(frame)["error"]


def refusal(exc: TaskError | TaskStoreUnavailable) -> McpError:
    """What a requester is told of a store's refusal: -32000 (retry later) when the store
    is full or away, -32602 otherwise (an unknown task, a change its status forbids)."""
    if isinstance(exc, TaskStoreUnavailable):
        return busy("task store unavailable")
    if isinstance(exc, TaskLimitReached):
        return busy(str(exc))
    return McpError(INVALID_PARAMS, str(exc))


def busy(why: str) -> McpError:
    """A refusal the requester may retry (-32000, the runtime's "busy" code) saying so."""
    return McpError(SERVER_BUSY, f"Server busy: {why}{'' if 'retry' in why else '; retry later'}")


def stopped(task_id: str) -> dict[str, Any]:
    return {"code": INTERNAL_ERROR, "message": f"The server stopped before task {task_id} ended"}


__all__ = [
    "IMMEDIATE_MS",
    "MAX_RUNNING",
    "MAX_RUNNING_PER_OWNER",
    "SupportTable",
    "TaskRun",
    "TaskScope",
    "TaskTools",
    "Tasks",
]
