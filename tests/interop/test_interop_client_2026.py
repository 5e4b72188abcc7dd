"""Our client's 2026-07-28 features against servers nobody here wrote, over Streamable HTTP
on 127.0.0.1: the TypeScript SDK v2 (``@modelcontextprotocol/server``, pinned in
``support/node_tools.py``; ``tests/peers/ts_v2_server.mjs``), the official Python SDK's
``MCPServer`` (``mcp`` 2.3; ``tests/peers/sdk_mcpserver.py``), and our own everything
server (``examples.everything``'s ``build_app``, served by uvicorn in a thread).

Each server offers the same surface: a tool ``count`` [method] (how many requests of
``method`` reached the server, counted there: in the TypeScript peer's HTTP entry, by an
SDK ``ServerMiddleware``, by an ASGI recorder in front of the everything app), a tool
``add_tool`` [name] that adds a tool and says the tool list changed, a resource it says
was updated when asked (the everything app's own ``test_trigger_resource_update``),
``tools/list`` in pages of 100 of more than 1,000 tools, prompts/list answering every
page with the same ``nextCursor`` and resources/templates/list going A → B → A (low-level
handlers in place of the SDKs' own; a middleware of the everything app), and the cache
hints ``tools/list`` ``ttlMs`` 60000 ``private``, ``resources/list`` 60000 ``public``. Both
SDKs set these with their own option (``cacheHints``, ``cache_hints``); the everything
app ships ``ttlMs`` 0 for every result, so its policy is given the same two hints here,
and resources/read keeps the 0 on every server. What is proved:

1. ``ClientSession.listen`` opens ``subscriptions/listen``, the server acknowledges the
   filter, and a tool list change and a resource update made on the server come out of
   it as ``Change``s; the change also makes the kept tool list stale, even when the cache
   is on a store slower to forget than to read (as one outside the process may be);
2. a second list within the server's ``ttlMs`` never reaches the server, and a result
   whose ``ttlMs`` is 0 always does;
3. two sessions on one ``ResponseCache`` store, as alice and bob: a ``private`` result one
   read is never given to the other, a ``public`` one is;
4. ``list_all`` reads every page of more than 1,000 tools, and ``PaginationError`` ends a
   list whose cursors loop, after exactly the pages it took to see the loop.

Every request our client sent in these flows (``server/discover``, the lists with and
without a cursor, ``subscriptions/listen``, the calls) is judged against the 2026-07-28
JSON schema by the ``jsonschema`` oracle (``support/wire_oracle.py``).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import msgspec
import pytest

from examples.everything.server import build_app
from mcpgen.generated.v2026_07_28.client import Client
from mcpgen.runtime import App, CacheHint, CachePolicy
from mcpgen.runtime.client import (
    Change,
    ClientSession,
    MemoryEras,
    MemoryStore,
    PaginationError,
    ResponseCache,
)
from mcpgen.runtime.aio.middleware import Call, Next
from mcpgen.runtime.client.cache import Entry
from mcpgen.runtime.client.http import HttpClientTransport
from support.http_servers import ThreadedUvicorn
from support.node_tools import TS_SERVER, node_bin, npm_package
from support.processes import announced_http
from support.wire_capture import Recording
from support.wire_oracle import ClientWire, Oracle, Sent, shorten

ROOT = Path(__file__).resolve().parents[2]
MODERN = "2026-07-28"
#: Tools beyond each server's own, and the page size of its tools/list.
BULK, PAGE = 1200, 100
#: The hints every peer gives its lists (ms).
TTL_MS = 60_000
#: Bound of one test: connecting, the body, closing.
TEST_TIMEOUT = 60.0
#: Bound of waiting for one change on a listen stream.
CHANGE_TIMEOUT = 10.0

pytestmark = pytest.mark.anyio


# -- the servers --------------------------------------------------------------------------


@dataclass
class Peer:
    """A running server and how to make it change."""

    label: str
    url: str
    #: A resource the server can say was updated, and the call that makes it say so.
    watched: str
    touch: tuple[str, dict[str, Any]]


@contextmanager
def ts_peer() -> Iterator[Peer]:
    folder = npm_package(TS_SERVER)
    script = ROOT / "tests" / "peers" / "ts_v2_server.mjs"
    command = [str(node_bin() / "node"), str(script), "--sdk", str(folder)]
    command += ["--tools", str(BULK), "--page-size", str(PAGE), "--loops"]
    with announced_http(command, ROOT) as url:
        watched = "test://watched"
        yield Peer("ts-sdk-v2", url, watched, ("touch", {"uri": watched}))


@contextmanager
def sdk_peer() -> Iterator[Peer]:
    script = ROOT / "tests" / "peers" / "sdk_mcpserver.py"
    command = [sys.executable, str(script), "--tools", str(BULK), "--page-size", str(PAGE)]
    with announced_http([*command, "--loops"], ROOT) as url:
        watched = "test://watched"
        yield Peer("python-sdk-mcpserver", url, watched, ("touch", {"uri": watched}))


def requests_of(recording: Recording, method: str) -> int:
    """The requests of ``method`` among what the recorded app received."""
    found = 0
    for exchange in list(recording.exchanges):
        try:
            message = json.loads(bytes(exchange.body) or b"null")
        except ValueError:
            continue
        for one in message if isinstance(message, list) else [message]:
            if isinstance(one, dict) and one.get("method") == method and "id" in one:
                found += 1
    return found


def everything_app(recording: list[Recording]) -> App:
    """The everything server with the test surface: ``count`` (from the recorder in front
    of it), ``add_tool``, the bulk tools, and the list hints in place of its ``ttlMs`` 0."""
    app = build_app()
    shipped = app.server.cache
    app.server.cache = CachePolicy(
        default=shipped.default,
        methods={
            "tools/list": CacheHint(ttl_ms=TTL_MS, scope="private"),
            "resources/list": CacheHint(ttl_ms=TTL_MS, scope="public"),
        },
    )

    def answering(text: str) -> Any:
        async def tool() -> str:
            return text

        return tool

    async def count(method: str) -> str:
        """Requests of a method this server received"""
        return str(requests_of(recording[0], method))

    async def add_tool(name: str) -> str:
        """Adds a tool (the app says the tool list changed)"""
        app.add_tool(answering(name), name=name, description=f"tool {name}")
        return f"added {name}"

    async def looping(call: Call, call_next: Next) -> Any:
        """prompts/list: the cursor "again" on every page; resources/templates/list:
        A → B → A (each page the app's first: its own cursors would refuse these)."""
        if call.method not in ("prompts/list", "resources/templates/list"):
            return await call_next(call)
        cursor = getattr(call.params, "cursor", None)
        first = call.replace(params=None) if isinstance(cursor, str) else call
        result = await call_next(first)
        after = "again" if call.method == "prompts/list" else "B" if cursor == "A" else "A"
        return msgspec.structs.replace(result, next_cursor=after)

    app.use(looping)
    app.add_tool(count, name="count")
    app.add_tool(add_tool, name="add_tool")
    for i in range(BULK):
        app.add_tool(answering(f"bulk_{i:04d}"), name=f"bulk_{i:04d}")
    assert app.page_size == PAGE
    return app


@contextmanager
def everything_peer() -> Iterator[Peer]:
    recording: list[Recording] = []
    app = everything_app(recording)
    recorder = Recording(app.http_app())
    recording.append(recorder)
    server = ThreadedUvicorn(recorder)
    try:
        server.start()
        url = f"http://127.0.0.1:{server.port}/mcp"
        watched = "test://watched-resource"
        yield Peer("everything", url, watched, ("test_trigger_resource_update", {}))
    finally:
        server.stop()


PEERS = {"ts-sdk-v2": ts_peer, "python-sdk-mcpserver": sdk_peer, "everything": everything_peer}


@pytest.fixture(scope="module", params=list(PEERS))
def peer(request: pytest.FixtureRequest) -> Iterator[Peer]:
    with PEERS[request.param]() as running:
        yield running


@pytest.fixture(scope="module")
def oracle() -> Oracle:
    return Oracle(ROOT / "schema")


# -- our client, its requests recorded ----------------------------------------------------


@dataclass
class Sent2026:
    """What our client POSTed in one test, judged by the schema oracle."""

    oracle: Oracle
    bodies: list[bytes] = field(default_factory=list[bytes])

    async def record(self, request: httpx.Request) -> None:
        if request.method == "POST":
            self.bodies.append(bytes(request.content))

    def judged(self) -> list[Sent]:
        wire = ClientWire("http", self.oracle)
        for body in self.bodies:
            wire.from_client(body)
        return wire.sent

    def assert_valid(self) -> list[Sent]:
        """Every message valid at 2026-07-28 (each named its version); the messages."""
        sent = self.judged()
        assert sent, "the client sent nothing"
        wrong = [s for s in sent if s.error is not None or s.version != MODERN]
        shown = [f"{s.method}: {s.version} {s.error}\n  {shorten(s.message)}" for s in wrong]
        assert not wrong, "\n".join(shown)
        return sent


def params_of(sent: Sent) -> dict[str, Any]:
    params = sent.message.get("params") if isinstance(sent.message, dict) else None
    return params if isinstance(params, dict) else {}


@asynccontextmanager
async def connected(
    peer: Peer, wire: Sent2026, cache: ResponseCache | bool = True
) -> AsyncIterator[ClientSession]:
    """A session of ours with ``peer`` (``mode="auto"``: it must find 2026-07-28)."""
    http = httpx.AsyncClient(
        timeout=httpx.Timeout(60.0, connect=10.0), event_hooks={"request": [wire.record]}
    )
    # Tool outputs unchecked: checking would list every page of the tools before the
    # first call of the counting tool, and the counts here are of what the test asks.
    session = ClientSession(
        Client.__binding__, cache=cache, eras=MemoryEras(), output_validation="off"
    )
    try:
        await session.connect(HttpClientTransport(peer.url, client=http), server_key=peer.url)
        assert session.protocol_version == MODERN
        yield session
    finally:
        await session.close()
        await http.aclose()


async def count(session: ClientSession, method: str) -> int:
    """How many requests of ``method`` the server has received (its ``count`` tool)."""
    result = await session.request("tools/call", {"name": "count", "arguments": {"method": method}})
    plain = msgspec.to_builtins(result)
    return int(plain["content"][0]["text"])


def plain(result: Any) -> dict[str, Any]:
    found = msgspec.to_builtins(result)
    assert isinstance(found, dict)
    return found


# -- 1. listen ----------------------------------------------------------------------------


async def test_listen_hears_a_tool_list_change_and_a_resource_update_made_on_the_server(
    peer: Peer, oracle: Oracle
) -> None:
    """``session.listen`` over ``subscriptions/listen``: the acknowledgement honours the
    tool list and the watched URI; ``add_tool`` on the server comes out as
    ``Change("tools")``, the resource update as ``Change("resource", uri)``; the change
    made the kept tool list stale, so the next list reaches the server (and the tool is
    listed)."""
    wire = Sent2026(oracle)
    with anyio.fail_after(TEST_TIMEOUT):
        async with connected(peer, wire) as session:
            await session.request("tools/list")  # kept: ttlMs 60000
            async with session.listen(tools=True, uris=[peer.watched]) as changes:
                assert changes.honoured.get("toolsListChanged") is True
                assert changes.honoured.get("resourceSubscriptions") == [peer.watched]
                listed = await count(session, "tools/list")
                name = f"added_by_listen_{peer.label.replace('-', '_')}"
                await session.request(
                    "tools/call", {"name": "add_tool", "arguments": {"name": name}}
                )
                with anyio.fail_after(CHANGE_TIMEOUT):
                    assert await anext(changes) == Change("tools")
                touch, arguments = peer.touch
                await session.request("tools/call", {"name": touch, "arguments": arguments})
                with anyio.fail_after(CHANGE_TIMEOUT):
                    assert await anext(changes) == Change("resource", peer.watched)
                await session.request("tools/list")
                assert await count(session, "tools/list") == listed + 1
            assert name in {tool.name for tool in await session.list_all("tools/list")}
    sent = wire.assert_valid()
    listens = [s for s in sent if s.method == "subscriptions/listen"]
    assert len(listens) == 1
    asked = params_of(listens[0])["notifications"]
    assert (asked["toolsListChanged"], asked["resourceSubscriptions"]) == (True, [peer.watched])


class FarStore(MemoryStore):
    """A store outside the process, as a client sees one (Redis, say): each operation a
    round trip, and forgetting (a scan, then deletes) slower than a read."""

    async def get(self, key: str) -> Entry | None:
        await anyio.sleep(0.01)
        return await super().get(key)

    async def put(self, key: str, entry: Entry) -> None:
        await anyio.sleep(0.01)
        await super().put(key, entry)

    async def drop(self, prefix: str) -> None:
        await anyio.sleep(0.25)
        await super().drop(prefix)


async def test_a_list_asked_for_on_hearing_its_change_is_never_the_stale_kept_one(
    peer: Peer, oracle: Oracle
) -> None:
    """The cache on a store slower to forget than to read: a reader that lists the tools
    again as soon as ``Change("tools")`` comes out of the listen gets them from the
    server, not the list kept before the change."""
    wire = Sent2026(oracle)
    with anyio.fail_after(TEST_TIMEOUT):
        async with connected(peer, wire, ResponseCache(FarStore())) as session:
            await session.request("tools/list")
            async with session.listen(tools=True) as changes:
                listed = await count(session, "tools/list")
                name = f"added_on_far_store_{peer.label.replace('-', '_')}"
                await session.request(
                    "tools/call", {"name": "add_tool", "arguments": {"name": name}}
                )
                with anyio.fail_after(CHANGE_TIMEOUT):
                    assert await anext(changes) == Change("tools")
                await session.request("tools/list")
                assert await count(session, "tools/list") == listed + 1
    wire.assert_valid()


# -- 2. ttlMs -----------------------------------------------------------------------------


async def test_a_second_list_within_ttl_never_reaches_the_server(
    peer: Peer, oracle: Oracle
) -> None:
    """The server says tools/list stays fresh 60 s (``private``): the second list is the
    kept one, and the server's count of tools/list requests goes up once."""
    wire = Sent2026(oracle)
    with anyio.fail_after(TEST_TIMEOUT):
        async with connected(peer, wire) as session:
            before = await count(session, "tools/list")
            first = await session.request("tools/list")
            assert (plain(first)["ttlMs"], plain(first)["cacheScope"]) == (TTL_MS, "private")
            second = await session.request("tools/list")
            assert await count(session, "tools/list") == before + 1
            assert plain(second) == plain(first)
            assert session.cache is not None
            assert (session.cache.hits, session.cache.misses) == (1, 1)
    lists = [s for s in wire.assert_valid() if s.method == "tools/list"]
    assert len(lists) == 1


async def test_a_result_whose_ttl_is_zero_is_asked_for_every_time(
    peer: Peer, oracle: Oracle
) -> None:
    """resources/read carries ``ttlMs`` 0 (each server's default): both reads reach it."""
    wire = Sent2026(oracle)
    with anyio.fail_after(TEST_TIMEOUT):
        async with connected(peer, wire) as session:
            before = await count(session, "resources/read")
            for _ in range(2):
                read = await session.request("resources/read", {"uri": peer.watched})
                assert plain(read)["ttlMs"] == 0
            assert await count(session, "resources/read") == before + 2
    wire.assert_valid()


# -- 3. cacheScope ------------------------------------------------------------------------


async def test_private_results_stay_with_their_identity_and_public_ones_are_shared(
    peer: Peer, oracle: Oracle
) -> None:
    """alice and bob keep results in one ``MemoryStore``: bob's tools/list (``private``)
    reaches the server though alice's is kept, alice's and bob's second ones do not;
    resources/list (``public``) that alice read is given to bob without asking."""
    wire = Sent2026(oracle)
    store = MemoryStore()
    kept_by_alice = ResponseCache(store, identity="alice")
    kept_by_bob = ResponseCache(store, identity="bob")
    with anyio.fail_after(TEST_TIMEOUT):
        async with (
            connected(peer, wire, kept_by_alice) as alice,
            connected(peer, wire, kept_by_bob) as bob,
        ):
            tools = await count(alice, "tools/list")
            resources = await count(alice, "resources/list")

            await alice.request("tools/list")
            await alice.request("tools/list")
            assert await count(alice, "tools/list") == tools + 1
            await bob.request("tools/list")
            assert await count(alice, "tools/list") == tools + 2
            await bob.request("tools/list")
            assert await count(alice, "tools/list") == tools + 2

            shared = await alice.request("resources/list")
            assert plain(shared)["cacheScope"] == "public"
            assert plain(await bob.request("resources/list")) == plain(shared)
            assert await count(alice, "resources/list") == resources + 1

            assert (kept_by_alice.hits, kept_by_alice.misses) == (1, 2)
            assert (kept_by_bob.hits, kept_by_bob.misses) == (2, 1)
    wire.assert_valid()


# -- 4. pagination ------------------------------------------------------------------------


async def test_list_all_reads_every_page_of_more_than_a_thousand_tools(
    peer: Peer, oracle: Oracle
) -> None:
    """tools/list in pages of 100: ``list_all`` follows every ``nextCursor`` to the end,
    one request a page, and gets each tool once."""
    wire = Sent2026(oracle)
    with anyio.fail_after(TEST_TIMEOUT):
        async with connected(peer, wire) as session:
            before = await count(session, "tools/list")
            tools = await session.list_all("tools/list")
            pages = await count(session, "tools/list") - before
    names = [tool.name for tool in tools]
    assert len(names) == len(set(names)) > BULK
    bulk = {name for name in names if name.startswith("bulk_")}
    assert bulk == {f"bulk_{i:04d}" for i in range(BULK)}
    assert pages == math.ceil(len(names) / PAGE)
    lists = [s for s in wire.assert_valid() if s.method == "tools/list"]
    cursors = [params_of(s).get("cursor") for s in lists]
    assert cursors[0] is None and all(isinstance(c, str) for c in cursors[1:])
    assert len(cursors) == pages


@pytest.mark.parametrize(
    ("method", "pages"),
    [("prompts/list", 2), ("resources/templates/list", 3)],
    ids=["same-cursor-forever", "cursors-A-B-A"],
)
async def test_list_all_stops_with_pagination_error_when_cursors_loop(
    peer: Peer, oracle: Oracle, method: str, pages: int
) -> None:
    """A server whose cursors come round again: ``list_all`` raises ``PaginationError``
    naming the loop as soon as a cursor repeats, having asked for no page beyond."""
    wire = Sent2026(oracle)
    with anyio.fail_after(TEST_TIMEOUT):
        async with connected(peer, wire) as session:
            before = await count(session, method)
            with pytest.raises(PaginationError, match="go round in a loop"):
                await session.list_all(method)
            assert await count(session, method) == before + pages
    asked = [s for s in wire.assert_valid() if s.method == method]
    assert len(asked) == pages
    assert all(isinstance(params_of(s).get("cursor"), str) for s in asked[1:])
