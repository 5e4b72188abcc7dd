"""What a client can make a session hold by subscribing: at most ``Limits.max_subscriptions``
resources, none by a URI over ``Limits.max_uri_length``, in both eras (a legacy session's
``resources/subscribe``, a 2026-07-28 ``subscriptions/listen`` filter). Each refusal is
-32602 naming the limit, keeps what the session held, and is followed by requests that
still work. A raw JSON-RPC peer over in-memory transports: no process, no socket.
"""

from __future__ import annotations

from typing import Any

from mcpgen.generated.v2026_07_28 import server as s
from mcpgen.generated.v2025_11_25 import server as legacy_stubs
from mcpgen.generated.v2025_11_25 import types as lt
from mcpgen.runtime import INVALID_PARAMS, App, Limits, McpError, Server
from support.sansio import RawPeer, modern, notification, request, run, serving

LIMITS = Limits(max_subscriptions=3, max_uri_length=64)


def watched(limits: Limits = LIMITS) -> App:
    """An app with one resource and one template (``notes://{name}``)."""
    app = App("watched", binding=s, limits=limits)
    app.add_resource("notes://index", lambda: "index")
    app.add_resource("notes://{name}", lambda name: name)
    return app


async def subscribe(peer: RawPeer, request_id: Any, uri: str, method: str = "subscribe") -> Any:
    await peer.send(request(request_id, f"resources/{method}", {"uri": uri}))
    return await peer.answer_to(request_id)


def refused(answer: Any, limit: str) -> str:
    """The message of ``answer``, an -32602 naming ``limit`` (in its message and data)."""
    assert "error" in answer, answer
    error = answer["error"]
    assert error["code"] == INVALID_PARAMS and error["data"]["limit"] == limit, error
    assert f"Limits.{limit}" in error["message"], error
    return error["message"]


def held(server: Server) -> set[str]:
    (session,) = server.sessions
    return session.subscriptions


def test_a_subscription_to_a_uri_over_the_length_limit_is_refused_and_not_held() -> None:
    app = watched()

    async def scenario() -> None:
        async with serving(app.server) as peer:
            await peer.handshake()
            long_uri = "notes://" + "x" * 100  # the template matches it: only its length is wrong
            message = refused(await subscribe(peer, 1, long_uri), "max_uri_length")
            assert "108 characters" in message and "64" in message
            assert held(app.server) == set()
            assert (await subscribe(peer, 2, "notes://short"))["result"] == {}
            assert held(app.server) == {"notes://short"}

    run(scenario())


def test_subscriptions_beyond_the_count_limit_are_refused_and_those_held_stay() -> None:
    app = watched()

    async def scenario() -> None:
        async with serving(app.server) as peer:
            await peer.handshake()
            for n in range(3):
                assert (await subscribe(peer, n, f"notes://{n}"))["result"] == {}
            message = refused(await subscribe(peer, 10, "notes://index"), "max_subscriptions")
            assert "3 per session" in message
            # subscribing again to a URI held takes no room
            assert (await subscribe(peer, 11, "notes://0"))["result"] == {}
            assert held(app.server) == {"notes://0", "notes://1", "notes://2"}
            # those held still get their updates
            await app.resource_updated("notes://1")
            update = await peer.read()
            assert update["method"] == "notifications/resources/updated"
            assert update["params"] == {"uri": "notes://1"}
            # unsubscribing makes room
            assert (await subscribe(peer, 12, "notes://1", "unsubscribe"))["result"] == {}
            assert (await subscribe(peer, 13, "notes://index"))["result"] == {}
            assert held(app.server) == {"notes://0", "notes://2", "notes://index"}

    run(scenario())


