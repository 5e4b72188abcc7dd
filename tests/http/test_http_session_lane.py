"""A legacy session's POST of one plain request, served the way a stateless one is: a
handler that cannot suspend runs in the POST's own task, in a copy of its context, and is
answered as one JSON response; a handler that waits runs in a task of its own, its frames
on the POST's stream, as before; whatever the lane cannot take (an id in flight, a batch,
garbage) goes the general way and the session lives on. Driven in process, every wait
bounded."""

from __future__ import annotations

import asyncio
import contextvars
import json
from typing import Any

from mcpgen.generated.v2025_11_25 import server as stubs
from mcpgen.generated.v2025_11_25.server import Context
from mcpgen.runtime import PARSE_ERROR, App

from support.asgi_driver import App as Asgi
from support.asgi_driver import Reply, call, open_session, request

TIMEOUT = 10.0
#: Set by an ASGI middleware around the app: what a handler sees of the request's context.
OUTER: contextvars.ContextVar[str] = contextvars.ContextVar("outer", default="unset")
#: Set by handlers: a request's setting must not show in a later request.
INNER: contextvars.ContextVar[str] = contextvars.ContextVar("inner", default="unset")


class World:
    """An app whose tools report the task and context they ran in, behind a middleware
    that records each POST's task and sets ``OUTER``."""

    def __init__(self) -> None:
        self.app = App("lane", binding=stubs)
        self.post_tasks: list[asyncio.Task[Any] | None] = []
        self.tool_tasks: list[asyncio.Task[Any] | None] = []
        self.saw: list[tuple[str, str]] = []
        self.release = asyncio.Event()
        world = self

        @self.app.tool
        async def instant(label: str) -> str:
            """Answers without waiting."""
            world.tool_tasks.append(asyncio.current_task())
            world.saw.append((OUTER.get(), INNER.get()))
            INNER.set(label)
            return f"instant {label}"

        @self.app.tool
        async def waits(label: str, ctx: Context) -> str:
            """Reports progress, then waits for the test to release it."""
            world.tool_tasks.append(asyncio.current_task())
            world.saw.append((OUTER.get(), INNER.get()))
            INNER.set(label)
            await ctx.report_progress(1, 2, "halfway")
            await world.release.wait()
            return f"waited {label}"

        @self.app.tool
        async def fails(label: str) -> str:
            """Raises without waiting."""
            raise ValueError(f"failed {label}")

        inner = self.app.http_app()

        async def middleware(scope: Any, receive: Any, send: Any) -> None:
            self.post_tasks.append(asyncio.current_task())
            OUTER.set(f"post {len(self.post_tasks)}")
            await inner(scope, receive, send)

        self.http: Asgi = middleware


def tool_call(request_id: int, name: str, label: str, token: str | None = None) -> bytes:
    params: dict[str, Any] = {"name": name, "arguments": {"label": label}}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return request(request_id, "tools/call", params)


def text(reply: Reply, request_id: int) -> str:
    answer = reply.messages()[-1]
    assert answer["id"] == request_id, reply
    return answer["result"]["content"][0]["text"]


def run(scenario: Any) -> Any:
    return asyncio.run(asyncio.wait_for(scenario, TIMEOUT))


def test_a_handler_that_cannot_suspend_runs_in_the_posts_task_and_context() -> None:
    world = World()

    async def scenario() -> list[Reply]:
        headers = await open_session(world.http)
        world.post_tasks.clear()
        replies = []
        for request_id, label in ((1, "a"), (2, "b")):
            body = tool_call(request_id, "instant", label)
            replies.append(await call(world.http, body=body, headers=headers))
        return replies

    first, second = run(scenario())
    for reply, request_id, label in ((first, 1, "a"), (second, 2, "b")):
        assert reply.status == 200 and reply.headers["content-type"] == "application/json"
        assert text(reply, request_id) == f"instant {label}"
    # the handler ran in the POST's own task, seeing what the middleware set around it,
    # and what it set itself did not carry over to the next request
    assert world.tool_tasks == world.post_tasks
    assert world.saw == [("post 1", "unset"), ("post 2", "unset")]


def test_a_handler_that_waits_runs_in_a_task_of_its_own_with_its_frames_streamed() -> None:
    world = World()

    async def scenario() -> tuple[Reply, Reply]:
        headers = await open_session(world.http)
        world.post_tasks.clear()
        streamed = Reply()
        body = tool_call(7, "waits", "w", token="p7")
        posting = asyncio.ensure_future(call(world.http, body=body, headers=headers, into=streamed))
        while not streamed.body:  # the progress arrives while the handler still waits
            await asyncio.sleep(0.01)
        assert not streamed.complete
        after = await call(world.http, body=tool_call(8, "instant", "i"), headers=headers)
        world.release.set()
        await posting
        return streamed, after

    streamed, after = run(scenario())
    assert streamed.headers["content-type"].startswith("text/event-stream")
    progress, answer = streamed.messages()
    assert progress["method"] == "notifications/progress"
    assert progress["params"] == {
        "progressToken": "p7",
        "progress": 1,
        "total": 2,
        "message": "halfway",
    }
    assert answer["id"] == 7 and answer["result"]["content"][0]["text"] == "waited w"
    assert text(after, 8) == "instant i"
    waiting_task, instant_task = world.tool_tasks
    assert waiting_task is not None and waiting_task not in world.post_tasks
    assert instant_task is world.post_tasks[1]
    # the waiting handler's task started in a copy of its POST's context
    assert world.saw == [("post 1", "unset"), ("post 2", "unset")]


def test_what_the_lane_cannot_take_goes_the_general_way_and_the_session_lives_on() -> None:
    world = World()

    async def scenario() -> dict[str, Reply]:
        headers = await open_session(world.http)
        held = Reply()
        waiting = call(world.http, body=tool_call(1, "waits", "held"), headers=headers, into=held)
        posting = asyncio.ensure_future(waiting)
        while not world.tool_tasks:
            await asyncio.sleep(0.01)
        replies = {
            "same id in flight": await call(
                world.http, body=tool_call(1, "instant", "again"), headers=headers
            ),
            "garbage": await call(
                world.http, body=b'{"jsonrpc": "2.0", "id": 2, ', headers=headers
            ),
            "not an object": await call(world.http, body=b"[1, 2]", headers=headers),
            "raises": await call(world.http, body=tool_call(3, "fails", "x"), headers=headers),
            "unknown tool": await call(
                world.http, body=tool_call(4, "nowhere", "x"), headers=headers
            ),
        }
        world.release.set()
        await posting
        replies["held"] = held
        replies["after"] = await call(
            world.http, body=tool_call(5, "instant", "z"), headers=headers
        )
        return replies

    replies = run(scenario())
    refused = replies["same id in flight"].messages()[-1]
    assert refused["id"] == 1 and "already used" in refused["error"]["message"]
    garbage = replies["garbage"]
    assert garbage.status == 400 and garbage.json()["error"]["code"] == PARSE_ERROR
    assert replies["not an object"].status == 400
    failed = replies["raises"].messages()[-1]
    assert failed["id"] == 3
    assert failed["result"]["isError"] is True  # a tool's exception is its error result,
    assert "Internal error in tool 'fails'" in json.dumps(failed["result"]["content"])  # told
    unknown = replies["unknown tool"].messages()[-1]
    assert unknown["id"] == 4 and ("error" in unknown or unknown["result"]["isError"])
    assert text(replies["held"], 1) == "waited held"
    assert text(replies["after"], 5) == "instant z"
