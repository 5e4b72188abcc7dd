"""The OAuth 2.1 exchanges with an authorization server, one function each.

PKCE (S256) and the authorization request; the checks on the authorization response
(``state``, and RFC 9207's ``iss`` compared as a plain string); token requests for the
authorization code, refresh token and client credentials grants; client authentication at
the token endpoint (``none``, ``client_secret_basic``, ``client_secret_post``, and the
RFC 7523 JWT assertions ``private_key_jwt``/``client_secret_jwt``, signed with joserfc);
dynamic client registration (RFC 7591); and the scope to ask for.

Every answer is bounded and typed (``auth_client_discovery.fetch``/``decode``); every
refusal becomes an :class:`AuthorizationError` carrying the server's ``error``.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import time
from collections.abc import Mapping
from urllib.parse import parse_qsl, quote, quote_plus, urlencode, urlsplit, urlunsplit

import httpx
import msgspec

from .discovery import decode, fetch, is_loopback
from .types import (
    AuthorizationError,
    AuthSettings,
    ClientInfo,
    ClientMetadata,
    ErrorAnswer,
    RegistrationAnswer,
    ServerMetadata,
    TokenAnswer,
    Tokens,
)

#: What an access token may consist of: visible ASCII (RFC 6750's b64token and then some),
#: so a token never breaks the header it goes in.
_TOKEN_CHARS = re.compile(r"[\x21-\x7e]+")
_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


class InvalidGrant(AuthorizationError):
    """The token endpoint refused a code or refresh token (``invalid_grant``)."""


class InvalidClient(AuthorizationError):
    """The token endpoint refused the client's credentials (``invalid_client``)."""


# --- the authorization request and response ---------------------------------------------


def pkce_pair() -> tuple[str, str]:
    """A PKCE code verifier (43 characters of 32 random bytes) and its S256 challenge."""
    verifier = secrets.token_urlsafe(32)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def require_pkce(metadata: ServerMetadata) -> None:
    """Refuse an authorization server that does not say it supports PKCE with S256."""
    if "S256" not in (metadata.code_challenge_methods_supported or []):
        raise AuthorizationError(
            f"authorization server {metadata.issuer} does not advertise PKCE with S256 "
            "(code_challenge_methods_supported), which MCP requires"
        )


def authorization_url(
    metadata: ServerMetadata,
    client_id: str,
    redirect_uri: str,
    state: str,
    challenge: str,
    scope: str | None,
    resource: str | None,
) -> str:
    """The authorization endpoint's URL with the request's parameters (its own query kept)."""
    if not metadata.authorization_endpoint:
        raise AuthorizationError(
            f"authorization server {metadata.issuer} has no authorization endpoint"
        )
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
    }
    if scope:
        params["scope"] = scope
    if resource:
        params["resource"] = resource
    parts = urlsplit(metadata.authorization_endpoint)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k not in params]
    encoded = urlencode([*query, *params.items()], quote_via=quote)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, encoded, parts.fragment))


def authorization_code(params: Mapping[str, str], state: str, metadata: ServerMetadata) -> str:
    """The code of an authorization response, once its ``state`` and ``iss`` check out."""
    if params.get("state") != state:
        raise AuthorizationError("the authorization response's state does not match the request")
    iss = params.get("iss")
    if iss is not None and iss != metadata.issuer:  # RFC 9207 §2.4: simple string comparison
        raise AuthorizationError(
            f"the authorization response comes from issuer {iss!r}, not {metadata.issuer!r}"
        )
    if iss is None and metadata.authorization_response_iss_parameter_supported:
        raise AuthorizationError(
            "the authorization response lacks the iss parameter its server promises (RFC 9207)"
        )
    if "error" in params:
        detail = params.get("error_description")
        raise AuthorizationError(
            f"the authorization server refused: {params['error']}"
            + (f" ({detail})" if detail else "")
        )
    code = params.get("code")
    if not code:
        raise AuthorizationError("the authorization response carries no code")
    return code


# --- scopes -----------------------------------------------------------------------------


