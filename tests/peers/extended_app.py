"""An ``App`` with a protocol extension and middleware, for the tests of both points
(``tests/core/test_extensions.py``, ``tests/aio/test_middleware.py``): ``python
tests/peers/extended_app.py`` serves it over stdio, ``--http`` over Streamable HTTP on a
free port (announced on stderr)."""

from __future__ import annotations

import sys
from typing import Any

import msgspec

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.runtime import App, Call, Extension, ExtensionMethod, McpError, Next
from mcpgen.runtime.core.errors import INVALID_REQUEST


class EchoParams(msgspec.Struct):
    text: str
    times: int = 1


class EchoResult(msgspec.Struct):
    text: str
    era: str


class ShoutedParams(msgspec.Struct):
    text: str


#: An extension that exists only in the tests: a request the client sends, and a
#: notification the client may send back.
ECHO = Extension(
    "com.example/echo",
    [
        ExtensionMethod(name="com.example/echo", params=EchoParams, result=EchoResult),
        ExtensionMethod(name="com.example/shouted", params=ShoutedParams, kind="notification"),
    ],
    settings={"maxTimes": 3},
)

app = App("extended", binding=stubs, extensions=[ECHO])
#: What the middleware saw, in order: (method, the x-test header or None).
SEEN: list[tuple[str, str | None]] = []
SHOUTED: list[str] = []


@app.handle("com.example/echo")
async def echo(params: EchoParams, ctx: Any) -> EchoResult:
    if params.times > 3:
        raise McpError(-32602, "Invalid params: times is at most 3 (maxTimes)")
    return EchoResult(text=" ".join([params.text] * params.times), era=ctx.protocol_version)


@app.handle("com.example/shouted")
async def shouted(params: ShoutedParams) -> None:
    SHOUTED.append(params.text)


@app.use
async def audit(call: Call, call_next: Next) -> Any:
    """Outermost: records every request that reaches dispatch."""
    SEEN.append((call.method, call.header("x-test")))
    return await call_next(call)


@app.use
async def policy(call: Call, call_next: Next) -> Any:
    """Refuses one tool outright, fails on another (its text must not reach the client),
    and rewrites the echo extension's params."""
    name = getattr(call.params, "name", None)
    if call.method == "tools/call" and name == "forbidden":
        raise McpError(INVALID_REQUEST, "Invalid request: forbidden by policy")
    if call.method == "tools/call" and name == "explode":
        raise RuntimeError("secret internals of the middleware")
    if call.method == "com.example/echo":
        call = call.replace(
            params=EchoParams(text=call.params.text.upper(), times=call.params.times)
        )
    return await call_next(call)


@app.tool
def seen() -> str:
    """What the audit middleware recorded, one 'method header' line each."""
    return "\n".join(f"{method} {header}" for method, header in SEEN)


@app.tool
def shouts() -> str:
    """The texts of the extension's notifications received so far, one a line."""
    return "\n".join(SHOUTED)


@app.tool
async def roots(ctx: stubs.Context) -> str:
    """The client's roots, asked of it (a request in the legacy era, an input request in
    the modern one)."""
    found = await ctx.list_roots(key="roots")
    return ", ".join(r.uri for r in found.roots)


@app.tool
def forbidden() -> str:
    """Never runs: the policy middleware refuses it."""
    return "ran"


@app.tool
def explode() -> str:
    """Never runs: the policy middleware fails first."""
    return "ran"


if __name__ == "__main__":
    if "--http" in sys.argv:
        app.run("http", port=0)
    else:
        app.run()
