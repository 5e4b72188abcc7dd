"""Typed clients over real transports: a server spawned as a process (stdio) or reached
at a URL (Streamable HTTP), connected, and shut down on exit."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any, TypeVar

from .session import ClientSession, Mode
from ..core.limits import CLIENT
from ..aio.session import Transport

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
) -> AsyncGenerator[C, None]:
    session = ClientSession(getattr(client_class, "__binding__"), handlers, **options)
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
    **options: Any,
) -> AsyncGenerator[C, None]:
    """Spawn ``command`` and yield a typed client (``client_class`` is a generated
    ``Client``); the server is shut down (stdin closed, SIGTERM, SIGKILL) on exit.

    ``mode="auto"`` probes for a modern server first; over stdio a legacy server that
    ignores the probe costs the probe timeout, so the default speaks the handshake.
    """
    from ..aio.stdio import StdioProcess

    limits = options.get("limits", CLIENT)
    process = await StdioProcess.spawn(
        command, args, env=env, cwd=cwd, stderr=stderr, limits=limits
    )
    key = " ".join([command, *args])
    async with _connected(client_class, process, handlers, mode, options, key) as client:
        yield client


@contextlib.asynccontextmanager
async def http_client(
    client_class: type[C],
    url: str,
    *,
    handlers: Any = None,
    headers: Mapping[str, str] | None = None,
    mode: Mode = "auto",
    auth: Any = None,
    **options: Any,
) -> AsyncGenerator[C, None]:
    """Connect over Streamable HTTP to ``url`` and yield a typed client.

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
    transport = HttpClientTransport(url, headers=headers, limits=limits, auth=auth)
    probe = 5.0 if auth is None else 30.0
    async with _connected(client_class, transport, handlers, mode, options, url, probe) as client:
        yield client
