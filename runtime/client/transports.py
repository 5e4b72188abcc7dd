"""Typed clients over real transports: a server spawned as a process (stdio) or reached
at a URL (Streamable HTTP, the older HTTP+SSE, or WebSocket), connected, and shut down on
exit."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar

from ..core.errors import ConnectionClosed
from .recovery import Restart
from .session import ClientSession, Mode
from ..core.limits import CLIENT, Limits
from ..aio.transport import Transport

log = logging.getLogger("mcpgen.runtime.client.transports")
#: How ``http_client`` reaches a URL.
HttpTransport = Literal["auto", "streamable-http", "sse"]

C = TypeVar("C")


@contextlib.asynccontextmanager
async def _connected(
    client_class: type[C],
    transport: Transport,
    handlers: Any,
    mode: Mode,
    options: dict[str, Any],
    server_key: str,
    probe_timeout: float = 5.0,
    reopen: Callable[[], Awaitable[Transport]] | None = None,
    restart: Restart | None = None,
) -> AsyncGenerator[C, None]:
    session = ClientSession(getattr(client_class, "__binding__"), handlers, **options)
    if restart is not None:
        session.reopen, session.restart = reopen, restart
    try:
        await session.connect(
            transport, mode=mode, server_key=server_key, probe_timeout=probe_timeout
        )
        yield client_class(session)  # type: ignore[call-arg]
    finally:
        await session.close()


@contextlib.asynccontextmanager
async def stdio_client(
    client_class: type[C],
    command: str,
    args: Sequence[str] = (),
    *,
    handlers: Any = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    mode: Mode = "legacy",
    stderr: int | None = None,
    restart: Restart | None = None,
    **options: Any,
) -> AsyncGenerator[C, None]:
    """Spawn ``command`` and yield a typed client (``client_class`` is a generated
    ``Client``); the server is shut down (stdin closed, SIGTERM, SIGKILL) on exit.

    ``mode="auto"`` probes for a modern server first; over stdio a legacy server that
    ignores the probe costs the probe timeout, so the default speaks the handshake.
    ``restart`` (a ``runtime.client.recovery.Restart``) starts a server process that ended
    again, within its bounds; by default its end fails what waits and what comes next.
    """
    from ..aio.stdio import StdioProcess

    limits = options.get("limits", CLIENT)

    async def spawn() -> Transport:
        return await StdioProcess.spawn(
            command, args, env=env, cwd=cwd, stderr=stderr, limits=limits
        )

    process = await spawn()
    key = " ".join([command, *args])
    async with _connected(
        client_class, process, handlers, mode, options, key, reopen=spawn, restart=restart
    ) as client:
        yield client


#: A Streamable HTTP server refuses a POST to an HTTP+SSE server's URL with one of these:
#: the transport's cue to try the older transport there (a GET for its stream).
SSE_FALLBACK_STATUSES = frozenset({400, 404, 405})


@contextlib.asynccontextmanager
async def http_client(
    client_class: type[C],
    url: str,
    *,
    handlers: Any = None,
    headers: Mapping[str, str] | None = None,
    mode: Mode = "auto",
    auth: Any = None,
    transport: HttpTransport = "auto",
    **options: Any,
) -> AsyncGenerator[C, None]:
    """Connect over HTTP to ``url`` and yield a typed client.

    ``transport`` is ``"streamable-http"``, ``"sse"`` (the 2024-11-05 HTTP+SSE transport:
    ``url`` is the server's SSE endpoint) or ``"auto"``: Streamable HTTP, and when the
    server refuses its first POST with 400, 404 or 405, HTTP+SSE at the same URL, as the
    spec's backwards-compatibility rules say.

    ``auth`` is an ``httpx.Auth``, typically ``runtime.client.auth.oauth.OAuth(...)`` or
    ``ClientCredentials(...)``: requests carry its bearer token, and it answers the
    server's authorization challenges. One that signs a person in through a browser does
    so before connecting, so that no request's timeout runs meanwhile; with any ``auth``,
    the ``server/discover`` probe may take as long as ``initialize`` (30 s instead of 5 s),
    since its answer may wait on an authorization."""
    from .http import HttpClientTransport

    if auth is not None and getattr(auth, "login_before_connect", False):
        await auth.login(url)
    limits = options.get("limits", CLIENT)
    probe = 5.0 if auth is None else 30.0
    binding = getattr(client_class, "__binding__")
    session = ClientSession(binding, handlers, **options)
    try:
        sse: Transport | None = None
        if transport == "sse":
            sse = await _sse_opened(url, headers, limits, auth)
        else:
            streamable = HttpClientTransport(url, headers=headers, limits=limits, auth=auth)
            try:
                await session.connect(streamable, mode=mode, server_key=url, probe_timeout=probe)
            except Exception as refused:
                status = streamable.first_status
                if transport != "auto" or status not in SSE_FALLBACK_STATUSES:
                    raise
                session = ClientSession(binding, handlers, **options)
                try:
                    sse = await _sse_opened(url, headers, limits, auth)
                except ConnectionClosed as exc:  # not an SSE server either: the first says why
                    log.debug("no HTTP+SSE at %s either: %s", url, exc)
                    raise refused from None
        if sse is not None:  # a stream that opened: its session's own failure is the error
            await session.connect(sse, mode=mode, server_key=url, probe_timeout=probe)
        yield client_class(session)  # type: ignore[call-arg]
    finally:
        await session.close()


@contextlib.asynccontextmanager
async def websocket_client(
    client_class: type[C],
    url: str,
    *,
    handlers: Any = None,
    headers: Mapping[str, str] | None = None,
    mode: Mode = "auto",
    auth: Any = None,
    **options: Any,
) -> AsyncGenerator[C, None]:
    """Connect over WebSocket to ``url`` (``ws://`` or ``wss://``; subprotocol ``mcp``)
    and yield a typed client; ``headers`` go with the handshake, and ``auth`` (an
    ``OAuth`` or ``ClientCredentials`` flow) gives it a bearer token, answering the
    server's challenge when it refuses the handshake. Needs ``pip install
    'mcpgen[websocket]'``. Either era may be spoken over it (a legacy-only server answers
    the ``server/discover`` probe with an error at once)."""
    from .websocket import WebSocketClientTransport

    if auth is not None and getattr(auth, "login_before_connect", False):
        await auth.login("http" + url.removeprefix("ws"))
    limits = options.get("limits", CLIENT)
    transport = WebSocketClientTransport(url, headers=headers, limits=limits, auth=auth)
    await transport.open()
    async with _connected(client_class, transport, handlers, mode, options, url) as client:
        yield client


async def _sse_opened(
    url: str, headers: Mapping[str, str] | None, limits: Limits, auth: Any
) -> Transport:
    """An HTTP+SSE transport at ``url`` with its stream open (``ConnectionClosed`` if none)."""
    from .http_sse import SseClientTransport

    sse = SseClientTransport(url, headers=headers, limits=limits, auth=auth)
    await sse.open()
    return sse
