"""Who may talk to a local server: ``Host`` and ``Origin`` parsed strictly, then matched
exactly (the DNS-rebinding defence of Streamable HTTP).

A rebinding attack makes a browser send requests for an attacker's name to this machine,
so the server must refuse every ``Host`` that is not one of its own names. Matching by
prefix or by splitting on the last colon is not enough (``[::1].evil.com``,
``localhost:evil``): each value is parsed as the URI grammar says (a bracketed IPv6
literal or a registered name, then an optional port of digits) and anything malformed is
refused outright.

A refusal is logged (a warning on ``mcpgen.runtime.http.endpoint`` naming the value and
the setting that would allow it), since a server put behind a name it was not told of
refuses every request: once per refused value per ``log_interval`` (60 s by default), with
the repeats counted, and for at most ``core.log_limit.MAX_CAUSES`` values at once (the
others share a line), so a flood of requests, or of made-up names, writes a bounded
number of lines.
"""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Iterable

from ..core.log_limit import LOG_INTERVAL, RateLimitedLog

#: Names every local server answers to.
LOCAL_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]"})

#: A registered name or IPv4 address: dot-separated labels of letters, digits, hyphens
#: (and underscores, which container and service names use).
_LABEL = r"[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?"
_NAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")
_PORT = re.compile(r"[0-9]{1,5}")
_SCHEMES = ("http", "https")
#: Characters of a refused value a warning shows (a header may be long).
SHOWN = 100
log = logging.getLogger("mcpgen.runtime.http.endpoint")


class Authority:
    """A parsed ``host[:port]``: the host lower-cased (IPv6 compressed, in brackets)."""

    __slots__ = ("host", "port")

    def __init__(self, host: str, port: int | None) -> None:
        self.host = host
        self.port = port

    def __repr__(self) -> str:
        return self.host if self.port is None else f"{self.host}:{self.port}"


def parse_authority(value: str) -> Authority | None:
    """``host[:port]`` as a ``Host`` header carries it, or None when malformed (userinfo,
    a path, spaces, an unbracketed IPv6 address, a port that is not 0-65535, …)."""
    value = value.lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        try:
            address = ipaddress.IPv6Address(value[1:end])
        except ValueError:
            return None
        host, rest = f"[{address.compressed}]", value[end + 1 :]
    else:
        host, colon, port = value.partition(":")
        if not _NAME.fullmatch(host):
            return None
        rest = colon + port
    if not rest:
        return Authority(host, None)
    if rest[0] != ":" or not _PORT.fullmatch(rest[1:]) or int(rest[1:]) > 65535:
        return None
    return Authority(host, int(rest[1:]))


def parse_origin(value: str) -> tuple[str, Authority] | None:
    """``scheme://host[:port]`` as an ``Origin`` header carries it (scheme http or
    https), or None (``null``, other schemes, userinfo, a path, a malformed host)."""
    scheme, sep, rest = value.lower().partition("://")
    if rest.endswith("/"):  # a bare trailing slash is harmless; any other path is not
        rest = rest[:-1]
    if not sep or scheme not in _SCHEMES:
        return None
    authority = parse_authority(rest)
    return None if authority is None else (scheme, authority)


class HostPolicy:
    """Which ``Host`` and ``Origin`` values a server accepts.

    Accepted hosts are the local names plus ``allowed_hosts`` (each ``name`` for any port
    or ``name:port`` for one); accepted origins are those whose host is accepted, plus
    ``allowed_origins`` (``scheme://host[:port]``, matched exactly). A request without
    ``Origin`` (not from a browser) is checked by its ``Host`` alone. ``log_interval``:
    the least time in seconds between two warnings about one refused value
    (:meth:`warn`).
    """

    def __init__(
        self,
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
        log_interval: float = LOG_INTERVAL,
    ):
        self.log = RateLimitedLog(log, log_interval)
        self.any_port: set[str] = set(LOCAL_NAMES)
        self.exact: set[tuple[str, int]] = set()
        for entry in allowed_hosts:
            authority = parse_authority(entry)
            if authority is None:
                raise ValueError(f"allowed host {entry!r} is not a host[:port]")
            if authority.port is None:
                self.any_port.add(authority.host)
            else:
                self.exact.add((authority.host, authority.port))
        self.origins: set[tuple[str, str, int | None]] = set()
        for entry in allowed_origins:
            origin = parse_origin(entry.rstrip("/"))
            if origin is None:
                raise ValueError(f"allowed origin {entry!r} is not a scheme://host[:port]")
            self.origins.add((origin[0], origin[1].host, origin[1].port))

    def allows(self, authority: Authority) -> bool:
        return authority.host in self.any_port or (
            authority.port is not None and (authority.host, authority.port) in self.exact
        )

    def refusal(self, host: str, origin: str | None) -> str | None:
        """Why a request with these headers is refused, or None when it is accepted."""
        authority = parse_authority(host)
        if authority is None or not self.allows(authority):
            return f"Forbidden: host {host!r} is not allowed"
        if origin is None:
            return None
        parsed = parse_origin(origin)
        if parsed is None:
            return f"Forbidden: origin {origin!r} is not allowed"
        scheme, where = parsed
        if (scheme, where.host, where.port) in self.origins or self.allows(where):
            return None
        return f"Forbidden: origin {origin!r} is not allowed"

    def warn(self, host: str, origin: str | None) -> None:
        """Log that a request with these headers was refused (:meth:`refusal` said why):
        the refused value, and the setting that would allow it; at most one line per
        value per ``log_interval``, the repeats counted in the next."""
        authority = parse_authority(host)
        if authority is None:
            shown = host[:SHOWN]
            self.log.warning(
                f"host {shown!r}",
                "mcpgen: refused requests (403) whose Host %r is no host[:port]",
                shown,
            )
        elif not self.allows(authority):
            self.log.warning(
                f"host {authority.host[:SHOWN]!r}",
                "mcpgen: refused a request (403) for Host %r: not a name of this server."
                " If clients reach it by that name, allow it: allowed_hosts=[%r]"
                " (App.run, McpHttpApp; a scaffolded server's --allow-host %s)",
                host[:SHOWN],
                authority.host[:SHOWN],
                authority.host[:SHOWN],
            )
        elif origin is not None:
            shown = origin[:SHOWN]
            self.log.warning(
                f"origin {shown!r}",
                "mcpgen: refused a request (403) from Origin %r: not this server's nor an"
                " allowed one. If web pages from there may call it, allow it:"
                " allowed_origins=[%r] (App.run, McpHttpApp; a scaffolded server's"
                " --allow-origin %s)",
                shown,
                shown,
                shown,
            )
