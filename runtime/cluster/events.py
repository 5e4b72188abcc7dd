"""The SSE events of legacy sessions kept in Redis
(:class:`~runtime.http.shared_sessions.SessionEvents`), so that any process of a server
resumes a stream another began, even one whose process died.

* A POST's SSE stream, named ``<tag>s<n>`` (the process serving it, then its number
  there), is recorded as it is sent: ``{prefix}events:{session}:{stream}`` is a Redis
  stream of its events under the ids ``0-<n>`` (its SSE ids are ``<stream>.<n>``), at
  most ``Limits.event_log_size`` of them; ``{prefix}stream:{session}:{stream}`` holds the
  requests it answers and its answers (kept whatever else left the log). A session keeps
  its last ``Limits.finished_streams`` recorded streams (``{prefix}streams:{session}``);
  each leaves ``Limits.event_log_age`` after its last event.
* What the server sends a session outside any request goes to ``{prefix}outbox:{session}``
  (at most ``event_log_size`` messages, leaving ``event_log_age`` after the last one),
  whichever process sends it; the session's GET stream follows it, on whichever process
  holds it. ``{prefix}reader:{session}`` names the GET stream following now: a new one
  takes over and the last ends. An announcement is put in the outbox of each session it
  concerns by the process that makes it, in one script (a session is never told twice).
* Each process renews ``{prefix}alive:{tag}`` while it runs. A stream followed elsewhere
  whose process is gone ends with an error for each request it had not answered, which
  nothing can answer any more (so nothing is answered twice).

Keys are named by the script rather than declared, so one Redis serves (not a Redis
Cluster). Bounded memory: at most ``max_sessions × (finished_streams + 1) ×
event_log_size`` events, each at most ``max_message_bytes``, and every key expires.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Sequence
from typing import Any

import msgspec
from redis import exceptions as redis_errors

from ..core import jsonrpc
from ..core.errors import INTERNAL_ERROR
from ..core.jsonrpc import RequestId
from ..core.limits import Limits
from ..http.shared_sessions import TAG, Posted, Recorded, SessionStoreUnavailable
from ..tasks.outage import Outage
from ..tasks.redis_errors import UNREACHABLE

log = logging.getLogger("mcpgen.runtime.cluster.events")

#: Seconds a follower waits on Redis for the next event before it looks around (is the
#: stream's process alive, is the session still there).
BLOCK_S = 2.0
#: Outbox messages handed over at once.
BATCH = 64
#: What a request whose process stopped before answering it is told.
STOPPED = "The server process serving this request stopped before answering it; send it again"
#: What it is told when its session ended, or its stream is no longer kept.
GONE = "This request's stream is no longer kept (its session ended, or Limits.event_log_age passed); send it again"

_FAILED = (*UNREACHABLE, redis_errors.RedisError, OSError)

#: Puts ARGV[2] in the outbox of every session (ARGV[3] non-empty: of every session whose
#: record lists that URI among its subscriptions). ARGV: prefix, data, uri, size, age.
_ANNOUNCE = """
local prefix, data, uri = ARGV[1], ARGV[2], ARGV[3]
local told = 0
for _, sid in ipairs(redis.call('ZRANGE', prefix .. 'sessions', 0, -1)) do
  local record = redis.call('GET', prefix .. 'session:' .. sid)
  local wanted = record ~= false
  if wanted and uri ~= '' then
    wanted = false
    local ok, decoded = pcall(cjson.decode, record)
    if ok and type(decoded) == 'table' and type(decoded.subscriptions) == 'table' then
      for _, held in ipairs(decoded.subscriptions) do
        if held == uri then wanted = true break end
      end
    end
  end
  if wanted then
    local key = prefix .. 'outbox:' .. sid
    redis.call('XADD', key, 'MAXLEN', ARGV[4], '*', 'd', data)
    redis.call('EXPIRE', key, ARGV[5])
    told = told + 1
  end
