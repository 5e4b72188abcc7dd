"""A Streamable HTTP server as an OAuth 2.1 resource server: what the HTTP app asks of
:class:`ResourceServer` on a protected endpoint, after its ``Host``/``Origin`` checks and
before it reads a body.

1. ``authenticate``: the ``Authorization: Bearer`` token, checked for shape and size,
   then verified (a cached verdict, else the verifier); the principal, or a refusal
   sent: 401 with a ``WWW-Authenticate`` challenge (no token: no error code, as RFC 6750
   §3.1 asks; a bad one: ``invalid_token``), 400 ``invalid_request`` for a malformed
   header, 503 when the token cannot be checked now. The header is then taken out of the
   request: nothing behind the app (middleware, handlers, logs) sees the token, so
   nothing can pass it on to another service.
2. ``authorize``: once the body is parsed, the scopes each request needs (its method,
   the tool, prompt or resource it names: :class:`~runtime.http.auth.policy.ScopePolicy`);
   403 ``insufficient_scope`` naming every scope the operation needs, before anything is
   dispatched.
3. ``serve_metadata``: the protected resource metadata (RFC 9728) at its well-known
   paths, to anyone (it is public).

Every refusal carries a JSON-RPC error body, as the app's other refusals do. A refused
token is not logged (the client hears why); a token that cannot be checked now, and a
verifier that fails, are logged once per cause per ``log_interval``, however many
requests meet them.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable, Iterable
from typing import Any

from ...core import jsonrpc
from ..asgi import Headers, Send, error_body, respond
from .cache import CACHE_SIZE, TokenCache
from .metadata import ResourceMetadata, challenge
from .policy import NAMED, Lookup, ScopePolicy, scope_set
from .principal import InvalidToken, Principal, TokenVerifier, VerifierUnavailable
from ...core.errors import INVALID_REQUEST
from ...core.jsonrpc import RequestId
from ...core.log_limit import LOG_INTERVAL, RateLimitedLog
from ...core.modern import probe

log = logging.getLogger("mcpgen.runtime.auth")

#: Bytes a bearer token may have at most, by default.
MAX_TOKEN_BYTES = 8192
#: Seconds a client is told to wait after a 503 (the token could not be checked).
RETRY_AFTER = 5
_NONE: frozenset[str] = frozenset()
#: RFC 6750 §2.1: ``b64token``.
_B64TOKEN = re.compile(rb"[A-Za-z0-9\-._~+/]+=*")
#: The params field naming what a request is about (see ``auth_policy.NAMED``).
NAMED_BY = {method: "name" if table != "resources" else "uri" for method, table in NAMED.items()}


class ResourceServer:
    """Protects an HTTP app: tokens checked by ``verifier`` (``JwtVerifier``,
    ``IntrospectionVerifier`` or any :class:`~runtime.http.auth.principal.TokenVerifier`) for
    ``resource`` (this server's canonical URI, e.g. ``https://mcp.example.com/mcp``),
    issued by one of ``authorization_servers``.

    ``required_scopes`` are needed by every request; ``policy`` adds scopes per method,
    tool, prompt or resource (an ``App`` adds its own ``scopes=``); ``scopes_supported``
    is what the metadata lists (default: ``required_scopes``, the minimal set the spec
    asks for; clients step up to the others when a 403 names them);
    ``metadata_document`` adds members to it. ``max_token_bytes`` bounds a token;
    ``cache_size`` how many verified tokens are remembered (each until it expires, or
    the verifier's ``cache_for``); ``log_interval`` is the least time between two log
    lines about one cause (the verifier unavailable, or failing).
    """

    def __init__(
        self,
        verifier: TokenVerifier,
        *,
        resource: str,
        authorization_servers: Iterable[str],
        required_scopes: Iterable[str] = (),
        policy: ScopePolicy | None = None,
        scopes_supported: Iterable[str] | None = None,
        metadata_document: dict[str, Any] | None = None,
        max_token_bytes: int = MAX_TOKEN_BYTES,
        cache_size: int = CACHE_SIZE,
        log_interval: float = LOG_INTERVAL,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if max_token_bytes < 1:
            raise ValueError("max_token_bytes must be positive")
        self.verifier = verifier
        required = scope_set(required_scopes)
        if policy is None:
            policy = ScopePolicy(required)
        elif required:
            policy = ScopePolicy(
                policy.required | required,
                methods=policy.methods,
                tools=policy.named["tools"],
                prompts=policy.named["prompts"],
                resources=policy.named["resources"],
                lookups=policy.lookups,
            )
        self.policy = policy
        if scopes_supported is None:  # the minimal set (more comes by step-up): the base
            scopes_supported = policy.required or None
        self.metadata = ResourceMetadata(
            resource,
            authorization_servers,
            scopes_supported=scopes_supported,
            document=metadata_document,
        )
        self.max_token_bytes = max_token_bytes
        self.cache = TokenCache(cache_size, clock)
        self.log = RateLimitedLog(log, log_interval)
        #: Verifications under way, by token digest: concurrent requests share one.
        self.pending: dict[bytes, asyncio.Future[Principal]] = {}

    def with_scopes(self, lookup: Lookup) -> ResourceServer:
        """This resource server, its policy also asking ``lookup`` (what an ``App`` does
        with its tools', prompts' and resources' ``scopes=``); verifier and cache shared."""
        copy = ResourceServer.__new__(ResourceServer)
        copy.__dict__.update(self.__dict__)
        copy.policy = self.policy.with_lookup(lookup)
        return copy

    # -- metadata --------------------------------------------------------------------------

    def is_metadata_path(self, path: str) -> bool:
        return path in self.metadata.paths

    async def serve_metadata(self, method: str, send: Send) -> None:
        if method != "GET":
            body = error_body(INVALID_REQUEST, f"Method {method} not allowed")
            await respond(send, 405, body, extra={"allow": "GET"})
            return
        await respond(send, 200, self.metadata.body(), extra={"cache-control": "max-age=3600"})

    # -- authentication --------------------------------------------------------------------

    def known(self, headers: Headers) -> Principal | None:
        """The principal of the request's token when it was verified before and holds
        the scopes every request needs (the header then taken out of ``headers``); else
        None, and :meth:`authenticate` decides. No coroutine: the path of nearly every
        request."""
        raw = headers.get(b"authorization")
        if raw is None or raw[:7].lower() != b"bearer ":
            return None
        principal = self.cache.get(TokenCache.digest(raw[7:].strip(b" ")))
        if principal is None or not principal.scopes.issuperset(self.policy.required):
            return None
        del headers[b"authorization"]
        return principal

    async def authenticate(self, headers: Headers, send: Send) -> Principal | None:
        """The principal of the request's token (the header then taken out of
        ``headers``), or None once a refusal is sent."""
        raw = headers.get(b"authorization")
        if raw is None:
            await self._challenge(send, 401, None, "Unauthorized: a bearer token is required")
            return None
        scheme, _, token = raw.partition(b" ")
        if scheme.lower() != b"bearer":
            await self._challenge(send, 401, None, "Unauthorized: use the Bearer scheme")
            return None
        token = token.strip(b" ")
        if len(token) > self.max_token_bytes:
            why = f"the token is longer than {self.max_token_bytes} bytes"
            await self._challenge(send, 401, "invalid_token", f"Unauthorized: {why}", why)
            return None
        if not _B64TOKEN.fullmatch(token):
            why = "the Authorization header is not 'Bearer <token>'"
            await self._challenge(send, 400, "invalid_request", f"Bad Request: {why}", why)
            return None
        digest = TokenCache.digest(token)
        principal = self.cache.get(digest)
        if principal is None:
            try:
                principal = await self._verify(digest, token.decode("ascii"))
            except InvalidToken as exc:
                why = str(exc)
                await self._challenge(send, 401, "invalid_token", f"Unauthorized: {why}", why)
                return None
            except VerifierUnavailable as exc:
                self.log.warning(str(exc), "cannot verify a token now: %s", exc)
                message = "Service Unavailable: the token cannot be verified now; retry later"
                body = error_body(INVALID_REQUEST, message)
                await respond(send, 503, body, extra={"retry-after": str(RETRY_AFTER)})
                return None
        del headers[b"authorization"]
        required = self.policy.required
        if required and not principal.scopes.issuperset(required):
            await self.refuse_scopes(send, required)
            return None
        return principal

    async def _verify(self, digest: bytes, token: str) -> Principal:
        """The verifier's verdict on ``token`` (shared with concurrent requests bearing
        it), cached when it is a principal."""
        pending = self.pending.get(digest)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[Principal] = asyncio.get_running_loop().create_future()
        self.pending[digest] = future
        try:
            try:
                principal = await self.verifier.verify(token)
            except (InvalidToken, VerifierUnavailable):
                raise
            except Exception as exc:  # a verifier's bug must not become a 500, nor access
                cause = f"the token verifier failed: {type(exc).__name__}"
                self.log.log(logging.ERROR, cause, "%s", cause, exc_info=True)
                raise InvalidToken("the token could not be verified") from None
            if not isinstance(principal, Principal):  # pyright: ignore[reportUnnecessaryIsInstance]
                cause = f"the token verifier returned a {type(principal).__name__}"
                self.log.log(logging.ERROR, cause, "%s, not a Principal", cause)
                raise InvalidToken("the token could not be verified")
            self.cache.put(digest, principal, getattr(self.verifier, "cache_for", None))
            future.set_result(principal)
            return principal
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: nobody else may be waiting
            raise
        finally:
            del self.pending[digest]

    # -- authorization ---------------------------------------------------------------------

    def missing(
        self, principal: Principal, requests: Iterable[tuple[str, str | None]]
    ) -> frozenset[str]:
        """Every scope the operation (its requests: ``(method, name)``) needs, when the
        principal lacks one of them; else the empty set."""
        needs = self.policy.needs
        needed: set[str] = set()
        for method, name in requests:
            needed.update(needs(method, name))
        return _NONE if principal.scopes.issuperset(needed) else frozenset(needed)

    def lacks(self, principal: Principal, method: str, params: Any) -> frozenset[str]:
        """What :meth:`missing` says of one request (its decoded ``params``)."""
        needed = self.policy.needs(method, named(method, params))
        return _NONE if principal.scopes.issuperset(needed) else needed

    async def refuse_scopes(
        self, send: Send, needed: Iterable[str], request_id: RequestId | None = None
    ) -> None:
        """403 ``insufficient_scope`` naming ``needed``."""
        scopes = " ".join(sorted(needed))
        why = f"this request needs scope {scopes!r}"
        await self._challenge(
            send, 403, "insufficient_scope", f"Forbidden: {why}", why, needed, request_id
        )

    async def _challenge(
        self,
        send: Send,
        status: int,
        error: str | None,
        message: str,
        description: str | None = None,
        scopes: Iterable[str] | None = None,
        request_id: RequestId | None = None,
    ) -> None:
        needed = self.policy.required if scopes is None else scopes
        header = challenge(self.metadata.url, needed, error, description)
        body = error_body(INVALID_REQUEST, message, request_id)
        await respond(send, status, body, extra={"www-authenticate": header})


def named(method: str, params: Any) -> str | None:
    """The tool, prompt or resource a request names (from its decoded params)."""
    field = NAMED_BY.get(method)
    value = getattr(params, field, None) if field is not None else None
    return value if isinstance(value, str) else None


def operation(messages: Iterable[jsonrpc.Message]) -> list[tuple[str, str | None]]:
    """``(method, name)`` of each request of a POST body, read from its raw params."""
    found: list[tuple[str, str | None]] = []
    for message in messages:
        if isinstance(message, jsonrpc.Request):
            field = NAMED_BY.get(message.method)
            probed = probe(message.params) if field is not None else None
            found.append((message.method, named(message.method, probed)))
    return found


__all__ = ["MAX_TOKEN_BYTES", "RETRY_AFTER", "ResourceServer", "named", "operation"]
