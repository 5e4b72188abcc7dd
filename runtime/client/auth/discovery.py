"""Finding an MCP server's authorization server: challenges, metadata, and their checks.

From a ``401``/``403`` answer's ``WWW-Authenticate`` challenge (RFC 6750 / RFC 9728 §5.1)
to the authorization server's metadata, in the order the specification prescribes:

1. protected resource metadata (RFC 9728) at the challenge's ``resource_metadata`` URL,
   else at the path-based well-known URL, else at the root one; its ``resource`` must
   name this server (same origin, a path prefix of its URL) or nothing more is done;
2. the metadata of the first authorization server it lists: RFC 8414 at
   ``/.well-known/oauth-authorization-server`` (path inserted), then OpenID Connect
   discovery inserted and appended; the document's ``issuer`` must be exactly the issuer
   the URL was made from, and it must support PKCE with S256;
3. 2025-03-26 (no protected resource metadata): the server's origin is the authorization
   server, its RFC 8414 metadata at the root, else ``/authorize``, ``/token``,
   ``/register`` there.

Every fetch is bounded (time, size, same-origin redirects only) and every document
decodes into a typed Struct, so a hostile or broken server yields a clear
:class:`AuthorizationError` naming the URL, never a hang.
"""

from __future__ import annotations

import asyncio
import ipaddress
from dataclasses import dataclass
from typing import NamedTuple, TypeVar
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx
import msgspec

from .types import AuthorizationError, AuthSettings, ResourceMetadata, ServerMetadata
from ...http.bounded import TooLarge, read_bounded

T = TypeVar("T")

#: The last revision whose authorization has no protected resource metadata.
LEGACY_VERSION = "2025-03-26"
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


# --- URLs -------------------------------------------------------------------------------


def origin(url: str) -> str:
    """``scheme://host[:port]``, lower-cased, the default port left out."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    default = {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{host}" if port in (None, default) else f"{scheme}://{host}:{port}"


def is_loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(url: str, settings: AuthSettings, what: str) -> str:
    """``url`` if it may be used for ``what``: absolute, https (or http to a loopback host,
    or anywhere with ``allow_http``), no fragment."""
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise AuthorizationError(f"{what} {url!r} is not an absolute http(s) URL")
    if parts.scheme == "http" and not (settings.allow_http or is_loopback(url)):
        raise AuthorizationError(f"{what} {url} is not https (AuthSettings.allow_http)")
    if parts.fragment:
        raise AuthorizationError(f"{what} {url} has a fragment")
    return url


def canonical(url: str) -> str:
    """The server's URL as a resource identifier: origin lower-cased, no fragment."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, parts.query, ""))


def resource_matches(resource: str, server_url: str) -> bool:
    """Whether protected resource metadata's ``resource`` names the server at
    ``server_url``: same origin, and its path equal to or a segment prefix of the URL's."""
    if origin(resource) != origin(server_url) or urlsplit(resource).fragment:
        return False
    mine = urlsplit(server_url).path.rstrip("/")
    theirs = urlsplit(resource).path.rstrip("/")
    return mine == theirs or mine.startswith(theirs + "/")


def resource_metadata_urls(server_url: str, from_challenge: str | None) -> list[str]:
    """Where protected resource metadata may be, in the order to try (RFC 9728 §3)."""
    base = origin(server_url)
    path = urlsplit(server_url).path.rstrip("/")
    urls = [from_challenge] if from_challenge else []
    if path:
        urls.append(f"{base}/.well-known/oauth-protected-resource{path}")
    urls.append(f"{base}/.well-known/oauth-protected-resource")
    return urls


