"""What a client does when a legacy server forgets its session, as settings and an event.

Over Streamable HTTP a server that answers 404 to a request carrying ``Mcp-Session-Id``
no longer knows that session (it restarted, evicted it when idle, or the request reached
another worker), and the transport says the client MUST start a new one with a fresh
``initialize``. ``ClientSession`` always does; :class:`Recovery` says which failed requests
it then sends again (those that change nothing, by default: a tool call only with the
caller's consent), how many renewals in a row it tries, and whom it tells
(:class:`SessionRenewed`). A request it does not repeat fails with :class:`SessionLost`. Over stdio, :class:`Restart`
says whether a server process that ended is started again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ..core.errors import INVALID_REQUEST, McpError

#: Requests that change nothing at the server: sending one again on the new session is
#: harmless. (``resources/subscribe`` is not here: the client subscribes again itself.)
SAFE_TO_RETRY = frozenset(
    {
        "ping",
        "tools/list",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "completion/complete",
    }
)


@dataclass(frozen=True)
class SessionRenewed:
    """The server lost session ``lost`` and the client initialized a new one (``version``
    negotiated); ``resubscribed`` URIs were subscribed again; ``renewals`` counts them in
    this client's life."""

    lost: str
    version: str
    resubscribed: tuple[str, ...]
    renewals: int


class SessionLost(McpError):
    """A request the server failed because it lost the session (or, over stdio, because
    the server process ended and was started again), not sent again on the new one (its
    method is not in ``Recovery.retry``); the session itself is renewed."""

    def __init__(self, method: str, what: str = "the server lost the session") -> None:
        super().__init__(
            INVALID_REQUEST,
            f"{what} during {method}; a new session is ready, and "
            f"{method} was not sent again (Recovery.retry)",
        )
        self.method = method


@dataclass(frozen=True)
class Restart:
    """``stdio_client(restart=...)``: a server process that ends is started again, at most
    ``max_restarts`` times within ``window`` seconds (beyond it, the error stands), and the
    session opened anew; a request it cut off is sent again as ``Recovery.retry`` says."""

    max_restarts: int = 3
    window: float = 60.0

    def __post_init__(self) -> None:
        if self.max_restarts < 1 or self.window <= 0:
            raise ValueError("Restart.max_restarts and Restart.window must be positive")


@dataclass(frozen=True)
class Recovery:
    """``ClientSession(recovery=...)``: after a new session replaces a lost one, the
    methods whose failed request is sent once more (``retry``; add ``"tools/call"`` to
    consent for tool calls), the most renewals in a row without an answered request in
    between before the client gives up (``max_renewals``), and ``on_renewed``, called
    with each :class:`SessionRenewed`."""

    retry: frozenset[str] = SAFE_TO_RETRY
    max_renewals: int = 3
    on_renewed: Callable[[SessionRenewed], Awaitable[None] | None] | None = None

    def __post_init__(self) -> None:
        if self.max_renewals < 1:
            raise ValueError(f"Recovery.max_renewals must be positive, got {self.max_renewals}")


__all__ = ["Recovery", "Restart", "SAFE_TO_RETRY", "SessionLost", "SessionRenewed"]
