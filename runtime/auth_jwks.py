"""The authorization server's signing keys (its JWKS), fetched and kept: refreshed once
they are ``ttl`` seconds old, fetched again early when a token names a key id not in
the set (the server rotated its keys), but never more often than ``refetch_interval``
(a flood of tokens with made-up key ids costs one fetch per interval). Concurrent
requests that need a fetch share it.

When a refresh fails, the keys held are kept and the next try waits the interval; with
no keys held at all, verification is unavailable (503) until a fetch succeeds.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from joserfc.jwk import JWKRegistry, Key

from .auth_fetch import Fetcher, discover
from .auth_principal import VerifierUnavailable
from .plain import objects

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
    metadata, whose ``issuer`` must be ``issuer`` exactly)."""

    def __init__(
        self,
        fetcher: Fetcher,
        *,
        jwks_uri: str | None,
        issuer: str,
        ttl: float = JWKS_TTL,
        refetch_interval: float = REFETCH_INTERVAL,
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
        self.keys: dict[str | None, list[Key]] | None = None
        self.fetched_at = 0.0
        self.tried_at: float | None = None
        self.failure: str | None = None
        self.fetching: asyncio.Future[None] | None = None

    async def lookup(self, kid: str | None) -> list[Key]:
        """The keys a token naming ``kid`` may be signed with (all keys when it names
        none); empty when there is no such key even after a refetch allowed now.
        VerifierUnavailable when no key set could be had."""
        now = self.clock()
        if self.keys is None or now - self.fetched_at >= self.ttl:
            await self._refresh(now)
        keys = self._matching(kid)
        if not keys and kid is not None and self._may_fetch(self.clock()):
            await self._refresh(self.clock())  # a key id not seen yet: rotated keys?
            keys = self._matching(kid)
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
        if self.fetching is not None:  # someone is fetching: wait for that one
            await asyncio.shield(self.fetching)
            return
        if not self._may_fetch(now):
            return  # tried moments ago: keep what is held (or stay unavailable)
        self.tried_at = now
        fetching = self.fetching = asyncio.get_running_loop().create_future()
        try:
            self.keys = await self._fetch()
            self.fetched_at = self.clock()
            self.failure = None
        except VerifierUnavailable as exc:
            self.failure = str(exc)
            log.warning(
                "fetching the JWKS failed: %s%s", exc, " (keeping the keys held)" * bool(self.keys)
            )
        finally:
            self.fetching = None
            fetching.set_result(None)

    async def _fetch(self) -> dict[str | None, list[Key]]:
        uri = self.jwks_uri
        if uri is None:
            metadata = await discover(self.fetcher, self.issuer)
            found = metadata.get("jwks_uri")
            if not isinstance(found, str) or not found.startswith(("https://", "http://")):
                raise VerifierUnavailable("the authorization server's metadata has no jwks_uri")
            uri = found
        return import_keys(await self.fetcher.get(uri, f"the JWKS at {uri}"))


__all__ = ["JWKS_TTL", "KeySetCache", "MAX_KEYS", "REFETCH_INTERVAL", "import_keys"]
