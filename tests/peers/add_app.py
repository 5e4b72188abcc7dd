"""A four-line tool as an mcpgen ``App``: ``python tests/peers/add_app.py`` serves
it over stdio, ``--http`` over Streamable HTTP on a free port (printed on stderr)."""

from __future__ import annotations

import sys

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.runtime import App

app = App("adder", binding=stubs)


@app.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    if "--http" in sys.argv:
        app.run("http", port=0)
    else:
        app.run()