class Choosy(legacy_stubs.ServerHandlers):
    """A handwritten server whose subscribe handler takes only ``file:`` URIs."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def subscribe(self, params: lt.SubscribeRequestParams, ctx: Any) -> lt.EmptyResult:
        self.asked.append(params.uri)
        if not params.uri.startswith("file:"):
            raise McpError(-32002, f"Resource not found: {params.uri}", {"uri": params.uri})
        return lt.EmptyResult()

    async def unsubscribe(self, params: lt.UnsubscribeRequestParams, ctx: Any) -> lt.EmptyResult:
        return lt.EmptyResult()


def test_a_handwritten_servers_subscribe_handler_decides_within_the_limits() -> None:
    """The handler says which URIs name a resource (the session holds only those it
    accepts); the limits are checked before it runs, so it never sees what they refuse."""
    choosy = Choosy()
    server = Server(choosy, name="choosy", limits=Limits(max_subscriptions=2, max_uri_length=64))

    async def scenario() -> None:
        async with serving(server) as peer:
            await peer.handshake()
            assert (await subscribe(peer, 1, "http://elsewhere"))["error"]["code"] == -32002
            assert (await subscribe(peer, 2, "file:///a"))["result"] == {}
            refused(await subscribe(peer, 3, "file:///" + "a" * 100), "max_uri_length")
            assert (await subscribe(peer, 4, "file:///b"))["result"] == {}
            refused(await subscribe(peer, 5, "file:///c"), "max_subscriptions")
            assert choosy.asked == ["http://elsewhere", "file:///a", "file:///b"]
            assert held(server) == {"file:///a", "file:///b"}
            assert (await subscribe(peer, 6, "file:///a", "unsubscribe"))["result"] == {}
            assert (await subscribe(peer, 7, "file:///c"))["result"] == {}

    run(scenario())


# -- 2026-07-28: subscriptions/listen ---------------------------------------------------------


def listen(request_id: Any, uris: list[str]) -> dict[str, Any]:
    return modern(request_id, "subscriptions/listen", {"notifications": {"resourceSubscriptions": uris}})  # fmt: skip


async def acknowledged(peer: RawPeer, request_id: Any) -> Any:
    ack = await peer.read()
    assert ack["method"] == "notifications/subscriptions/acknowledged", ack
    assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == request_id
    return ack["params"]["notifications"]


async def still_serving(peer: RawPeer, request_id: Any) -> None:
    await peer.send(modern(request_id, "resources/read", {"uri": "notes://index"}))
    answer = await peer.answer_to(request_id)
    assert answer["result"]["contents"][0]["text"] == "index", answer


def test_a_listen_naming_too_many_or_too_long_uris_is_refused() -> None:
    app = watched()

    async def scenario() -> None:
        async with serving(app.server) as peer:
            await peer.send(listen(1, [f"notes://{n}" for n in range(4)]))
            message = refused(await peer.answer_to(1), "max_subscriptions")
            assert "4 asked for" in message
            await peer.send(listen(2, ["notes://a", "notes://" + "y" * 100]))
            answer = await peer.answer_to(2)
            refused(answer, "max_uri_length")
            assert (
                answer["error"]["data"]["path"] == "$.params.notifications.resourceSubscriptions[1]"
            )
            (session,) = app.server.sessions
            assert session.listening == {}
            await still_serving(peer, 3)
            await peer.send(listen(4, [f"notes://{n}" for n in range(3)]))  # at the limit
            assert await acknowledged(peer, 4) == {"resourceSubscriptions": ["notes://0", "notes://1", "notes://2"]}  # fmt: skip

    run(scenario())


def test_listen_streams_of_one_connection_share_the_count_limit() -> None:
    """Over stdio one connection holds every stream it opens: together they name at most
    ``max_subscriptions`` things (a stream naming none counts as one); a refused stream
    leaves the others open and delivering."""
    app = watched()

    async def scenario() -> None:
        async with serving(app.server) as peer:
            await peer.send(listen("a", ["notes://0", "notes://1"]))
            await acknowledged(peer, "a")
            await peer.send(modern("b", "subscriptions/listen", {"notifications": {"resourcesListChanged": True}}))  # fmt: skip
            await acknowledged(peer, "b")
            await peer.send(listen("c", ["notes://2"]))
            message = refused(await peer.answer_to("c"), "max_subscriptions")
            assert "4 asked for" in message
            (session,) = app.server.sessions
            assert set(session.listening) == {"a", "b"}
            await app.resource_updated("notes://1")
            update = await peer.read()
            assert update["params"]["uri"] == "notes://1"
            assert update["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "a"
            await still_serving(peer, 5)
            # closing a stream makes room
            await peer.send(notification("notifications/cancelled", {"requestId": "b"}))
            await still_serving(peer, 6)  # frames are acted on in order: the stream is closed
            assert set(session.listening) == {"a"}
            await peer.send(listen("d", ["notes://2"]))
            assert await acknowledged(peer, "d") == {"resourceSubscriptions": ["notes://2"]}

    run(scenario())
