"""The Redis task store's own guarantees, on a real redis-server (tests/support/redis_server.py):
several stores (as several processes) sharing tasks, races between them, the keyspace
left empty once tasks expire, leases (a dead creator's tasks read as failed, also after a
real SIGKILL of another OS process), lost pub/sub messages, Redis restarting, damaged
records, settings, and the task engine across two servers. The contract it shares with
the memory store is in test_task_store.py."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest
from redis.asyncio import Redis

from mcpgen.runtime.tasks.store import TaskError
from mcpgen.runtime.tasks.redis_store import RedisTaskStore
from support.redis_server import RedisServer, redis_server_binary

T = TypeVar("T")
STOPPED = "The server process running task {} stopped before it finished"


class Cluster:
    """Stores on one prefix (one store stands for one server process) and a raw client to
    look at the keyspace; all closed after the test."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.prefix = f"test:{secrets.token_hex(6)}:"
        self.stores: list[RedisTaskStore] = []
        self.raw: Redis | None = None

    def store(self, **settings: Any) -> RedisTaskStore:
        store = RedisTaskStore(self.url, prefix=self.prefix, **settings)
        self.stores.append(store)
        return store

    def client(self) -> Redis:
        if self.raw is None:
            self.raw = Redis.from_url(self.url)
        return self.raw

    async def keys(self) -> list[bytes]:
        return sorted([k async for k in self.client().scan_iter(match=f"{self.prefix}*")])

    def run(self, scenario: Callable[[], Awaitable[T]], timeout: float = 10) -> T:
        async def main() -> T:
            try:
                return await asyncio.wait_for(scenario(), timeout)
            finally:
                for store in self.stores:
                    await store.close()
                if self.raw is not None:
                    await self.raw.aclose()

        return asyncio.run(main())


@pytest.fixture
def cluster(redis_url: str) -> Cluster:
    return Cluster(redis_url)


async def eventually(check: Callable[[], Awaitable[bool]], within: float) -> None:
    deadline = time.monotonic() + within
    while not await check():
        assert time.monotonic() < deadline, "not within the time allowed"
        await asyncio.sleep(0.02)


def test_two_stores_share_tasks_and_a_change_wakes_a_waiter_in_the_other(
    cluster: Cluster,
) -> None:
    async def scenario() -> None:
        runner, front = cluster.store(recheck_ms=10_000), cluster.store(recheck_ms=10_000)
        task = await runner.create("tools/call", owner="alice")
        assert (await front.get(task.task_id, "alice")).status == "working"
        waiter = asyncio.create_task(front.wait(task.task_id, "alice"))
        watcher = asyncio.create_task(runner.watch(task.task_id, 0))
        await asyncio.sleep(0.1)
        asked = await runner.update(task.task_id, "input_required", input_requests={"q": {}})
        assert (await asyncio.wait_for(watcher, 1)).revision == asked.revision
        started = time.monotonic()
        watcher = asyncio.create_task(runner.watch(task.task_id, asked.revision))
        await asyncio.sleep(0.05)
        await front.respond(task.task_id, {"q": {"action": "accept"}}, owner="alice")
        answered = await asyncio.wait_for(watcher, 1)  # the runner learns of the answer
        assert answered.input_responses == {"q": {"action": "accept"}}
        await runner.update(task.task_id, "completed", result={"content": [1.5, "é"]})
        outcome = await asyncio.wait_for(waiter, 1)
        # woken by pub/sub, far sooner than the 10 s re-check
        assert time.monotonic() - started < 1
        assert outcome.status == "completed" and outcome.result == {"content": [1.5, "é"]}
        listed, _ = await front.list("alice")
        assert [t.task_id for t in listed] == [task.task_id]

    cluster.run(scenario)


def test_of_cancel_and_complete_from_two_stores_exactly_one_wins(cluster: Cluster) -> None:
    async def scenario() -> None:
        runner, front = cluster.store(), cluster.store()
        winners: set[str] = set()
        for _ in range(40):
            task = await runner.create("tools/call")
            outcomes = await asyncio.gather(
                front.update(task.task_id, "cancelled"),
                runner.update(task.task_id, "completed", result={"ok": True}),
                runner.update(task.task_id, "failed", error={"code": 1, "message": "x"}),
                return_exceptions=True,
            )
            won = [o for o in outcomes if not isinstance(o, BaseException)]
            assert len(won) == 1, outcomes
            assert all(isinstance(o, TaskError) for o in outcomes if o not in won)
            final = await front.get(task.task_id)
            assert (final.status, final.revision) == (won[0].status, 1)
            winners.add(final.status)
        assert winners <= {"cancelled", "completed", "failed"}

    cluster.run(scenario)


