"""JWT access tokens verified against the authorization server's JWKS (``pip install
'mcpgen[auth]'``): signature by joserfc with an algorithm allow-list (never ``none``,
never a shared secret), then the claims: ``iss`` is the issuer, ``aud`` names this
resource (RFC 8707: its canonical URI), ``exp`` is required and, like ``nbf`` and
``iat``, checked with a leeway for clock skew.

Checked in that order, before any cryptography: the token's size and shape, then its
header's ``alg`` against the allow-list and its ``kid`` against the key set (an unknown
one fetches the set again, at most once per ``refetch_interval``).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterable
from typing import Any

import httpx
from joserfc import jwt
from joserfc.errors import ExpiredTokenError, JoseError, MissingClaimError
from joserfc.jwk import Key

from .fetch import MAX_DEPTH, MAX_DOCUMENT_BYTES, TIMEOUT, Fetcher, decode_json
from .jwks import JWKS_TTL, REFETCH_INTERVAL, KeySetCache
from .metadata import canonical_uri, same_resource
from .principal import InvalidToken, Principal
from ...core.log_limit import LOG_INTERVAL

#: Signature algorithms accepted by default: asymmetric ones only.
ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
#: Seconds of clock skew tolerated on ``exp``, ``nbf`` and ``iat``, by default.
LEEWAY = 60
#: The claims a token's scopes may be in, by default (``scope``: RFC 9068, a string;
#: ``scp``: a list or string, as some servers issue).
SCOPE_CLAIMS = ("scope", "scp")
#: The claims a token's client id may be in, by default (RFC 9068, then OpenID's).
CLIENT_CLAIMS = ("client_id", "azp")


def _segment(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def read_header(token: str, max_depth: int = MAX_DEPTH) -> dict[str, Any]:
    """The protected header of a compact JWS, unverified: InvalidToken if it is not one,
    whatever its bytes (not base64url, not UTF-8, not JSON, nested deeper than
    ``max_depth``)."""
    parts = token.split(".")
    if len(parts) != 3 or not all(parts[:2]):
        raise InvalidToken("the token is not a signed JWT (compact JWS)")
    try:
        raw = _segment(parts[0])
    except (binascii.Error, ValueError):
        raise InvalidToken("the token's header is not base64url") from None
    try:
        header = decode_json(raw, max_depth)
    except ValueError as exc:
        raise InvalidToken(f"the token's header is {exc}") from None
    if not isinstance(header, dict):
        raise InvalidToken("the token's header is not a JSON object")
    return header  # type: ignore[return-value]


def scopes_of(claims: dict[str, Any], names: Iterable[str] = SCOPE_CLAIMS) -> list[str]:
    for name in names:
        value = claims.get(name)
        if isinstance(value, str):
            return value.split()
        if isinstance(value, list):
            return [item for item in value if isinstance(item, str)]  # type: ignore[misc]
    return []


def first_string(claims: dict[str, Any], names: Iterable[str]) -> str | None:
    for name in names:
        value = claims.get(name)
        if isinstance(value, str):
            return value
    return None


class JwtVerifier:
    """Verifies JWT access tokens issued by ``issuer`` for ``audience`` (this server's
    canonical URI; several: any of them), signed with a key of ``jwks_uri`` (default:
    the ``jwks_uri`` of ``issuer``'s RFC 8414 / OpenID metadata, which must name
    ``issuer`` exactly).

    Settings: ``algorithms`` (the allow-list; ``none`` and HMAC ones are refused),
    ``leeway`` (seconds of clock skew), ``jwks_ttl`` (seconds a key set is used),
    ``refetch_interval`` (seconds at least between fetches of the key set), ``timeout``
    (seconds a fetch of the key set may take in all, discovery included),
    ``max_document_bytes`` (each document from the authorization server), ``max_depth``
    (nesting in those documents and in a token's header), ``log_interval`` (seconds
    between two log lines about one cause of failed fetches), ``scope_claims`` and
    ``client_claims`` (where scopes and the client id are read from); ``http`` an
    ``httpx.AsyncClient`` to fetch with (tests: an ASGI transport).
    """

    def __init__(
        self,
        *,
        issuer: str,
        audience: str | Iterable[str],
        jwks_uri: str | None = None,
        algorithms: Iterable[str] = ALGORITHMS,
        leeway: int = LEEWAY,
        jwks_ttl: float = JWKS_TTL,
        refetch_interval: float = REFETCH_INTERVAL,
        timeout: float = TIMEOUT,
        max_document_bytes: int = MAX_DOCUMENT_BYTES,
        max_depth: int = MAX_DEPTH,
        log_interval: float = LOG_INTERVAL,
        scope_claims: Iterable[str] = SCOPE_CLAIMS,
        client_claims: Iterable[str] = CLIENT_CLAIMS,
        http: httpx.AsyncClient | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.algorithms = frozenset(algorithms)
        refused = {a for a in self.algorithms if a.lower() == "none" or a.startswith("HS")}
        if refused or not self.algorithms:
            raise ValueError(f"algorithms must be asymmetric signature algorithms, not {refused}")
        if leeway < 0:
            raise ValueError("leeway must not be negative")
        self.issuer = issuer
        audiences = [audience] if isinstance(audience, str) else list(audience)
        self.audiences = frozenset(canonical_uri(each) for each in audiences)
        if not self.audiences:
            raise ValueError("a JWT verifier needs the audience it verifies tokens for")
        self.leeway = leeway
        self.scope_claims = tuple(scope_claims)
        self.client_claims = tuple(client_claims)
        self.clock = clock
        fetcher = Fetcher(http, timeout=timeout, max_bytes=max_document_bytes, max_depth=max_depth)
        self.max_depth = max_depth
        self.keys = KeySetCache(
            fetcher,
            jwks_uri=jwks_uri,
            issuer=issuer,
            ttl=jwks_ttl,
            refetch_interval=refetch_interval,
            log_interval=log_interval,
        )
        #: A JWT is cached until it expires (nothing shorter).
        self.cache_for: float | None = None

    async def verify(self, token: str) -> Principal:
        header = read_header(token, self.max_depth)
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise InvalidToken(f"signature algorithm {str(alg)[:20]!r} is not accepted")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise InvalidToken("the token's kid is not a string")
        keys = await self.keys.lookup(kid)
        if not keys:
            raise InvalidToken("the token is signed with a key this server does not know")
        claims = self._verified(token, alg, keys)
        self._check_claims(claims)
        scopes = scopes_of(claims, self.scope_claims)
        subject = claims.get("sub")
        return Principal(
            subject if isinstance(subject, str) else "",
            scopes,
            client_id=first_string(claims, self.client_claims),
            issuer=self.issuer,
            expires_at=float(claims["exp"]),
            claims=claims,
        )

    def _verified(self, token: str, alg: str, keys: list[Key]) -> dict[str, Any]:
        """The claims of ``token``, its signature checked with one of ``keys``."""
        for key in keys:
            if key.alg is not None and key.alg != alg:
                continue  # a key meant for another algorithm (RFC 7517 §4.4)
            try:
                return jwt.decode(token, key, algorithms=[alg]).claims
            except JoseError:
                continue
            except (ValueError, TypeError):  # what the key or token made of the check
                continue
        raise InvalidToken("the token's signature does not verify")

    def _check_claims(self, claims: dict[str, Any]) -> None:
        now = self.clock() if self.clock is not None else None
        registry = jwt.JWTClaimsRegistry(
            now=int(now) if now is not None else None,
            leeway=self.leeway,
            iss={"essential": True, "value": self.issuer},
            exp={"essential": True},
            aud={"essential": True},
        )
        try:
            registry.validate(claims)
        except JoseError as exc:
            raise InvalidToken(_claim_problem(exc)) from None
        audience = claims["aud"]
        named = [audience] if isinstance(audience, str) else audience
        if not any(same_resource(each, resource) for each in named for resource in self.audiences):
            raise InvalidToken("the token is meant for another audience (resource)")

    async def aclose(self) -> None:
        await self.keys.fetcher.aclose()


def _claim_problem(exc: JoseError) -> str:
    """What is wrong with the claims, in words (joserfc's error names the claim)."""
    claim = getattr(exc, "claim", None)
    if isinstance(exc, ExpiredTokenError):
        return "the token has expired"
    if isinstance(exc, MissingClaimError):
        return f"the token lacks the {claim} claim"
    return {
        "nbf": "the token is not valid yet",
        "iat": "the token was issued in the future",
        "iss": "the token was issued by another issuer",
        "exp": "the token's exp is not a NumericDate",
        "aud": "the token's aud is not a string or a list of strings",
    }.get(str(claim), f"the token's {str(claim)[:40]} claim is not acceptable")


__all__ = ["ALGORITHMS", "CLIENT_CLAIMS", "LEEWAY", "SCOPE_CLAIMS", "JwtVerifier", "read_header"]
