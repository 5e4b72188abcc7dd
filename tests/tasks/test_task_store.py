"""The task lifecycle as a table, and the task stores' shared contract run against every
store (``stores``: the in-memory one and the Redis one on a real redis-server):
transitions, terminal outcomes kept, owners kept apart, TTLs granted and expired, waiting
for and watching an outcome, answers, paging, the bounds on live tasks (in all and per
owner), the longest TTL granted by default, races, and many tasks at once. The memory store's own clock-driven tests follow; the Redis store's own
(several processes, leases, keyspace) are in test_task_store_redis.py."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import pytest

from mcpgen.runtime.tasks.store import (
    TERMINAL,
    TRANSITIONS,
    MemoryTaskStore,
    TaskConflict,
    TaskError,
    TaskLimitReached,
    TaskStore,
)

T = TypeVar("T")


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 10))


class Stores:
    """Opens stores of one kind for one test, inside its event loop, and closes them after
    it. Redis stores opened by one test share a fresh prefix: two of them stand for two
    server processes."""

    def __init__(self, kind: str, redis_url: str | None = None) -> None:
        self.kind = kind
        self.redis_url = redis_url
        self.prefix = f"test:{secrets.token_hex(6)}:"
        self.opened: list[TaskStore] = []

    def __call__(self, **settings: Any) -> TaskStore:
        if self.kind == "memory":
            store: TaskStore = MemoryTaskStore(**settings)
        else:
            from mcpgen.runtime.tasks.redis_store import RedisTaskStore

            store = RedisTaskStore(self.redis_url or "", prefix=self.prefix, **settings)
        self.opened.append(store)
        return store

    def run(self, scenario: Callable[[], Awaitable[T]], timeout: float = 10) -> T:
        async def main() -> T:
            try:
                return await asyncio.wait_for(scenario(), timeout)
            finally:
                for store in self.opened:
                    await store.close()

        return asyncio.run(main())


@pytest.fixture(params=["memory", "redis"])
def stores(request: pytest.FixtureRequest) -> Iterator[Stores]:
    """A store factory per kind; the Redis kind on the session's real redis-server."""
    url = request.getfixturevalue("redis_url") if request.param == "redis" else None
    yield Stores(request.param, url)


def test_the_lifecycle_table() -> None:
    assert TERMINAL == {"completed", "failed", "cancelled"}
    for status in TERMINAL:
        assert TRANSITIONS[status] == frozenset()
    assert "input_required" in TRANSITIONS["working"]
    assert "working" in TRANSITIONS["input_required"]
    assert "working" not in TRANSITIONS["working"]


# The contract: every store.


def test_a_task_goes_through_input_required_to_its_outcome_and_stays_there(
    stores: Stores,
) -> None:
    async def scenario() -> None:
        store = stores()
        task = await store.create("tools/call")
        assert task.status == "working" and len(task.task_id) >= 16 and task.revision == 0
        asked = {"name": {"method": "elicitation/create"}}
        waiting = await store.update(task.task_id, "input_required", input_requests=asked)
        assert waiting.input_requests == asked and waiting.revision == 1
        back = await store.update(task.task_id, "working", message="resumed")
        assert back.input_requests is None and back.status_message == "resumed"
        done = await store.update(task.task_id, "completed", result={"content": [], "x": 0.1})
        assert done.terminal and done.result == {"content": [], "x": 0.1}
        for status in ("working", "failed", "cancelled", "completed"):  # not even again
            with pytest.raises(TaskError, match="cannot become"):
                await store.update(task.task_id, status, result={"late": 1})  # type: ignore[arg-type]
        again = await store.get(task.task_id)
        assert again.status == "completed" and again.result == {"content": [], "x": 0.1}
        assert again.revision == done.revision == 3 and again.seq == task.seq

    stores.run(scenario)


def test_records_handed_out_are_snapshots(stores: Stores) -> None:
    async def scenario() -> None:
        store = stores()
        task = await store.create("tools/call")
        await store.update(task.task_id, "completed", result={"n": 1})
        assert task.status == "working" and task.revision == 0
        got = await store.get(task.task_id)
        got.status = "cancelled"
        assert (await store.get(task.task_id)).status == "completed"

    stores.run(scenario)