def test_answers_never_land_on_a_task_that_stopped_asking(cluster: Cluster) -> None:
    async def scenario() -> None:
        runner, front = cluster.store(), cluster.store()
        for _ in range(30):
            task = await runner.create("tools/call")
            await runner.update(task.task_id, "input_required", input_requests={"q": {}})
            answer, resume = await asyncio.gather(
                front.respond(task.task_id, {"q": 1}),
                runner.update(task.task_id, "working"),
                return_exceptions=True,
            )
            assert not isinstance(resume, BaseException)
            if isinstance(answer, BaseException):  # too late: it asks for nothing now
                assert isinstance(answer, TaskError) and "asks for no input" in str(answer)
            else:
                assert answer.status == "input_required"
            final = await front.get(task.task_id)
            assert final.status == "working" and final.input_responses is None

    cluster.run(scenario)


def test_after_expiry_the_prefix_holds_no_key_and_indexes_are_pruned(cluster: Cluster) -> None:
    async def scenario() -> None:
        # long enough for the setup below on a loaded machine; expiry is then awaited
        # from Redis itself, not from a fixed sleep
        store = cluster.store(max_ttl_ms=1500)
        other = cluster.store()
        made = [await store.create("tools/call", owner=f"o{i % 3}") for i in range(30)]
        await store.update(made[0].task_id, "input_required", input_requests={"a": {}})
        await other.respond(made[0].task_id, {"a": 1}, owner="o0")
        await other.update(made[1].task_id, "completed", result={"big": "x" * 10_000})
        with pytest.raises(asyncio.TimeoutError):
            await other.watch(made[2].task_id, 0, timeout=0.05)
        assert len(await cluster.keys()) > 30
        raw = cluster.client()
        records = [f"{cluster.prefix}task:{task.task_id}" for task in made]
        await eventually(lambda: gone(raw, records), within=6)
        # one more create drops the expired ones from the indexes at once
        kept = await store.create("tools/call", owner="o0")
        assert await raw.zcard(f"{cluster.prefix}expiry") == 1
        assert await raw.zcard(f"{cluster.prefix}owner:o0") == 1
        assert not await raw.exists(f"{cluster.prefix}owner:o1")
        assert (await store.list("o0"))[0] == [kept]
        for running in cluster.stores:
            await running.close()  # their leases go with them
        await eventually(lambda: no_keys(cluster), within=4)

    cluster.run(scenario)


async def gone(raw: Redis, keys: list[str]) -> bool:
    return not await raw.exists(*keys)


async def no_keys(cluster: Cluster) -> bool:
    return await cluster.keys() == []


def test_a_live_stores_tasks_outlast_many_lease_periods(cluster: Cluster) -> None:
    async def scenario() -> None:
        runner, front = cluster.store(lease_ms=240), cluster.store(lease_ms=240)
        task = await runner.create("tools/call")
        await asyncio.sleep(0.75)  # three leases' time: the heartbeat renewed it
        assert (await front.get(task.task_id)).status == "working"
        assert (await front.list())[0][0].status == "working"

    cluster.run(scenario)


def test_a_closed_stores_unfinished_tasks_read_as_failed_everywhere(cluster: Cluster) -> None:
    async def scenario() -> None:
        runner, front = cluster.store(lease_ms=300), cluster.store(recheck_ms=100)
        working = await runner.create("tools/call", owner="o")
        asking = await runner.create("tools/call", owner="o")
        await runner.update(asking.task_id, "input_required", input_requests={"q": {}})
        done = await runner.create("tools/call", owner="o")
        await runner.update(done.task_id, "completed", result={"r": 1})
        waiter = asyncio.create_task(front.wait(working.task_id, "o"))
        await asyncio.sleep(0.05)
        assert not waiter.done()
        await runner.close()  # stops its heartbeat and lets its lease go
        outcome = await asyncio.wait_for(waiter, 2)
        said = STOPPED.format(working.task_id)
        assert (outcome.status, outcome.status_message) == ("failed", said)
        assert outcome.error == {"code": -32603, "message": said}
        listed, _ = await front.list("o")
        assert [(t.task_id, t.status) for t in listed] == [
            (working.task_id, "failed"),
            (asking.task_id, "failed"),
            (done.task_id, "completed"),
        ]
        assert listed[1].input_requests is None and listed[2].result == {"r": 1}
        with pytest.raises(TaskError, match="cannot become"):  # and it stays failed
            await front.update(working.task_id, "completed")
        with pytest.raises(TaskError, match="closed"):
            await runner.get(working.task_id, "o")

    cluster.run(scenario)


