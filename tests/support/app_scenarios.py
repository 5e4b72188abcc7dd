"""What the App's test modules share: both client modes, and running one scenario."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

import msgspec

T = TypeVar("T")
#: The in-memory client's modes: the stateless modern era, and the legacy handshake.
MODES = ["auto", "legacy"]


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a client scenario to its end, bounded in time."""
    return asyncio.run(asyncio.wait_for(coro, 20.0))


def plain(value: Any) -> Any:
    """A typed value as plain JSON data, for comparing with a literal."""
    return msgspec.to_builtins(value)
