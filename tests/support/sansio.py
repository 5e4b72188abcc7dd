"""What the sans-IO tests share: servers and clients as bare ``Connection`` objects, the
JSON-RPC messages fed to them, and what came out (events, and the frames among them
decoded). No event loop, no transport: each test runs in milliseconds. For what the
asyncio side does with the events (cancelling a handler, relaying progress), a server
served over in-memory transports to a raw JSON-RPC peer: no process, no socket.

Only the runtime's public names are used (``Connection.receive`` and its events, ``Server``,
``Versions``, ``jsonrpc``): the rules are asserted on what a peer sees, not on internals.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from mcpgen import generated
from mcpgen.generated.v2026_07_28 import server as s
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime.lowlevel import Connection, MemoryTransport, Versions, memory_pair
from mcpgen.runtime import Server
from mcpgen.runtime.core.events import Event, Send

from support.messages import notification, request

MODERN = "2026-07-28"
LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_LEGACY = LEGACY[-1]
#: The per-request ``_meta`` keys of the modern era.
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
INFO_KEY = "io.modelcontextprotocol/clientInfo"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
CLIENT_INFO = {"name": "sansio-client", "version": "1.0"}

E = TypeVar("E")


class Tools(s.ServerHandlers):
    """A 2026-07-28 server with tools and nothing else (no prompts, no resources)."""

    async def list_tools(
        self, params: t.PaginatedRequestParams, ctx: s.Context
    ) -> t.ListToolsResult:
        return t.ListToolsResult(tools=[])

    async def call_tool(
        self, params: t.CallToolRequestParams, ctx: s.Context
    ) -> t.InputRequiredResultOrCallToolResult:
        return t.CallToolResult(content=[])


class Completing(Tools):
    """Tools, and completions (a capability only from 2025-03-26 on)."""

    async def complete(self, params: t.CompleteRequestParams, ctx: s.Context) -> t.CompleteResult:
        return t.CompleteResult(completion=t.CompleteResultCompletion(values=[]))


def server(handlers: Any = None, **options: Any) -> Connection:
    """A fresh server connection (``Tools`` unless ``handlers``); options go to ``Server``."""
    options.setdefault("name", "sansio")
    return Server(handlers if handlers is not None else Tools(), **options).connection()


def client(
    version: str = MODERN,
    versions: list[str] | None = None,
    capabilities: dict[str, Any] | None = None,
) -> Connection:
    """A client connection typed against ``version`` that speaks ``versions`` (default:
    every dated version), as ``ClientSession`` builds it."""
    binding = generated.load(version, "methods").BINDING
    spoken = Versions.around(binding, versions)
    return Connection("client", spoken, spoken.local, dict(CLIENT_INFO), capabilities or {})


# -- messages in --------------------------------------------------------------------------


def initialize(
    request_id: Any = 0,
    version: str = LATEST_LEGACY,
    capabilities: dict[str, Any] | None = None,
) -> dict[str, Any]:
    params = {
        "protocolVersion": version,
        "capabilities": capabilities or {},
        "clientInfo": CLIENT_INFO,
    }
    return request(request_id, "initialize", params)


#: A client that declares no capabilities (``{}``, which the modern era requires all the same).
NONE: dict[str, Any] = {}


def meta(
    version: str | None = MODERN,
    capabilities: dict[str, Any] | None = NONE,
    info: dict[str, Any] | None = CLIENT_INFO,
) -> dict[str, Any]:
    """A modern request's ``_meta``; a key given as None is left out."""
    out: dict[str, Any] = {}
    if version is not None:
        out[VERSION_KEY] = version
    if capabilities is not None:
        out[CAPABILITIES_KEY] = dict(capabilities)
    if info is not None:
        out[INFO_KEY] = info
    return out


def modern(
    request_id: Any, method: str, params: dict[str, Any] | None = None, **meta_options: Any
) -> dict[str, Any]:
    """A modern request: ``params`` plus the ``_meta`` that ``meta(**meta_options)`` makes."""
    return request(request_id, method, {**(params or {}), "_meta": meta(**meta_options)})


def encode(message: Any) -> bytes:
    return message if isinstance(message, bytes) else json.dumps(message).encode()


# -- what comes out -----------------------------------------------------------------------


def feed(conn: Connection, *messages: Any, **options: Any) -> list[Event]:
    """The events of ``messages`` fed one frame each (options go to ``receive``)."""
    events: list[Event] = []
    for message in messages:
        events += conn.receive(encode(message), **options)
    return events


def sent(events: list[Event]) -> list[Any]:
    """The frames among ``events``, decoded."""
    return [json.loads(e.data) for e in events if isinstance(e, Send)]


def only(events: list[Event], kind: type[E]) -> E:
    """The one event of ``events``, which must be a ``kind``."""
    assert len(events) == 1 and isinstance(events[0], kind), events
    return events[0]


def answer(events: list[Event]) -> Any:
    """The one frame ``events`` send (and nothing else), decoded."""
    return json.loads(only(events, Send).data)


