"""The task lifecycle as a table and the in-memory task store (``runtime.task_store``):
transitions, terminal outcomes kept, owners kept apart, TTLs granted and expired, waiting
for an outcome, paging, the bound on live tasks, and many tasks at once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpgen.runtime.task_store import (
    TERMINAL,
    TRANSITIONS,
    MemoryTaskStore,
    TaskConflict,
    TaskError,
    TaskStore,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 10))


def test_the_lifecycle_table() -> None:
    assert TERMINAL == {"completed", "failed", "cancelled"}
    for status in TERMINAL:
        assert TRANSITIONS[status] == frozenset()
    assert "input_required" in TRANSITIONS["working"]
    assert "working" in TRANSITIONS["input_required"]
    assert "working" not in TRANSITIONS["working"]


def test_a_task_goes_through_input_required_to_its_outcome_and_stays_there() -> None:
    async def scenario() -> None:
        store: TaskStore = MemoryTaskStore()
        task = await store.create("tools/call")
        assert task.status == "working" and len(task.task_id) >= 16
        asked = {"name": {"method": "elicitation/create"}}
        waiting = await store.update(task.task_id, "input_required", input_requests=asked)
        assert waiting.input_requests == asked
        back = await store.update(task.task_id, "working", message="resumed")
        assert back.input_requests is None and back.status_message == "resumed"
        done = await store.update(task.task_id, "completed", result={"content": []})
        assert done.terminal and done.result == {"content": []}
        for status in ("working", "failed", "cancelled", "completed"):  # not even again
            with pytest.raises(TaskError, match="cannot become"):
                await store.update(task.task_id, status, result={"late": 1})  # type: ignore[arg-type]
        again = await store.get(task.task_id)
        assert again.status == "completed" and again.result == {"content": []}

    run(scenario())


def test_unknown_ids_and_other_owners_tasks_are_not_found() -> None:
    async def scenario() -> None:
        store = MemoryTaskStore()
        task = await store.create("tools/call", owner="session-a")
        with pytest.raises(TaskError):
            await store.get("no-such-task", "session-a")
        with pytest.raises(TaskError):
            await store.get(task.task_id, "session-b")
        with pytest.raises(TaskError):
            await store.update("no-such-task", "failed")
        assert (await store.get(task.task_id, "session-a")).task_id == task.task_id

    run(scenario())


def test_ttls_are_granted_within_the_stores_bounds_and_expire() -> None:
    async def scenario() -> None:
        clock = Clock()
        store = MemoryTaskStore(default_ttl_ms=60_000, max_ttl_ms=120_000, clock=clock)
        default = await store.create("tools/call")
        capped = await store.create("tools/call", ttl_ms=10**9)
        short = await store.create("tools/call", ttl_ms=1_000)
        assert (default.ttl_ms, capped.ttl_ms, short.ttl_ms) == (60_000, 120_000, 1_000)
        clock.now += 2
        with pytest.raises(TaskError):
            await store.get(short.task_id)
        with pytest.raises(TaskError):  # nor updated once expired
            await store.update(short.task_id, "completed")
        assert (await store.get(default.task_id)).ttl_ms == 60_000
        clock.now += 200
        assert store.expire() == 2 and len(store) == 0

    run(scenario())


def test_waiting_returns_the_outcome_and_a_waiter_learns_of_expiry() -> None:
    async def scenario() -> None:
        clock = Clock()
        store = MemoryTaskStore(clock=clock)
        task = await store.create("tools/call", ttl_ms=5_000)
        waiter = asyncio.ensure_future(store.wait(task.task_id))
        await asyncio.sleep(0)
        assert not waiter.done()
        await store.update(task.task_id, "failed", error={"code": -32603, "message": "boom"})
        outcome = await waiter
        assert outcome.status == "failed" and outcome.error == {"code": -32603, "message": "boom"}
        other = await store.create("tools/call", ttl_ms=5_000)
        waiter = asyncio.ensure_future(store.wait(other.task_id))
        await asyncio.sleep(0)
        clock.now += 10
        store.expire()
        with pytest.raises(TaskError):
            await waiter
        with pytest.raises(asyncio.TimeoutError):
            third = await store.create("tools/call")
            await store.wait(third.task_id, timeout=0.01)

    run(scenario())


def test_lists_page_an_owners_tasks_oldest_first() -> None:
    async def scenario() -> None:
        store = MemoryTaskStore()
        mine = [(await store.create("tools/call", owner="me")).task_id for _ in range(5)]
        await store.create("tools/call", owner="someone else")
        first, cursor = await store.list("me", limit=2)
        assert [t.task_id for t in first] == mine[:2] and cursor is not None
        await store.update(mine[1], "completed")  # a finished task still counts
        rest, end = await store.list("me", after=cursor, limit=10)
        assert [t.task_id for t in rest] == mine[2:] and end is None
        exact, end = await store.list("me", limit=5)
        assert len(exact) == 5 and end is None
        with pytest.raises(TaskError, match="invalid cursor"):
            await store.list("me", after="forged")

    run(scenario())


def test_the_store_is_bounded_and_makes_room_from_expired_tasks() -> None:
    async def scenario() -> None:
        clock = Clock()
        store = MemoryTaskStore(max_tasks=3, clock=clock)
        for _ in range(2):
            await store.create("tools/call", ttl_ms=1_000)
        await store.create("tools/call", ttl_ms=None)
        with pytest.raises(TaskError, match="too many tasks"):
            await store.create("tools/call")
        clock.now += 5
        assert (await store.create("tools/call")).status == "working"
        assert len(store) == 2

    run(scenario())
    with pytest.raises(ValueError):
        MemoryTaskStore(max_tasks=0)


def test_a_thousand_concurrent_tasks_all_reach_their_outcome() -> None:
    async def scenario() -> list[Any]:
        store = MemoryTaskStore()

        async def one(i: int) -> Any:
            task = await store.create("tools/call")
            waiter = asyncio.ensure_future(store.wait(task.task_id))
            await asyncio.sleep(0)
            await store.update(task.task_id, "completed", result={"i": i})
            return (await waiter).result

        return await asyncio.gather(*(one(i) for i in range(1_000)))

    assert run(scenario()) == [{"i": i} for i in range(1_000)]


def test_answers_are_recorded_only_for_what_the_task_asked_and_wake_its_watcher() -> None:
    async def scenario() -> None:
        store = MemoryTaskStore()
        task = await store.create("tools/call", owner="a")
        with pytest.raises(TaskError, match="asks for no input"):
            await store.respond(task.task_id, {"x": 1}, owner="a")
        asked = {"name": {"method": "elicitation/create"}, "age": {"method": "x"}}
        waiting = await store.update(task.task_id, "input_required", input_requests=asked)
        watcher = asyncio.create_task(store.watch(task.task_id, waiting.revision))
        with pytest.raises(TaskError, match="asked for no input 'colour'"):
            await store.respond(task.task_id, {"name": 1, "colour": 2}, owner="a")
        with pytest.raises(TaskError, match="no task"):  # another owner's task
            await store.respond(task.task_id, {"name": 1}, owner="b")
        assert not watcher.done()
        partly = await store.respond(task.task_id, {"name": {"action": "accept"}}, owner="a")
        seen = await watcher
        assert seen.input_responses == {"name": {"action": "accept"}}
        assert seen.revision == partly.revision > waiting.revision
        whole = await store.respond(task.task_id, {"age": 3}, owner="a")
        assert whole.input_responses == {"name": {"action": "accept"}, "age": 3}
        resumed = await store.update(task.task_id, "working")
        assert resumed.input_requests is None and resumed.input_responses is None

    run(scenario())


def test_watching_a_task_ends_when_it_changes_goes_or_time_is_up() -> None:
    async def scenario() -> None:
        clock = Clock()
        store = MemoryTaskStore(clock=clock)
        task = await store.create("tools/call", ttl_ms=1_000)
        with pytest.raises(asyncio.TimeoutError):
            await store.watch(task.task_id, task.revision, timeout=0.01)
        watcher = asyncio.create_task(store.watch(task.task_id, task.revision))
        waiter = asyncio.create_task(store.wait(task.task_id))
        await asyncio.sleep(0)
        clock.now += 2  # expired: both learn it is gone
        assert store.expire() == 1
        for pending in (watcher, waiter):
            with pytest.raises(TaskError, match="no task"):
                await pending

    run(scenario())


def test_an_update_against_an_old_revision_is_refused_so_no_answer_is_lost() -> None:
    async def scenario() -> None:
        store = MemoryTaskStore()
        task = await store.create("tools/call")
        asked = {"a": {"method": "elicitation/create"}, "b": {"method": "elicitation/create"}}
        waiting = await store.update(task.task_id, "input_required", input_requests=asked)
        answered = await store.respond(task.task_id, {"a": {"action": "accept"}})
        assert answered.input_requests == {"b": asked["b"]}  # no longer asked
        with pytest.raises(TaskConflict):  # made from what it read before the answer
            await store.update(
                task.task_id, "input_required", input_requests=asked, revision=waiting.revision
            )
        kept = await store.update(
            task.task_id,
            "input_required",
            input_requests={"b": asked["b"]},
            revision=answered.revision,
        )
        assert kept.input_requests == {"b": asked["b"]} and kept.input_responses is None

    run(scenario())


def test_expired_tasks_go_from_memory_with_nobody_asking() -> None:
    async def scenario() -> None:
        clock = Clock()
        store = MemoryTaskStore(clock=clock, sweep_every_s=0.01)
        for _ in range(50):
            await store.create("tools/call", ttl_ms=1_000)
        keep = await store.create("tools/call", ttl_ms=60_000)
        assert len(store) == 51
        clock.now += 2
        await asyncio.sleep(0.05)
        assert len(store) == 1  # swept, not waiting for a lookup
        assert (await store.get(keep.task_id)).task_id == keep.task_id
        await store.close()

    run(scenario())
