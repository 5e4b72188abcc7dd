"""Run the conformance "everything" server: ``python -m examples.everything --transport stdio``."""

from __future__ import annotations

import argparse
import logging
import sys

import os

from mcpgen.runtime import Server, Tasks
from mcpgen.runtime import Limits

from .server import build_app


def task_store(url: str | None) -> Tasks | None:
    """Tasks kept in Redis at ``url`` (shared by every worker given the same), or None:
    in this process's memory."""
    if not url:
        return None
    from mcpgen.runtime import RedisTaskStore

    return Tasks(RedisTaskStore(url))


def build_server(limits: Limits | None = None, tasks_url: str | None = None) -> Server:
    """The everything server (a fresh one per call); ``tasks_url``: a Redis URL for its
    tasks (default ``$MCPGEN_TASK_STORE``, else memory)."""
    url = tasks_url if tasks_url is not None else os.environ.get("MCPGEN_TASK_STORE")
    return build_app(limits, tasks=task_store(url)).server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m examples.everything")
    parser.add_argument("--transport", choices=["stdio", "http", "websocket"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3001)
    parser.add_argument("--log-level", default="WARNING")
    parser.add_argument(
        "--max-message-bytes",
        type=int,
        default=Limits().max_message_bytes,
        help="Limits.max_message_bytes: the longest message read (default: 4 MiB)",
    )
    parser.add_argument(
        "--task-store",
        default=os.environ.get("MCPGEN_TASK_STORE"),
        help="a Redis URL to keep tasks in, shared by every process given it (pip install "
        "'mcpgen[redis]'); default $MCPGEN_TASK_STORE, else this process's memory",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper())
    limits = Limits().replace(max_message_bytes=args.max_message_bytes)
    app = build_app(limits, tasks=task_store(args.task_store))
    if args.transport == "stdio":
        app.run()
    else:  # http: Streamable HTTP at /mcp, HTTP+SSE at /sse; websocket: ws://…/mcp
        app.run(args.transport, host=args.host, port=args.port)


if __name__ == "__main__":
    main()