def select_scope(
    challenged: str | None,
    scopes_supported: list[str] | None,
    metadata: ServerMetadata,
    previous: str | None,
    settings: AuthSettings,
) -> str | None:
    """The scope to ask for: the challenge's, else every scope the protected resource
    metadata lists, else none (omitted); on a step-up, together with what was asked before
    (SEP-2350); plus ``offline_access`` when the authorization server offers it."""
    if challenged:
        chosen = challenged.split()
    elif scopes_supported:
        chosen = list(scopes_supported)
    else:
        chosen = []
    merged = list(dict.fromkeys([*(previous or "").split(), *chosen]))
    offered = metadata.scopes_supported or []
    if merged and settings.offline_access and "offline_access" in offered:
        merged = list(dict.fromkeys([*merged, "offline_access"]))
    return " ".join(merged) or None


# --- client authentication --------------------------------------------------------------


class JwtAssertion:
    """Signs RFC 7523 client assertions: with a private key (``private_key_jwt``; a PEM or
    a joserfc key, ``algorithm`` ES256/RS256/PS256/EdDSA…) or with the client secret
    (``client_secret_jwt``, HS256). ``iss`` and ``sub`` are the client id, ``aud`` the
    authorization server's issuer (RFC 7523bis), valid ``lifetime`` seconds."""

    def __init__(self, key: object, algorithm: str = "ES256", *, lifetime: float = 60.0) -> None:
        from joserfc.jwk import ECKey, OctKey, OKPKey, RSAKey

        self.algorithm = algorithm
        self.lifetime = lifetime
        kinds = {"HS": OctKey, "ES": ECKey, "RS": RSAKey, "PS": RSAKey, "Ed": OKPKey}
        if isinstance(key, (str, bytes)):
            kind = kinds.get(algorithm[:2])
            if kind is None:
                raise ValueError(f"unsupported signing algorithm {algorithm!r}")
            self.key: object = kind.import_key(key)  # pyright: ignore[reportUnknownMemberType]
        else:
            self.key = key

    def sign(self, client_id: str, audience: str) -> str:
        from joserfc import jwt

        now = int(time.time())
        claims = {
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + int(self.lifetime),
            "jti": secrets.token_urlsafe(16),
        }
        header = {"alg": self.algorithm, "typ": "JWT"}
        return jwt.encode(header, claims, self.key, algorithms=[self.algorithm])  # type: ignore[arg-type]


def auth_method(client: ClientInfo, metadata: ServerMetadata) -> str:
    """How the client authenticates at the token endpoint: as registered, else by what it
    holds and the authorization server supports (RFC 8414's default: basic)."""
    if client.token_endpoint_auth_method:
        return client.token_endpoint_auth_method
    if not client.client_secret:
        return "none"
    supported = metadata.token_endpoint_auth_methods_supported
    if supported is None or "client_secret_basic" in supported:
        return "client_secret_basic"
    if "client_secret_post" in supported:
        return "client_secret_post"
    return "none"


def authenticate(
    client: ClientInfo,
    method: str,
    metadata: ServerMetadata,
    form: dict[str, str],
    assertion: JwtAssertion | None,
) -> dict[str, str]:
    """Add the client's authentication to a token request's ``form``; the headers to send."""
    if method == "client_secret_basic":
        secret = _secret(client, method)
        pair = f"{quote_plus(client.client_id)}:{quote_plus(secret)}"  # RFC 6749 §2.3.1
        return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode("ascii")}
    form["client_id"] = client.client_id
    if method == "client_secret_post":
        form["client_secret"] = _secret(client, method)
    elif method in ("private_key_jwt", "client_secret_jwt"):
        if assertion is None and method == "client_secret_jwt":
            assertion = JwtAssertion(_secret(client, method), "HS256")
        if assertion is None:
            raise AuthorizationError(
                "private_key_jwt needs a signing key (ClientCredentials(private_key=...))"
            )
        form["client_assertion_type"] = _ASSERTION_TYPE
        form["client_assertion"] = assertion.sign(client.client_id, metadata.issuer)
    elif method != "none":
        raise AuthorizationError(f"token endpoint authentication {method!r} is not supported")
    return {}


def _secret(client: ClientInfo, method: str) -> str:
    if not client.client_secret:
        raise AuthorizationError(f"{method} needs a client secret, and the client has none")
    return client.client_secret


# --- token requests ---------------------------------------------------------------------


