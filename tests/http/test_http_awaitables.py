"""What an ASGI server's ``receive()`` gives back is only known to be awaitable: a coroutine
(uvicorn, hypercorn), a future, or an object whose iterator has no ``send`` (granian's). The
endpoint reads bodies from each alike: whole, in chunks, too large (413), too slow (408),
and answers the next request after any of them."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.runtime import App
from mcpgen.runtime.core.limits import Limits

from support.asgi_driver import call

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
}
HEADERS = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "echo"}


def echo_call(request_id: int, text: str) -> bytes:
    params = {"name": "echo", "arguments": {"text": text}, "_meta": META}
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return json.dumps(message).encode()


def http_app() -> Any:
    app = App("echoes", binding=stubs, limits=Limits(max_message_bytes=4096, body_timeout=0.3))

    @app.tool
    def echo(text: str) -> str:
        """Says it back."""
        return text

    return app.http_app()


def said(reply: Any) -> str:
    assert reply.status == 200, (reply.status, reply.body)
    (message,) = reply.messages()
    return message["result"]["content"][0]["text"]


@pytest.mark.parametrize("iterated", [False, True], ids=["coroutine", "iterator-only"])
def test_bodies_are_read_whatever_kind_of_awaitable_receive_gives(iterated: bool) -> None:
    """A whole body, a body in three chunks, one over the limit (413) and one too slow
    (408) are read the same from a coroutine and from an awaitable whose iterator cannot be
    sent to; the request after each is answered."""
    served = http_app()

    async def scenario() -> None:
        def post(body: bytes | list[bytes], delay: float = 0.0) -> Any:
            return call(
                served,
                body=body,
                headers=HEADERS,
                chunk_delay=delay,
                iterator_awaitables=iterated,
            )

        assert said(await post(echo_call(1, "whole"))) == "whole"
        body = echo_call(2, "chunked")
        assert said(await post([body[:10], body[10:20], body[20:]], delay=0.01)) == "chunked"
        assert (await post(echo_call(3, "x" * 5000))).status == 413
        assert said(await post(echo_call(4, "after the 413"))) == "after the 413"
        slow = echo_call(5, "slow")
        assert (await post([slow[:10], slow[10:]], delay=1.0)).status == 408
        assert said(await post(echo_call(6, "after the 408"))) == "after the 408"

    asyncio.run(scenario())
