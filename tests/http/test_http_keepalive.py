"""Quiet SSE streams get comment lines every ``Limits.sse_keepalive`` seconds (lowered to
0.2 s here), so that proxies cutting idle responses leave them open: a legacy session's
GET stream, a call whose answer is long in coming (streamed, comments first, then the
answer, which our client and the official SDK client both read), and the 2024-11-05
HTTP+SSE stream. Real uvicorn on 127.0.0.1."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import httpx
import pytest
from mcp import Client as SdkClient

from mcpgen.generated.v2025_11_25 import server as stubs
from mcpgen.runtime import App
from mcpgen.runtime.client import http_client
from mcpgen.runtime.core.limits import Limits
from support.http_endpoint import Endpoint, open_session, request
from support.http_servers import ThreadedUvicorn
from support.wire_clients import our_client, plain

QUIET = 0.2


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadedUvicorn]:
    made = App("quiet", binding=stubs, shared=None)

    @made.tool
    async def ponder(seconds: float) -> str:
        """Think silently for a while."""
        await asyncio.sleep(seconds)
        return f"pondered {seconds}"

    running = ThreadedUvicorn(made.http_app(limits=Limits(sse_keepalive=QUIET)))
    running.start()
    yield running
    running.stop()


def lines_for(response: httpx.Response, seconds: float) -> list[str]:
    """The lines a stream sends within ``seconds``."""
    got: list[str] = []
    deadline = time.monotonic() + seconds
    for line in response.iter_lines():
        got.append(line)
        if time.monotonic() > deadline:
            break
    return got


def test_a_quiet_get_stream_gets_a_comment_every_keepalive(server: ThreadedUvicorn) -> None:
    session = open_session(Endpoint(server.port), "2025-11-25")
    with session.stream(None, method="GET") as response:
        lines = lines_for(response, 1.0)
    comments = [line for line in lines if line.startswith(":")]
    assert 3 <= len(comments) <= 8, lines


def test_an_answer_long_in_coming_is_streamed_with_comments_first(
    server: ThreadedUvicorn,
) -> None:
    session = open_session(Endpoint(server.port), "2025-11-25")
    call = request(3, "tools/call", {"name": "ponder", "arguments": {"seconds": 0.7}})
    with session.stream(call) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = list(response.iter_lines())
    comments = [n for n, line in enumerate(lines) if line.startswith(":")]
    answer = next(n for n, line in enumerate(lines) if "pondered 0.7" in line)
    assert len(comments) >= 2 and max(comments) < answer, lines
    quick = session.call("ponder", {"seconds": 0})  # a quick answer is still plain JSON
    assert "pondered 0" in str(quick)


def test_clients_read_an_answer_that_came_after_comments(server: ThreadedUvicorn) -> None:
    url = f"http://127.0.0.1:{server.port}/mcp"

    async def both() -> list[str]:
        client_class, handlers = our_client("2025-11-25")
        async with http_client(client_class, url, handlers=handlers, mode="legacy") as ours:  # type: ignore[arg-type]
            mine = plain(await ours.call_tool(name="ponder", arguments={"seconds": 0.6}))
        async with SdkClient(url, mode="legacy") as sdk:
            theirs = plain(await sdk.call_tool("ponder", {"seconds": 0.6}))
        return [str(mine["content"]), str(theirs["content"])]

    said: list[str] = asyncio.run(asyncio.wait_for(both(), 30))
    assert all("pondered 0.6" in text for text in said), said


def test_the_http_sse_stream_gets_comments_too(server: ThreadedUvicorn) -> None:
    with httpx.stream(
        "GET", f"http://127.0.0.1:{server.port}/sse", headers={"accept": "text/event-stream"}
    ) as response:
        assert response.status_code == 200
        lines = lines_for(response, 1.0)
    assert any(line.startswith("event: endpoint") for line in lines), lines
    assert sum(line.startswith(":") for line in lines) >= 3, lines


def test_garbage_after_a_quiet_stream_is_refused_and_the_server_goes_on(
    server: ThreadedUvicorn,
) -> None:
    endpoint = Endpoint(server.port)
    session = open_session(endpoint, "2025-11-25")
    refused = endpoint.send("POST", session.headers, b"{garbage")
    assert refused.status_code == 400
    assert "pondered 0" in str(session.call("ponder", {"seconds": 0}))
