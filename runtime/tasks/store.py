"""Tasks' records, their status lifecycle as a table, and where they are kept.

A task is a request whose outcome is fetched later: created ``working``, it may wait for
the requester's input (``input_required``) and ends ``completed``, ``failed`` or
``cancelled``; a terminal status never changes. Both eras share this: 2025-11-25's core
tasks and 2026-07-28's ``io.modelcontextprotocol/tasks`` extension differ in their wire
forms, not in the lifecycle.

A store keeps the records for as long as their TTL says (``None``: until the store is
closed, within its bounds on how many it holds, in all and per owner: one requester
filling the store must not refuse everybody else). :class:`TaskStore` is what the runtime
asks of one; :class:`MemoryTaskStore` is the default, for one process. A store shared by
several processes (e.g. Redis) implements the same protocol.
"""

from __future__ import annotations

import asyncio
import itertools
from copy import copy
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol

import msgspec
from ..core.errors import McpgenError

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]

#: status → the statuses it may move to. A terminal status moves nowhere.
TRANSITIONS: Mapping[TaskStatus, frozenset[TaskStatus]] = {
    "working": frozenset({"input_required", "completed", "failed", "cancelled"}),
    "input_required": frozenset({"working", "completed", "failed", "cancelled"}),
    "completed": frozenset(),
    "failed": frozenset(),
    "cancelled": frozenset(),
}
TERMINAL: frozenset[TaskStatus] = frozenset(s for s, nexts in TRANSITIONS.items() if not nexts)

#: How many tasks one store holds at most, by default (expired ones do not count).
MAX_TASKS = 10_000
#: How many of them one owner (a principal, a legacy session) may have, by default: a
#: tenth of the store, so one requester's flood leaves room for the others.
MAX_TASKS_PER_OWNER = 1_000
#: The retention of a task that asks for none, and the longest granted, by default
#: (milliseconds): an hour is ample to fetch an outcome, and what one requester holds
#: at its quota is back in an hour at the latest.
DEFAULT_TTL_MS = MAX_TTL_MS = 3_600_000
#: The poll interval suggested to requesters, by default (milliseconds).
POLL_INTERVAL_MS = 1_000
#: How often a memory store drops expired tasks nobody asked about, by default (seconds).
SWEEP_EVERY_S = 5.0


class TaskError(McpgenError):
    """A task that does not exist (any more), or a change its status does not allow."""


class TaskConflict(TaskError):
    """An update made against a revision of the task that is no longer its latest."""


class TaskLimitReached(TaskError):
    """The store holds as many tasks as it may, in all or for this owner: creating one
    more is refused until some expire (the requester may retry later)."""


class TaskStoreUnavailable(McpgenError):
    """The store cannot be reached now (a shared store's server down, frozen or too slow):
    the operation did not happen, and may be retried later. Not a :class:`TaskError`: it
    says nothing about the task."""


class TaskRecord(msgspec.Struct, kw_only=True):
    """One task as a store keeps it (wire forms are built from it per era)."""

    task_id: str
    #: The request that made the task (``tools/call``), and who may see it: the session
    #: or authorization context that created it ("" when nobody else is told apart).
    method: str
    owner: str = ""
    status: TaskStatus = "working"
    status_message: str | None = None
    #: Seconds since the epoch.
    created_at: float = 0.0
    updated_at: float = 0.0
    #: Retention from creation in milliseconds; None: as long as the store keeps it.
    ttl_ms: int | None = None
    poll_interval_ms: int = POLL_INTERVAL_MS
    #: The request's outcome once terminal: its result (plain JSON) or its error object.
    result: Any = None
    error: dict[str, Any] | None = None
    #: Input requests the task waits for (``input_required``), by key, and the answers
    #: the requester gave so far (``respond``), by the same keys.
    input_requests: dict[str, Any] | None = None
    input_responses: dict[str, Any] | None = None
    #: Creation order in its store (what list cursors count by).
    seq: int = 0
    #: How many times the record changed (what ``watch`` waits past).
    revision: int = 0

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def expired(self, now: float) -> bool:
        return self.ttl_ms is not None and now >= self.created_at + self.ttl_ms / 1000


