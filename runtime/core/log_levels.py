"""Log levels (syslog's, RFC 5424, as MCP names them): their order, and a ``level`` read
from ``logging/setLevel``."""

from __future__ import annotations

import msgspec

from .errors import INVALID_PARAMS, McpError
from .params import validation_error

LOG_LEVELS = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)


def level_at_least(level: str, threshold: str) -> bool:
    """Whether log ``level`` is at or above ``threshold`` (unknown levels pass)."""
    try:
        return LOG_LEVELS.index(level) >= LOG_LEVELS.index(threshold)
    except ValueError:
        return True


class _SetLevelParams(msgspec.Struct):
    level: str


def read_level(params: msgspec.Raw | None) -> str:
    """The level ``logging/setLevel``'s params name; -32602 unless it is one of them."""
    try:
        level = msgspec.json.decode(params or b"{}", type=_SetLevelParams).level
    except msgspec.ValidationError as exc:
        raise validation_error(exc, "params") from None
    if level not in LOG_LEVELS:
        raise McpError(
            INVALID_PARAMS,
            f"Invalid params: unknown log level {level!r}",
            {"path": "$.params.level"},
        )
    return level
