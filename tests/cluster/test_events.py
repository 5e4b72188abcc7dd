"""The events of shared legacy sessions, kept in a real redis-server: a POST's stream
replays exactly what came after the client's last event and then follows it live to its
answers; answers survive the log's trimming; a stream whose process died ends with one
error per unanswered request; a session keeps only its newest streams; the outbox is
followed by one GET stream at a time; an announcement reaches each session it concerns
once; a stream whose session ended ends too; however many streams are followed, the
other calls never wait for a connection; Redis away, writes are logged and dropped while
reads raise, and both work again once it is back; garbage in the store is an answer,
never a crash."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import msgspec
import pytest

from mcpgen.runtime.cluster.events import GONE, STOPPED
from mcpgen.runtime.cluster.sessions import RedisSessions
from mcpgen.runtime.core.jsonrpc import RequestId
from mcpgen.runtime.core.limits import Limits
from mcpgen.runtime.http.shared_sessions import SessionRecord, SessionStoreUnavailable
from support.redis_server import RedisServer

LIMITS = Limits(event_log_size=4, finished_streams=2, event_log_age=60)
PREFIX = "ev:"


@pytest.fixture(scope="module")
def redis() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


async def shared(redis: RedisServer, alive_s: float = 15.0) -> RedisSessions:
    sessions = RedisSessions(redis.url, prefix=PREFIX, alive_s=alive_s)
    sessions.events.block_s = 0.2
    return sessions


def event(n: int) -> bytes:
    return b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":%d}}' % n


def answer(request_id: int) -> bytes:
    return b'{"jsonrpc":"2.0","id":%d,"result":{}}' % request_id


async def collected(events: AsyncIterator[tuple[int, bytes]], timeout: float = 5.0) -> list[int]:
    got: list[int] = []

    async def take() -> None:
        async for number, _ in events:
            if number >= 0:  # (-1: nothing came for a while)
                got.append(number)

    await asyncio.wait_for(take(), timeout)
    return got


def test_a_resumed_stream_replays_what_was_missed_then_follows_it_to_its_answers(
    redis: RedisServer,
) -> None:
    async def scenario() -> tuple[list[int], list[bytes]]:
        sessions = await shared(redis)
        events = sessions.events
        await sessions.start(lambda *_: asyncio.sleep(0))
        try:
            await sessions.create("S1", SessionRecord(version="2025-11-25"), 60, 100)
            stream = f"{sessions.tag}s1"
            sent = [(1, event(1), False), (2, event(2), False)]
            await events.opened("S1", stream, [7, 8], sent, LIMITS)
            await events.record("S1", stream, 3, answer(7), True, LIMITS)
            requests = await events.requests_of("S1", stream)
            assert requests == [7, 8]
            got: list[tuple[int, bytes]] = []

            async def follow() -> None:
                async for item in events.follow("S1", stream, 1, [7, 8]):
                    if item[0] >= 0:
                        got.append(item)

            follower = asyncio.create_task(follow())
            await asyncio.sleep(0.3)  # the replay is written, the follower waits live
            await events.record("S1", stream, 4, event(4), False, LIMITS)
            await events.record("S1", stream, 5, answer(8), True, LIMITS)
            await asyncio.wait_for(follower, 5)
            return [n for n, _ in got], [data for _, data in got]
        finally:
            await sessions.close()

    numbers, data = asyncio.run(scenario())
    assert numbers == [2, 3, 4, 5]  # after event 1, each once, answers included
    assert data[1] == answer(7) and data[3] == answer(8)


def test_answers_outlive_the_logs_trimming(redis: RedisServer) -> None:
    async def scenario() -> list[int]:
        sessions = await shared(redis)
        try:
            stream = f"{sessions.tag}s2"
            await sessions.events.opened("S2", stream, [1, 2], [(1, answer(1), True)], LIMITS)
            for n in range(2, 2 + 3 * LIMITS.event_log_size):
                await sessions.events.record("S2", stream, n, event(n), False, LIMITS)
            last = 2 + 3 * LIMITS.event_log_size
            await sessions.events.record("S2", stream, last, answer(2), True, LIMITS)
            return await collected(sessions.events.follow("S2", stream, 0, [1, 2]))
        finally:
            await sessions.close()

    numbers = asyncio.run(scenario())
    last = 2 + 3 * LIMITS.event_log_size
    assert numbers[0] == 1 and numbers[-1] == last  # both answers, whatever was trimmed
    assert len(numbers) == 1 + LIMITS.event_log_size  # the first answer, the log's newest


def test_a_stream_whose_process_died_ends_with_an_error_for_each_unanswered_request(
    redis: RedisServer,
) -> None:
    async def scenario() -> list[tuple[int, bytes]]:
        dying = await shared(redis, alive_s=0.6)
        await dying.start(lambda *_: asyncio.sleep(0))
        await dying.create("S3", SessionRecord(version="2025-11-25"), 60, 100)
        stream = f"{dying.tag}s1"
        await dying.events.opened("S3", stream, [1, 2, 3], [(1, event(1), False)], LIMITS)
        await dying.events.record("S3", stream, 2, answer(2), True, LIMITS)
        # A kill: the heartbeat stops, nothing says goodbye.
        assert dying.events._heartbeat is not None  # pyright: ignore[reportPrivateUsage]
        dying.events._heartbeat.cancel()  # pyright: ignore[reportPrivateUsage]
        other = await shared(redis)
        try:
            got: list[tuple[int, bytes]] = []

            async def follow() -> None:
                async for item in other.events.follow("S3", stream, 0, [1, 2, 3]):
                    if item[0] >= 0:
                        got.append(item)

            await asyncio.wait_for(follow(), 10)
            return got
        finally:
            await other.close()
            await dying.close()

    got = asyncio.run(scenario())
    assert [n for n, _ in got] == [1, 2, 0, 0]
    errors = [msgspec.json.decode(data) for n, data in got if n == 0]
    assert [e["id"] for e in errors] == [1, 3]
    assert all(e["error"]["message"] == STOPPED for e in errors)


def test_a_session_keeps_only_its_newest_streams(redis: RedisServer) -> None:
    async def scenario() -> list[list[RequestId] | None]:
        sessions = await shared(redis)
        try:
            names = [f"{sessions.tag}s{n}" for n in range(1, 5)]
            for n, name in enumerate(names, start=1):
                await sessions.events.opened("S4", name, [n], [(1, answer(n), True)], LIMITS)
            return [await sessions.events.requests_of("S4", name) for name in names]
        finally:
            await sessions.close()

    kept = asyncio.run(scenario())
    assert kept == [None, None, [3], [4]]  # finished_streams=2


def test_the_outbox_is_followed_by_the_newest_get_stream_alone(redis: RedisServer) -> None:
    async def scenario() -> tuple[list[bytes], list[bytes], bool]:
        sessions = await shared(redis)
        events = sessions.events
        try:
            await events.post("S5", event(1), LIMITS)
            start = await events.head("S5")
            first: list[bytes] = []
            second: list[bytes] = []

            async def follow(into: list[bytes], after: str) -> None:
                async for batch in events.outbox("S5", after, LIMITS):
                    into.extend(data for _, data in batch)

            one = asyncio.create_task(follow(first, start))
            await asyncio.sleep(0.1)
            await events.post("S5", event(2), LIMITS)
            await asyncio.sleep(0.3)
            two = asyncio.create_task(follow(second, "0-0"))  # from the start of the outbox
            await asyncio.wait_for(one, 5)  # taken over: it ends
            await events.post("S5", event(3), LIMITS)
            await asyncio.sleep(0.3)
            two.cancel()
            return first, second, one.done()
        finally:
            await sessions.close()

    first, second, ended = asyncio.run(scenario())
    assert ended and first == [event(2)]
    assert second == [event(1), event(2), event(3)]


def test_an_announcement_reaches_each_session_it_concerns_once(redis: RedisServer) -> None:
    async def scenario() -> dict[str, int]:
        sessions = await shared(redis)
        try:
            for name, subscribed in (("A", ["mem://x"]), ("B", []), ("C", ["mem://y"])):
                record = SessionRecord(version="2025-11-25", subscriptions=subscribed)
                await sessions.create(name, record, 60, 100)
            await sessions.events.announce(b"changed", None, LIMITS)  # a list changed: all
            told = await sessions.events.announce(b"x updated", "mem://x", LIMITS)
            assert told == 1
            heard: dict[str, int] = {}
            for name in "ABC":
                count = 0
                async for batch in sessions.events.outbox(name, "0-0", LIMITS):
                    count += len(batch)
                    break
                heard[name] = count
            return heard
        finally:
            await sessions.close()

    assert asyncio.run(scenario()) == {"A": 2, "B": 1, "C": 1}


def test_garbage_in_the_store_is_an_answer_never_a_crash(redis: RedisServer) -> None:
    async def scenario() -> None:
        sessions = await shared(redis)
        client = sessions._client  # pyright: ignore[reportPrivateUsage]
        try:
            await client.hset(f"{PREFIX}stream:S6:bad", "q", b"{not json")
            assert await sessions.events.requests_of("S6", "bad") is None
            await client.set(f"{PREFIX}session:S7", b"\xff garbage")
            await client.zadd(f"{PREFIX}sessions", {"S7": 1e12})
            assert await sessions.events.announce(b"x", "mem://x", LIMITS) >= 0
            assert await sessions.events.head("nobody") == "0-0"
        finally:
            await sessions.close()

    asyncio.run(scenario())


def test_with_redis_away_writes_are_dropped_reads_raise_and_both_work_once_it_is_back(
    redis: RedisServer,
) -> None:
    async def scenario() -> None:
        sessions = await shared(redis)
        port = redis.port
        try:
            redis.stop(keep_dir=True)
            await sessions.events.post("S8", event(1), LIMITS)  # logged, not raised
            await sessions.events.record("S8", "p0000000000~s1", 1, event(1), False, LIMITS)
            assert await sessions.events.announce(b"x", None, LIMITS) == 0
            with pytest.raises(SessionStoreUnavailable):
                await sessions.events.requests_of("S8", "p0000000000~s1")
            assert sessions.outage.since is not None
            redis.start(port)
            await sessions.events.post("S8", event(2), LIMITS)
            assert await sessions.events.head("S8") != "0-0"
            assert sessions.outage.since is None
        finally:
            await sessions.close()

    asyncio.run(scenario())


def test_a_followed_stream_whose_session_ended_ends_with_an_error_for_what_is_left(
    redis: RedisServer,
) -> None:
    async def scenario() -> list[tuple[int, bytes]]:
        sessions = await shared(redis)
        await sessions.start(lambda *_: asyncio.sleep(0))
        try:
            await sessions.create("S9", SessionRecord(version="2025-11-25"), 60, 100)
            stream = f"{sessions.tag}s1"
            await sessions.events.opened("S9", stream, [4], [(1, event(1), False)], LIMITS)
            got: list[tuple[int, bytes]] = []

            async def follow() -> None:
                async for item in sessions.events.follow("S9", stream, 0, [4]):
                    if item[0] >= 0:
                        got.append(item)

            follower = asyncio.create_task(follow())
            await asyncio.sleep(0.3)
            await sessions.delete("S9")  # ended (a DELETE, the cap) while followed
            await asyncio.wait_for(follower, 5)
            return got
        finally:
            await sessions.close()

    got = asyncio.run(scenario())
    assert [n for n, _ in got] == [1, 0]
    error = msgspec.json.decode(got[1][1])
    assert error["id"] == 4 and error["error"]["message"] == GONE


def test_many_followed_streams_never_keep_the_other_calls_from_a_connection(
    redis: RedisServer,
) -> None:
    """150 GET streams' followers, each blocked on Redis: records are still read and
    written at once, and the store is not taken for down."""

    async def scenario() -> None:
        sessions = await shared(redis)
        try:
            await sessions.create("S10", SessionRecord(version="2025-11-25"), 60, 1000)

            async def follow(n: int) -> None:
                async for _ in sessions.events.outbox(f"F{n}", "0-0", LIMITS):
                    pass

            followers = [asyncio.create_task(follow(n)) for n in range(150)]
            await asyncio.sleep(0.5)  # each blocked in its read
            assert await asyncio.wait_for(sessions.touch("S10", 60), 2)
            await asyncio.wait_for(sessions.events.post("S10", event(1), LIMITS), 2)
            assert await sessions.events.head("S10") != "0-0"
            assert sessions.outage.since is None
            for task in followers:
                task.cancel()
            await asyncio.gather(*followers, return_exceptions=True)
        finally:
            await sessions.close()

    asyncio.run(scenario())