async def request_tokens(
    http: httpx.AsyncClient,
    metadata: ServerMetadata,
    client: ClientInfo,
    form: dict[str, str],
    settings: AuthSettings,
    assertion: JwtAssertion | None = None,
    previous: Tokens | None = None,
    scope: str | None = None,
) -> Tokens:
    """POST ``form`` (with the client's authentication) to the token endpoint; ``scope`` is
    what was asked for (kept as the tokens' scope when the answer does not say)."""
    if not metadata.token_endpoint:
        raise AuthorizationError(f"authorization server {metadata.issuer} has no token endpoint")
    headers = authenticate(client, auth_method(client, metadata), metadata, form, assertion)
    what = "token endpoint"
    url = metadata.token_endpoint
    fetched = await fetch(http, "POST", url, settings, what, data=form, headers=headers)
    if fetched.status != 200:
        raise _refusal(what, url, fetched.status, fetched.body)
    answer = decode(fetched.body, TokenAnswer, what, url)
    if answer.token_type.lower() != "bearer":
        raise AuthorizationError(
            f"{what} {url} issued a {answer.token_type!r} token, not a bearer token"
        )
    if not _TOKEN_CHARS.fullmatch(answer.access_token):
        raise AuthorizationError(f"{what} {url} issued an access token that cannot go in a header")
    expires = time.time() + answer.expires_in if answer.expires_in is not None else None
    return Tokens(
        access_token=answer.access_token,
        expires_at=expires,
        # RFC 6749 §6: an answer to a refresh may leave the refresh token as it was.
        refresh_token=answer.refresh_token or (previous.refresh_token if previous else None),
        scope=answer.scope or scope or (previous.scope if previous else None),
        issuer=metadata.issuer,
    )


def _refusal(what: str, url: str, status: int, body: bytes) -> AuthorizationError:
    try:
        error = msgspec.json.decode(body, type=ErrorAnswer)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        error = ErrorAnswer()
    code = error.error or f"HTTP {status}"
    detail = f" ({error.error_description[:200]})" if error.error_description else ""
    message = f"{what} {url} refused: {code[:100]}{detail}"
    if error.error == "invalid_grant":
        return InvalidGrant(message)
    if error.error == "invalid_client":
        return InvalidClient(message)
    return AuthorizationError(message)


# --- dynamic client registration --------------------------------------------------------


def registration_auth_method(metadata: ServerMetadata) -> str | None:
    """The authentication a registering client asks for: none (a public client) when the
    server supports it, else a secret in the way it supports; unsaid when it lists none."""
    supported = metadata.token_endpoint_auth_methods_supported
    if supported is None:
        return None
    for method in ("none", "client_secret_basic", "client_secret_post"):
        if method in supported:
            return method
    return None


async def register(
    http: httpx.AsyncClient,
    metadata: ServerMetadata,
    client_metadata: ClientMetadata,
    redirect_uri: str | None,
    grant_types: list[str],
    settings: AuthSettings,
) -> ClientInfo:
    """Register with the authorization server (RFC 7591)."""
    url = metadata.registration_endpoint
    if not url:
        raise AuthorizationError(
            f"authorization server {metadata.issuer} supports neither dynamic client "
            "registration nor Client ID Metadata Documents, and no client id is configured "
            "for it (OAuth(client_id=...))"
        )
    said: dict[str, object] = msgspec.to_builtins(client_metadata)
    body = {name: value for name, value in said.items() if value is not None}
    body["grant_types"] = grant_types
    if redirect_uri is not None:
        body["redirect_uris"] = [redirect_uri]
        body["response_types"] = ["code"]
        body.setdefault("application_type", "native" if is_loopback(redirect_uri) else "web")
    method = registration_auth_method(metadata)
    if method is not None:
        body["token_endpoint_auth_method"] = method
    what = "registration endpoint"
    fetched = await fetch(http, "POST", url, settings, what, json=body)
    if fetched.status not in (200, 201):
        raise _refusal(what, url, fetched.status, fetched.body)
    answer = decode(fetched.body, RegistrationAnswer, what, url)
    return ClientInfo(
        client_id=answer.client_id,
        client_secret=answer.client_secret,
        token_endpoint_auth_method=answer.token_endpoint_auth_method,
        client_secret_expires_at=answer.client_secret_expires_at,
        issuer=metadata.issuer,
    )
