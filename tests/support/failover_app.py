"""A server for tests that kill its workers: a call that streams slowly, a tool that
updates a resource, legacy sessions shared through ``MCPGEN_STORE`` with a short
heartbeat (what a process's death waits for). Run as ``uvicorn support.failover_app:app
--app-dir tests``."""

from __future__ import annotations

import asyncio

from mcpgen.generated.v2025_11_25 import server as stubs
from mcpgen.runtime import App
from mcpgen.runtime.cluster import RedisSessions, Shared

#: Seconds a killed worker is still taken for alive.
ALIVE_S = 2.0

made = App("failover", binding=stubs)


@made.tool
async def steps(n: int, delay: float, ctx: stubs.Context) -> str:
    """Log ``step <i>`` n times, ``delay`` seconds apart."""
    for i in range(n):
        await ctx.log("info", f"step {i}")
        await asyncio.sleep(delay)
    return f"{n} steps"


@made.resource("mem://note", mime_type="text/plain")
def note() -> str:
    return "a note"


@made.tool
async def touch() -> str:
    """Announce that the note changed."""
    await made.resource_updated("mem://note")
    return "touched"


shared = Shared.from_environment()
assert shared is not None, "MCPGEN_STORE must name the Redis the workers share"
app = made.http_app(
    shared_sessions=RedisSessions(shared.url, prefix=shared.prefix, alive_s=ALIVE_S)
)
