"""A task server for the multi-process tests: ``python -m tests.peers.task_app --redis URL
[--lease-ms N] [--marks DIR] [--auth]``, served over Streamable HTTP on 127.0.0.1 (the port
it listens on is announced on stderr). Several such processes share one Redis task store.
With ``--auth`` the endpoint is protected: the bearer tokens ``alice`` and ``bob`` stand for
two principals (a test verifier, as a real one maps signed JWTs), any other is refused.

Its tools: ``ask_name`` (a task at once, that asks the user's name through the task),
``sleepy`` (sleeps; when cancelled it leaves ``DIR/<label>.cancelled``, so a test sees
the handler stopped in this process whichever process the cancel reached), ``quick``
(a task that completes at once, its outcome kept in the store).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import App, Tasks
from mcpgen.runtime.http.auth import Principal, ResourceServer
from mcpgen.runtime.http.auth.principal import InvalidToken
from mcpgen.runtime.tasks.redis_store import RedisTaskStore

ISSUER = "http://auth.test"


class Tokens:
    """A fixed token per principal."""

    async def verify(self, token: str) -> Principal:
        if token not in ("alice", "bob"):
            raise InvalidToken("unknown token")
        return Principal(token, ["mcp"], client_id="agent", issuer=ISSUER)


def build(redis: str, lease_ms: int, marks: Path, auth: bool = False) -> App:
    store = RedisTaskStore(redis, lease_ms=lease_ms)
    protection = None
    if auth:
        resource = "http://127.0.0.1/mcp"
        protection = ResourceServer(Tokens(), resource=resource, authorization_servers=[ISSUER])
    app = App("task-peer", binding=stubs, tasks=Tasks(store, immediate_ms=0), auth=protection)

    @app.tool(task="required", immediate_ms=0)
    async def ask_name(ctx: stubs.Context) -> str:
        """Ask the user's name, through the task."""
        form = {"type": "object", "properties": {"name": {"type": "string"}}}
        params = t.convert(
            {"message": "Your name?", "requestedSchema": form}, t.ElicitRequestParams
        )
        answer = await ctx.elicit(params)
        return f"Hello, {(answer.content or {}).get('name')}!"

    @app.tool(task="required", immediate_ms=0)
    async def sleepy(seconds: float, label: str) -> str:
        """Sleep; leave a mark when cancelled."""
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            (marks / f"{label}.cancelled").write_text("cancelled")
            raise
        return f"{label} slept {seconds}s"

    @app.tool(task="required", immediate_ms=0)
    def quick(text: str) -> str:
        """Complete at once."""
        return f"quick {text}"

    return app


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.peers.task_app")
    parser.add_argument("--redis", required=True)
    parser.add_argument("--lease-ms", type=int, default=1000)
    parser.add_argument("--marks", type=Path, default=Path("."))
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--auth", action="store_true")
    args = parser.parse_args()
    build(args.redis, args.lease_ms, args.marks, args.auth).run("http", port=args.port)


if __name__ == "__main__":
    main()
