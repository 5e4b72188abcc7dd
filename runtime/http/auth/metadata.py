"""What a protected MCP server says about itself: its canonical URI (RFC 8707), its
protected resource metadata (RFC 9728) and where that is served, and the
``WWW-Authenticate`` challenges of its refusals (RFC 6750 §3, RFC 9728 §5.1)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import msgspec

from .policy import scope_set

WELL_KNOWN = "/.well-known/oauth-protected-resource"

#: What an ``error_description`` may hold (RFC 6750 §3: printable ASCII but ``"`` and ``\\``).
_UNQUOTABLE = re.compile(r"[^\x20\x21\x23-\x5b\x5d-\x7e]")


def canonical_uri(uri: str) -> str:
    """``uri`` as RFC 8707 / the MCP spec compare resource identifiers: an absolute
    http(s) URI without fragment, scheme and host lower-cased, no trailing slash on an
    empty path. ValueError for anything else (no scheme, a fragment, userinfo)."""
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.netloc or parts.fragment:
        raise ValueError(f"{uri!r} is not an absolute http(s) URI without a fragment")
    if "@" in parts.netloc:
        raise ValueError(f"{uri!r} has userinfo, which a resource identifier must not")
    path = parts.path if parts.path != "/" else ""
    return urlunsplit((scheme, parts.netloc.lower(), path, parts.query, ""))


def same_resource(claimed: str, resource: str) -> bool:
    """Whether the audience value ``claimed`` names ``resource`` (canonical): equal once
    scheme and host case and an empty path's slash are set aside."""
    try:
        return canonical_uri(claimed) == resource
    except ValueError:
        return False


class ResourceMetadata:
    """This server as an OAuth 2.0 protected resource (RFC 9728).

    ``resource`` is its canonical URI, what tokens must name as their audience (e.g.
    ``https://mcp.example.com/mcp``); ``authorization_servers`` the issuers clients get
    tokens from (at least one); ``scopes_supported`` the scopes it uses, listed in the
    metadata; ``document`` adds members of your own (``resource_name``,
    ``resource_documentation``, ...).

    The metadata is served at ``/.well-known/oauth-protected-resource`` followed by the
    resource's path (RFC 9728 §3.1; what 2025-11-25 clients ask first) and at
    ``/.well-known/oauth-protected-resource`` (what 2025-06-18 clients ask); challenges
    point to the first.
    """

    def __init__(
        self,
        resource: str,
        authorization_servers: Iterable[str],
        *,
        scopes_supported: Iterable[str] | None = None,
        document: dict[str, Any] | None = None,
    ) -> None:
        self.resource = canonical_uri(resource)
        servers = [authorization_servers] if isinstance(authorization_servers, str) else None
        self.authorization_servers = servers or list(authorization_servers)
        if not self.authorization_servers:
            raise ValueError("a protected resource names at least one authorization server")
        for issuer in self.authorization_servers:
            canonical_uri(issuer)  # ValueError when it is not an http(s) URI
        parts = urlsplit(self.resource)
        path = parts.path.rstrip("/")
        #: Paths the metadata is served at, the most specific first.
        self.paths = [WELL_KNOWN + path, WELL_KNOWN] if path else [WELL_KNOWN]
        self.url = urlunsplit((parts.scheme, parts.netloc, self.paths[0], "", ""))
        self.scopes_supported = (
            None if scopes_supported is None else sorted(scope_set(scopes_supported))
        )
        self.extra = dict(document or {})
        self._body: bytes | None = None

    def body(self) -> bytes:
        """The metadata document, as JSON."""
        if self._body is None:
            doc: dict[str, Any] = {
                "resource": self.resource,
                "authorization_servers": self.authorization_servers,
                "bearer_methods_supported": ["header"],
            }
            if self.scopes_supported is not None:
                doc["scopes_supported"] = self.scopes_supported
            doc.update(self.extra)
            self._body = msgspec.json.encode(doc)
        return self._body


def quoted(value: str) -> str:
    """An auth-param value as a quoted string, stripped of what one can't carry."""
    return '"' + _UNQUOTABLE.sub("?", value) + '"'


def challenge(
    metadata_url: str,
    scopes: Iterable[str] = (),
    error: str | None = None,
    description: str | None = None,
) -> str:
    """A ``WWW-Authenticate: Bearer`` challenge: where the metadata is, the scopes the
    operation needs, and the error (none when the request carried no token at all, as
    RFC 6750 §3.1 asks)."""
    params = [f"resource_metadata={quoted(metadata_url)}"]
    needed = " ".join(sorted(scopes))
    if needed:
        params.append(f"scope={quoted(needed)}")
    if error is not None:
        params.append(f"error={quoted(error)}")
        if description:
            params.append(f"error_description={quoted(description[:200])}")
    return "Bearer " + ", ".join(params)


__all__ = [
    "WELL_KNOWN",
    "ResourceMetadata",
    "canonical_uri",
    "challenge",
    "quoted",
    "same_resource",
]
