"""Opaque (or any) access tokens verified by asking the authorization server (RFC 7662
token introspection, ``pip install 'mcpgen[auth]'``): the token goes, in the request
body, to the introspection endpoint only, with this resource server's own credentials;
the answer must say ``active``, name this resource in ``aud`` (RFC 8707), and, when it
says so, come from ``issuer`` and not be expired or early.

The HTTP app caches each answer for ``cache_ttl`` seconds at most (and never past the
token's ``exp``): a revoked token may pass that long. At most ``max_concurrent``
introspection calls run at once; more wait for a turn. A verification waits on the
authorization server ``timeout`` seconds in all (discovery, its turn, the whole exchange);
then, like for an answer that is not a JSON object or whose members have the wrong types,
the token cannot be checked now (503), never refused nor let through on that account.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import Any

import httpx

from .fetch import (
    MAX_DEPTH,
    MAX_DOCUMENT_BYTES,
    TIMEOUT,
    Fetcher,
    discover,
    http_url,
    within,
)
from .jwt import CLIENT_CLAIMS, LEEWAY, SCOPE_CLAIMS, first_string, scopes_of
from .metadata import canonical_uri, same_resource
from .principal import InvalidToken, Principal, VerifierUnavailable
from ...core.json_values import listed

#: Seconds an introspection answer is used, by default.
CACHE_TTL = 60.0
#: Introspection calls at once, by default.
MAX_CONCURRENT = 16


def _a_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _a_string(value: Any) -> bool:
    return isinstance(value, str)


def _strings(value: Any) -> bool:
    return all(isinstance(item, str) for item in listed(value))


#: What each member an answer is read for must be when present (RFC 7662 §2.2; null
#: counts as absent).
MEMBERS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "exp": ("a number", _a_number),
    "nbf": ("a number", _a_number),
    "iat": ("a number", _a_number),
    "iss": ("a string", _a_string),
    "sub": ("a string", _a_string),
    "username": ("a string", _a_string),
    "client_id": ("a string", _a_string),
    "aud": ("a string or a list of strings", _strings),
}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


class IntrospectionVerifier:
    """Verifies tokens at ``endpoint`` (default: the ``introspection_endpoint`` of
    ``issuer``'s metadata), authenticating as ``client_id``/``client_secret`` (HTTP
    Basic) when given. ``audience`` is this server's canonical URI (several: any);
    ``require_audience=False`` accepts answers without ``aud`` (some servers leave it
    out; then nothing says the token was meant for this server). Settings: ``leeway``,
    ``cache_ttl``, ``max_concurrent``, ``timeout``, ``max_document_bytes``,
    ``max_depth``, ``scope_claims``, ``client_claims``; ``http`` an
    ``httpx.AsyncClient``."""

    def __init__(
        self,
        *,
        audience: str | Iterable[str],
        endpoint: str | None = None,
        issuer: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        require_audience: bool = True,
        leeway: int = LEEWAY,
        cache_ttl: float = CACHE_TTL,
        max_concurrent: int = MAX_CONCURRENT,
        timeout: float = TIMEOUT,
        max_document_bytes: int = MAX_DOCUMENT_BYTES,
        max_depth: int = MAX_DEPTH,
        scope_claims: Iterable[str] = SCOPE_CLAIMS,
        client_claims: Iterable[str] = CLIENT_CLAIMS,
        http: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if endpoint is None and issuer is None:
            raise ValueError("give the introspection endpoint, or the issuer to discover it")
        if cache_ttl < 0 or max_concurrent < 1 or leeway < 0:
            raise ValueError("cache_ttl, leeway must not be negative; max_concurrent positive")
        audiences = [audience] if isinstance(audience, str) else list(audience)
        self.audiences = frozenset(canonical_uri(each) for each in audiences)
        self.endpoint = endpoint
        self.issuer = issuer
        self.credentials = (client_id, client_secret or "") if client_id is not None else None
        self.require_audience = require_audience
        self.leeway = leeway
        self.scope_claims = tuple(scope_claims)
        self.client_claims = tuple(client_claims)
        self.clock = clock
        self.fetcher = Fetcher(
            http, timeout=timeout, max_bytes=max_document_bytes, max_depth=max_depth
        )
        self.turns = asyncio.Semaphore(max_concurrent)
        #: The HTTP app keeps an answer this long at most.
        self.cache_for: float | None = cache_ttl

    async def verify(self, token: str) -> Principal:
        timeout = self.fetcher.timeout
        answer = await within(timeout, self._ask(token), "introspecting a token")
        active = answer.get("active")
        if not isinstance(active, bool):
            raise VerifierUnavailable("the introspection answer has no boolean 'active'")
        if not active:
            raise InvalidToken("the token is not active")
        for name, (kind, fits) in MEMBERS.items():
            value = answer.get(name)
            if value is not None and not fits(value):
                raise VerifierUnavailable(f"the introspection answer's {name!r} is not {kind}")
        self._check(answer)
        subject = first_string(answer, ("sub", "username")) or ""
        issuer = answer.get("iss")
        return Principal(
            subject,
            scopes_of(answer, self.scope_claims),
            client_id=first_string(answer, self.client_claims),
            issuer=issuer if isinstance(issuer, str) else self.issuer,
            expires_at=_number(answer.get("exp")),
            claims=answer,
        )

    async def _ask(self, token: str) -> dict[str, Any]:
        """The introspection endpoint's answer about ``token``, its turn waited for."""
        endpoint = self.endpoint or await self._discover()
        async with self.turns:
            return await self.fetcher.post_form(
                endpoint,
                "the introspection endpoint",
                {"token": token, "token_type_hint": "access_token"},
                self.credentials,
            )

    def _check(self, answer: dict[str, Any]) -> None:
        now = self.clock()
        expires, not_before = _number(answer.get("exp")), _number(answer.get("nbf"))
        if expires is not None and expires <= now - self.leeway:
            raise InvalidToken("the token has expired")
        if not_before is not None and not_before > now + self.leeway:
            raise InvalidToken("the token is not valid yet")
        issuer = answer.get("iss")
        if self.issuer is not None and issuer is not None and issuer != self.issuer:
            raise InvalidToken("the token was issued by another issuer")
        audience = answer.get("aud")
        if audience is None:
            if self.require_audience:
                raise InvalidToken("the introspection answer names no audience (aud)")
            return
        if not any(
            isinstance(each, str) and same_resource(each, resource)
            for each in listed(audience)
            for resource in self.audiences
        ):
            raise InvalidToken("the token is meant for another audience (resource)")

    async def _discover(self) -> str:
        assert self.issuer is not None
        metadata = await discover(self.fetcher, self.issuer)
        endpoint = http_url(metadata.get("introspection_endpoint"))
        if endpoint is None:
            raise VerifierUnavailable(
                "the authorization server's metadata has no introspection_endpoint"
            )
        self.endpoint = endpoint
        return endpoint

    async def aclose(self) -> None:
        await self.fetcher.aclose()


__all__ = ["CACHE_TTL", "MAX_CONCURRENT", "IntrospectionVerifier"]
