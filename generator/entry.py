"""The ``mcpgen`` console script: a clear message when the generator extra is missing."""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from .cli import main as cli
    except ImportError as exc:  # installed without the generator's dependencies
        sys.stderr.write(
            f"error: the mcpgen command needs the generator extra ({exc.name} is missing) "
            "(hint: pip install 'mcpgen[generator]')\n"
        )
        raise SystemExit(2) from None
    cli()
