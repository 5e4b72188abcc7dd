"""What a task looks like on the wire in protocol 2025-11-25 (core tasks), built from the
store's :class:`~runtime.tasks.store.TaskRecord`: the ``Task`` object, the results of
``tools/call`` as a task (``CreateTaskResult``), ``tasks/get``, ``tasks/list``,
``tasks/cancel`` and ``tasks/result``, the status notification, and the
``io.modelcontextprotocol/related-task`` ``_meta`` that ties a message to its task.

Plain JSON, valid against that version's schema (the tests check every form with
``jsonschema``); the runtime types it with the version's bindings where it has to.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable

from ..core.json_values import JSONObject, as_object
from .store import TaskRecord

#: The ``_meta`` key naming the task a message belongs to.
RELATED_TASK = "io.modelcontextprotocol/related-task"


def timestamp(seconds: float) -> str:
    """Seconds since the epoch as an ISO 8601 UTC timestamp (milliseconds kept)."""
    moment = datetime.datetime.fromtimestamp(seconds, tz=datetime.timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def task(record: TaskRecord) -> JSONObject:
    """The ``Task`` object."""
    out: JSONObject = {
        "taskId": record.task_id,
        "status": record.status,
        "createdAt": timestamp(record.created_at),
        "lastUpdatedAt": timestamp(record.updated_at),
        "ttl": record.ttl_ms,
        "pollInterval": record.poll_interval_ms,
    }
    if record.status_message is not None:
        out["statusMessage"] = record.status_message
    return out


def related(task_id: str) -> JSONObject:
    """The ``_meta`` entry that ties a message to task ``task_id``."""
    return {RELATED_TASK: {"taskId": task_id}}


def created(record: TaskRecord) -> JSONObject:
    """The answer to a task-augmented request: ``CreateTaskResult``."""
    return {"task": task(record)}


def status(record: TaskRecord) -> JSONObject:
    """The answer to ``tasks/get`` and ``tasks/cancel``, and the params of
    ``notifications/tasks/status``: the task itself."""
    return task(record)


def listed(records: Iterable[TaskRecord], cursor: str | None) -> JSONObject:
    """The answer to ``tasks/list``."""
    out: JSONObject = {"tasks": [task(r) for r in records]}
    if cursor is not None:
        out["nextCursor"] = cursor
    return out


def payload(record: TaskRecord) -> JSONObject:
    """The answer to ``tasks/result`` for a completed task: exactly the original result,
    with the related-task ``_meta`` added (a failed or cancelled task is answered with its
    error instead; see :func:`error`)."""
    result = dict(as_object(record.result) or {})
    result["_meta"] = {**(as_object(result.get("_meta")) or {}), **related(record.task_id)}
    return result


def error(record: TaskRecord) -> JSONObject:
    """The JSON-RPC error object ``tasks/result`` answers for a task that did not complete,
    with the related-task ``_meta`` in its data: a failed task's own error; for a
    cancelled one, whose request has no outcome, -32600 (the summary of the spec we work
    from names no code for it: to be checked against the spec's text)."""
    found: JSONObject
    if record.error is not None:
        found = dict(record.error)
    elif record.status == "cancelled":
        found = {"code": -32600, "message": f"Task {record.task_id} was cancelled"}
    else:
        found = {"code": -32603, "message": f"Task {record.task_id} failed"}
    given = found.get("data")
    data = as_object(given)
    if data is None and given is not None:
        data = {"detail": given}  # data that is no object is kept beside the _meta
    found["data"] = {**(data or {}), "_meta": related(record.task_id)}
    return found