class TaskStore(Protocol):
    """What the runtime asks of a task store. ``create`` raises :class:`TaskLimitReached`
    when the store is full (in all, or for ``owner``); any method may raise
    :class:`TaskStoreUnavailable` when the store cannot be reached."""

    async def create(
        self, method: str, owner: str = "", ttl_ms: int | None = None
    ) -> TaskRecord: ...

    async def get(self, task_id: str, owner: str = "") -> TaskRecord:
        """The task (TaskError when unknown, expired or another owner's)."""
        ...

    async def update(
        self,
        task_id: str,
        status: TaskStatus,
        *,
        message: str | None = None,
        result: Any = None,
        error: dict[str, Any] | None = None,
        input_requests: dict[str, Any] | None = None,
        revision: int | None = None,
    ) -> TaskRecord:
        """Move the task to ``status`` (TaskError when its status does not allow it),
        waiting for ``input_requests`` (``input_required``); the answers recorded so far
        are dropped (whoever runs the task took them). With ``revision``, only if the task
        is still at that revision (TaskConflict otherwise: read it again, then retry)."""
        ...

    async def respond(
        self, task_id: str, responses: Mapping[str, Any], owner: str = ""
    ) -> TaskRecord:
        """Record the requester's answers to some of an ``input_required`` task's input
        requests, which it then no longer lists as asked (TaskError when it waits for
        none, or a key is not one it asks)."""
        ...

    async def list(
        self, owner: str = "", after: str | None = None, limit: int = 100
    ) -> tuple[list[TaskRecord], str | None]:
        """A page of the owner's tasks, oldest first, and the id to continue after."""
        ...

    async def watch(self, task_id: str, revision: int, timeout: float | None = None) -> TaskRecord:
        """The task once its revision is past ``revision`` (TaskError when it is gone,
        ``asyncio.TimeoutError`` after ``timeout`` seconds): how the process running a
        task learns of answers and cancellation, wherever they were given."""
        ...

    async def wait(self, task_id: str, owner: str = "", timeout: float | None = None) -> TaskRecord:
        """The task once terminal (``asyncio.TimeoutError`` after ``timeout`` seconds)."""
        ...

    async def close(self) -> None:
        """Let go of what the store holds open (connections, watchers)."""
        ...


