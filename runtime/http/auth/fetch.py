"""The verifiers' HTTP: JSON documents fetched from the authorization server (JWKS, its
metadata, introspection answers) within a time, size and depth bound, every failure one
:class:`~runtime.http.auth.principal.VerifierUnavailable` naming what went wrong.

The time bound is a deadline on the whole exchange (connecting, the headers, every byte
of the body), not httpx's bound on each read: a server trickling a byte a second is cut
off as one that never answers. Whatever the body holds (invalid UTF-8, nesting deeper
than ``max_depth``, not JSON, not an object), the answer is VerifierUnavailable.

The requests carry the resource server's own credentials at most (introspection's
client authentication), never a client's token in a header: a token is only ever sent
to the introspection endpoint, in the body RFC 7662 prescribes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx
import msgspec

from .principal import VerifierUnavailable
from ..bounded import TooLarge, read_bounded
from ...core.jsonrpc import depth

T = TypeVar("T")

#: Seconds an HTTP exchange with the authorization server may take, by default.
TIMEOUT = 5.0
#: Bytes a document from the authorization server may have, by default.
MAX_DOCUMENT_BYTES = 256 * 1024
#: How deeply arrays and objects may nest in a document or a token's header, by default.
MAX_DEPTH = 32


def decode_json(data: bytes, max_depth: int = MAX_DEPTH) -> Any:
    """``data`` decoded as JSON, nested no deeper than ``max_depth``; ValueError saying
    why not otherwise (never a RecursionError, a UnicodeDecodeError or another escape)."""
    if data.count(b"{") + data.count(b"[") > max_depth and depth(data) > max_depth:
        raise ValueError(f"nested deeper than {max_depth} levels")
    try:
        return msgspec.json.decode(data)
    except UnicodeDecodeError:
        raise ValueError("not UTF-8") from None
    except Exception:  # msgspec.DecodeError, and anything else a decoder may raise
        raise ValueError("not JSON") from None


def http_url(value: Any) -> str | None:
    """``value`` if it is an absolute http(s) URL with a host httpx can reach, else None
    (what a document from the authorization server names as an endpoint)."""
    if not isinstance(value, str) or not value.startswith(("https://", "http://")):
        return None
    try:
        return value if httpx.URL(value).host else None
    except Exception:  # httpx.InvalidURL, and whatever else a parser may raise
        return None


async def within(seconds: float, work: Awaitable[T], what: str) -> T:
    """What ``work`` gives, if it ends within ``seconds``; else VerifierUnavailable
    saying ``what`` did not."""
    try:
        return await asyncio.wait_for(work, seconds)
    except asyncio.TimeoutError:
        raise VerifierUnavailable(f"{what} took longer than {seconds:g} s") from None


class Fetcher:
    """JSON over ``client`` (default: an ``httpx.AsyncClient`` of its own, no
    redirects followed), each exchange done within ``timeout`` seconds, each answer at
    most ``max_bytes`` nested at most ``max_depth`` deep."""

    def __init__(
        self,
        client: httpx.AsyncClient | None = None,
        *,
        timeout: float = TIMEOUT,
        max_bytes: int = MAX_DOCUMENT_BYTES,
        max_depth: int = MAX_DEPTH,
    ) -> None:
        if timeout <= 0 or max_bytes <= 0 or max_depth <= 0:
            raise ValueError("timeout, max_bytes and max_depth must be positive")
        self.client = client or httpx.AsyncClient(timeout=timeout, follow_redirects=False)
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.max_depth = max_depth

    async def get(self, url: str, what: str) -> dict[str, Any]:
        """The JSON object at ``url`` (``what`` names it in errors)."""
        return await self._exchange("GET", url, what, None, None)

    async def post_form(
        self, url: str, what: str, form: Mapping[str, str], auth: tuple[str, str] | None
    ) -> dict[str, Any]:
        """POST ``form`` (urlencoded), with HTTP Basic ``auth`` when given; the JSON
        object answered."""
        return await self._exchange("POST", url, what, form, auth)

    async def _exchange(
        self,
        method: str,
        url: str,
        what: str,
        form: Mapping[str, str] | None,
        auth: tuple[str, str] | None,
    ) -> dict[str, Any]:
        exchange = self._body(method, url, what, form, auth)
        body = await within(self.timeout, exchange, f"the exchange with {what}")
        try:
            document = decode_json(body, self.max_depth)
        except ValueError as exc:
            raise VerifierUnavailable(f"{what} is {exc}") from None
        if not isinstance(document, dict):
            raise VerifierUnavailable(f"{what} is not a JSON object")
        return document  # type: ignore[return-value]  # JSON object: str keys

    async def _body(
        self,
        method: str,
        url: str,
        what: str,
        form: Mapping[str, str] | None,
        auth: tuple[str, str] | None,
    ) -> bytes:
        try:
            request = self.client.build_request(
                method,
                url,
                data=dict(form) if form is not None else None,
                headers={"accept": "application/json"},
                timeout=self.timeout,
            )
            basic = httpx.BasicAuth(*auth) if auth is not None else None
            response = await self.client.send(request, stream=True, auth=basic)
            try:
                if response.status_code != 200:
                    raise VerifierUnavailable(f"{what} answered HTTP {response.status_code}")
                try:
                    return await read_bounded(response, self.max_bytes)
                except TooLarge:
                    raise VerifierUnavailable(
                        f"{what} is larger than {self.max_bytes} bytes"
                    ) from None
            finally:
                await response.aclose()
        except VerifierUnavailable:
            raise
        except Exception as exc:  # httpx.HTTPError, httpx.InvalidURL (a URL from metadata)...
            raise VerifierUnavailable(f"{what} unreachable ({type(exc).__name__})") from None

    async def aclose(self) -> None:
        await self.client.aclose()


def metadata_urls(issuer: str) -> list[str]:
    """Where an authorization server's metadata may be, in the order the MCP spec has
    clients try them: RFC 8414 (path inserted), then OpenID Connect Discovery (path
    inserted, then appended)."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")

    def at(where: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, where, "", ""))

    if not path:
        return [
            at("/.well-known/oauth-authorization-server"),
            at("/.well-known/openid-configuration"),
        ]
    return [
        at("/.well-known/oauth-authorization-server" + path),
        at("/.well-known/openid-configuration" + path),
        at(path + "/.well-known/openid-configuration"),
    ]


async def discover(fetcher: Fetcher, issuer: str) -> dict[str, Any]:
    """The metadata of the authorization server ``issuer``: the first document found,
    which must name ``issuer`` exactly (RFC 8414 §3.3; a document naming another is
    refused, not used)."""
    failures: list[str] = []
    for url in metadata_urls(issuer):
        try:
            document = await fetcher.get(url, f"authorization server metadata at {url}")
        except VerifierUnavailable as exc:
            failures.append(str(exc))
            continue
        if document.get("issuer") != issuer:
            raise VerifierUnavailable(
                f"authorization server metadata at {url} names issuer "
                f"{str(document.get('issuer'))[:100]!r}, not {issuer!r}"
            )
        return document
    raise VerifierUnavailable("; ".join(failures))


__all__ = [
    "MAX_DEPTH",
    "MAX_DOCUMENT_BYTES",
    "TIMEOUT",
    "Fetcher",
    "decode_json",
    "discover",
    "http_url",
    "metadata_urls",
    "within",
]
