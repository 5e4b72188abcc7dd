"""One exception type for every failure a user can act on, with its exit code.

The CLI prints ``error: <message> (hint: <hint>)`` on one line and exits with ``code``.
Exit codes are part of the interface and documented in the README:

    0  success
    1  ``generate --check``: generated output would change
    2  usage error (unknown option, unknown version, invalid name)
    3  schema acquisition failed (missing file, checksum mismatch, unreachable source, bad JSON)
    4  schema cannot be turned into bindings (patch no longer applies, unsupported construct)
    5  target exists (``mcpgen new`` into a non-empty directory without ``--force``)
"""

from __future__ import annotations

EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2
EXIT_SCHEMA = 3
EXIT_GENERATE = 4
EXIT_EXISTS = 5


class McpgenError(Exception):
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


class UsageError(McpgenError):
    code = EXIT_USAGE


class SchemaError(McpgenError):
    code = EXIT_SCHEMA


class GenerateError(McpgenError):
    code = EXIT_GENERATE