def server_metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be (RFC 8414 §3.1, OpenID Connect discovery §4)."""
    base = origin(issuer)
    path = urlsplit(issuer).path.rstrip("/")
    if not path:
        return [
            f"{base}/.well-known/oauth-authorization-server",
            f"{base}/.well-known/openid-configuration",
        ]
    return [
        f"{base}/.well-known/oauth-authorization-server{path}",
        f"{base}/.well-known/openid-configuration{path}",
        f"{base}{path}/.well-known/openid-configuration",
    ]


# --- challenges -------------------------------------------------------------------------


@dataclass(frozen=True)
class Challenge:
    """The ``Bearer`` challenge of a ``401``/``403`` answer (RFC 6750 §3)."""

    status: int
    error: str | None = None
    error_description: str | None = None
    scope: str | None = None
    resource_metadata: str | None = None


def parse_challenge(status: int, headers: list[str]) -> Challenge:
    """The ``Bearer`` challenge among ``WWW-Authenticate`` values (none: an empty one)."""
    for header in headers:
        for scheme, params in _challenges(header):
            if scheme.lower() == "bearer":
                return Challenge(
                    status=status,
                    error=params.get("error"),
                    error_description=params.get("error_description"),
                    scope=params.get("scope") or None,
                    resource_metadata=params.get("resource_metadata") or None,
                )
    return Challenge(status=status)


def _challenges(header: str) -> list[tuple[str, dict[str, str]]]:
    """RFC 9110 §11.6.1 challenges: ``scheme [param=value|"quoted", ...]``, comma-joined."""
    found: list[tuple[str, dict[str, str]]] = []
    i, n = 0, len(header)
    while i < n:
        while i < n and header[i] in " \t,":
            i += 1
        start = i
        while i < n and header[i] not in " \t,=":
            i += 1
        token = header[start:i]
        j = i
        while j < n and header[j] in " \t":
            j += 1
        if not token:
            break
        if j < n and header[j] == "=" and found:  # a parameter of the current challenge
            value, i = _value(header, j + 1)
            found[-1][1].setdefault(token.lower(), value)
        else:
            found.append((token, {}))
    return found


def _value(header: str, i: int) -> tuple[str, int]:
    n = len(header)
    while i < n and header[i] in " \t":
        i += 1
    if i < n and header[i] == '"':
        out: list[str] = []
        i += 1
        while i < n and header[i] != '"':
            if header[i] == "\\" and i + 1 < n:
                i += 1
            out.append(header[i])
            i += 1
        return "".join(out), i + 1
    start = i
    while i < n and header[i] not in ",":
        i += 1
    return header[start:i].strip(), i


# --- bounded fetches --------------------------------------------------------------------


class Fetched(NamedTuple):
    status: int
    body: bytes
    url: str


async def fetch(
    http: httpx.AsyncClient,
    method: str,
    url: str,
    settings: AuthSettings,
    what: str,
    *,
    data: dict[str, str] | None = None,
    json: object = None,
    headers: dict[str, str] | None = None,
) -> Fetched:
    """One bounded request: all of it (redirects and a slowly dripping body included)
    within ``timeout``, at most ``max_response_bytes`` read, GET redirects followed within
    the origin (at most ``max_redirects``), none for POST."""
    request = _fetch(http, method, url, settings, what, data, json, headers or {})
    try:
        return await asyncio.wait_for(request, settings.timeout)
    except (asyncio.TimeoutError, httpx.TimeoutException):
        raise AuthorizationError(
            f"{what} {url} did not answer within {settings.timeout:g} s"
        ) from None


async def _fetch(
    http: httpx.AsyncClient,
    method: str,
    url: str,
    settings: AuthSettings,
    what: str,
    data: dict[str, str] | None,
    json: object,
    headers: dict[str, str],
) -> Fetched:
    for _ in range(settings.max_redirects + 1):
        check_url(url, settings, what)
        try:
            async with http.stream(
                method,
                url,
                data=data,
                json=json,
                headers={"Accept": "application/json", **headers},
                timeout=settings.timeout,
                follow_redirects=False,
            ) as response:
                location = response.headers.get("location")
                if response.status_code in _REDIRECTS and location and method == "GET":
                    target = urljoin(url, location)
                    if origin(target) != origin(url):
                        raise AuthorizationError(
                            f"{what} {url} redirects to another origin ({origin(target)})"
                        )
                    url = target
                    continue
                try:
                    body = await read_bounded(response, settings.max_response_bytes)
                except TooLarge:
                    limit = settings.max_response_bytes
                    raise AuthorizationError(
                        f"{what} {url} answered with more than {limit} bytes"
                    ) from None
                return Fetched(response.status_code, body, url)
        except (AuthorizationError, httpx.TimeoutException):
            raise
        except (httpx.HTTPError, OSError) as exc:
            raise AuthorizationError(f"{what} {url} could not be reached: {exc}") from None
    raise AuthorizationError(f"{what}: more than {settings.max_redirects} redirects")


def decode(body: bytes, kind: type[T], what: str, url: str) -> T:
    try:
        return msgspec.json.decode(body, type=kind)
    except msgspec.ValidationError as exc:
        raise AuthorizationError(f"{what} {url} is invalid: {exc}") from None
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        raise AuthorizationError(f"{what} {url} is not a JSON object") from None


# --- discovery --------------------------------------------------------------------------


@dataclass(frozen=True)
class Discovery:
    """What the client knows of the authorization for one server."""

    #: The resource indicator to send (RFC 8707): the metadata's ``resource`` exactly as
    #: published; None under 2025-03-26's rules, which have none.
    resource: str | None
    scopes_supported: list[str] | None
    issuer: str
    metadata: ServerMetadata


async def discover(
    http: httpx.AsyncClient,
    server_url: str,
    challenge: Challenge,
    settings: AuthSettings,
    protocol_version: str | None,
) -> Discovery:
    """Find and check the authorization server for ``server_url`` (see the module doc)."""
    found = await _resource_metadata(http, server_url, challenge, settings)
    if found is None:
        legacy = protocol_version is None or protocol_version <= LEGACY_VERSION
        if not (legacy and settings.legacy_discovery):
            raise AuthorizationError(
                f"{server_url} asks for authorization but publishes no protected resource "
                "metadata (RFC 9728)"
            )
        return await _legacy(http, server_url, settings)
    if not resource_matches(found.resource, server_url):
        raise AuthorizationError(
            f"the protected resource metadata names resource {found.resource!r}, "
            f"not the server at {server_url}"
        )
    if not found.authorization_servers:
        raise AuthorizationError("the protected resource metadata lists no authorization server")
    issuer = check_url(found.authorization_servers[0], settings, "authorization server")
    if urlsplit(issuer).query:
        raise AuthorizationError(f"authorization server {issuer} has a query part")
    metadata = await _server_metadata(http, issuer, settings, required=True)
    assert metadata is not None
    return Discovery(found.resource, found.scopes_supported, issuer, metadata)


async def _resource_metadata(
    http: httpx.AsyncClient, server_url: str, challenge: Challenge, settings: AuthSettings
) -> ResourceMetadata | None:
    what = "protected resource metadata"
    for url in resource_metadata_urls(server_url, challenge.resource_metadata):
        fetched = await fetch(http, "GET", url, settings, what)
        if fetched.status == 200:
            return decode(fetched.body, ResourceMetadata, what, fetched.url)
        if fetched.status >= 500:
            raise AuthorizationError(f"{what} {url} answered HTTP {fetched.status}")
    return None


async def _server_metadata(
    http: httpx.AsyncClient, issuer: str, settings: AuthSettings, required: bool
) -> ServerMetadata | None:
    what = "authorization server metadata"
    tried: list[str] = []
    for url in server_metadata_urls(issuer):
        fetched = await fetch(http, "GET", url, settings, what)
        if fetched.status != 200:
            tried.append(f"{url}: HTTP {fetched.status}")
            continue
        try:
            metadata = decode(fetched.body, ServerMetadata, what, fetched.url)
        except AuthorizationError as exc:
            tried.append(exc.reason)  # e.g. a catch-all page answering 200: try the next
            continue
        if metadata.issuer != issuer:  # RFC 8414 §3.3: identical, no normalization
            raise AuthorizationError(
                f"{what} at {url} names issuer {metadata.issuer!r}, not {issuer!r}"
            )
        _check_endpoints(metadata, settings)
        return metadata
    if required:
        raise AuthorizationError(f"no {what} for {issuer} ({'; '.join(tried)})")
    return None


def _check_endpoints(metadata: ServerMetadata, settings: AuthSettings) -> None:
    for name in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
        value = getattr(metadata, name)
        if value is not None:
            check_url(value, settings, name.replace("_", " "))


async def _legacy(http: httpx.AsyncClient, server_url: str, settings: AuthSettings) -> Discovery:
    """2025-03-26: the MCP server's origin is the authorization server."""
    issuer = origin(server_url)
    metadata = await _server_metadata(http, issuer, settings, required=False)
    if metadata is None:
        metadata = ServerMetadata(
            issuer=issuer,
            authorization_endpoint=f"{issuer}/authorize",
            token_endpoint=f"{issuer}/token",
            registration_endpoint=f"{issuer}/register",
            code_challenge_methods_supported=["S256"],
        )
    return Discovery(None, None, issuer, metadata)
