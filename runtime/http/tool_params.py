"""Streamable HTTP, 2026-07-28 on: a ``tools/call`` whose tool declares ``x-mcp-header``
parameters must carry them as ``Mcp-Param-*`` headers that say what its arguments say
(-32020 otherwise). A rule of the transport, so it is checked here, in front of the
server's dispatch, for the requests that came over HTTP.

The tools' annotations are the server's: learned from its tool listings, and, when a call
names a tool not seen yet, by listing its tools first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from .served import HttpServed
from ..core.events import IncomingRequest
from ..core.tool_headers import CALL_TOOL

if TYPE_CHECKING:
    from ..aio.session import RequestScope


class ToolHeaderGate:
    """``dispatch`` is ``server.dispatch`` with the header check in front."""

    def __init__(self, server: HttpServed) -> None:
        self.server = server
        self.headers = server.tool_headers
        self._dispatch = server.dispatch

    def dispatch(self, event: IncomingRequest, scope: RequestScope) -> Awaitable[Any]:
        if event.spec.name == CALL_TOOL:
            http = event.http
            if http is not None and http.per_request and event.peer is not None:
                params = event.params
                tool = getattr(params, "name", "")
                headers = self.headers
                if tool not in headers.unannotated:
                    if headers.learning is not None or headers.must_learn(tool):
                        return self._learning_first(event, scope, tool)
                    headers.check(tool, getattr(params, "arguments", None), http.params)
        return self._dispatch(event, scope)

    async def _learning_first(self, event: IncomingRequest, scope: RequestScope, tool: str) -> Any:
        """A call of a tool whose annotations are not known yet: list the tools (or wait
        for the listing under way, so that no call goes unchecked meanwhile), then check."""
        assert event.http is not None
        headers = self.headers
        if headers.learning is not None:
            await asyncio.shield(headers.learning)
        else:
            learning = headers.learning = asyncio.get_running_loop().create_future()
            try:
                await self.server.learn_tool_headers(event, scope)
            finally:
                headers.learning = None
                learning.set_result(None)
        arguments = getattr(event.params, "arguments", None)
        self.server.tool_headers.check(tool, arguments, event.http.params)
        return await self.server.dispatch(event, scope)
