"""One exception type for every failure a user can act on, with its exit code.

The CLI prints ``error: <message> (hint: <hint>)`` on one line and exits with ``code``.
Exit codes are part of the interface and documented in docs/spec-tracking.md:

    0  success
    1  ``generate --check``: generated output would change
    2  usage error (unknown command or option, missing argument, bad option value, unknown
       version, invalid name): click's own usage errors included
    3  schema acquisition failed (missing file, checksum mismatch, unreachable source, bad JSON,
       a mirror whose manifest names another commit than ``schema add --commit``)
    4  schema cannot be turned into bindings (a patch whose tests hold cannot be applied,
       an unsupported construct)
    5  target exists without ``--force`` (``mcpgen new`` into a non-empty directory,
       ``schema add`` of a version already pinned)
    6  a file or directory cannot be read or written (a parent that is a file, no
       permission, disk full): the CLI reports any ``OSError`` it did not expect this way
    7  ``mcpgen proxy``: its upstream cannot be reached when it starts (a command that
       exits or fails to start, a URL that does not answer as an MCP server)
"""

from __future__ import annotations

EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2
EXIT_SCHEMA = 3
EXIT_GENERATE = 4
EXIT_EXISTS = 5
EXIT_FILESYSTEM = 6
EXIT_UPSTREAM = 7


class GeneratorError(Exception):
    """An error with a one-line message, a hint that names the fix, and an exit code."""

    code = EXIT_GENERATE

    def __init__(self, message: str, hint: str = "", code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        if code is not None:
            self.code = code

    def one_line(self) -> str:
        text = " ".join(self.message.split())
        if self.hint:
            text += f" (hint: {' '.join(self.hint.split())})"
        return text


class UsageError(GeneratorError):
    code = EXIT_USAGE


class SchemaError(GeneratorError):
    code = EXIT_SCHEMA


class GenerateError(GeneratorError):
    code = EXIT_GENERATE


class ExistsError(GeneratorError):
    """Something is already there and ``--force`` was not given."""

    code = EXIT_EXISTS