class MemoryTaskStore:
    """Tasks in this process's memory: bounded (``max_tasks`` live ones, at most
    ``max_tasks_per_owner`` of them one owner's; creating one more first drops the
    expired, then refuses), expired on access, by :meth:`expire`, and every
    ``sweep_every_s`` seconds while it holds any (so memory goes back down after TTLs
    pass with nobody asking). ``clock`` (seconds) is for tests."""

    def __init__(
        self,
        max_tasks: int = MAX_TASKS,
        default_ttl_ms: int | None = DEFAULT_TTL_MS,
        max_ttl_ms: int | None = MAX_TTL_MS,
        poll_interval_ms: int = POLL_INTERVAL_MS,
        clock: Callable[[], float] = time.time,
        sweep_every_s: float = SWEEP_EVERY_S,
        max_tasks_per_owner: int = MAX_TASKS_PER_OWNER,
    ) -> None:
        if max_tasks < 1 or max_tasks_per_owner < 1:
            raise ValueError("max_tasks and max_tasks_per_owner must be positive")
        if sweep_every_s <= 0:
            raise ValueError("sweep_every_s must be positive")
        self.sweep_every_s = sweep_every_s
        self._sweeper: asyncio.Task[None] | None = None
        self.max_tasks = max_tasks
        self.max_tasks_per_owner = max_tasks_per_owner
        self.default_ttl_ms = default_ttl_ms
        self.max_ttl_ms = max_ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.clock = clock
        self._tasks: dict[str, TaskRecord] = {}
        #: The same records by owner, each in creation order.
        self._owned: dict[str, dict[str, TaskRecord]] = {}
        #: Set (and replaced) whenever the task changes or goes.
        self._changed: dict[str, asyncio.Event] = {}
        self._created = 0

    def __len__(self) -> int:
        return len(self._tasks)

    def _ttl(self, asked: int | None) -> int | None:
        """The retention granted for a request of ``asked`` ms (bounded by the store)."""
        ttl = self.default_ttl_ms if asked is None else max(0, asked)
        if self.max_ttl_ms is not None:
            ttl = self.max_ttl_ms if ttl is None else min(ttl, self.max_ttl_ms)
        return ttl

    async def create(self, method: str, owner: str = "", ttl_ms: int | None = None) -> TaskRecord:
        owned = self._owned.get(owner) if owner else None  # nobody in particular: no quota
        if owned is not None and len(owned) >= self.max_tasks_per_owner:
            self._expire(list(owned.values()))
            if len(owned) >= self.max_tasks_per_owner:
                raise full(self.max_tasks_per_owner, per_owner=True)
        if len(self._tasks) >= self.max_tasks:
            self.expire()
            if len(self._tasks) >= self.max_tasks:
                raise full(self.max_tasks)
        now = self.clock()
        self._created += 1
        record = TaskRecord(
            seq=self._created,
            task_id=secrets.token_urlsafe(16),
            method=method,
            owner=owner,
            created_at=now,
            updated_at=now,
            ttl_ms=self._ttl(ttl_ms),
            poll_interval_ms=self.poll_interval_ms,
        )
        self._tasks[record.task_id] = record
        self._owned.setdefault(owner, {})[record.task_id] = record
        self._changed[record.task_id] = asyncio.Event()
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = asyncio.ensure_future(self._sweep())
        return copy(record)  # a snapshot: the caller's copy does not change under it

    def _find(self, task_id: str, owner: str | None) -> TaskRecord:
        """The live task (``owner`` None: whoever's it is)."""
        record = self._tasks.get(task_id)
        if record is not None and record.expired(self.clock()):
            self._drop(task_id)
            record = None
        if record is None or (owner is not None and record.owner != owner):
            raise TaskError(f"no task {task_id!r}")
        return record

    async def get(self, task_id: str, owner: str = "") -> TaskRecord:
        return copy(self._find(task_id, owner))

    async def update(
        self,
        task_id: str,
        status: TaskStatus,
        *,
        message: str | None = None,
        result: Any = None,
        error: dict[str, Any] | None = None,
        input_requests: dict[str, Any] | None = None,
        revision: int | None = None,
    ) -> TaskRecord:
        record = self._find(task_id, None)
        moved(record, status, message, result, error, input_requests, revision)
        self._touch(record)
        return copy(record)  # a snapshot: the caller's copy does not change under it

    async def respond(
        self, task_id: str, responses: Mapping[str, Any], owner: str = ""
    ) -> TaskRecord:
        record = self._find(task_id, owner)
        record.input_requests, record.input_responses = answered(record, responses)
        self._touch(record)
        return copy(record)  # a snapshot: the caller's copy does not change under it

    def _touch(self, record: TaskRecord) -> None:
        """Note a change of ``record`` and wake whoever watches it."""
        record.revision += 1
        record.updated_at = self.clock()
        self._changed.pop(record.task_id).set()
        self._changed[record.task_id] = asyncio.Event()

    async def list(
        self, owner: str = "", after: str | None = None, limit: int = 100
    ) -> tuple[list[TaskRecord], str | None]:
        """``after`` is a cursor this method gave: the page goes on after it even when the
        task it was made from has gone since."""
        limit = max(1, limit)
        start = cursor_of(after)
        owned = self._owned.get(owner, {})
        self._expire(list(owned.values()))
        found = (r for r in owned.values() if r.seq > start)
        page = list(itertools.islice(found, limit + 1))  # tasks stay in creation order
        more = len(page) > limit
        return [copy(r) for r in page[:limit]], str(page[limit - 1].seq) if more else None

    async def watch(self, task_id: str, revision: int, timeout: float | None = None) -> TaskRecord:
        async def changed() -> TaskRecord:
            while (record := self._find(task_id, None)).revision <= revision:
                await self._changed[task_id].wait()
            return copy(record)

        return await asyncio.wait_for(changed(), timeout)

    async def wait(self, task_id: str, owner: str = "", timeout: float | None = None) -> TaskRecord:
        return await asyncio.wait_for(
            until_terminal(self, copy(self._find(task_id, owner))), timeout
        )

    async def close(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        for changed in self._changed.values():
            changed.set()
        self._tasks.clear()
        self._owned.clear()
        self._changed.clear()

    async def _sweep(self) -> None:
        """Drop expired tasks now and then, until none is left."""
        while self._tasks:
            await asyncio.sleep(self.sweep_every_s)
            self.expire()

    def expire(self) -> int:
        """Drop every expired task; how many went."""
        return self._expire(list(self._tasks.values()))

    def _expire(self, records: list[TaskRecord]) -> int:
        """Drop the expired among ``records``; how many went."""
        now = self.clock()
        gone = [r.task_id for r in records if r.expired(now)]
        for task_id in gone:
            self._drop(task_id)
        return len(gone)

    def _drop(self, task_id: str) -> None:
        record = self._tasks.pop(task_id, None)
        if record is not None:
            owned = self._owned[record.owner]
            del owned[task_id]
            if not owned:
                del self._owned[record.owner]
        changed = self._changed.pop(task_id, None)
        if changed is not None:
            changed.set()  # a watcher learns the task is gone (its next lookup fails)


async def until_terminal(store: TaskStore, record: TaskRecord) -> TaskRecord:
    """``record``'s task once terminal, watched through ``store`` (TaskError if it goes)."""
    while not record.terminal:
        record = await store.watch(record.task_id, record.revision)
    return record


def moved(
    record: TaskRecord,
    status: TaskStatus,
    message: str | None,
    result: Any,
    error: dict[str, Any] | None,
    input_requests: dict[str, Any] | None,
    revision: int | None,
) -> None:
    """Change ``record`` as ``TaskStore.update`` says, by the lifecycle's rules: what every
    store does to update (TaskConflict for a stale ``revision``, TaskError for a change
    its status does not allow)."""
    task_id = record.task_id
    if revision is not None and revision != record.revision:
        raise TaskConflict(f"task {task_id!r} changed since revision {revision}")
    if record.terminal or (status != record.status and status not in TRANSITIONS[record.status]):
        raise TaskError(f"task {task_id!r} is {record.status}; it cannot become {status}")
    record.status = status
    record.status_message = message
    record.input_requests = input_requests if status == "input_required" else None
    record.input_responses = None
    if status in TERMINAL:
        record.result, record.error = result, error


def full(limit: int, per_owner: bool = False) -> TaskLimitReached:
    """The refusal of one task more than a store's ``limit`` (in all, or per owner)."""
    if per_owner:
        return TaskLimitReached(
            f"too many tasks kept for this requester (at most {limit} per owner:"
            " max_tasks_per_owner); retry once some have expired"
        )
    return TaskLimitReached(
        f"too many tasks kept (at most {limit}: max_tasks); retry once some have expired"
    )


def cursor_of(after: str | None) -> int:
    """The creation number a ``list`` cursor stands for (TaskError when it is none)."""
    try:
        return int(after) if after is not None else 0
    except ValueError:
        raise TaskError(f"invalid cursor {after!r}") from None


def answered(
    record: TaskRecord, responses: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``record``'s input requests still unanswered, and its answers so far, once
    ``responses`` are recorded: what every store does to answer (TaskError when the task
    asks for none of those keys)."""
    asked = record.input_requests
    if record.status != "input_required" or not asked:
        raise TaskError(f"task {record.task_id!r} is {record.status}; it asks for no input")
    unknown = sorted(set(responses) - set(asked))
    if unknown:
        raise TaskError(
            f"task {record.task_id!r} asked for no input {', '.join(map(repr, unknown))}"
            f" (it asks for {', '.join(map(repr, sorted(asked)))})"
        )
    still = {key: request for key, request in asked.items() if key not in responses}
    return still, {**(record.input_responses or {}), **responses}
