"""Verified tokens, remembered: a bounded LRU from a token's SHA-256 to the principal it
was verified as, each entry until the token expires (or a shorter bound the verifier
sets). A request with a token seen before costs a hash and a dict lookup, not a
signature check or an introspection call. The tokens themselves are not kept: a memory
dump of the cache holds digests, not credentials."""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable

from .principal import Principal

#: Verified tokens remembered at most, by default.
CACHE_SIZE = 10_000


class TokenCache:
    """At most ``size`` verified tokens; ``clock`` gives seconds since the epoch."""

    __slots__ = ("size", "clock", "entries")

    def __init__(self, size: int = CACHE_SIZE, clock: Callable[[], float] | None = None) -> None:
        if size < 0:
            raise ValueError("the token cache size must not be negative")
        self.size = size
        self.clock = clock or time.time
        #: digest -> (principal, remembered until)
        self.entries: OrderedDict[bytes, tuple[Principal, float]] = OrderedDict()

    @staticmethod
    def digest(token: bytes) -> bytes:
        return hashlib.sha256(token).digest()

    def get(self, digest: bytes) -> Principal | None:
        """The principal ``digest``'s token was verified as, while it is still valid."""
        entry = self.entries.get(digest)
        if entry is None:
            return None
        if entry[1] <= self.clock():
            del self.entries[digest]
            return None
        self.entries.move_to_end(digest)
        return entry[0]

    def put(self, digest: bytes, principal: Principal, cache_for: float | None) -> None:
        """Remember ``principal`` until it expires, and at most ``cache_for`` seconds
        (None: until it expires; a principal with no expiry and no bound is not kept)."""
        if self.size == 0:
            return
        now = self.clock()
        until = principal.expires_at
        if cache_for is not None:
            until = now + cache_for if until is None else min(until, now + cache_for)
        if until is None or until <= now:
            return
        entries = self.entries
        entries[digest] = (principal, until)
        entries.move_to_end(digest)
        while len(entries) > self.size:
            entries.popitem(last=False)

    def clear(self) -> None:
        self.entries.clear()


__all__ = ["CACHE_SIZE", "TokenCache"]
