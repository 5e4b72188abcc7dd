"""Run the conformance "everything" server: ``python -m examples.everything --transport stdio``."""

from __future__ import annotations

import argparse
import logging
import sys

from mcpgen.runtime import Server
from mcpgen.runtime.limits import DEFAULT, Limits

from .server import build_app


def build_server(limits: Limits | None = None) -> Server:
    """The everything server (a fresh one per call)."""
    return build_app(limits).server


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
    app = build_app(DEFAULT.but(max_message_bytes=args.max_message_bytes))
    if args.transport == "stdio":
        app.run_stdio()
    else:
        app.serve_http(host=args.host, port=args.port)


if __name__ == "__main__":
    main()