def test_unknown_ids_and_other_owners_tasks_are_not_found(stores: Stores) -> None:
    async def scenario() -> None:
        store = stores()
        task = await store.create("tools/call", owner="session-a")
        for unknown in ("no-such-task", "", "x" * 10_000, "*", "a:b\n\u00e9"):
            with pytest.raises(TaskError, match="no task"):
                await store.get(unknown, "session-a")
            with pytest.raises(TaskError, match="no task"):
                await store.update(unknown, "failed")
            with pytest.raises(TaskError, match="no task"):
                await store.watch(unknown, 0, timeout=1)
        with pytest.raises(TaskError, match="no task"):
            await store.get(task.task_id, "session-b")
        with pytest.raises(TaskError, match="no task"):
            await store.wait(task.task_id, "session-b", timeout=1)
        assert await store.list("session-b") == ([], None)
        assert (await store.get(task.task_id, "session-a")).task_id == task.task_id

    stores.run(scenario)


def test_ttls_are_granted_within_the_stores_bounds_and_expire(stores: Stores) -> None:
    async def scenario() -> None:
        store = stores(default_ttl_ms=60_000, max_ttl_ms=120_000)
        default = await store.create("tools/call")
        capped = await store.create("tools/call", ttl_ms=10**9)
        short = await store.create("tools/call", ttl_ms=200)
        gone = await store.create("tools/call", ttl_ms=-5)
        assert (default.ttl_ms, capped.ttl_ms, short.ttl_ms, gone.ttl_ms) == (
            60_000,
            120_000,
            200,
            0,
        )
        with pytest.raises(TaskError, match="no task"):
            await store.get(gone.task_id)
        await store.update(short.task_id, "completed", result={})  # alive until its TTL
        await asyncio.sleep(0.3)
        with pytest.raises(TaskError, match="no task"):
            await store.get(short.task_id)
        with pytest.raises(TaskError, match="no task"):  # nor updated once expired
            await store.update(short.task_id, "completed")
        assert (await store.get(default.task_id)).ttl_ms == 60_000
        listed, _ = await store.list()
        assert [t.task_id for t in listed] == [default.task_id, capped.task_id]

    stores.run(scenario)


def test_waiting_returns_the_outcome_or_times_out(stores: Stores) -> None:
    async def scenario() -> None:
        store = stores()
        task = await store.create("tools/call", owner="a")
        waiter = asyncio.ensure_future(store.wait(task.task_id, "a"))
        await asyncio.sleep(0.05)
        assert not waiter.done()
        await store.update(task.task_id, "failed", error={"code": -32603, "message": "boom"})
        outcome = await waiter
        assert outcome.status == "failed" and outcome.error == {"code": -32603, "message": "boom"}
        assert (await store.wait(task.task_id, "a", timeout=1)).status == "failed"  # already
        with pytest.raises(asyncio.TimeoutError):
            third = await store.create("tools/call")
            await store.wait(third.task_id, timeout=0.05)

    stores.run(scenario)


def test_lists_page_an_owners_tasks_oldest_first(stores: Stores) -> None:
    async def scenario() -> None:
        store = stores()
        mine = [(await store.create("tools/call", owner="me")).task_id for _ in range(5)]
        await store.create("tools/call", owner="someone else")
        first, cursor = await store.list("me", limit=2)
        assert [t.task_id for t in first] == mine[:2] and cursor is not None
        await store.update(mine[1], "completed")  # a finished task still counts
        rest, end = await store.list("me", after=cursor, limit=10)
        assert [t.task_id for t in rest] == mine[2:] and end is None
        exact, end = await store.list("me", limit=5)
        assert len(exact) == 5 and end is None
        one, cursor = await store.list("me", limit=0)  # at least one a page
        assert [t.task_id for t in one] == mine[:1] and cursor is not None
        for forged in ("forged", "1.5", "", "9" * 5000):
            with pytest.raises(TaskError, match="invalid cursor"):
                await store.list("me", after=forged)
        for far in ("-7", str(2**70)):  # numbers, just not any this store gave
            page, _ = await store.list("me", after=far)
            assert len(page) in (0, 5)

    stores.run(scenario)


def test_a_page_goes_on_after_its_cursors_task_has_gone(stores: Stores) -> None:
    async def scenario() -> None:
        store = stores()
        short = [(await store.create("tools/call", ttl_ms=200)).task_id for _ in range(3)]
        kept = [(await store.create("tools/call")).task_id for _ in range(2)]
        first, cursor = await store.list(limit=3)
        assert [t.task_id for t in first] == short
        await asyncio.sleep(0.3)
        rest, end = await store.list(after=cursor)
        assert [t.task_id for t in rest] == kept and end is None
        everything, _ = await store.list(limit=2)  # the expired ones are skipped
        assert [t.task_id for t in everything] == kept

    stores.run(scenario)


