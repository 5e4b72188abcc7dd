"""mcpgen's echo server over Streamable HTTP written on the registry: ``App`` +
``@app.tool`` over the generated 2026-07-28 stubs, the app's ``Server.http_app()`` under
uvicorn.

``python -I bench/servers/http_ours_app.py --port PORT [--loop L] [--http H]`` serves
``http://127.0.0.1:PORT/mcp`` with the same uvicorn options as ``http_ours.py`` and the same
observable answer (one text block echoing ``text``).
"""

from __future__ import annotations

import argparse
from typing import Any

import uvicorn

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.runtime import App, Server


def build() -> Server:
    app = App("mcpgen-echo", "1.0.0", binding=stubs)

    @app.tool
    def echo(text: str) -> str:
        """Echo text"""
        return text

    return app.server


def options(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="mcpgen's registry echo server over Streamable HTTP")
    p.add_argument("--port", type=int, required=True)
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


if __name__ == "__main__":
    serve(build().http_app(), options())
