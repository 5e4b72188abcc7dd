"""Who a verified access token speaks for (:class:`Principal`), the verifier protocol that
turns a bearer token into one, and the refusals a verifier raises.

This module needs nothing beyond the standard library: the HTTP app and handlers use it
whether or not the verifiers' libraries (``mcpgen[auth]``: joserfc, httpx) are installed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol
from ...core.errors import McpgenError


class Principal:
    """The subject of a verified access token: ``subject`` (``sub``), the ``scopes`` it
    grants, the ``client_id`` it was issued to, its ``issuer``, when it expires
    (``expires_at``, seconds since the epoch; None: the verifier set no end) and every
    ``claims`` as verified (JWT claims, or an introspection answer). Never the token."""

    __slots__ = ("subject", "scopes", "client_id", "issuer", "expires_at", "claims", "key")

    def __init__(
        self,
        subject: str,
        scopes: Iterable[str] = (),
        *,
        client_id: str | None = None,
        issuer: str | None = None,
        expires_at: float | None = None,
        claims: Mapping[str, Any] | None = None,
    ) -> None:
        self.subject = subject
        self.scopes = frozenset(scopes)
        self.client_id = client_id
        self.issuer = issuer
        self.expires_at = expires_at
        self.claims: Mapping[str, Any] = claims or {}
        #: Whose things these are (tasks, legacy sessions): issuer, subject and client.
        self.key = f"auth:{issuer or ''} {subject} {client_id or ''}"

    def __repr__(self) -> str:
        return (
            f"Principal(subject={self.subject!r}, scopes={sorted(self.scopes)!r}, "
            f"client_id={self.client_id!r}, issuer={self.issuer!r})"
        )

    def has(self, scopes: Iterable[str]) -> bool:
        """Whether every one of ``scopes`` is granted."""
        return self.scopes.issuperset(scopes)


class InvalidToken(McpgenError):
    """The token is not acceptable here (expired, not yet valid, another audience or
    issuer, a bad signature, malformed, inactive): HTTP 401 ``invalid_token``. The
    message is for the client (``error_description``) and the log: it never holds the
    token."""


class VerifierUnavailable(McpgenError):
    """The token cannot be checked now (the JWKS or introspection endpoint is down,
    answers garbage, or the authorization server's metadata names another issuer):
    HTTP 503, and the client may retry later."""


class TokenVerifier(Protocol):
    """Turns a bearer token into the :class:`Principal` it speaks for.

    ``verify`` raises :class:`InvalidToken` for a token that must be refused and
    :class:`VerifierUnavailable` when it cannot tell. The HTTP app caches what it returns
    per token (until ``expires_at``, or ``cache_for`` seconds when the verifier has
    one: a bound on how long a revoked token may still pass)."""

    async def verify(self, token: str) -> Principal: ...


def principal_of(holder: Any) -> Principal | None:
    """The principal of a request, from what a handler or middleware holds: the generated
    ``Context`` (``ctx``), a ``RequestScope``, a middleware ``Call``, or an event. None
    when the request was not authenticated (stdio, in memory, an unprotected app)."""
    for attribute in ("raw", "scope"):  # Context.raw, Call.scope -> the RequestScope
        inner = getattr(holder, attribute, None)
        if inner is not None and hasattr(inner, "event"):
            holder = inner
            break
    event = getattr(holder, "event", holder)
    http = getattr(event, "http", None)
    principal = getattr(http, "principal", None)
    return principal if isinstance(principal, Principal) else None


__all__ = ["InvalidToken", "Principal", "TokenVerifier", "VerifierUnavailable", "principal_of"]
