"""A task store in Redis shared by several server processes (``pip install 'mcpgen[redis]'``;
the runtime core never imports this module), with the memory store's semantics:

* A task is a hash ``{prefix}task:{id}``: the msgspec JSON :class:`TaskRecord` (``data``),
  its revision (``rev``), its creator's id (``worker``). A change follows the memory
  store's rules and is written by compare-and-set on ``rev``, made again from a fresh read
  when another process changed the task meanwhile: a terminal task never changes, of
  concurrent changes exactly one wins, ``respond`` checks the very requests it answers.
* Records expire by key expiry at creation plus their TTL (Redis's clock; always finite).
  Indexes (``{prefix}expiry``: live tasks by expiry, what ``max_tasks`` counts;
  ``{prefix}owner:{owner}``: by creation number) drop expired tasks on each create and
  expire with their last task, as does the counter ``{prefix}seq`` (restarted from Redis's
  clock in µs: cursors keep rising). All tasks expired and all stores closed, no key is left.
* Changes are published on ``{prefix}changed``: watchers in any process wake at once, and
  re-read every ``recheck_ms`` anyway (a lost message, or Redis away, never ends a watch).
* A task runs in the process that created it, whose store holds a lease (``{prefix}worker:
  {id}``) renewed by a heartbeat until :meth:`close`. Whoever reads an unfinished task whose
  creator's lease lapsed (the process died) marks it ``failed``: none silently vanishes.

One Redis server (scripts touch keys they are not passed: a cluster needs a hash-tagged
prefix). Every wait on it is bounded (``socket_timeout``, ``connect_timeout``): unreachable,
down or frozen, any method but ``watch`` raises :class:`~.task_store.TaskStoreUnavailable`
within about that long (requesters get -32000, retry later), watchers keep watching, and
the log gets one line as the outage begins and one as it ends. One event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from copy import copy
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import msgspec

try:
    from redis.asyncio import BlockingConnectionPool, Redis
    from redis.asyncio.retry import Retry
    from redis.backoff import ExponentialBackoff
    from redis.asyncio.client import PubSub
    from redis import exceptions as redis_errors
except ImportError as missing:  # pragma: no cover - exercised without the extra installed
    raise ImportError("RedisTaskStore needs redis-py: pip install 'mcpgen[redis]'") from missing

from ..core.errors import INTERNAL_ERROR
from .outage import Outage
from .redis_errors import UNREACHABLE, cannot_serve, refused
from .redis_scripts import CHANGE, CREATE, NEXT_SEQ, READ
from .store import DEFAULT_TTL_MS, MAX_TASKS, MAX_TASKS_PER_OWNER, MAX_TTL_MS
from .store import POLL_INTERVAL_MS, TaskError, TaskRecord, TaskStatus, TaskStoreUnavailable
from .store import answered, cursor_of, full, moved, until_terminal

log = logging.getLogger("mcpgen.runtime.tasks.redis_store")

#: How many times a change is tried again when another process changed the task meanwhile.
MAX_ATTEMPTS = 50
#: The longest a reply from Redis, and a connection to it, is waited for, by default
#: (seconds): far beyond what a healthy Redis takes for these scripts (milliseconds),
#: short enough that a requester hears "unavailable" before its own timeout.
SOCKET_TIMEOUT = CONNECT_TIMEOUT = 5.0
T = TypeVar("T")


class Missing(TaskError):
    """No such live task, or its record is damaged."""


@dataclass
class Stored:
    """A record as read, with what a compare-and-set needs."""

    record: TaskRecord
    rev: bytes | str
    worker: str
    alive: bool


def orphaned(record: TaskRecord) -> TaskRecord:
    """``record`` failed because the process running it stopped."""
    said = f"The server process running task {record.task_id} stopped before it finished"
    failed = copy(record)
    failed.status, failed.status_message = "failed", said
    failed.result, failed.error = None, {"code": INTERNAL_ERROR, "message": said}
    failed.input_requests = failed.input_responses = None
    return failed


def text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class RedisTaskStore:
    """Tasks in Redis, for every server process that uses the same Redis and ``prefix``.

    ``url``: a Redis URL, or a ``redis.asyncio.Redis`` client (:meth:`close` leaves it
    open; its timeouts are its own). Every limit is a setting with a safe default:

    * ``max_tasks`` (10,000): live tasks under the prefix, all processes together; creating
      one more first drops the expired, then refuses (TaskLimitReached).
    * ``max_tasks_per_owner`` (1,000): of them, one owner's (likewise).
    * ``default_ttl_ms`` (1 hour): the retention of a task that asks for none.
    * ``max_ttl_ms`` (1 hour): the longest retention granted; never None, since records
      outlive the processes.
    * ``poll_interval_ms`` (1 s): the poll interval suggested to requesters.
    * ``lease_ms`` (30 s): how long after its process stopped renewing its lease (every
      ``lease_ms / 3``) an unfinished task is marked failed; keep it well above the longest
      the event loop may be blocked.
    * ``recheck_ms`` (1 s): the longest a watcher waits before re-reading its task.
    * ``max_connections`` (50): connections to Redis of a store made from a URL (pub/sub
      aside); callers beyond them wait up to ``socket_timeout`` for one.
    * ``socket_timeout`` (5 s): the longest a reply is waited for; then the connection is
      dropped and the call fails (not tried again: Redis is frozen or swamped).
    * ``connect_timeout`` (5 s): the longest a new connection may take. A refused or
      dropped connection is tried again thrice within about half a second.
    """

    def __init__(
        self,
        url: str | Redis = "redis://127.0.0.1:6379/0",
        *,
        prefix: str = "mcpgen:tasks:",
        max_tasks: int = MAX_TASKS,
        default_ttl_ms: int | None = DEFAULT_TTL_MS,
        max_ttl_ms: int = MAX_TTL_MS,
        poll_interval_ms: int = POLL_INTERVAL_MS,
        lease_ms: int = 30_000,
        recheck_ms: int = 1_000,
        max_connections: int = 50,
        max_tasks_per_owner: int = MAX_TASKS_PER_OWNER,
        socket_timeout: float = SOCKET_TIMEOUT,
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> None:
        if min(max_tasks, max_tasks_per_owner, max_ttl_ms, recheck_ms) < 1 or lease_ms < 3:
            raise ValueError("max_tasks (per owner too), max_ttl_ms, recheck_ms, lease_ms: too low")
        if not min(socket_timeout, connect_timeout) > 0:
            raise ValueError("socket_timeout and connect_timeout must be positive")
        self.max_tasks, self.max_ttl_ms, self.lease_ms = max_tasks, max_ttl_ms, lease_ms
        self.max_tasks_per_owner = max_tasks_per_owner
        self.default_ttl_ms, self.poll_interval_ms = default_ttl_ms, poll_interval_ms
        self.recheck_ms, self.prefix = recheck_ms, prefix
        self._owns_client = isinstance(url, str)
        self.outage = Outage("task store (Redis)")
        if isinstance(url, str):  # callers past the pool's size wait their turn; a command
            retry = Retry(ExponentialBackoff(cap=1, base=0.05), 3, (redis_errors.ConnectionError,))
            pool = cast(Any, BlockingConnectionPool).from_url(  # on a dropped connection is
                url,  # tried again, not one that timed out (that would multiply the wait)
                max_connections=max_connections,
                timeout=socket_timeout,
                retry=retry,
                socket_timeout=socket_timeout,
                socket_connect_timeout=connect_timeout,
            )
            url = Redis.from_pool(pool)
        self._client: Redis = url
        self._next_seq = self._client.register_script(NEXT_SEQ)
        self._create = self._client.register_script(CREATE)
        self._read_script = self._client.register_script(READ)
        self._change = self._client.register_script(CHANGE)
        self.worker_id = secrets.token_urlsafe(12)
        self._tasks, self._leases = f"{prefix}task:", f"{prefix}worker:"
        self._lease = self._leases + self.worker_id
        self._channel = f"{prefix}changed"
        self._closed = False
        self._heartbeat: asyncio.Task[None] | None = None
        self._listener: asyncio.Task[None] | None = None
        #: Set (and dropped) when the task changes; how many watch it.
        self._changed: dict[str, asyncio.Event] = {}
        self._watchers: dict[str, int] = {}
        self._encoder = msgspec.json.Encoder()
        self._decoder = msgspec.json.Decoder(TaskRecord)

    def _ttl(self, asked: int | None) -> int:
        """The retention granted for a request of ``asked`` ms (bounded by the store)."""
        ttl = self.default_ttl_ms if asked is None else max(0, asked)
        return self.max_ttl_ms if ttl is None else min(ttl, self.max_ttl_ms)

    async def _redis(self, call: Awaitable[T]) -> T:
        """``call``'s reply (TaskStoreUnavailable when Redis cannot be reached: an outage,
        logged once however many calls meet it)."""
        try:
            reply = await call
        except redis_errors.RedisError as error:
            if not cannot_serve(error):
                raise
            self.outage.lost(error, refused(error))
            raise TaskStoreUnavailable(f"the task store is unreachable ({error})") from error
        if self.outage.since is not None:
            self.outage.reached()
        return reply

    async def create(self, method: str, owner: str = "", ttl_ms: int | None = None) -> TaskRecord:
        self._check_open()
        ttl = self._ttl(ttl_ms)
        seq = int(await self._redis(self._next_seq(keys=[f"{self.prefix}seq"], args=[ttl])))
        record = TaskRecord(task_id=secrets.token_urlsafe(16), method=method, owner=owner, seq=seq)
        record.created_at = record.updated_at = time.time()
        record.ttl_ms, record.poll_interval_ms = ttl, self.poll_interval_ms
        index, task_key = f"{self.prefix}owner:{owner}", self._tasks + record.task_id
        keys = [f"{self.prefix}expiry", index, task_key, self._lease]
        data = self._encoder.encode(record)
        args = [self.max_tasks, ttl, self.lease_ms, self.worker_id, data, seq, record.task_id]
        per_owner = self.max_tasks_per_owner if owner else self.max_tasks  # "": nobody's
        made = int(await self._redis(self._create(keys=keys, args=args + [per_owner])))
        if made < 1:
            raise (
                full(self.max_tasks_per_owner, True) if made < 0 and owner else full(self.max_tasks)
            )
        if self._heartbeat is None:
            self._heartbeat = asyncio.create_task(self._beat())
        return record

    async def _beat(self) -> None:
        """Renew this store's lease until it closes (a failed renewal is tried again)."""
        while True:
            await asyncio.sleep(self.lease_ms / 3000)
            with contextlib.suppress(redis_errors.RedisError, TaskStoreUnavailable, OSError):
                await self._redis(self._client.set(self._lease, b"1", px=self.lease_ms))

    def _check_open(self) -> None:
        if self._closed:
            raise TaskError("the task store is closed")

    def _stored(self, task_id: str, reply: Any) -> Stored | None:
        """The record in a READ reply (None when there is none or it expired)."""
        if not reply:
            return None
        try:
            data, rev, worker, alive = reply
            record = self._decoder.decode(data)
        except (msgspec.DecodeError, TypeError, ValueError):
            raise Missing(f"task {task_id!r} has a damaged record") from None
        if record.task_id != task_id or not rev:
            raise Missing(f"task {task_id!r} has a damaged record")
        if record.expired(time.time()):
            return None
        return Stored(record, rev, text(worker), bool(alive))

    async def _read(self, task_id: str, owner: str | None) -> Stored:
        """The live task as stored (``owner`` None: whoever's it is), marked failed first
        when the process running it stopped."""
        self._check_open()
        for _ in range(MAX_ATTEMPTS):
            try:
                reply = await self._redis(
                    self._read_script(keys=[self._tasks + task_id], args=[self._leases])
                )
            except redis_errors.RedisError as error:
                if "WRONGTYPE" not in str(error):
                    raise
                raise Missing(f"task {task_id!r} has a damaged record") from None
            stored = self._stored(task_id, reply)
            if stored is None or (owner is not None and stored.record.owner != owner):
                raise Missing(f"no task {task_id!r}")
            if stored.alive or stored.record.terminal:
                return stored
            failed = orphaned(stored.record)
            written = await self._write(stored, failed, self._leases + stored.worker)
            if written < 0:  # its creator's lease came back meanwhile
                return stored
            if written:  # else it changed meanwhile: read it again
                return Stored(failed, str(failed.revision).encode(), stored.worker, False)
        raise TaskError(f"task {task_id!r} keeps changing; retry later")

    async def _write(self, stored: Stored, record: TaskRecord, lease: str | None = None) -> int:
        """Write ``record`` over ``stored`` unless it changed since it was read (see CHANGE)."""
        record.revision = stored.record.revision + 1
        record.updated_at = time.time()
        keys = [self._tasks + record.task_id] + ([lease] if lease else [])
        data = self._encoder.encode(record)
        args = [stored.rev, record.revision, data, self._channel, record.task_id]
        return int(await self._redis(self._change(keys=keys, args=args)))

    async def _apply(
        self, task_id: str, owner: str | None, change: Callable[[TaskRecord], TaskRecord]
    ) -> TaskRecord:
        """Apply ``change`` (record → changed copy, or TaskError) atomically."""
        for _ in range(MAX_ATTEMPTS):
            stored = await self._read(task_id, owner)
            record = change(copy(stored.record))
            if await self._write(stored, record) > 0:
                return record
        raise TaskError(f"task {task_id!r} keeps changing; retry later")

    async def get(self, task_id: str, owner: str = "") -> TaskRecord:
        return (await self._read(task_id, owner)).record

    async def update(
        self,
        task_id: str,
        status: TaskStatus,
        *,
        message: str | None = None,
        result: Any = None,
        error: dict[str, Any] | None = None,
        input_requests: dict[str, Any] | None = None,
        revision: int | None = None,
    ) -> TaskRecord:
        def change(record: TaskRecord) -> TaskRecord:
            moved(record, status, message, result, error, input_requests, revision)
            return record

        return await self._apply(task_id, None, change)

    async def respond(
        self, task_id: str, responses: Mapping[str, Any], owner: str = ""
    ) -> TaskRecord:
        def answer(record: TaskRecord) -> TaskRecord:
            record.input_requests, record.input_responses = answered(record, responses)
            return record

        return await self._apply(task_id, owner, answer)

    async def list(
        self, owner: str = "", after: str | None = None, limit: int = 100
    ) -> tuple[list[TaskRecord], str | None]:
        """``after`` is a cursor this method gave: the page goes on after it even when the
        task it was made from has gone since. Damaged records are left out (and dropped)."""
        limit = max(1, limit)
        start = cursor_of(after)
        self._check_open()
        index = f"{self.prefix}owner:{owner}"
        low = min(max(start, 0), 2**53)  # sequence numbers are exact as Redis scores
        page: list[TaskRecord] = []
        while len(page) <= limit:
            want = limit + 1 - len(page)
            rows: list[tuple[bytes | str, float]] = await self._redis(
                cast(Any, self._client).zrangebyscore(
                    index, f"({low}", "+inf", start=0, num=want, withscores=True
                )
            )
            if not rows:
                break
            ids = [text(member) for member, _ in rows]
            found = await asyncio.gather(*(self._listed(i, owner) for i in ids))
            page += [record for record in found if record is not None]
            if gone := [i for i, record in zip(ids, found) if record is None]:
                await self._redis(self._client.zrem(index, *gone))
            low = int(rows[-1][1])
            if len(rows) < want:
                break
        more = len(page) > limit
        return page[:limit], str(page[limit - 1].seq) if more else None

    async def _listed(self, task_id: str, owner: str) -> TaskRecord | None:
        try:
            return (await self._read(task_id, owner)).record
        except Missing:
            return None  # gone, or damaged

    async def watch(self, task_id: str, revision: int, timeout: float | None = None) -> TaskRecord:
        return await asyncio.wait_for(self._watch(task_id, revision), timeout)

    async def _watch(self, task_id: str, revision: int) -> TaskRecord:
        self._check_open()
        if self._listener is None:
            self._listener = asyncio.create_task(self._listen())
        recheck = self.recheck_ms / 1000
        self._watchers[task_id] = self._watchers.get(task_id, 0) + 1
        try:
            while True:
                changed = self._changed.setdefault(task_id, asyncio.Event())
                try:
                    record = (await self._read(task_id, None)).record
                except TaskStoreUnavailable:  # Redis away (an outage, logged): try again later
                    record = None
                if record is not None and record.revision > revision:
                    return record
                pause = recheck
                if record is not None and record.ttl_ms is not None:  # wake when it expires
                    left = record.created_at + record.ttl_ms / 1000 - time.time()
                    pause = min(pause, max(left, 0) + 0.001)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(changed.wait(), pause)
        finally:
            left_watching = self._watchers.pop(task_id) - 1
            if left_watching:
                self._watchers[task_id] = left_watching
            else:
                self._changed.pop(task_id, None)

    async def _listen(self) -> None:
        """Wake the watchers of every task a change is published for, in any process; on a
        lost connection, subscribe again (the watchers re-read meanwhile)."""
        while True:
            pubsub: PubSub = cast(Any, self._client).pubsub()
            try:
                await self._redis(pubsub.subscribe(self._channel))
                while True:
                    message = cast(Any, await pubsub.get_message(timeout=self.recheck_ms / 1000))
                    if not message:
                        continue
                    if message["type"] == "subscribe":  # (again): re-read what was missed
                        self.outage.reached()
                        self._wake(list(self._changed))
                    elif message["type"] == "message":
                        self._wake([text(message["data"])])
            except TaskStoreUnavailable:  # Redis away (an outage, logged): start over
                pass
            except UNREACHABLE as error:  # lost while listening
                self.outage.lost(error)
            except Exception as error:  # anything else: start over
                log.warning("task store: listening for changes failed (%r); retrying", error)
            finally:
                with contextlib.suppress(redis_errors.RedisError, OSError):
                    await pubsub.aclose()
            await asyncio.sleep(self.recheck_ms / 1000)

    def _wake(self, task_ids: Sequence[str]) -> None:
        for task_id in task_ids:
            changed = self._changed.pop(task_id, None)
            if changed is not None:
                changed.set()

    async def wait(self, task_id: str, owner: str = "", timeout: float | None = None) -> TaskRecord:
        record = await self.get(task_id, owner)
        return await asyncio.wait_for(until_terminal(self, record), timeout)

    async def close(self) -> None:
        """Stop the heartbeat and let the lease go (tasks this store's process was running
        read as failed from now on), stop listening, and close the client if the store
        made it. Watchers learn the store is closed (TaskError)."""
        if self._closed:
            return
        self._closed = True
        for running in (self._heartbeat, self._listener):
            if running is not None:
                running.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await running
        if self._heartbeat is not None:
            with contextlib.suppress(redis_errors.RedisError, OSError):
                await self._client.delete(self._lease)
        self._wake(list(self._changed))
        if self._owns_client:
            await self._client.aclose()