#: A store in another OS process: creates a task, says its id, and runs until killed.
CHILD = """
import asyncio, sys
from mcpgen.runtime.tasks.redis_store import RedisTaskStore

async def main():
    store = RedisTaskStore(sys.argv[1], prefix=sys.argv[2], lease_ms=400)
    task = await store.create("tools/call", owner="o")
    print(task.task_id, flush=True)
    await asyncio.sleep(60)

asyncio.run(main())
"""


@pytest.mark.slow
def test_a_task_whose_process_was_killed_reads_as_failed_after_its_lease(
    cluster: Cluster,
) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, cluster.url, cluster.prefix],
        stdout=subprocess.PIPE,
        text=True,
    )

    async def scenario() -> None:
        assert child.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(child.stdout.readline), 20)
        task_id = line.strip()
        front = cluster.store(recheck_ms=100)
        await asyncio.sleep(0.6)  # past its lease: its heartbeat keeps it alive
        assert (await front.get(task_id, "o")).status == "working"
        waiter = asyncio.create_task(front.wait(task_id, "o"))
        os.kill(child.pid, signal.SIGKILL)
        killed = time.monotonic()
        outcome = await asyncio.wait_for(waiter, 3)
        assert outcome.status == "failed" and outcome.status_message == STOPPED.format(task_id)
        assert time.monotonic() - killed < 0.4 + 1  # its lease, and a re-check or two
        assert (await cluster.store().get(task_id, "o")).status == "failed"  # a restart

    with child:  # its pipe closed, and waited for
        try:
            cluster.run(scenario, timeout=30)
        finally:
            child.kill()


def test_watchers_finish_when_pubsub_messages_are_lost(cluster: Cluster) -> None:
    async def scenario() -> None:
        runner, front = cluster.store(), cluster.store(recheck_ms=200)
        task = await runner.create("tools/call")
        assert (await front.get(task.task_id)).revision == 0
        watcher = asyncio.create_task(front.watch(task.task_id, 0))
        await asyncio.sleep(0.1)
        assert await cluster.client().client_kill_filter(_type="pubsub") >= 1  # lost
        await runner.update(task.task_id, "input_required", input_requests={"q": {}})
        assert (await asyncio.wait_for(watcher, 2)).revision == 1
        channel = f"{cluster.prefix}changed"  # subscribed again: wake-ups come at once
        await eventually(lambda: subscribed(cluster.client(), channel), within=2)
        took = []
        for revision, status in ((1, "working"), (2, "input_required"), (3, "working")):
            watcher = asyncio.create_task(front.watch(task.task_id, revision))
            await asyncio.sleep(0.05)
            started = time.monotonic()
            await runner.update(task.task_id, status, input_requests={"q": {}})  # type: ignore[arg-type]
            assert (await asyncio.wait_for(watcher, 2)).revision == revision + 1
            took.append(time.monotonic() - started)
        assert sorted(took)[1] < 0.1  # a re-check would come 0.15 s after the change

    cluster.run(scenario)


async def subscribed(raw: Redis, channel: str) -> bool:
    return (await raw.pubsub_numsub(channel))[0][1] > 0


@pytest.mark.slow
def test_a_watch_outlives_redis_restarting_and_the_store_goes_on() -> None:
    """Redis away (stopped, then started again on its port with nothing kept): a watcher
    keeps watching meanwhile, then learns its task is gone; the stores work again."""
    server = RedisServer().start()

    async def scenario() -> None:
        runner, front = RedisTaskStore(server.url), RedisTaskStore(server.url, recheck_ms=100)
        try:
            task = await runner.create("tools/call")
            watcher = asyncio.create_task(front.watch(task.task_id, 0))
            await asyncio.sleep(0.1)
            server.stop(keep_dir=True)
            await asyncio.sleep(0.5)
            assert not watcher.done()
            server.start(port=server.port)
            with pytest.raises(TaskError, match="no task"):
                await asyncio.wait_for(watcher, 5)
            again = await runner.create("tools/call")  # on connections made anew
            assert (await front.get(again.task_id)).status == "working"
        finally:
            await runner.close()
            await front.close()

    try:
        asyncio.run(asyncio.wait_for(scenario(), 20))
    finally:
        server.stop()


