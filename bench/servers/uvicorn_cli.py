"""The command line and uvicorn settings every HTTP bench server shares, so that they
differ in their app alone: ``--port PORT [--loop L] [--http H]`` (``--stateful`` where
the server has a stateful mode), one worker on 127.0.0.1, log level warning, no access
log. It imports only what each of them loads anyway (argparse, uvicorn); the scripts run
with ``python -I`` (no script directory on ``sys.path``), so they add theirs first.
"""

from __future__ import annotations

import argparse
from typing import Any

import uvicorn


def options(
    description: str, argv: list[str] | None = None, stateful: bool = False
) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--port", type=int, required=True)
    if stateful:
        p.add_argument("--stateful", action="store_true", help="stateless_http=False")
    p.add_argument("--loop", default="auto", help="uvicorn --loop (auto)")
    p.add_argument("--http", default="auto", help="uvicorn --http (auto)")
    return p.parse_args(argv)


def serve(app: Any, args: argparse.Namespace) -> None:
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=args.port,
        loop=args.loop,
        http=args.http,
        log_level="warning",
        access_log=False,
    )
