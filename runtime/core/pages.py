"""Every page of a list: ``nextCursor`` followed until the server says there is no more.

A server may split ``tools/list``, ``prompts/list``, ``resources/list``,
``resources/templates/list`` (and the tasks extension's ``tasks/list``) into pages; a
client that reads only the first sees part of what the server has. :func:`pages` follows
the cursors, :func:`gather` collects every page's items. Both are bounded
(``Limits.max_pages``, ``Limits.max_list_items``), and a cursor the server sends a second
time ends the reading with :class:`PaginationError` rather than going round forever. A
client reads a server's lists so (``ClientSession.pages``, ``list_all``), and a server its
own tools when it needs their header annotations.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import msgspec
from msgspec import UNSET

from .errors import McpgenError
from .json_values import as_array, as_object
from .limits import Limits

#: Sends one request: (method, params) -> its result, typed or plain.
Fetch = Callable[[str, Any], Awaitable[Any]]

#: The items of each paginated list: (field on the wire, attribute of the typed result).
ITEMS: dict[str, tuple[str, str]] = {
    "tools/list": ("tools", "tools"),
    "prompts/list": ("prompts", "prompts"),
    "resources/list": ("resources", "resources"),
    "resources/templates/list": ("resourceTemplates", "resource_templates"),
    "tasks/list": ("tasks", "tasks"),
}


class PaginationError(McpgenError):
    """A list the client stopped reading: its cursors came round again, or it ran past
    ``Limits.max_pages`` pages or ``Limits.max_list_items`` items."""


def with_cursor(params: Any, cursor: str | None) -> Any:
    """``params`` (None, plain JSON or a typed struct) asking for the page at ``cursor``."""
    if cursor is None:
        return UNSET if params is None else params
    plain = as_object(msgspec.to_builtins(params)) if params not in (None, UNSET) else None
    asked: dict[str, Any] = dict(plain) if plain is not None else {}
    asked["cursor"] = cursor
    return asked


def next_cursor(page: Any) -> str | None:
    """Where the page after ``page`` starts; None on the last page."""
    plain = as_object(page)
    cursor = plain.get("nextCursor") if plain is not None else getattr(page, "next_cursor", None)
    return cursor if isinstance(cursor, str) and cursor else None


def items(page: Any, method: str) -> list[Any]:
    """The items of one page of ``method``'s list (typed or plain, as the page is)."""
    wire, attribute = ITEMS.get(method, ("", ""))
    plain = as_object(page)
    found = plain.get(wire) if plain is not None else getattr(page, attribute, None)
    return list(as_array(found) or [])


async def pages(fetch: Fetch, method: str, params: Any, limits: Limits) -> AsyncIterator[Any]:
    """Each page of ``method``'s list, first to last, read as they are consumed."""
    import hashlib  # on first use: most processes never page through a list

    seen: set[bytes] = set()  # digests: a hostile cursor may be long
    cursor: str | None = None
    for read in range(1, limits.max_pages + 1):
        page = await fetch(method, with_cursor(params, cursor))
        yield page
        cursor = next_cursor(page)
        if cursor is None:
            return
        digest = hashlib.sha256(cursor.encode()).digest()
        if digest in seen:
            shown = cursor if len(cursor) <= 40 else f"{cursor[:40]}…"
            raise PaginationError(
                f"{method}: the server sent the cursor {shown!r} again after {read} pages;"
                " its pages go round in a loop"
            )
        seen.add(digest)
    raise PaginationError(
        f"{method}: the server has more than {limits.max_pages} pages (Limits.max_pages)"
    )


async def gather(fetch: Fetch, method: str, params: Any, limits: Limits) -> list[Any]:
    """Every item of ``method``'s list, in the server's order, from all its pages."""
    if method not in ITEMS:
        raise ValueError(f"{method} is no paginated list; one of {sorted(ITEMS)}")
    found: list[Any] = []
    async for page in pages(fetch, method, params, limits):
        found.extend(items(page, method))
        if len(found) > limits.max_list_items:
            raise PaginationError(
                f"{method}: the server lists more than {limits.max_list_items} items"
                " (Limits.max_list_items)"
            )
    return found