def test_damaged_records_are_task_errors_and_the_store_goes_on(cluster: Cluster) -> None:
    async def scenario() -> None:
        store = cluster.store()
        raw = cluster.client()
        tasks = [await store.create("tools/call") for _ in range(6)]
        keys = [f"{cluster.prefix}task:{t.task_id}" for t in tasks]
        await raw.hset(keys[0], "data", b"{not json")
        await raw.hset(keys[1], "data", b'{"task_id": 5}')
        await raw.hset(keys[2], "data", (await raw.hget(keys[3], "data")) or b"")  # 3's record
        await raw.delete(keys[4])
        await raw.set(keys[4], b"a string, not a hash", px=60_000)
        await raw.hdel(keys[5], "rev")
        for task in tasks[:3] + tasks[4:]:
            with pytest.raises(TaskError, match="damaged"):
                await store.get(task.task_id)
            with pytest.raises(TaskError, match="damaged"):
                await store.update(task.task_id, "completed")
        listed, _ = await store.list()
        assert [t.task_id for t in listed] == [tasks[3].task_id]  # the damaged left out
        fresh = await store.create("tools/call")
        await store.update(fresh.task_id, "completed", result={})
        assert (await store.wait(fresh.task_id, timeout=1)).status == "completed"
        with pytest.raises(TaskError, match="invalid cursor"):
            await store.list(after="../../etc")

    cluster.run(scenario)


def test_settings_are_checked_and_a_given_client_is_left_open(cluster: Cluster) -> None:
    bads: list[dict[str, Any]] = [{"max_tasks": 0}, {"max_ttl_ms": 0}, {"lease_ms": 2}]
    bads += [{"max_tasks_per_owner": 0}, {"socket_timeout": 0}, {"connect_timeout": -1.0}]
    for bad in bads + [{"recheck_ms": 0}]:
        with pytest.raises(ValueError):
            RedisTaskStore(cluster.url, **bad)

    async def scenario() -> None:
        client = cluster.client()
        store = RedisTaskStore(client, prefix=cluster.prefix, default_ttl_ms=None)
        task = await store.create("tools/call")
        assert task.ttl_ms == 3_600_000  # None asks for the most the store grants
        await store.close()
        await store.close()  # twice is fine
        assert await client.ping()
        with pytest.raises(TaskError, match="closed"):
            await store.create("tools/call")
        decoding = Redis.from_url(cluster.url, decode_responses=True)  # str replies work too
        try:
            store = RedisTaskStore(decoding, prefix=cluster.prefix, recheck_ms=10_000)
            task = await store.create("tools/call", owner="é")
            watcher = asyncio.create_task(store.watch(task.task_id, 0))
            await asyncio.sleep(0.05)
            await store.update(task.task_id, "completed", result={"ok": "ü"})
            assert (await asyncio.wait_for(watcher, 1)).result == {"ok": "ü"}
            assert [t.task_id for t in (await store.list("é"))[0]] == [task.task_id]
            await store.close()
        finally:
            await decoding.aclose()

    cluster.run(scenario)


def test_a_missing_redis_server_binary_is_an_error_that_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MCPGEN_REDIS_SERVER", "/nonexistent/redis-server")
    with pytest.raises(RuntimeError, match="MCPGEN_REDIS_SERVER"):
        redis_server_binary()
    monkeypatch.delenv("MCPGEN_REDIS_SERVER")
    assert os.access(redis_server_binary(), os.X_OK)  # the dev extra brings one


