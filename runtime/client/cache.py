"""A client's cache of the results a 2026-07-28 server says it may keep.

The lists, ``resources/read`` and ``server/discover`` carry ``ttlMs`` (how long the result
stays fresh) and ``cacheScope`` (``public``: anyone may reuse it; ``private``: only the
same user). :class:`ResponseCache` answers a request again from a fresh result, without
asking the server, and forgets what a ``list_changed`` or ``resources/updated``
notification says changed. Results are kept as the bytes the server sent, so a store
outside the process (shared by several clients) works as well as the memory one; a
private result is kept under the identity of the client that read it and never given to
another (by default every cache has an identity of its own, so nothing private is shared).

What is not kept: ``input_required`` answers and the answers to their retries, results
whose ``ttlMs`` is absent, zero, negative or no integer, and anything a server of the
earlier revisions sends (it has no such hints). ``Limits.max_cache_ttl`` caps how long
anything stays, whatever the server says.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections import OrderedDict
from typing import Any, Protocol

import msgspec
from msgspec import UNSET

from ..core.json_values import as_object
from ..core.limits import CLIENT, Limits

log = logging.getLogger("mcpgen.runtime.client")

#: The requests whose results carry caching hints (``server/discover`` has them too; what
#: it says is kept by ``runtime.client.eras``).
CACHEABLE = frozenset(
    {"tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"}
)
#: What each notification makes stale.
STALE_AFTER: dict[str, tuple[str, ...]] = {
    "notifications/tools/list_changed": ("tools/list",),
    "notifications/prompts/list_changed": ("prompts/list",),
    "notifications/resources/list_changed": ("resources/list", "resources/templates/list"),
    "notifications/resources/updated": ("resources/read",),
}
#: Params that never change a result (the per-request ``_meta``) or make it uncacheable.
_IGNORED = frozenset({"_meta"})
_RETRY = ("inputResponses", "requestState")


class Entry(msgspec.Struct, frozen=True):
    """One kept result: the bytes the server sent, and until when (``time.time()``)."""

    raw: bytes
    expires: float


class CacheStore(Protocol):
    """Where results are kept, by key. A key is a string; every key of one server's
    method starts with the same prefix, which ``drop`` is given to forget them all."""

    async def get(self, key: str) -> Entry | None: ...
    async def put(self, key: str, entry: Entry) -> None: ...
    async def drop(self, prefix: str) -> None: ...


class MemoryStore:
    """Results in this process, at most ``max_entries`` (the least recently used goes)."""

    def __init__(self, max_entries: int = CLIENT.cache_entries) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be positive, got {max_entries}")
        self.max_entries = max_entries
        self._entries: OrderedDict[str, Entry] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    async def get(self, key: str) -> Entry | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry.expires <= time.time():
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return entry

    async def put(self, key: str, entry: Entry) -> None:
        self._entries[key] = entry
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    async def drop(self, prefix: str) -> None:
        for key in [k for k in self._entries if k.startswith(prefix)]:
            del self._entries[key]


class _Hints(msgspec.Struct):
    ttlMs: Any = None
    cacheScope: Any = None
    resultType: Any = None


_hints = msgspec.json.Decoder(_Hints)


def freshness(raw: bytes | msgspec.Raw, max_ttl: float) -> tuple[float, bool] | None:
    """How many seconds a result stays fresh and whether anyone may reuse it (public), or
    None when it is not to be kept."""
    try:
        hints = _hints.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    ttl = hints.ttlMs
    if hints.resultType not in (None, "complete") or isinstance(ttl, bool):
        return None
    if not isinstance(ttl, int) or ttl <= 0:
        return None
    return min(ttl / 1000, max_ttl), hints.cacheScope == "public"


def params_key(params: Any) -> str | None:
    """The params that make one result differ from another, as canonical JSON; None when
    the request is a retry with answers (never cached)."""
    if params is None or params is UNSET:
        return "{}"
    plain = as_object(msgspec.to_builtins(params))
    if plain is None:
        return None
    if any(field in plain for field in _RETRY):
        return None
    kept = {k: v for k, v in plain.items() if k not in _IGNORED and v is not None}
    return msgspec.json.encode(kept, order="sorted").decode()


def _prefix(server: str, method: str) -> str:
    return msgspec.json.encode([server, method]).decode()[:-1] + ","


class ResponseCache:
    """What one client reads from, and keeps in, ``store`` (default: a memory store of
    ``Limits.cache_entries``). ``identity`` names whose private results these are:
    clients given the same identity (the same user) share them; by default it is unique to
    this cache. Public results are shared by every cache on the store."""

    def __init__(
        self,
        store: CacheStore | None = None,
        *,
        identity: str | None = None,
        limits: Limits = CLIENT,
    ) -> None:
        self.store: CacheStore = store if store is not None else MemoryStore(limits.cache_entries)
        self.identity = identity if identity is not None else f"anonymous-{secrets.token_hex(8)}"
        self.max_ttl = limits.max_cache_ttl
        #: Requests answered from the cache, and those the server was asked.
        self.hits = self.misses = 0
        #: Bumped by each invalidation: a result asked before one is not kept after it.
        self._generation: dict[str, int] = {}
        #: Prefixes being forgotten (their store's ``drop`` not done yet), and by how many:
        #: nothing under them is given meanwhile, however long the store takes.
        self._dropping: dict[str, int] = {}
        #: Prefixes a store failed to forget: nothing under them is given until it does.
        self._unsure: set[str] = set()

    def _keys(self, server: str, method: str, params: str) -> tuple[str, str]:
        prefix = _prefix(server, method)
        public = f"{prefix}{msgspec.json.encode([params, '*']).decode()[1:]}"
        private = f"{prefix}{msgspec.json.encode([params, self.identity]).decode()[1:]}"
        return public, private

    async def lookup(self, server: str, method: str, params: Any) -> bytes | None:
        """A fresh result of this request, if one is kept."""
        key = params_key(params) if method in CACHEABLE else None
        if key is None:
            return None
        prefix = _prefix(server, method)
        if prefix in self._dropping or prefix in self._unsure:
            self.misses += 1
            return None
        for store_key in self._keys(server, method, key):
            try:
                entry = await self.store.get(store_key)
            except Exception as exc:  # a store out of reach: the server is asked
                log.warning("the response cache's store failed to read: %s", exc)
                entry = None
            if entry is not None and entry.expires > time.time():
                self.hits += 1
                return entry.raw
        self.misses += 1
        return None

    def generation(self, server: str, method: str) -> int:
        """Taken before a request is sent, given back to :meth:`keep` with its result."""
        return self._generation.get(_prefix(server, method), 0)

    async def keep(
        self, server: str, method: str, params: Any, raw: bytes | msgspec.Raw, generation: int
    ) -> bool:
        """Keep ``raw``, the result of this request, as long as its hints say; True if
        kept. Not when something made this method's results stale since it was asked."""
        key = params_key(params) if method in CACHEABLE else None
        if key is None or self.generation(server, method) != generation:
            return False
        fresh = freshness(raw, self.max_ttl)
        if fresh is None:
            return False
        seconds, public = fresh
        public_key, private_key = self._keys(server, method, key)
        entry = Entry(bytes(raw), time.time() + seconds)
        try:
            await self.store.put(public_key if public else private_key, entry)
        except Exception as exc:  # nothing kept; the caller has its result all the same
            log.warning("the response cache's store failed to keep a result: %s", exc)
            return False
        return True

    async def stale(self, server: str, notification: str) -> None:
        """Forget what ``notification`` says changed. A ``resources/updated`` makes every
        read of that server stale: the URI it names may be part of a resource read under
        another (the spec lets it name a sub-resource of the one subscribed)."""
        await self._forget(server, STALE_AFTER.get(notification, ()))

    async def forget(self, server: str, method: str | None = None) -> None:
        """Forget ``method``'s results from ``server`` (every cacheable method's: None)."""
        await self._forget(server, (method,) if method is not None else sorted(CACHEABLE))

    async def _forget(self, server: str, methods: tuple[str, ...] | list[str]) -> None:
        """Forget ``methods``' results: all of them stale at once, before the first await
        (a listen's reader told of the change may ask again before a slow store's ``drop``
        is done: it is not given what was kept), then dropped from the store."""
        prefixes = [_prefix(server, name) for name in methods]
        for prefix in prefixes:
            self._generation[prefix] = self._generation.get(prefix, 0) + 1
            self._dropping[prefix] = self._dropping.get(prefix, 0) + 1
        try:
            for prefix in prefixes:
                try:
                    await self.store.drop(prefix)
                except Exception as exc:  # what it still holds predates the change
                    log.warning("the response cache's store failed to forget: %s", exc)
                    self._unsure.add(prefix)
                else:
                    self._unsure.discard(prefix)
        finally:
            for prefix in prefixes:
                left = self._dropping.pop(prefix) - 1
                if left:
                    self._dropping[prefix] = left
