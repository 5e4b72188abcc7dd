"""What the App's test modules share: both client modes, running one scenario, and a
client that answers what a server asks."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

import msgspec

from mcpgen.generated.v2026_07_28 import client as c
from mcpgen.generated.v2026_07_28 import types as t

T = TypeVar("T")
#: The in-memory client's modes: the stateless modern era, and the legacy handshake.
MODES = ["auto", "legacy"]


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a client scenario to its end, bounded in time."""
    return asyncio.run(asyncio.wait_for(coro, 20.0))


def plain(value: Any) -> Any:
    """A typed value as plain JSON data, for comparing with a literal."""
    return msgspec.to_builtins(value)


class Answering(c.ClientHandlers):
    """A client whose user is Ada and whose model says the prompt back with a "!"."""

    async def elicit(self, params: t.ElicitRequestParams, ctx: c.RequestContext) -> t.ElicitResult:
        return t.ElicitResult(action="accept", content={"name": "Ada"})

    async def create_message(
        self, params: t.CreateMessageRequestParams, ctx: c.RequestContext
    ) -> t.CreateMessageResult:
        asked = params.messages[0].content
        assert isinstance(asked, t.TextContent)
        return t.CreateMessageResult(
            role="assistant", content=t.TextContent(text=f"{asked.text}!"), model="m"
        )
