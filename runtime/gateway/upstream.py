"""Where a proxy's upstream server is, and how one connection to it is opened.

An :class:`Upstream` is a description, not a connection: a command to spawn (stdio), a URL
(Streamable HTTP, HTTP+SSE or WebSocket, found the way ``http_client`` finds them) or a
server in this process. :meth:`Upstream.open` makes one client connection to it with the
handlers a proxy gives (those relay what the upstream asks of its client), each time it
is called: a proxy opens one for all its clients, or one per client where the upstream
keeps state per session (``per_session``).
"""

from __future__ import annotations

import contextlib
import os
import shlex
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..app.app import App
from ..client import ClientSession, Mode, Restart, http_client, stdio_client, websocket_client
from ..client.in_memory import connect as connect_in_memory
from ..server.server import Server

#: How a URL upstream is reached: ``auto`` is Streamable HTTP with the spec's fallback to
#: HTTP+SSE (WebSocket for a ``ws://`` or ``wss://`` URL).
UrlTransport = Literal["auto", "streamable-http", "sse", "websocket"]


@dataclass(frozen=True)
class Upstream:
    """One upstream MCP server: exactly one of ``command`` (with ``args``, ``cwd``, and
    ``env`` set on top of this process's environment: spawned, spoken to over stdio), ``url`` (with ``headers`` and ``transport``) or
    ``server`` (a :class:`Server` or :class:`App` in this process).

    ``mode`` pins the era the proxy speaks to it (``"legacy"``: the ``initialize``
    handshake; ``"modern"``: 2026-07-28 on) or finds it (``"auto"``). ``per_session``
    opens a connection (for a command, a process) per downstream client instead of one
    shared by all: for servers that keep state per session. ``restart`` starts a command
    that ended again, within its bounds. ``name`` names it in errors and logs (and is the
    prefix it is mounted under, once several are). ``auth`` is an ``httpx.Auth`` for a URL
    (``runtime.client.auth``).
    """

    name: str = "upstream"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] | None = None
    transport: UrlTransport = "auto"
    server: Server | App | None = None
    mode: Mode = "auto"
    per_session: bool = False
    restart: Restart | None = field(default_factory=Restart)
    auth: Any = None

    def __post_init__(self) -> None:
        given = [k for k in ("command", "url", "server") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                f"upstream {self.name!r}: give exactly one of command, url or server"
                f" (given: {', '.join(given) or 'none'})"
            )
        if self.url is not None and not self.url.startswith(
            ("http://", "https://", "ws://", "wss://")
        ):
            raise ValueError(
                f"upstream {self.name!r}: url must start with http://, https://, ws:// or"
                f" wss://, not {self.url!r}"
            )

    @classmethod
    def of(cls, target: str | Sequence[str] | Server | App, **options: Any) -> Upstream:
        """An upstream from what a user names: a URL, a command line (a string split as a
        shell would, or its words), or a server object."""
        if isinstance(target, (Server, App)):
            return cls(server=target, **options)
        if isinstance(target, str):
            if target.startswith(("http://", "https://", "ws://", "wss://")):
                return cls(url=target, **options)
            words = shlex.split(target)
        else:
            words = list(target)
        if not words:
            raise ValueError("an upstream command needs at least the program to run")
        return cls(command=words[0], args=tuple(words[1:]), **options)

    @property
    def where(self) -> str:
        """The upstream as a person would name it (its URL, command line or server)."""
        if self.url is not None:
            return self.url
        if self.command is not None:
            return shlex.join([self.command, *self.args])
        target = self.server
        return f"the in-process server {getattr(target, 'name', '') or type(target).__name__}"

    @contextlib.asynccontextmanager
    async def open(
        self, binding: Any, handlers: Any, **options: Any
    ) -> AsyncGenerator[ClientSession, None]:
        """One connection to this upstream as a :class:`ClientSession` typed against
        ``binding``, whose ``handlers`` answer what the upstream asks; closed (a command's
        process shut down) on exit. ``options`` go to :class:`ClientSession`."""
        raw = _raw_client(binding)
        if self.server is not None:
            target = self.server.server if isinstance(self.server, App) else self.server
            async with connect_in_memory(
                target, raw, mode=self.mode, handlers=handlers, **options
            ) as client:
                yield client.session
        elif self.command is not None:
            async with stdio_client(
                raw,
                self.command,
                self.args,
                handlers=handlers,
                env=None if self.env is None else {**os.environ, **self.env},
                cwd=self.cwd,
                mode=self.mode,
                restart=self.restart,
                **options,
            ) as client:
                yield client.session
        else:
            assert self.url is not None
            if self.transport == "websocket" or self.url.startswith(("ws://", "wss://")):
                url = (
                    "ws" + self.url.removeprefix("http")
                    if self.url.startswith("http")
                    else self.url
                )
                async with websocket_client(
                    raw,
                    url,
                    handlers=handlers,
                    headers=self.headers,
                    mode=self.mode,
                    auth=self.auth,
                    **options,
                ) as client:
                    yield client.session
            else:
                async with http_client(
                    raw,
                    self.url,
                    handlers=handlers,
                    headers=self.headers,
                    mode=self.mode,
                    auth=self.auth,
                    transport=self.transport,
                    **options,
                ) as client:
                    yield client.session


class RawClient:
    """A client that only holds its session: the proxy sends requests by method."""

    __binding__: Any = None

    def __init__(self, session: ClientSession) -> None:
        self.session = session


def _raw_client(binding: Any) -> type[RawClient]:
    return type("RawClient", (RawClient,), {"__binding__": binding})


__all__ = ["Upstream", "UrlTransport"]
