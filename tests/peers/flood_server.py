"""The everything server with limits of a test's choosing, for the flood tests.

Run from the repository root::

    python -m tests.peers.flood_server --transport stdio --limit max_in_flight=16
    python -m tests.peers.flood_server --transport http --limit max_sessions=200

Each ``--limit name=value`` sets one field of ``runtime.core.limits.Limits`` (the rest keep
their defaults). ``--max-files N`` lowers the process's file-descriptor limit (``ulimit
-n``) to N; ``--auth-token TOKEN`` protects the endpoint with a resource server that
accepts that one bearer token (everything else gets 401, decided from the headers). Over HTTP it runs ``runtime.http.serve.serve`` (uvicorn with the header
timeout) on 127.0.0.1 and an ephemeral port, announced on stderr as
``mcpgen: serving MCP at http://127.0.0.1:<port>/mcp``, with HTTP+SSE at ``/sse`` and
WebSocket at ``/ws`` beside it.

Besides the everything tools, ``chatter`` [count, size] reports ``count`` progress
notifications (when the request asked for progress), each with a message of ``size``
characters, then answers: one long SSE stream on demand.
"""

from __future__ import annotations

import argparse
import hmac
import logging
import resource
import sys

from mcpgen.generated.v2026_07_28 import server as s
from mcpgen.runtime.http.auth import InvalidToken, Principal, ResourceServer
from mcpgen.runtime.http.serve import serve
from mcpgen.runtime.core.limits import DEFAULT, Limits

from examples.everything.server import build_app


async def chatter(ctx: s.Context, count: int = 10, size: int = 100) -> str:
    """Report ``count`` progress notifications of ``size`` characters each, then answer."""
    padding = "x" * size
    for step in range(1, count + 1):
        await ctx.report_progress(step, count, padding)
    return f"chattered {count} times"


class OneToken:
    """A token verifier that knows one token (a test's stand-in for an authorization
    server: what is measured here is what happens before any token is checked)."""

    def __init__(self, token: str) -> None:
        self.token = token

    async def verify(self, token: str) -> Principal:
        if not hmac.compare_digest(token, self.token):
            raise InvalidToken("unknown token")
        return Principal("flood-client", ["mcp"], client_id="flood", issuer="http://flood.test")


def parse_limits(settings: list[str]) -> Limits:
    changes: dict[str, float] = {}
    for setting in settings:
        name, _, value = setting.partition("=")
        if name not in Limits.__struct_fields__:
            raise SystemExit(f"unknown limit {name!r}")
        changes[name] = float(value) if "." in value else int(value)
    return DEFAULT.replace(**changes)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.peers.flood_server")
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--limit", action="append", default=[], help="name=value")
    parser.add_argument("--max-files", type=int, default=None, help="ulimit -n for this process")
    parser.add_argument("--auth-token", default=None, help="the one bearer token accepted")
    parser.add_argument("--http", choices=["h11", "httptools"], default="httptools")
    args = parser.parse_args(argv)
    if args.max_files is not None:
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (args.max_files, hard))
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    limits = parse_limits(args.limit)
    app = build_app(limits, name="mcpgen-flood")
    app.add_tool(chatter)
    if args.transport == "stdio":
        app.run()
    else:
        auth = None
        if args.auth_token is not None:
            auth = ResourceServer(
                OneToken(args.auth_token),
                resource="http://127.0.0.1/mcp",
                authorization_servers=["http://flood.test"],
            )
        serve(
            app.server,
            "127.0.0.1",
            0,
            limits=limits,
            http=args.http,
            auth=auth,
            websocket_path="/ws",
        )


if __name__ == "__main__":
    main()
