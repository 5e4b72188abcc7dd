"""Pagination of list results: a page of items and an opaque cursor to the next page."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import TypeVar

from ..core.errors import INVALID_PARAMS, McpError

T = TypeVar("T")
_PREFIX = b"mcpgen-page:"


def cursor_for(offset: int) -> str:
    """The opaque cursor of the page starting at ``offset``."""
    return base64.urlsafe_b64encode(_PREFIX + b"%d" % offset).decode("ascii")


def offset_of(cursor: str) -> int:
    """Where the page ``cursor`` names starts; -32602 for a cursor this server never gave."""
    try:
        raw = base64.urlsafe_b64decode(cursor.encode("ascii"))
        if raw.startswith(_PREFIX) and raw[len(_PREFIX) :].isdigit():
            return int(raw[len(_PREFIX) :])
    except (binascii.Error, ValueError):
        pass
    raise McpError(INVALID_PARAMS, "Invalid params: unknown cursor", {"path": "$.params.cursor"})


def page(items: Sequence[T], cursor: str | None, size: int) -> tuple[Sequence[T], str | None]:
    """The page of ``items`` that ``cursor`` names (None: the first) and the next page's
    cursor (None: this is the last)."""
    start = offset_of(cursor) if cursor else 0
    if start > len(items):
        raise McpError(
            INVALID_PARAMS, "Invalid params: cursor past the end", {"path": "$.params.cursor"}
        )
    end = start + size
    return items[start:end], (cursor_for(end) if end < len(items) else None)
