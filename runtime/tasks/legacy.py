"""Tasks as protocol 2025-11-25 has them (core, experimental): a ``tools/call`` with
``params.task`` is answered at once with ``CreateTaskResult`` and runs as a task
(``runtime.tasks.engine``); the requester polls ``tasks/get``, blocks on ``tasks/result``,
pages ``tasks/list``, cancels with ``tasks/cancel``, and is told of changes with
``notifications/tasks/status``.

Each tool says whether it may run as a task (``execution.taskSupport``: ``forbidden``,
the default, ``optional`` or ``required``); a call that does not fit is refused with
-32601, as the spec says of task support a receiver does not have.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from . import legacy_wire as wire
from ..core.errors import METHOD_NOT_FOUND, McpError
from ..core.events import IncomingRequest
from ..core.params import augmentation
from ..aio.session import RequestScope
from .store import TaskRecord
from .engine import Tasks, TaskScope
from ..core.outgoing import Verbatim

#: What a server running tools as tasks declares (``capabilities.tasks``).
CAPABILITY: dict[str, Any] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
STATUS = "notifications/tasks/status"
#: Tasks in one ``tasks/list`` page, by default.
PAGE_SIZE = 100

#: A tool's task support by its name: "forbidden", "optional" or "required".
TaskSupport = Callable[[str], str]
#: Runs the request's handler with the given scope: the handler's answer.
Run = Callable[[IncomingRequest, RequestScope], Awaitable[Any]]


class LegacyTasks:
    """The 2025-11-25 task methods over a :class:`~runtime.tasks.engine.Tasks` engine."""

    def __init__(self, tasks: Tasks, support: TaskSupport, page_size: int = PAGE_SIZE) -> None:
        self.tasks = tasks
        self.support = support
        self.page_size = page_size

    def handlers(self) -> dict[str, Callable[..., Awaitable[Any]]]:
        """The handlers of ``tasks/*``, by the generated handler names."""
        return {
            "get_task": self.get_task,
            "get_task_payload": self.get_task_payload,
            "list_tasks": self.list_tasks,
            "cancel_task": self.cancel_task,
        }

    def call(self, event: IncomingRequest, scope: RequestScope, run: Run) -> Awaitable[Any] | None:
        """The answer to a ``tools/call`` of a legacy client when it runs as a task (or is
        refused for not fitting the tool); None when it is an ordinary call."""
        name = str(getattr(event.params, "name", ""))
        support = self.support(name)
        task = augmentation(event.raw_params, event.params)
        if task is None:
            if support == "required":
                raise McpError(
                    METHOD_NOT_FOUND,
                    f"Tool {name!r} runs only as a task: call it with params.task",
                    {"taskSupport": support},
                )
            return None
        if support not in ("optional", "required"):
            raise McpError(
                METHOD_NOT_FOUND,
                f"Tool {name!r} does not run as a task: call it without params.task",
                {"taskSupport": "forbidden"},
            )
        return self._start(event, scope, run, task)

    async def _start(
        self, event: IncomingRequest, scope: RequestScope, run: Run, task: dict[str, Any]
    ) -> Verbatim:
        ttl = task.get("ttl")
        ttl_ms = ttl if isinstance(ttl, int) and not isinstance(ttl, bool) else None
        session = scope.session

        async def work(task_scope: TaskScope) -> Any:
            return task_scope.wire_result(await run(event, task_scope))

        async def announce(record: TaskRecord) -> None:
            await session.notify(STATUS, wire.status(record))

        record = await self.tasks.start(scope, ttl_ms, work, announce, tool_errors_fail=True)
        return Verbatim(wire.created(record))

    async def get_task(self, params: Any, ctx: Any) -> Verbatim:
        return Verbatim(wire.status(await self.tasks.get(scope_of(ctx), params.task_id)))

    async def get_task_payload(self, params: Any, ctx: Any) -> Verbatim:
        record = await self.tasks.outcome(scope_of(ctx), params.task_id)
        if record.result is not None or record.status == "cancelled":
            # completed, a tool's own failure (isError), or cancelled: a request with no
            # outcome, answered (as the official SDK does) with the task's _meta alone
            return Verbatim(wire.payload(record))
        found = wire.error(record)
        raise McpError(int(found["code"]), str(found["message"]), found.get("data"))

    async def list_tasks(self, params: Any, ctx: Any) -> Verbatim:
        cursor = getattr(params, "cursor", None)
        records, after = await self.tasks.listed(
            scope_of(ctx), cursor if isinstance(cursor, str) else None, self.page_size
        )
        return Verbatim(wire.listed(records, after))

    async def cancel_task(self, params: Any, ctx: Any) -> Verbatim:
        return Verbatim(wire.status(await self.tasks.cancel(scope_of(ctx), params.task_id)))


def scope_of(ctx: Any) -> RequestScope:
    """The runtime's scope of a handler's context (the generated ``Context`` wraps it)."""
    scope = getattr(ctx, "raw", ctx)
    if not isinstance(scope, RequestScope):
        raise TypeError(f"not a request context: {type(ctx).__name__}")
    return scope


__all__ = ["CAPABILITY", "LegacyTasks", "PAGE_SIZE", "STATUS", "scope_of"]
