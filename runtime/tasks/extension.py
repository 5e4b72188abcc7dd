"""Tasks as protocol 2026-07-28 has them: the ``io.modelcontextprotocol/tasks``
extension (SEP-2663), built on the runtime's extension point as any extension is.

The server decides: a ``tools/call`` of a tool that may run as a task, from a client
whose request declares the extension, starts as an ordinary request; if it is still
running after ``Tasks.immediate_ms`` it becomes a task and is answered with the task
(``resultType: "task"``), otherwise with its own answer (the immediate-result shortcut,
multi-round ``input_required`` included, which so stays before the task). A tool that
must run as a task (``task="required"``) always becomes one, and a client that did not
declare the extension gets -32021 naming it.

The requester follows it with ``tasks/get`` (the task, with its ``result``, ``error`` or
the ``inputRequests`` it waits for inline), answers with ``tasks/update``
(``inputResponses``; keys it does not ask are ignored) and cancels with
``tasks/cancel`` (an acknowledgement, also for a task already ended). ``tasks/result``
and ``tasks/list`` are gone in this era (-32601: not in the table).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from ..core.errors import MISSING_CLIENT_CAPABILITY, McpError
from ..core.binding import Publish
from ..core.events import IncomingRequest
from ..core.extensions import Extension, ExtensionMethod
from ..aio.session import RequestScope
from .legacy import Run, scope_of
from .store import TaskRecord
from .legacy_wire import timestamp
from .engine import Tasks, TaskScope, TaskTools
from ..core.outgoing import Verbatim

IDENTIFIER = "io.modelcontextprotocol/tasks"
#: Status notifications (on a ``subscriptions/listen`` stream that asked for the task).
NOTIFICATION = "notifications/tasks"
ACK: dict[str, Any] = {"resultType": "complete"}


class TaskRef(msgspec.Struct, kw_only=True):
    """Params of ``tasks/get`` and ``tasks/cancel``."""

    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")
    task_id: str = msgspec.field(name="taskId")


class TaskUpdate(TaskRef, kw_only=True):
    """Params of ``tasks/update``: answers to the task's input requests, by key."""

    input_responses: dict[str, Any] = msgspec.field(
        default_factory=dict[str, Any], name="inputResponses"
    )