def error(events: list[Event]) -> dict[str, Any]:
    """The error object of the one frame ``events`` send."""
    frame = answer(events)
    assert "error" in frame and "result" not in frame, frame
    return frame["error"]


def handshake(
    conn: Connection, version: str = LATEST_LEGACY, capabilities: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Open a legacy session on a server ``conn``: ``initialize``, then ``initialized``;
    returns the initialize result."""
    frames = sent(feed(conn, initialize(0, version, capabilities)))
    assert feed(conn, notification("notifications/initialized")) == []
    return frames[0]["result"]


# -- a running session, in memory: for what the asyncio side does with the events ------------


class RawPeer:
    """The client end of a server served over in-memory transports, speaking raw JSON-RPC
    (every read bounded in time)."""

    def __init__(self, end: MemoryTransport) -> None:
        self.end = end
        #: Messages read while waiting for another one.
        self.backlog: list[Any] = []

    async def send(self, message: Any) -> None:
        await self.end.send(encode(message))

    async def read(self, timeout: float = 2.0) -> Any:
        frame = await asyncio.wait_for(self.end.receive(), timeout)
        assert frame is not None, "the server closed the connection"
        return json.loads(frame)

    async def answer_to(self, request_id: Any) -> Any:
        """The answer to ``request_id``; what came before it goes to ``backlog``."""
        while True:
            message = await self.read()
            if isinstance(message, dict) and message.get("id") == request_id:
                if "method" not in message:
                    return message
            self.backlog.append(message)

    async def quiet(self, seconds: float) -> list[Any]:
        """What arrives within ``seconds``."""
        out: list[Any] = []
        try:
            while True:
                out.append(await self.read(seconds))
        except asyncio.TimeoutError:
            return out

    async def handshake(self, version: str = LATEST_LEGACY) -> None:
        await self.send(initialize(0, version))
        assert "result" in await self.answer_to(0)
        await self.send(notification("notifications/initialized"))


@contextlib.asynccontextmanager
async def legacy_client(
    session: Any, capabilities: dict[str, Any]
) -> AsyncIterator[tuple[RawPeer, dict[str, Any]]]:
    """``session`` (a ``ClientSession``) connected to a raw 2025-11-25 server offering
    ``capabilities``: the peer, and what the client declared in ``initialize``."""
    client_end, server_end = memory_pair()
    peer = RawPeer(server_end)
    connecting = asyncio.ensure_future(session.connect(client_end, mode="legacy"))
    init = await peer.read()
    assert init["method"] == "initialize"
    result = {
        "protocolVersion": LATEST_LEGACY,
        "capabilities": capabilities,
        "serverInfo": {"name": "raw", "version": "0"},
    }
    await peer.send({"jsonrpc": "2.0", "id": init["id"], "result": result})
    assert (await peer.read())["method"] == "notifications/initialized"
    await connecting
    try:
        yield peer, init["params"]["capabilities"]
    finally:
        await session.close()
        await client_end.close()


async def ask(peer: RawPeer, rid: int, method: str, params: Any) -> Any:
    """Send the client ``method`` as request ``rid``; its answer."""
    await peer.send(request(rid, method, params))
    return await peer.answer_to(rid)


def settle(conn: Connection, version: str, capabilities: dict[str, Any]) -> Connection:
    """A client ``conn`` settled on ``version`` with a server offering ``capabilities``, the
    way it gets there: the handshake (legacy) or ``server/discover`` (modern)."""
    info = conn.versions[version]
    if info.era == "modern":
        conn.discovered(info, {"capabilities": capabilities, "supportedVersions": [version]})
        return conn
    conn.initialize((version,))
    result = {"protocolVersion": version, "capabilities": capabilities}
    result["serverInfo"] = {"name": "settled", "version": "0"}
    conn.receive(encode({"jsonrpc": "2.0", "id": 1, "result": result}))
    assert conn.version is info
    return conn


@contextlib.asynccontextmanager
async def serving(handlers: Any, **options: Any) -> AsyncIterator[RawPeer]:
    """A ``Server`` (or ``Server(handlers, **options)``) served to a ``RawPeer``."""
    options.setdefault("name", "sansio")
    served = handlers if isinstance(handlers, Server) else Server(handlers, **options)
    client_end, server_end = memory_pair()
    task = asyncio.create_task(served.serve(server_end))
    try:
        yield RawPeer(client_end)
    finally:
        await client_end.close()
        await asyncio.wait_for(task, 5.0)


def run(coro: Coroutine[Any, Any, E], timeout: float = 10.0) -> E:
    return asyncio.run(asyncio.wait_for(coro, timeout))


def everything() -> Server:
    """The conformance fixture ``examples/everything`` (a fresh server)."""
    root = str(Path(__file__).resolve().parents[2])
    if root not in sys.path:  # examples/ is not an installed package
        sys.path.append(root)
    from examples.everything.__main__ import build_server

    return build_server()
