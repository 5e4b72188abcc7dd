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


#: Commands that run the runtime rather than the generator: what each needs, and its extra.
RUNTIME_COMMANDS = {"proxy": (("click", "uvicorn", "httpx"), "proxy")}


def missing_modules(command: str | None = None) -> list[str]:
    """The modules ``command`` (default: a generator command) needs that this environment
    cannot import."""
    needed = RUNTIME_COMMANDS[command][0] if command in RUNTIME_COMMANDS else GENERATOR_MODULES
    return [name for name in needed if not _importable(name)]


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a finder that refuses it, a broken __spec__
        return False


def main() -> None:
    command = next((arg for arg in sys.argv[1:] if not arg.startswith("-")), None)
    missing = missing_modules(command)
    if missing:  # installed without the command's dependencies
        extra = RUNTIME_COMMANDS[command][1] if command in RUNTIME_COMMANDS else "generator"
        what = f"mcpgen {command}" if command in RUNTIME_COMMANDS else "the mcpgen command"
        sys.stderr.write(
            f"error: {what} needs the {extra} extra ({', '.join(missing)} "
            f"missing) (hint: pip install 'mcpgen[{extra}]')\n"
        )
        raise SystemExit(2)
    from .cli import main as cli

    cli()