end
return told
"""


class _Id(msgspec.Struct):
    id: RequestId | None = None


_answer_id = msgspec.json.Decoder(_Id).decode
_ids = msgspec.json.Decoder(list[RequestId]).decode


class RedisEvents:
    """The events of the legacy sessions kept by ``client`` under ``prefix``; ``tag`` is
    this process's, ``outage`` the sessions' store's (one log line per outage)."""

    def __init__(
        self,
        client: Any,
        prefix: str,
        tag: str,
        outage: Outage,
        *,
        alive_s: float = 15.0,
        block_s: float = BLOCK_S,
        blocking: Any = None,
    ) -> None:
        self._client = client
        #: What the followers block on (``XREAD BLOCK``), each holding a connection while
        #: it waits: a client of its own, so that however many streams are followed, the
        #: other calls never wait for a connection (default: ``client``).
        self._blocking = blocking if blocking is not None else client
        self.prefix = prefix
        self.tag = tag
        self.outage = outage
        self.alive_s = alive_s
        self.block_s = block_s
        self._announce: Any = client.register_script(_ANNOUNCE)
        self._heartbeat: asyncio.Task[None] | None = None

    # -- keys -----------------------------------------------------------------------------

    def _log(self, session_id: str, stream: str) -> str:
        return f"{self.prefix}events:{session_id}:{stream}"

    def _meta(self, session_id: str, stream: str) -> str:
        return f"{self.prefix}stream:{session_id}:{stream}"

    def _outbox(self, session_id: str) -> str:
        return f"{self.prefix}outbox:{session_id}"

    def _alive(self, tag: str) -> str:
        return f"{self.prefix}alive:{tag}"

    async def _read(self, work: Any) -> Any:
        """A read: an outage raises (a command Redis refused, too, but it is no outage)."""
        try:
            result = await work
        except redis_errors.ResponseError as error:
            log.warning("the sessions' store refused a read: %s", error)
            raise SessionStoreUnavailable(f"the sessions' store refused: {error}") from None
        except _FAILED as error:
            self.outage.lost(error)
            raise SessionStoreUnavailable(f"the sessions' store is unavailable: {error}") from None
        self.outage.reached()
        return result

    async def _write(self, work: Any) -> bool:
        """A write: an outage is logged (once), never raised."""
        try:
            await work
        except redis_errors.ResponseError as error:
            log.warning("the sessions' store refused a write: %s", error)
            return False
        except _FAILED as error:
            self.outage.lost(error)
            return False
        self.outage.reached()
        return True

    # -- this process, alive ----------------------------------------------------------------

    def start(self) -> None:
        """Begin saying that this process runs (until :meth:`close`)."""
        if self._heartbeat is None:
            self._heartbeat = asyncio.get_running_loop().create_task(self._beat())

    async def _beat(self) -> None:
        key, ttl = self._alive(self.tag), max(1, int(self.alive_s + 0.999))
        while True:
            await self._write(self._client.set(key, b"1", ex=ttl))
            await asyncio.sleep(self.alive_s / 3)

    async def close(self) -> None:
        """Stop the heartbeat; this process's streams are no longer followed elsewhere."""
        beat, self._heartbeat = self._heartbeat, None
        if beat is not None:
            beat.cancel()
            await asyncio.gather(beat, return_exceptions=True)
            await self._write(self._client.delete(self._alive(self.tag)))

    # -- a POST's stream ------------------------------------------------------------------

    async def opened(
        self,
        session_id: str,
        stream: str,
        requests: Sequence[RequestId],
        sent: Sequence[tuple[int, bytes, bool]],
        limits: Limits,
    ) -> None:
        index = f"{self.prefix}streams:{session_id}"
        age = _seconds(limits.event_log_age)
        meta = self._meta(session_id, stream)
        pipe = self._client.pipeline(transaction=False)
        pipe.hset(meta, "q", msgspec.json.encode(list(requests)))
        pipe.expire(meta, age)
        pipe.zadd(index, {stream: time.time()})
        pipe.expire(index, age)
        for number, data, final in sent:
            self._add(pipe, session_id, stream, number, data, final, limits)
        if not await self._write(pipe.execute()):
            return
        old = await self._oldest(index, limits)
        if old:
            pipe = self._client.pipeline(transaction=False)
            for name in old:
                pipe.delete(self._log(session_id, name), self._meta(session_id, name))
            pipe.zrem(index, *old)
            await self._write(pipe.execute())

    async def _oldest(self, index: str, limits: Limits) -> list[str]:
        """The recorded streams of a session beyond the newest ``finished_streams``."""
        try:
            names = await self._client.zrange(index, 0, -limits.finished_streams - 1)
        except _FAILED as error:
            self.outage.lost(error)
            return []
        return [_text(name) for name in names]

    def _add(
        self,
        pipe: Any,
        session_id: str,
        stream: str,
        number: int,
        data: bytes,
        final: bool,
        limits: Limits,
    ) -> None:
        age = _seconds(limits.event_log_age)
        key = self._log(session_id, stream)
        fields = {"d": data, "f": b"1" if final else b"0"}
        pipe.xadd(key, fields, id=f"0-{number}", maxlen=limits.event_log_size, approximate=False)
        pipe.expire(key, age)
        if final:
            meta = self._meta(session_id, stream)
            pipe.hset(meta, f"a{number}", data)
            pipe.expire(meta, age)

    async def record(
        self, session_id: str, stream: str, number: int, data: bytes, final: bool, limits: Limits
    ) -> None:
        pipe = self._client.pipeline(transaction=False)
        self._add(pipe, session_id, stream, number, data, final, limits)
        await self._write(pipe.execute())

    async def requests_of(self, session_id: str, stream: str) -> list[RequestId] | None:
        data = await self._read(self._client.hget(self._meta(session_id, stream), "q"))
        if data is None:
            return None
        try:
            return _ids(data)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None

    async def follow(
        self, session_id: str, stream: str, after: int, requests: Sequence[RequestId]
    ) -> AsyncGenerator[Recorded, None]:
        pending = _Pending(requests)
        key, meta = self._log(session_id, stream), self._meta(session_id, stream)
        pipe = self._client.pipeline(transaction=True)  # one view of both
        pipe.xrange(key, min=f"0-{after + 1}")
        pipe.hgetall(meta)
        entries, answers = await self._read(pipe.execute())
        replay: dict[int, tuple[bytes, bool]] = {}
        for entry_id, fields in entries:
            replay[_number(entry_id)] = (fields[b"d"], fields.get(b"f") == b"1")
        for field, data in answers.items():
            name = _text(field)
            if name.startswith("a") and name[1:].isdigit() and int(name[1:]) > after:
                replay[int(name[1:])] = (data, True)
        last = after
        for number in sorted(replay):
            data, final = replay[number]
            pending.heard(data, final)
            last = max(last, number)
            yield number, data
        owner = TAG.match(stream)
        while pending.left:
            block = int(self.block_s * 1000)
            found = await self._read(
                self._blocking.xread({key: f"0-{last}"}, count=BATCH, block=block)
            )
            got = [entry for _, batch in found for entry in batch]
            for entry_id, fields in got:
                last = _number(entry_id)
                pending.heard(fields[b"d"], final=fields.get(b"f") == b"1")
                yield last, fields[b"d"]
            if got:
                continue
            yield -1, b""  # nothing yet: the reader may look around
            pipe = self._client.pipeline(transaction=False)
            pipe.exists(self._alive(owner.group(0)) if owner is not None else meta)
            pipe.exists(f"{self.prefix}session:{session_id}")
            pipe.exists(meta)
            alive, session, kept = await self._read(pipe.execute())
            if not (alive and session and kept):
                # Its process died, the session ended, or the stream is no longer kept:
                # nothing will answer what is left; say so, once.
                why = STOPPED if not alive else GONE
                for request_id in pending.unanswered():
                    yield 0, jsonrpc.encode_error(request_id, INTERNAL_ERROR, why)
                return

    # -- the outbox ---------------------------------------------------------------------------

    async def post(self, session_id: str, data: bytes, limits: Limits) -> None:
        key = self._outbox(session_id)
        pipe = self._client.pipeline(transaction=False)
        pipe.xadd(key, {"d": data}, maxlen=limits.event_log_size, approximate=False)
        pipe.expire(key, _seconds(limits.event_log_age))
        await self._write(pipe.execute())

    async def announce(self, data: bytes, uri: str | None, limits: Limits) -> int:
        args = [self.prefix, data, uri or "", limits.event_log_size, _seconds(limits.event_log_age)]
        try:
            told = await self._announce(keys=[], args=args)
        except _FAILED as error:
            self.outage.lost(error)
            log.warning("an announcement reached no legacy session: %s", error)
            return 0
        self.outage.reached()
        return int(told)

    async def head(self, session_id: str) -> str:
        last = await self._read(self._client.xrevrange(self._outbox(session_id), count=1))
        return _text(last[0][0]) if last else "0-0"

    async def outbox(
        self, session_id: str, after: str, limits: Limits
    ) -> AsyncGenerator[list[Posted], None]:
        reader = f"{self.prefix}reader:{session_id}"
        token = f"{self.tag}{time.monotonic_ns()}"
        age = _seconds(limits.event_log_age)
        await self._read(self._client.set(reader, token, ex=age))
        key, block = self._outbox(session_id), int(self.block_s * 1000)
        while True:
            pipe = self._blocking.pipeline(transaction=False)
            pipe.xread({key: after}, count=BATCH, block=block)
            pipe.getex(reader, ex=age)  # (renewed while it follows)
            found, now = await self._read(pipe.execute())
            if now is None or _text(now) != token:
                return  # another GET stream of the session follows it now
            batch: list[Posted] = []
            for _, entries in found or ():
                for entry_id, fields in entries:
                    after = _text(entry_id)
                    batch.append((after, fields[b"d"]))
            yield batch


class _Pending:
    """The requests of a followed stream not answered yet."""

    def __init__(self, requests: Sequence[RequestId]) -> None:
        self.requests = list(requests)
        self.answered: set[RequestId] = set()
        self.whole = False

    def heard(self, data: bytes, final: bool) -> None:
        if not final:
            return
        if data[:1] == b"[":
            self.whole = True
            return
        try:
            request_id = _answer_id(data).id
        except (msgspec.DecodeError, msgspec.ValidationError):
            request_id = None
        if request_id is None:
            self.whole = True  # a refusal of the body as a whole
        else:
            self.answered.add(request_id)

    def unanswered(self) -> list[RequestId]:
        return [] if self.whole else [r for r in self.requests if r not in self.answered]

    @property
    def left(self) -> bool:
        return bool(self.unanswered())


def _number(entry_id: Any) -> int:
    """``0-17`` -> 17."""
    return int(_text(entry_id).rpartition("-")[2])


def _seconds(age: float) -> int:
    return max(1, int(age + 0.999))


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


__all__ = ["BLOCK_S", "GONE", "RedisEvents", "STOPPED"]
