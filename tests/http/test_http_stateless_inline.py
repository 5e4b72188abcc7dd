"""A stateless request answered where it was read: a handler that cannot suspend is
answered as one JSON response without a session being made for it; one that reaches for
its session (reading it, or sending on it) gets it made then, and one that waits gets its
frames streamed as before. Garbage between such requests changes nothing. Driven in
process, every wait bounded."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any, cast

import pytest

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.generated.v2026_07_28.server import Context
from mcpgen.runtime import INVALID_PARAMS, App, McpError
from mcpgen.runtime.aio.session import RequestScope, Session

from support.asgi_driver import App as Asgi
from support.asgi_driver import Reply, call
from support.http_endpoint import meta, modern_headers

TIMEOUT = 10.0


class World:
    """A 2026-07-28 app whose tools answer at once, read their session, fail or wait."""

    def __init__(self) -> None:
        self.app = App("inline", binding=stubs)
        self.versions: list[str] = []

        @self.app.tool
        def instant(label: str) -> str:
            """Answers without waiting."""
            return f"instant {label}"

        @self.app.tool
        def reads_session(label: str, ctx: Context) -> str:
            """Reads its session without waiting."""
            scope = cast(RequestScope, ctx.raw)  # what the runtime hands a handler
            assert scope.session is scope.session  # made once
            conn = scope.session.conn
            self.versions.append(conn.local.version)
            return f"read {label}"

        @self.app.tool
        def fails(label: str) -> str:
            """Fails without waiting."""
            raise ValueError(f"failed {label}")

        @self.app.tool
        def refuses(label: str) -> str:
            """Refuses the call as a protocol error, without waiting."""
            raise McpError(INVALID_PARAMS, f"refused {label}")

        @self.app.tool
        async def reports(label: str, ctx: Context) -> str:
            """Reports progress, then answers."""
            await ctx.report_progress(1, 2, "halfway")
            return f"reported {label}"

        self.http: Asgi = self.app.http_app()


@pytest.fixture
def sessions_made(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Session]]:
    """Every runtime ``Session`` made while the test runs."""
    made: list[Session] = []
    original = Session.__init__

    def counting(self: Session, *args: Any, **kwargs: Any) -> None:
        made.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(Session, "__init__", counting)
    yield made


def tool_call(request_id: int, name: str, label: str, token: str | None = None) -> bytes:
    extra = {} if token is None else {"progressToken": token}
    params = {"name": name, "arguments": {"label": label}, "_meta": meta() | extra}
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return json.dumps(message).encode()


async def post(world: World, request_id: int, name: str, label: str, **kw: Any) -> Reply:
    headers = modern_headers("tools/call", {"name": name})
    return await call(world.http, body=tool_call(request_id, name, label, **kw), headers=headers)


def run(scenario: Any) -> Any:
    return asyncio.run(asyncio.wait_for(scenario, TIMEOUT))


def answer_of(reply: Reply, request_id: int) -> dict[str, Any]:
    message = reply.messages()[-1]
    assert message["id"] == request_id, reply
    return message


def test_a_handler_answering_at_once_makes_no_session(sessions_made: list[Session]) -> None:
    world = World()

    async def scenario() -> list[Reply]:
        await post(world, 1, "instant", "warm")  # the tools' header annotations learned
        sessions_made.clear()
        return [await post(world, i, "instant", str(i)) for i in (2, 3, 4)]

    replies = run(scenario())
    for request_id, reply in zip((2, 3, 4), replies):
        assert reply.status == 200 and reply.headers["content-type"] == "application/json"
        result = answer_of(reply, request_id)["result"]
        assert result["content"] == [{"type": "text", "text": f"instant {request_id}"}]
    assert sessions_made == []


def test_a_handler_reading_its_session_gets_one_made_then(sessions_made: list[Session]) -> None:
    world = World()

    async def scenario() -> tuple[Reply, Reply]:
        await post(world, 1, "instant", "warm")
        sessions_made.clear()
        first = await post(world, 2, "reads_session", "a")
        return first, await post(world, 3, "reads_session", "b")

    first, second = run(scenario())
    assert answer_of(first, 2)["result"]["content"][0]["text"] == "read a"
    assert answer_of(second, 3)["result"]["content"][0]["text"] == "read b"
    assert first.headers["content-type"] == "application/json"
    assert world.versions == ["2026-07-28", "2026-07-28"]
    assert len(sessions_made) == 2 and sessions_made[0] is not sessions_made[1]


def test_a_handler_that_waits_streams_its_frames_on_a_session_of_its_own(
    sessions_made: list[Session],
) -> None:
    world = World()

    async def scenario() -> Reply:
        await post(world, 1, "instant", "warm")
        sessions_made.clear()
        return await post(world, 2, "reports", "p", token="t2")

    reply = run(scenario())
    assert reply.headers["content-type"].startswith("text/event-stream")
    progress, answer = reply.messages()
    assert progress["method"] == "notifications/progress"
    assert progress["params"] == {
        "progressToken": "t2",
        "progress": 1,
        "total": 2,
        "message": "halfway",
    }
    assert answer["id"] == 2 and answer["result"]["content"][0]["text"] == "reported p"
    assert len(sessions_made) == 1


def test_failing_handlers_and_garbage_leave_the_next_request_answered() -> None:
    world = World()

    async def scenario() -> list[Reply]:
        headers = modern_headers("tools/call", {"name": "instant"})
        replies = [await post(world, 1, "fails", "x"), await post(world, 2, "refuses", "y")]
        for junk in (b"{", b"[]", b'{"jsonrpc":"2.0","id":5,"method":"tools/call"}', b"\xff"):
            replies.append(await call(world.http, body=junk, headers=headers))
        replies.append(await post(world, 9, "instant", "after"))
        return replies

    failed, refused, *junk, after = run(scenario())
    assert failed.status == 200
    result = answer_of(failed, 1)["result"]
    assert result["isError"] is True  # what failed is logged, not told
    assert result["content"][0]["text"] == "Internal error in tool 'fails'"
    error = answer_of(refused, 2)["error"]
    assert refused.headers["content-type"] == "application/json" and error["code"] == INVALID_PARAMS
    assert error["message"] == "refused y"
    for reply in junk:
        assert reply.status == 400 and "error" in reply.json(), reply
    assert answer_of(after, 9)["result"]["content"][0]["text"] == "instant after"
