"""mcpgen's echo server written on the registry: ``App`` + ``@app.tool`` over the generated
2025-11-25 stubs, served by the ``Server`` the app produces.

``python -I bench/servers/ours_app.py [--versions V[,V...]]``: the same observable answer as
``ours.py`` (one text block echoing ``text``), the tool's schema derived from the signature
and its arguments validated by msgspec instead of read by hand.
"""

from __future__ import annotations

import sys

from mcpgen.generated.v2025_11_25 import server as stubs
from mcpgen.runtime import App, Server


def build(argv: list[str]) -> Server:
    versions = argv[argv.index("--versions") + 1].split(",") if "--versions" in argv else None
    app = App("mcpgen-echo", "1.0.0", binding=stubs, versions=versions)

    @app.tool
    def echo(text: str) -> str:
        """Echo text"""
        return text

    return app.server


if __name__ == "__main__":
    build(sys.argv[1:]).run_stdio()
