"""What carries a server's announcements to the other processes serving the same clients.

A server run as several processes (workers behind a balancer) holds each client in one of
them: a legacy session, a ``subscriptions/listen`` stream. A change announced in one
process (``Server.notify_changed``, a resource updated, a task's status) must reach the
clients the others hold. A :class:`Bus` publishes each announcement to the others and
hands theirs to this process's own delivery; with no bus, announcements stay in the
process, at no cost. ``runtime.cluster`` has one over Redis.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

#: Delivers an announcement to this process's clients: (method, params, what it concerns).
Deliver = Callable[[str, dict[str, Any], str], Awaitable[None]]


class Bus(Protocol):
    """Announcements between the processes of one server."""

    async def publish(self, method: str, params: dict[str, Any], wanted: str) -> None:
        """Send an announcement made here to the other processes (never raises: one that
        cannot be sent is logged)."""
        ...

    async def start(self, deliver: Deliver) -> None:
        """Begin handing the other processes' announcements to ``deliver``."""
        ...

    async def close(self) -> None:
        """Stop receiving, and let go of what the bus holds."""
        ...


__all__ = ["Bus", "Deliver"]
