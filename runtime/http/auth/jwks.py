"""The authorization server's signing keys (its JWKS), fetched and kept: refreshed once
they are ``ttl`` seconds old, fetched again early when a token names a key id not in
the set (the server rotated its keys), but never more often than ``refetch_interval``
(a flood of tokens with made-up key ids costs one fetch per interval). Concurrent
requests that need a fetch share it.

When a refresh fails, the keys held are kept and the next try waits the interval; with
no keys held at all, or for a key id not among those held, verification is unavailable
(503) until a fetch succeeds.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from joserfc.jwk import JWKRegistry, Key

from .fetch import Fetcher, discover, http_url, within
from .principal import VerifierUnavailable
from ...core.log_limit import LOG_INTERVAL, RateLimitedLog
from ...core.json_values import objects

log = logging.getLogger("mcpgen.runtime.auth")

#: Seconds a fetched key set is used before it is fetched again, by default.
JWKS_TTL = 300.0
#: Seconds at least between two fetches, by default (key rotation, failures).
REFETCH_INTERVAL = 30.0
#: Keys one set may hold at most.
MAX_KEYS = 100


def import_keys(document: dict[str, Any]) -> dict[str | None, list[Key]]:
    """The signing keys of a JWKS document, by key id: keys for encryption and keys of
    types joserfc does not know are left out (RFC 7517 §5); VerifierUnavailable when
    none is left or the document is not a key set."""
    entries = objects(document.get("keys"))
    if not entries:
        raise VerifierUnavailable("the JWKS has no keys")
    found: dict[str | None, list[Key]] = {}
    count = 0
    for entry in entries[:MAX_KEYS]:
        if entry.get("use", "sig") != "sig":
            continue
        if entry.get("kty") == "oct":  # a shared secret has no place in a public key set
            continue
        try:
            key = JWKRegistry.import_key(entry)  # type: ignore[arg-type]
        except Exception:  # joserfc's errors, or ValueError/TypeError on garbage
            continue
        kid = entry.get("kid")
        found.setdefault(kid if isinstance(kid, str) else None, []).append(key)
        count += 1
    if not count:
        raise VerifierUnavailable("the JWKS has no usable signing key")
    return found


class KeySetCache:
    """The keys at ``jwks_uri`` (or, when None, at the ``jwks_uri`` of ``issuer``'s
    metadata, whose ``issuer`` must be ``issuer`` exactly). A fetch (discovery included)
    is over within the fetcher's ``timeout``; it runs as a task of its own, so a request
    that gives up waiting does not take the fetch others wait on with it. A failed
    refresh while keys are held is logged once per cause per ``log_interval``."""

    def __init__(
        self,
        fetcher: Fetcher,
        *,
        jwks_uri: str | None,
        issuer: str,
        ttl: float = JWKS_TTL,
        refetch_interval: float = REFETCH_INTERVAL,
        log_interval: float = LOG_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if ttl <= 0 or refetch_interval < 0:
            raise ValueError("jwks_ttl must be positive and refetch_interval not negative")
        self.fetcher = fetcher
        self.jwks_uri = jwks_uri
        self.issuer = issuer
        self.ttl = ttl
        self.refetch_interval = refetch_interval
        self.clock = clock
        self.log = RateLimitedLog(log, log_interval)
        self.keys: dict[str | None, list[Key]] | None = None
        self.fetched_at = 0.0
        self.tried_at: float | None = None
        #: Why the last fetch failed (None: it succeeded, or none was tried).
        self.failure: str | None = None
        self.fetching: asyncio.Task[None] | None = None

    async def lookup(self, kid: str | None) -> list[Key]:
        """The keys a token naming ``kid`` may be signed with (all keys when it names
        none); empty when the set has no such key even after a refetch allowed now.
        VerifierUnavailable when no key set could be had, or when ``kid`` is not among
        the keys held and the last fetch failed (it may be a rotated key the authorization
        server could not hand over: unknown is not the same as refused)."""
        now = self.clock()
        refreshed = self.keys is None or now - self.fetched_at >= self.ttl
        if refreshed:
            await self._refresh(now)
        keys = self._matching(kid)
        if keys or kid is None:
            return keys
        if not refreshed and (self.fetching is not None or self._may_fetch(self.clock())):
            await self._refresh(self.clock())  # a key id not seen yet: rotated keys?
            keys = self._matching(kid)
        if not keys and self.failure is not None:
            raise VerifierUnavailable(
                f"the token's key id is not among the keys held, and fetching the JWKS "
                f"failed: {self.failure}"
            )
        return keys

    def _matching(self, kid: str | None) -> list[Key]:
        if self.keys is None:
            raise VerifierUnavailable(f"no signing keys: {self.failure or 'not fetched yet'}")
        if kid is None:
            return [key for keys in self.keys.values() for key in keys]
        return self.keys.get(kid, [])

    def _may_fetch(self, now: float) -> bool:
        return self.tried_at is None or now - self.tried_at >= self.refetch_interval

    async def _refresh(self, now: float) -> None:
        """Wait for the fetch under way, or start one if the interval allows it."""
        if self.fetching is None:
            if not self._may_fetch(now):
                return  # tried moments ago: keep what is held (or stay unavailable)
            self.tried_at = now
            self.fetching = asyncio.ensure_future(self._keep_fetched())
        await asyncio.shield(self.fetching)

    async def _keep_fetched(self) -> None:
        """Fetch the set and keep it; on failure keep what is held and say why."""
        try:
            what = f"fetching the JWKS ({self.jwks_uri or 'through ' + self.issuer})"
            self.keys = await within(self.fetcher.timeout, self._fetch(), what)
            self.fetched_at = self.clock()
            self.failure = None
        except VerifierUnavailable as exc:
            self.failure = str(exc)
            if self.keys:  # no request fails for it: this line is all that tells
                self.log.warning(
                    self.failure, "fetching the JWKS failed (keeping the keys held): %s", exc
                )
        finally:
            self.fetching = None

    async def _fetch(self) -> dict[str | None, list[Key]]:
        uri = self.jwks_uri
        if uri is None:
            metadata = await discover(self.fetcher, self.issuer)
            found = http_url(metadata.get("jwks_uri"))
            if found is None:
                raise VerifierUnavailable("the authorization server's metadata has no jwks_uri")
            uri = found
        return import_keys(await self.fetcher.get(uri, f"the JWKS at {uri}"))


__all__ = ["JWKS_TTL", "KeySetCache", "MAX_KEYS", "REFETCH_INTERVAL", "import_keys"]