def test_the_store_is_bounded_and_makes_room_from_expired_tasks(stores: Stores) -> None:
    async def scenario() -> None:
        store = stores(max_tasks=3)
        for _ in range(2):
            await store.create("tools/call", ttl_ms=200)
        await store.create("tools/call", ttl_ms=60_000)
        with pytest.raises(TaskError, match="too many tasks"):
            await store.create("tools/call")
        await asyncio.sleep(0.3)
        assert (await store.create("tools/call")).status == "working"
        assert (await store.create("tools/call")).status == "working"
        with pytest.raises(TaskError, match="too many tasks"):
            await store.create("tools/call")

    stores.run(scenario)
    with pytest.raises(ValueError):
        stores(max_tasks=0)


def test_an_owner_at_its_quota_is_refused_while_other_owners_still_create_tasks(
    stores: Stores,
) -> None:
    async def scenario() -> None:
        store = stores(max_tasks=7, max_tasks_per_owner=3)
        flood = [(await store.create("tools/call", owner="flood", ttl_ms=200)) for _ in range(3)]
        await store.update(flood[0].task_id, "completed", result={})  # ended tasks still count
        with pytest.raises(TaskLimitReached, match=r"at most 3 per owner: max_tasks_per_owner"):
            await store.create("tools/call", owner="flood")
        for owner in ("alice", "bob"):  # the others are not refused
            for _ in range(2):
                made = await store.create("tools/call", owner=owner)
                done = await store.update(made.task_id, "completed", result={"ok": owner})
                assert (await store.get(made.task_id, owner)).result == done.result
        assert [t.status for t in (await store.list("flood"))[0]] == ["completed"] + 2 * ["working"]
        with pytest.raises(
            TaskLimitReached, match=r"at most 7: max_tasks"
        ):  # 7 in all: the global bound
            await store.create("tools/call", owner="carol")
        await asyncio.sleep(0.3)  # the flood expired: room for its owner, and everyone
        again = await store.create("tools/call", owner="flood")
        assert (await store.get(again.task_id, "flood")).status == "working"
        assert (await store.create("tools/call", owner="carol")).owner == "carol"

    stores.run(scenario)
    with pytest.raises(ValueError):
        stores(max_tasks_per_owner=0)


def test_nobody_in_particular_is_bounded_only_by_the_bound_for_everyone(
    stores: Stores,
) -> None:
    """Requesters nothing tells apart (owner "": stdio, unauthenticated 2026-07-28) do not
    share one owner's quota: only the store's bound holds them."""

    async def scenario() -> None:
        store = stores(max_tasks=5, max_tasks_per_owner=2)
        for _ in range(5):
            await store.create("tools/call", owner="")
        with pytest.raises(TaskLimitReached, match=r"at most 5: max_tasks"):
            await store.create("tools/call", owner="")

    stores.run(scenario)


def test_by_default_a_day_asked_for_is_granted_an_hour(stores: Stores) -> None:
    async def scenario() -> None:
        store = stores()
        day = await store.create("tools/call", ttl_ms=86_400_000)
        unasked = await store.create("tools/call")
        assert (day.ttl_ms, unasked.ttl_ms) == (3_600_000, 3_600_000)
        assert (await store.get(day.task_id)).ttl_ms == 3_600_000

    stores.run(scenario)


def test_many_concurrent_tasks_all_reach_their_outcome(stores: Stores) -> None:
    count = 1_000 if stores.kind == "memory" else 300  # Redis: 6 times its connections

    async def scenario() -> list[Any]:
        store = stores()

        async def one(i: int) -> Any:
            task = await store.create("tools/call")
            waiter = asyncio.ensure_future(store.wait(task.task_id))
            await asyncio.sleep(0)
            await store.update(task.task_id, "completed", result={"i": i})
            return (await waiter).result

        return await asyncio.gather(*(one(i) for i in range(count)))

    assert stores.run(scenario) == [{"i": i} for i in range(count)]


def test_of_a_concurrent_cancel_and_complete_exactly_one_wins(stores: Stores) -> None:
    async def scenario() -> None:
        store = stores()
        for _ in range(20):
            task = await store.create("tools/call")
            outcomes = await asyncio.gather(
                store.update(task.task_id, "cancelled", message="asked to"),
                store.update(task.task_id, "completed", result={"done": True}),
                return_exceptions=True,
            )
            won = [o for o in outcomes if not isinstance(o, BaseException)]
            lost = [o for o in outcomes if isinstance(o, BaseException)]
            assert len(won) == 1 and len(lost) == 1, outcomes
            assert isinstance(lost[0], TaskError) and "cannot become" in str(lost[0])
            stored = await store.get(task.task_id)
            assert stored.status == won[0].status and stored.revision == 1

    stores.run(scenario)


