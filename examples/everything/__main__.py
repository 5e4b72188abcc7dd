"""Run the conformance "everything" server: ``python -m examples.everything --transport stdio``."""

from __future__ import annotations

import argparse
import logging
import sys

from mcpgen.runtime import Server
from mcpgen.runtime.limits import DEFAULT, Limits

from . import server as fixtures
from .server import Everything


def build_server(limits: Limits | None = None) -> Server:
    fixtures.SERVER = server = Server(
        Everything(),
        name="mcpgen-everything",
        version="0.1.0",
        instructions="Conformance fixtures for mcpgen.",
        list_changed=("tools", "prompts", "resources"),
        limits=limits,
    )
    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m examples.everything")
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3001)
    parser.add_argument("--log-level", default="WARNING")
    parser.add_argument(
        "--max-message-bytes",
        type=int,
        default=DEFAULT.max_message_bytes,
        help="Limits.max_message_bytes: the longest message read (default: 4 MiB)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper())
    server = build_server(DEFAULT.but(max_message_bytes=args.max_message_bytes))
    if args.transport == "stdio":
        server.run_stdio()
    else:
        from mcpgen.runtime.http import serve

        serve(server, host=args.host, port=args.port)


if __name__ == "__main__":
    main()
