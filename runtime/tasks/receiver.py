"""The client as the receiver of 2025-11-25 task-augmented requests.

A server may send ``sampling/createMessage`` or ``elicitation/create`` with
``params.task``. A client made with ``ClientSession(..., tasks=Tasks())`` declares
``capabilities.tasks`` (``list``, ``cancel`` and ``requests`` for each of the two its
handlers answer), runs such a request as a task, with the engine a server runs its
tools with (``runtime.tasks.engine``), answers ``CreateTaskResult`` at once and serves the
server's ``tasks/get``, ``tasks/result``, ``tasks/list`` and ``tasks/cancel``
(``runtime.tasks.legacy``). A request without ``params.task``, or of a kind the client did
not declare, is answered as ever. The 2026-07-28 era has no client-hosted tasks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

import msgspec

from ..core.events import IncomingRequest
from ..core.json_values import as_object
from ..aio.session import RequestScope
from .legacy import LegacyTasks, Run
from .legacy_wire import RELATED_TASK
from .engine import Tasks

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


class _MetaProbe(msgspec.Struct):
    meta: dict[str, Any] = msgspec.field(default_factory=dict[str, Any], name="_meta")


def related_task(event: IncomingRequest) -> dict[str, Any] | None:
    """The task a request from the server belongs to (its related-task ``_meta``), also
    when the application's types have no ``_meta`` for it (read from the raw params)."""
    found = as_object(event.meta.get(RELATED_TASK))
    raw = event.raw_params
    if found is None and raw is not None and RELATED_TASK.encode() in bytes(raw):
        try:
            found = as_object(msgspec.json.decode(raw, type=_MetaProbe).meta.get(RELATED_TASK))
        except (msgspec.ValidationError, msgspec.DecodeError):
            return None
    return found


def tied(answer: Any, event: IncomingRequest) -> Any:
    """``answer`` to a request of the server's that belongs to a task tied to that task
    too (its related-task ``_meta``), as 2025-11-25 has every message of a task."""
    related = related_task(event)
    plain = as_object(msgspec.to_builtins(answer)) if related is not None else None
    if plain is None:
        return answer
    # as plain JSON: the application's type may have no _meta (2026-07-28's ElicitResult)
    return {**plain, "_meta": {**(as_object(plain.get("_meta")) or {}), RELATED_TASK: related}}


__all__ = ["ClientTasks", "RECEIVED", "related_task", "tied"]
