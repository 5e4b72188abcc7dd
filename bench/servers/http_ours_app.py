"""mcpgen's echo server over Streamable HTTP written on the registry: ``App`` +
``@app.tool`` over the generated 2026-07-28 stubs, the app's ``Server.http_app()`` under
uvicorn.

``python -I bench/servers/http_ours_app.py --port PORT [--loop L] [--http H]`` serves
``http://127.0.0.1:PORT/mcp`` with the same uvicorn options as ``http_ours.py`` and the same
observable answer (one text block echoing ``text``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.runtime import App, Server

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as python -I: no script dir
from uvicorn_cli import options as cli_options  # noqa: E402
from uvicorn_cli import serve  # noqa: E402


def build() -> Server:
    app = App("mcpgen-echo", "1.0.0", binding=stubs)

    @app.tool
    def echo(text: str) -> str:
        """Echo text"""
        return text

    return app.server


def options(argv: list[str] | None = None) -> argparse.Namespace:
    return cli_options("mcpgen's registry echo server over Streamable HTTP", argv)


if __name__ == "__main__":
    serve(build().http_app(), options())