def test_the_runtime_core_does_not_import_redis() -> None:
    code = (
        "import pkgutil, importlib, sys, mcpgen.runtime as r\n"
        "for m in pkgutil.iter_modules(r.__path__):\n"
        "    if not m.name.startswith('task_store_redis'):\n"
        "        importlib.import_module('mcpgen.runtime.' + m.name)\n"
        "assert 'redis' not in sys.modules, 'redis imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_the_task_engine_runs_across_two_servers_sharing_redis(cluster: Cluster) -> None:
    """A 2026-07-28 task started on one server is seen, answered and cancelled through
    another: the answers and the cancellation reach the handler where it runs."""
    from support.task_apps import OPTED, make_app as tools_app
    from support.sansio import RawPeer, modern, serving

    async def result(peer: RawPeer, rid: int, method: str, params: Any) -> Any:
        await peer.send(modern(rid, method, params, capabilities=OPTED))
        answer = await peer.answer_to(rid)
        assert "result" in answer, answer
        return answer["result"]

    async def until(peer: RawPeer, rid: int, task_id: str, done: Callable[[Any], bool]) -> Any:
        for attempt in range(250):
            task = await result(peer, rid * 1000 + attempt, "tasks/get", {"taskId": task_id})
            if done(task):
                return task
            await asyncio.sleep(0.02)
        raise AssertionError(f"task {task_id} never got there")

    def app() -> Any:
        made = tools_app()
        assert made.tasks is not None
        made.tasks.store = cluster.store(recheck_ms=200)
        return made

    async def scenario() -> None:
        here, there = app(), app()
        async with serving(here.server) as runner, serving(there.server) as front:
            job = await result(runner, 1, "tools/call", {"name": "multi_input", "arguments": {}})
            waiting = await until(front, 2, job["taskId"], lambda t: "inputRequests" in t)
            answers = {
                key: {"action": "accept", "content": {"name": key[-6:]}}
                for key in waiting["inputRequests"]
            }
            update = {"taskId": job["taskId"], "inputResponses": answers}
            await result(front, 3, "tasks/update", update)
            done = await until(front, 4, job["taskId"], lambda t: t["status"] == "completed")
            assert done["result"]["content"][0]["text"].count("&") == 1
            params = {"name": "slow_compute", "arguments": {"seconds": 60, "label": "c"}}
            slow = await result(runner, 5, "tools/call", params)
            await result(front, 6, "tasks/cancel", {"taskId": slow["taskId"]})
            await until(runner, 7, slow["taskId"], lambda t: t["status"] == "cancelled")
            await eventually(lambda: idle(here), within=2)  # its handler was stopped

    cluster.run(scenario)


async def idle(app: Any) -> bool:
    return not app.tasks.runs


class DroppingProxy:
    """A TCP proxy to Redis on 127.0.0.1 that, when told to, cuts the client's connection
    once, after the next script call reached it and before any reply (as a failover, a
    restart or a load balancer cutting connections does)."""

    def __init__(self, redis_port: int) -> None:
        self.redis_port = redis_port
        self.drop_next = False
        self.dropped = 0
        self.server: asyncio.Server | None = None

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return f"redis://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/0"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.redis_port)

        async def relay(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError):
                while data := await source.read(65536):
                    if sink is up_writer and self.drop_next and b"EVALSHA" in data.upper():
                        self.drop_next, self.dropped = False, self.dropped + 1
                        writer.transport.abort()  # the command is lost with the connection
                        break
                    sink.write(data)
                    await sink.drain()
            sink.close()

        await asyncio.gather(relay(reader, up_writer), relay(up_reader, writer))

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


def test_a_call_whose_connection_drops_midway_is_made_again_on_a_new_one(
    cluster: Cluster,
) -> None:
    """What the redis extra's floor (redis-py 6.0) is for: before it, the retry the store
    configures applies to connecting alone, and such a call fails."""
    port = int(cluster.url.rsplit(":", 1)[1].split("/")[0])
    proxy = DroppingProxy(port)

    async def scenario() -> None:
        url = await proxy.start()
        try:
            store = RedisTaskStore(url, prefix=cluster.prefix)
            cluster.stores.append(store)
            task = await store.create("tools/call", owner="o")
            proxy.drop_next = True
            assert (await store.get(task.task_id, "o")).status == "working"
            assert proxy.dropped == 1
            proxy.drop_next = True
            done = await store.update(task.task_id, "completed", result={"ok": 1})
            assert proxy.dropped == 2 and done.status == "completed"
            assert (await store.get(task.task_id, "o")).result == {"ok": 1}
            await store.close()
        finally:
            await proxy.stop()

    cluster.run(scenario)