def test_answers_are_recorded_only_for_what_the_task_asked_and_wake_its_watcher(
    stores: Stores,
) -> None:
    async def scenario() -> None:
        store = stores()
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
        await asyncio.sleep(0.05)
        assert not watcher.done()
        partly = await store.respond(task.task_id, {"name": {"action": "accept"}}, owner="a")
        seen = await asyncio.wait_for(watcher, 1)
        assert seen.input_responses == {"name": {"action": "accept"}}
        assert seen.revision == partly.revision > waiting.revision
        whole = await store.respond(task.task_id, {"age": 3}, owner="a")
        assert whole.input_responses == {"name": {"action": "accept"}, "age": 3}
        resumed = await store.update(task.task_id, "working")
        assert resumed.input_requests is None and resumed.input_responses is None
        with pytest.raises(TaskError, match="asks for no input"):
            await store.respond(task.task_id, {"age": 4}, owner="a")

    stores.run(scenario)


def test_watching_a_task_ends_when_it_changes_goes_or_time_is_up(stores: Stores) -> None:
    async def scenario() -> None:
        store = stores()
        task = await store.create("tools/call", ttl_ms=400)
        with pytest.raises(asyncio.TimeoutError):
            await store.watch(task.task_id, task.revision, timeout=0.05)
        changed = asyncio.create_task(store.watch(task.task_id, task.revision))
        await asyncio.sleep(0.05)
        moved = await store.update(task.task_id, "input_required", input_requests={"k": {}})
        assert (await asyncio.wait_for(changed, 1)).revision == moved.revision
        past = await store.watch(task.task_id, task.revision, timeout=1)  # already past it
        assert past.revision == moved.revision
        watcher = asyncio.create_task(store.watch(task.task_id, moved.revision))
        waiter = asyncio.create_task(store.wait(task.task_id))
        await asyncio.sleep(0.45)  # it expires: both learn it is gone (the memory store
        with pytest.raises(TaskError, match="no task"):  # notices on access, Redis's by
            await store.get(task.task_id)  # its own re-checks)
        for pending in (watcher, waiter):
            with pytest.raises(TaskError, match="no task"):
                await asyncio.wait_for(pending, 2)

    stores.run(scenario)


def test_an_update_against_an_old_revision_is_refused_so_no_answer_is_lost(
    stores: Stores,
) -> None:
    async def scenario() -> None:
        store = stores()
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
        both = await asyncio.gather(  # two changes made from the same revision: one lands
            store.update(task.task_id, "working", revision=kept.revision),
            store.update(task.task_id, "cancelled", revision=kept.revision),
            return_exceptions=True,
        )
        assert sorted(type(outcome).__name__ for outcome in both) == ["TaskConflict", "TaskRecord"]

    stores.run(scenario)


# The memory store on its own clock.


def test_memory_ttls_expire_by_the_clock() -> None:
    async def scenario() -> None:
        clock = Clock()
        store = MemoryTaskStore(default_ttl_ms=60_000, max_ttl_ms=120_000, clock=clock)
        default = await store.create("tools/call")
        await store.create("tools/call", ttl_ms=10**9)
        short = await store.create("tools/call", ttl_ms=1_000)
        clock.now += 2
        with pytest.raises(TaskError):
            await store.get(short.task_id)
        assert (await store.get(default.task_id)).ttl_ms == 60_000
        clock.now += 200
        assert store.expire() == 2 and len(store) == 0
        unbounded = MemoryTaskStore(default_ttl_ms=None, max_ttl_ms=None, clock=clock)
        assert (await unbounded.create("tools/call")).ttl_ms is None

    run(scenario())


def test_a_memory_waiter_learns_of_expiry() -> None:
    async def scenario() -> None:
        clock = Clock()
        store = MemoryTaskStore(clock=clock)
        other = await store.create("tools/call", ttl_ms=5_000)
        waiter = asyncio.ensure_future(store.wait(other.task_id))
        await asyncio.sleep(0)
        clock.now += 10
        store.expire()
        with pytest.raises(TaskError):
            await waiter

    run(scenario())


def test_the_memory_store_makes_room_from_expired_tasks_by_the_clock() -> None:
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


def test_memory_watchers_learn_their_task_expired_by_the_clock() -> None:
    async def scenario() -> None:
        clock = Clock()
        store = MemoryTaskStore(clock=clock)
        task = await store.create("tools/call", ttl_ms=1_000)
        watcher = asyncio.create_task(store.watch(task.task_id, task.revision))
        waiter = asyncio.create_task(store.wait(task.task_id))
        await asyncio.sleep(0)
        clock.now += 2  # expired: both learn it is gone
        assert store.expire() == 1
        for pending in (watcher, waiter):
            with pytest.raises(TaskError, match="no task"):
                await pending

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
