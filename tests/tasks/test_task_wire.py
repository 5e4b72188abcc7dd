"""The 2025-11-25 wire forms of tasks (``runtime.tasks.legacy_wire``), each validated against the
official schema with ``jsonschema``: the task in every status, the results of a
task-augmented call, ``tasks/get``/``list``/``cancel``/``result``, the status
notification, and the error a task that did not complete is answered with."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpgen.runtime.tasks import legacy_wire as wire
from mcpgen.runtime.tasks.store import MemoryTaskStore, TaskRecord

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from support.wire_oracle import Schema  # noqa: E402

SCHEMA = Schema("2025-11-25", ROOT / "schema" / "2025-11-25" / "schema.json")


def valid(definition: str, instance: Any) -> None:
    problem = SCHEMA.error_of(definition, instance)
    assert problem is None, problem


def records() -> list[TaskRecord]:
    async def make() -> list[TaskRecord]:
        store = MemoryTaskStore(clock=lambda: 1_764_000_000.123)
        out = []
        for status in ("working", "input_required", "completed", "failed", "cancelled"):
            record = await store.create("tools/call", ttl_ms=None if status == "failed" else 60_000)
            if status != "working":
                outcome: dict[str, Any] = {}
                if status == "completed":
                    outcome["result"] = {"content": [{"type": "text", "text": "done"}]}
                if status == "failed":
                    outcome["error"] = {"code": -32603, "message": "boom", "data": "trace id 7"}
                record = await store.update(record.task_id, status, message=f"now {status}", **outcome)  # type: ignore[arg-type]
            out.append(record)
        return out

    return asyncio.run(make())


@pytest.mark.parametrize("record", records(), ids=lambda r: r.status)
def test_every_status_is_a_valid_task_in_every_answer(record: TaskRecord) -> None:
    valid("Task", wire.task(record))
    valid("CreateTaskResult", wire.created(record))
    valid("GetTaskResult", wire.status(record))
    valid("CancelTaskResult", wire.status(record))
    valid("TaskStatusNotificationParams", wire.status(record))
    assert wire.task(record)["createdAt"] == "2025-11-24T16:00:00.123Z"


def test_a_list_with_and_without_a_cursor() -> None:
    found = records()
    valid("ListTasksResult", wire.listed(found, "5"))
    valid("ListTasksResult", wire.listed([], None))
    assert "nextCursor" not in wire.listed(found, None)


def test_tasks_result_gives_exactly_the_original_result_tied_to_its_task() -> None:
    completed = records()[2]
    answer = wire.payload(completed)
    valid("GetTaskPayloadResult", answer)
    valid("CallToolResult", answer)
    assert answer["content"] == [{"type": "text", "text": "done"}]
    assert answer["_meta"] == {wire.RELATED_TASK: {"taskId": completed.task_id}}
    valid("RelatedTaskMetadata", answer["_meta"][wire.RELATED_TASK])


def test_a_task_that_did_not_complete_is_answered_with_its_error() -> None:
    failed, cancelled = records()[3], records()[4]
    for record in (failed, cancelled):
        error = wire.error(record)
        valid("JSONRPCErrorResponse", {"jsonrpc": "2.0", "id": 1, "error": error})
        assert error["data"]["_meta"][wire.RELATED_TASK]["taskId"] == record.task_id
    assert wire.error(failed)["message"] == "boom"
    assert wire.error(failed)["data"]["detail"] == "trace id 7"  # kept, not dropped
    assert wire.error(cancelled)["code"] == -32600
