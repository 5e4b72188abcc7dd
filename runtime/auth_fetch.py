"""The verifiers' HTTP: JSON documents fetched from the authorization server (JWKS, its
metadata, introspection answers) within a time and size bound, every failure one
:class:`~runtime.auth_principal.VerifierUnavailable` naming what went wrong.

The requests carry the resource server's own credentials at most (introspection's
client authentication), never a client's token in a header: a token is only ever sent
to the introspection endpoint, in the body RFC 7662 prescribes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import msgspec

from .auth_principal import VerifierUnavailable
from .http_client_transport import TooLarge, read_bounded

#: Seconds an HTTP exchange with the authorization server may take, by default.
TIMEOUT = 5.0
#: Bytes a document from the authorization server may have, by default.
MAX_DOCUMENT_BYTES = 256 * 1024


class Fetcher:
    """JSON over ``client`` (default: an ``httpx.AsyncClient`` of its own, no
    redirects followed, ``timeout`` seconds per exchange), each answer at most
    ``max_bytes``."""

    def __init__(
        self,
        client: httpx.AsyncClient | None = None,
        *,
        timeout: float = TIMEOUT,
        max_bytes: int = MAX_DOCUMENT_BYTES,
    ) -> None:
        if timeout <= 0 or max_bytes <= 0:
            raise ValueError("timeout and max_bytes must be positive")
        self.client = client or httpx.AsyncClient(timeout=timeout, follow_redirects=False)
        self.timeout = timeout
        self.max_bytes = max_bytes

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
                    body = await read_bounded(response, self.max_bytes)
                except TooLarge:
                    raise VerifierUnavailable(
                        f"{what} is larger than {self.max_bytes} bytes"
                    ) from None
            finally:
                await response.aclose()
        except httpx.HTTPError as exc:
            raise VerifierUnavailable(f"{what} unreachable ({type(exc).__name__})") from None
        try:
            document = msgspec.json.decode(body)
        except msgspec.DecodeError:
            raise VerifierUnavailable(f"{what} is not JSON") from None
        if not isinstance(document, dict):
            raise VerifierUnavailable(f"{what} is not a JSON object")
        return document  # type: ignore[return-value]  # JSON object: str keys

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


__all__ = ["MAX_DOCUMENT_BYTES", "TIMEOUT", "Fetcher", "discover", "metadata_urls"]