class DetailedTask(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A task as ``tasks/get`` gives it (and a created task, with ``resultType: "task"``)."""

    result_type: str = msgspec.field(default="complete", name="resultType")
    task_id: str = msgspec.field(name="taskId")
    status: str
    status_message: str | UnsetType = msgspec.field(default=UNSET, name="statusMessage")
    created_at: str = msgspec.field(name="createdAt")
    last_updated_at: str = msgspec.field(name="lastUpdatedAt")
    ttl_ms: int | None = msgspec.field(name="ttlMs")
    poll_interval_ms: int | UnsetType = msgspec.field(default=UNSET, name="pollIntervalMs")
    result: Any = UNSET
    error: dict[str, Any] | UnsetType = UNSET
    input_requests: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="inputRequests")
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")


class Ack(msgspec.Struct, kw_only=True):
    """The answer to ``tasks/update`` and ``tasks/cancel``."""

    result_type: str = msgspec.field(default="complete", name="resultType")
    meta: dict[str, Any] | UnsetType = msgspec.field(default=UNSET, name="_meta")


EXTENSION = Extension(
    IDENTIFIER,
    [
        ExtensionMethod(
            name="tasks/get", params=TaskRef, result=DetailedTask, params_required=True
        ),
        ExtensionMethod(name="tasks/update", params=TaskUpdate, result=Ack, params_required=True),
        ExtensionMethod(name="tasks/cancel", params=TaskRef, result=Ack, params_required=True),
    ],
    eras=("modern",),
)


def base(record: TaskRecord) -> dict[str, Any]:
    """The fields every form of a task has."""
    out: dict[str, Any] = {
        "taskId": record.task_id,
        "status": record.status,
        "createdAt": timestamp(record.created_at),
        "lastUpdatedAt": timestamp(record.updated_at),
        "ttlMs": record.ttl_ms,
        "pollIntervalMs": record.poll_interval_ms,
    }
    if record.status_message is not None:
        out["statusMessage"] = record.status_message
    return out


def created(record: TaskRecord) -> dict[str, Any]:
    """The answer to a request that became a task."""
    return {"resultType": "task", **base(record)}


def detailed(record: TaskRecord) -> dict[str, Any]:
    """The answer to ``tasks/get`` (and the params of a status notification): the task
    with its outcome, or what it waits for, inline. A task whose input requests are all
    answered shows ``working``: it has what it asked for, and goes on."""
    out = {"resultType": "complete", **base(record)}
    if record.status == "input_required":
        if record.input_requests:
            out["inputRequests"] = record.input_requests
        else:
            out["status"] = "working"
    elif record.status == "completed":
        out["result"] = record.result
    elif record.status == "failed":
        if record.error is not None:
            out["error"] = record.error
        elif record.result is not None:
            out["result"] = record.result
    return out


def missing() -> McpError:
    """-32021 for a request that needs the extension its client did not declare."""
    return McpError(
        MISSING_CLIENT_CAPABILITY,
        "Missing required client capability",
        {"requiredCapabilities": {"extensions": {IDENTIFIER: {}}}},
    )


class ModernTasks:
    """The extension's server side over a :class:`~runtime.tasks.engine.Tasks` engine."""

    def __init__(
        self,
        tasks: Tasks,
        tools: TaskTools,
        publish: Publish | None = None,
    ) -> None:
        self.tasks = tasks
        #: Which tools run as tasks, and how soon a call becomes one.
        self.tools = tools
        #: Sends a notification to the listen streams that asked for it (the server's).
        self.publish = publish

    def handlers(self) -> dict[str, Callable[..., Awaitable[Any]]]:
        """The handlers of the extension's methods, by method (its handler names)."""
        return {"tasks/get": self.get, "tasks/update": self.update, "tasks/cancel": self.cancel}

    def call(self, event: IncomingRequest, scope: RequestScope, run: Run) -> Awaitable[Any] | None:
        """The answer to a modern ``tools/call`` of a tool that may run as a task (None:
        an ordinary call)."""
        name = str(getattr(event.params, "name", ""))
        support = self.tools.task_support(name)
        if support not in ("optional", "required"):
            return None
        peer = event.peer
        if peer is None or not EXTENSION.declared("modern", peer.capabilities):
            if support == "required":
                raise missing()
            return None
        own = self.tools.task_immediate_ms(name)
        delay = own if own is not None else self.tasks.immediate_ms
        return self._run(event, scope, run, support == "required", delay)

    async def _run(
        self, event: IncomingRequest, scope: RequestScope, run: Run, required: bool, delay: int
    ) -> Any:
        task_scope = TaskScope(scope.session, event, self.tasks)
        task_scope.asked = scope.asked  # multi-round input asked before it is a task
        if delay == 0:  # a task at once: all it asks goes through the task
            return await self._become_task(scope, task_scope, run(event, task_scope))
        handler = asyncio.ensure_future(run(event, task_scope))
        try:
            await asyncio.wait({handler}, timeout=delay / 1000)
        except asyncio.CancelledError:
            handler.cancel()
            raise
        if handler.done() and (not required or handler.exception() is not None):
            return handler.result()  # its own answer (or error, or input_required)
        return await self._become_task(scope, task_scope, handler)

    async def _become_task(
        self, scope: RequestScope, task_scope: TaskScope, handler: Awaitable[Any]
    ) -> Verbatim:
        async def work(ready: TaskScope) -> Any:
            return ready.wire_result(await handler)

        try:
            record = await self.tasks.start(scope, None, work, self._announcer(), False, task_scope)
        except BaseException:  # no task (too many running, the store away): no handler
            if isinstance(handler, asyncio.Future):
                handler.cancel()
            elif inspect.iscoroutine(handler):
                handler.close()
            raise
        return Verbatim(created(record))

    def _announcer(self) -> Callable[[TaskRecord], Awaitable[None]] | None:
        """Tells the listen streams that asked for a task (``taskIds``) of its changes."""
        publish = self.publish
        if publish is None:
            return None

        async def announce(record: TaskRecord) -> None:
            params = detailed(record)
            del params["resultType"]  # a notification's params, not a result
            await publish(NOTIFICATION, params, "taskIds")

        return announce

    async def get(self, params: TaskRef, ctx: Any) -> Verbatim:
        return Verbatim(detailed(await self.tasks.get(scope_of(ctx), params.task_id)))

    async def update(self, params: TaskUpdate, ctx: Any) -> Verbatim:
        scope = scope_of(ctx)
        record = await self.tasks.get(scope, params.task_id)
        asked = record.input_requests or {}
        answers = {k: v for k, v in params.input_responses.items() if k in asked}
        if answers and record.status == "input_required":
            try:
                await self.tasks.respond(scope, record.task_id, answers)
            except McpError:
                pass  # answered, ended or gone meanwhile: the answer has nothing to do
        return Verbatim(ACK)

    async def cancel(self, params: TaskRef, ctx: Any) -> Verbatim:
        scope = scope_of(ctx)
        record = await self.tasks.get(scope, params.task_id)
        if not record.terminal:
            try:
                await self.tasks.cancel(scope, record.task_id)
            except McpError:
                pass  # ended meanwhile: cancelling an ended task is acknowledged too
        return Verbatim(ACK)


__all__ = [
    "Ack",
    "DetailedTask",
    "EXTENSION",
    "IDENTIFIER",
    "ModernTasks",
    "NOTIFICATION",
    "TaskRef",
    "TaskUpdate",
    "created",
    "detailed",
]
