"""The ``mcpgen`` console script: a clear message when the generator extra is missing.

Every module of the extra is looked for before the CLI starts, not only the first one
imported: another package may bring some of them (uvicorn, in the ``http`` extra, brings
click), and the command would then die later with a traceback for the others.
"""

from __future__ import annotations

import importlib.util
import sys

#: The import names of the ``generator`` extra's distributions (see pyproject.toml).
GENERATOR_MODULES = ("click", "jinja2", "black", "datamodel_code_generator")


def missing_modules() -> list[str]:
    """The generator extra's modules this environment cannot import."""
    return [name for name in GENERATOR_MODULES if not _importable(name)]


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a finder that refuses it, a broken __spec__
        return False


def main() -> None:
    missing = missing_modules()
    if missing:  # installed without the generator's dependencies
        sys.stderr.write(
            f"error: the mcpgen command needs the generator extra ({', '.join(missing)} "
            "missing) (hint: pip install 'mcpgen[generator]')\n"
        )
        raise SystemExit(2)
    from .cli import main as cli

    cli()
