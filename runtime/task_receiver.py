"""The client as the receiver of 2025-11-25 task-augmented requests.

A server may send ``sampling/createMessage`` or ``elicitation/create`` with
``params.task``. A client made with ``ClientSession(..., tasks=Tasks())`` declares
``capabilities.tasks`` (``list``, ``cancel`` and ``requests`` for each of the two its
handlers answer), runs such a request as a task, with the engine a server runs its
tools with (``runtime.tasks``), answers ``CreateTaskResult`` at once and serves the
server's ``tasks/get``, ``tasks/result``, ``tasks/list`` and ``tasks/cancel``
(``runtime.task_legacy``). A request without ``params.task``, or of a kind the client did
not declare, is answered as ever. The 2026-07-28 era has no client-hosted tasks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

import msgspec

from .events import IncomingRequest
from .plain import as_object
from .request_scope import RequestScope
from .task_legacy import LegacyTasks, Run
from .task_wire import RELATED_TASK
from .tasks import Tasks

#: A request a client may run as a task → where its capabilities say so, under
#: ``tasks.requests``, and the capability its handler turns on.
RECEIVED = {
    "sampling/createMessage": ("sampling", "createMessage"),
    "elicitation/create": ("elicitation", "create"),
}


def any_tool(name: str) -> str:
    return "optional"  # what the client declared, it runs as a task when asked to


class ClientTasks:
    """The task-augmented requests one client runs as tasks (``methods``)."""

    def __init__(self, tasks: Tasks, methods: Iterable[str]) -> None:
        self.tasks = tasks
        self.methods = frozenset(m for m in methods if m in RECEIVED)
        self.legacy = LegacyTasks(tasks, any_tool)

    @classmethod
    def answering(cls, tasks: Tasks, capabilities: Mapping[str, Any]) -> ClientTasks:
        """For a client declaring ``capabilities``: the requests whose capability it has."""
        return cls(tasks, [m for m, (kind, _) in RECEIVED.items() if kind in capabilities])

    def capability(self) -> dict[str, Any]:
        """What the client declares (``capabilities.tasks``)."""
        requests: dict[str, Any] = {}
        for method in sorted(self.methods):
            kind, name = RECEIVED[method]
            requests.setdefault(kind, {})[name] = {}
        return {"list": {}, "cancel": {}, "requests": requests}

    def handlers(self) -> dict[str, Callable[..., Awaitable[Any]]]:
        """The handlers of the server's ``tasks/*`` requests, by handler name."""
        return self.legacy.handlers()

    def call(self, event: IncomingRequest, scope: RequestScope, run: Run) -> Awaitable[Any] | None:
        """The answer to a request the client runs as a task (None: an ordinary one)."""
        if event.spec.name not in self.methods:
            return None
        return self.legacy.call(event, scope, run)  # None without params.task


def tied(answer: Any, meta: Mapping[str, Any]) -> Any:
    """``answer`` to a request whose ``_meta`` ties it to a task (the related-task entry)
    tied to that task too, as 2025-11-25 has every message of a task."""
    related = as_object(meta.get(RELATED_TASK))
    if related is None or not isinstance(answer, msgspec.Struct) or not hasattr(answer, "meta"):
        return answer
    found = getattr(answer, "meta")
    given = as_object(msgspec.to_builtins(found)) if found is not msgspec.UNSET else None
    given = given or {}
    return msgspec.structs.replace(answer, meta={**given, RELATED_TASK: related})


__all__ = ["ClientTasks", "RECEIVED", "tied"]
