"""What one downstream client may ask of a proxy: calls per second, and calls at once.

A gateway shares its upstreams among clients, so one client's flood is everyone's outage.
:class:`ClientQuota` bounds each client (as :func:`~runtime.gateway.pool.client_of` tells
them apart: a legacy client's session, a 2026-07-28 client's token principal or name) with
a token bucket (``per_second``, refilled continuously, holding at most ``burst``) and a cap
on its requests in flight (``in_flight``). A request beyond either is refused at once with
-32000 saying which bound and when to retry; nothing is queued. The bounds are kept for at
most ``clients`` clients (the least recently seen forgotten first).

The body size and the requests one connection may have in flight are the server's own
``Limits`` (``max_message_bytes``, ``max_in_flight``), as for any server.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from ..aio.middleware import Call, Next
from ..aio.session import RequestScope, Session
from ..core.errors import McpError
from .pool import client_of

#: A refusal the client may retry later (as the task store's "unavailable").
RETRY_LATER = -32000
#: Requests every client may send however often: the protocol's own.
FREE = frozenset({"ping", "initialize", "server/discover"})


@dataclass
class _Bucket:
    tokens: float
    at: float
    running: int = 0


@dataclass(frozen=True)
class ClientQuota:
    """Each client's bounds: ``per_second`` requests on average, ``burst`` at once from
    a rested client, ``in_flight`` unanswered at a time; tracked for ``clients`` clients.
    A setting: each proxy keeps its own count (:meth:`meter`)."""

    per_second: float = 50.0
    burst: int = 100
    in_flight: int = 32
    clients: int = 10_000

    def __post_init__(self) -> None:
        if min(self.per_second, self.burst, self.in_flight, self.clients) <= 0:
            raise ValueError("ClientQuota bounds must be positive")

    def meter(self) -> Meter:
        """A fresh count of these bounds: the middleware enforcing them."""
        return Meter(self)


class Meter:
    """The middleware enforcing a :class:`ClientQuota`, with each client's count."""

    def __init__(self, quota: ClientQuota) -> None:
        self.quota = quota
        self._buckets: OrderedDict[Any, _Bucket] = OrderedDict()

    def _bucket(self, client: Any, now: float) -> _Bucket:
        quota = self.quota
        bucket = self._buckets.get(client)
        if bucket is None:
            bucket = self._buckets[client] = _Bucket(float(quota.burst), now)
            while len(self._buckets) > quota.clients:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(client)
            bucket.tokens = min(quota.burst, bucket.tokens + (now - bucket.at) * quota.per_second)
            bucket.at = now
        return bucket

    async def __call__(self, call: Call, call_next: Next) -> Any:
        """Refuse a request over its client's bounds, else let it through (counted while
        it runs)."""
        if call.method in FREE or not isinstance(call.scope, RequestScope):
            return await call_next(call)
        quota = self.quota
        client = client_of(call.scope)
        key = ("session", id(client)) if isinstance(client, Session) else client  # not kept alive
        bucket = self._bucket(key, time.monotonic())
        if bucket.running >= quota.in_flight:
            raise McpError(
                RETRY_LATER,
                f"too many requests in flight from this client ({quota.in_flight},"
                " ClientQuota.in_flight): retry once one is answered",
            )
        if bucket.tokens < 1:
            wait = (1 - bucket.tokens) / quota.per_second
            raise McpError(
                RETRY_LATER,
                f"too many requests from this client ({quota.per_second:g} per second,"
                f" ClientQuota.per_second): retry in {wait:.2f} s",
                {"retryAfterSeconds": round(wait, 3)},
            )
        bucket.tokens -= 1
        bucket.running += 1
        try:
            return await call_next(call)
        finally:
            bucket.running -= 1


__all__ = ["ClientQuota", "Meter", "RETRY_LATER"]
