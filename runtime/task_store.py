"""Tasks' records, their status lifecycle as a table, and where they are kept.

A task is a request whose outcome is fetched later: created ``working``, it may wait for
the requester's input (``input_required``) and ends ``completed``, ``failed`` or
``cancelled``; a terminal status never changes. Both eras share this: 2025-11-25's core
tasks and 2026-07-28's ``io.modelcontextprotocol/tasks`` extension differ in their wire
forms, not in the lifecycle.

A store keeps the records for as long as their TTL says (``None``: until the store is
closed, within its bound on how many it holds). :class:`TaskStore` is what the runtime
asks of one; :class:`MemoryTaskStore` is the default, for one process. A store shared by
several processes (e.g. Redis) implements the same protocol.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol

import msgspec

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
#: The poll interval suggested to requesters, by default (milliseconds).
POLL_INTERVAL_MS = 1_000


class TaskError(Exception):
    """A task that does not exist (any more), or a change its status does not allow."""


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
    #: Input requests the task waits for (``input_required``), by key.
    input_requests: dict[str, Any] | None = None
    #: Creation order in its store (what list cursors count by).
    seq: int = 0

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def expired(self, now: float) -> bool:
        return self.ttl_ms is not None and now >= self.created_at + self.ttl_ms / 1000


class TaskStore(Protocol):
    """What the runtime asks of a task store."""

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
    ) -> TaskRecord:
        """Move the task to ``status`` (TaskError when its status does not allow it)."""
        ...

    async def list(
        self, owner: str = "", after: str | None = None, limit: int = 100
    ) -> tuple[list[TaskRecord], str | None]:
        """A page of the owner's tasks, oldest first, and the id to continue after."""
        ...

    async def wait(self, task_id: str, owner: str = "", timeout: float | None = None) -> TaskRecord:
        """The task once terminal (``asyncio.TimeoutError`` after ``timeout`` seconds)."""
        ...


class MemoryTaskStore:
    """Tasks in this process's memory: bounded (``max_tasks`` live ones; creating one
    more first drops the expired, then refuses), expired lazily on every access and by
    :meth:`expire`. ``clock`` (seconds) is for tests."""

    def __init__(
        self,
        max_tasks: int = MAX_TASKS,
        default_ttl_ms: int | None = 3_600_000,
        max_ttl_ms: int | None = 86_400_000,
        poll_interval_ms: int = POLL_INTERVAL_MS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if max_tasks < 1:
            raise ValueError("max_tasks must be positive")
        self.max_tasks = max_tasks
        self.default_ttl_ms = default_ttl_ms
        self.max_ttl_ms = max_ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.clock = clock
        self._tasks: dict[str, TaskRecord] = {}
        self._done: dict[str, asyncio.Event] = {}
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
        if len(self._tasks) >= self.max_tasks:
            self.expire()
            if len(self._tasks) >= self.max_tasks:
                raise TaskError(f"too many tasks (at most {self.max_tasks}); retry later")
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
        self._done[record.task_id] = asyncio.Event()
        return record

    def _find(self, task_id: str, owner: str) -> TaskRecord:
        record = self._tasks.get(task_id)
        if record is not None and record.expired(self.clock()):
            self._drop(task_id)
            record = None
        if record is None or record.owner != owner:
            raise TaskError(f"no task {task_id!r}")
        return record

    async def get(self, task_id: str, owner: str = "") -> TaskRecord:
        return self._find(task_id, owner)

    async def update(
        self,
        task_id: str,
        status: TaskStatus,
        *,
        message: str | None = None,
        result: Any = None,
        error: dict[str, Any] | None = None,
        input_requests: dict[str, Any] | None = None,
    ) -> TaskRecord:
        record = self._tasks.get(task_id)
        if record is not None and record.expired(self.clock()):
            self._drop(task_id)
            record = None
        if record is None:
            raise TaskError(f"no task {task_id!r}")
        if record.terminal or (
            status != record.status and status not in TRANSITIONS[record.status]
        ):
            raise TaskError(f"task {task_id!r} is {record.status}; it cannot become {status}")
        record.status = status
        record.status_message = message
        record.updated_at = self.clock()
        record.input_requests = input_requests if status == "input_required" else None
        if status in TERMINAL:
            record.result, record.error = result, error
            self._done[task_id].set()
        return record

    async def list(
        self, owner: str = "", after: str | None = None, limit: int = 100
    ) -> tuple[list[TaskRecord], str | None]:
        """``after`` is a cursor this method gave: the page goes on after it even when the
        task it was made from has gone since."""
        limit = max(1, limit)
        try:
            start = int(after) if after is not None else 0
        except ValueError:
            raise TaskError(f"invalid cursor {after!r}") from None
        self.expire()
        found = (r for r in self._tasks.values() if r.owner == owner and r.seq > start)
        page = list(itertools.islice(found, limit + 1))  # tasks stay in creation order
        more = len(page) > limit
        return page[:limit], str(page[limit - 1].seq) if more else None

    async def wait(self, task_id: str, owner: str = "", timeout: float | None = None) -> TaskRecord:
        record = self._find(task_id, owner)
        if not record.terminal:
            await asyncio.wait_for(self._done[task_id].wait(), timeout)
        return self._find(task_id, owner)

    def expire(self) -> int:
        """Drop every expired task; how many went."""
        now = self.clock()
        gone = [i for i, r in self._tasks.items() if r.expired(now)]
        for task_id in gone:
            self._drop(task_id)
        return len(gone)

    def _drop(self, task_id: str) -> None:
        self._tasks.pop(task_id, None)
        done = self._done.pop(task_id, None)
        if done is not None:
            done.set()  # a waiter learns the task is gone (its next lookup fails)
