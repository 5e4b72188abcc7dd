"""The ``mcpgen`` command run in this process (click's runner), for tests of what the
commands do. ``tests/generator/test_cli.py`` runs the installed console script as a subprocess: the
entry point, exit codes and output streams of a real process are proven there once."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from mcpgen.generator.cli import main


@dataclass
class Ran:
    """What a command did: its exit code and what it wrote to each stream."""

    returncode: int
    stdout: str
    stderr: str


@contextmanager
def _cwd(path: Path | None) -> Iterator[None]:
    before = Path.cwd()
    if path is not None:
        os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def mcpgen(*args: str, env: Mapping[str, str | None] | None = None, cwd: Path | None = None) -> Ran:
    """Run ``mcpgen *args``; ``env`` overrides variables (``None`` unsets one). An
    exception the command does not turn into a message propagates (a traceback a user
    would see is a failure)."""
    with _cwd(cwd):
        result = CliRunner().invoke(main, list(args), env=dict(env or {}), catch_exceptions=False)
    return Ran(result.exit_code, result.stdout, result.stderr)
