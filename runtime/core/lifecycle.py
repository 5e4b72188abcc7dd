"""A connection's lifecycle as data: its states, and which event moves it from one to the next.

Read by ``Connection`` alone, which is the only writer of its state (h11 keeps its state
machine the same way). The legacy era walks NEW → INITIALIZING → READY through the
``initialize`` handshake; a modern client goes NEW → READY when ``server/discover``
answers; a modern server never leaves NEW, since each request carries what a handshake
would have settled. A legacy client whose session the server lost goes back to NEW, to
initialize again. Any state may close.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Literal

Role = Literal["server", "client"]


class State(enum.Enum):
    NEW = "new"
    #: ``initialize`` answered (server) or sent (client), ``initialized`` not yet seen.
    INITIALIZING = "initializing"
    READY = "ready"
    CLOSED = "closed"


Trigger = Literal[
    "initialize received",  # a server read a client's initialize request
    "initialized received",  # a server read notifications/initialized
    "initialize sent",  # a client sent its initialize request
    "initialize answered",  # a client read the server's initialize result
    "discovered",  # a modern client read the server's server/discover result
    "session lost",  # the server no longer knows a legacy client's session (HTTP 404)
    "taken up",  # a server took up a legacy session another process of it began
    "closed",  # the transport ended
]

#: (role, state, trigger) → the next state. A pair missing here is no transition: the
#: trigger is refused (``initialize`` twice) or ignored (a stray ``initialized``).
TRANSITIONS: Mapping[tuple[Role, State, Trigger], State] = {
    ("server", State.NEW, "initialize received"): State.INITIALIZING,
    ("server", State.INITIALIZING, "initialized received"): State.READY,
    # A legacy session begun by another process of the server (one sharing its sessions),
    # carried on here: its handshake is done (a stray ``initialized`` is ignored).
    ("server", State.NEW, "taken up"): State.READY,
    ("client", State.NEW, "initialize sent"): State.INITIALIZING,
    ("client", State.INITIALIZING, "initialize answered"): State.READY,
    ("client", State.NEW, "discovered"): State.READY,
    # A modern client probes again when the server names another version.
    ("client", State.READY, "discovered"): State.READY,
    # A legacy client whose session the server forgot (a restart, an eviction, another
    # worker) starts over with a new initialize, as the transport requires.
    ("client", State.READY, "session lost"): State.NEW,
    **{(role, state, "closed"): State.CLOSED for role in ("server", "client") for state in State},
}


def next_state(role: Role, state: State, trigger: Trigger) -> State | None:
    """The state ``trigger`` leads to from ``state``; None when it leads nowhere."""
    return TRANSITIONS.get((role, state, trigger))


#: Requests answered in a state before READY, by state. Everything else waits for the
#: handshake (legacy era: -32600 "before initialization"). ``ping`` is answered always.
ANSWERED_BEFORE_READY: Mapping[State, frozenset[str]] = {
    State.NEW: frozenset({"initialize", "ping"}),
    # The spec lets a server answer before ``initialized`` arrives; many clients send
    # their first request right behind it.
    State.INITIALIZING: frozenset({"*"}),
}


def answers_before_ready(state: State, method: str) -> bool:
    """Whether a request for ``method`` is answered in ``state`` (READY: every one)."""
    if state is State.READY:
        return True
    allowed = ANSWERED_BEFORE_READY.get(state, frozenset())
    return "*" in allowed or method in allowed


#: The methods the runtime answers or consumes itself, and the module that does. The
#: generator leaves them out of the stubs (``schema/overrides.json``: ``runtime_methods``,
#: a version's ``RUNTIME_METHODS``); a version whose bindings name one missing here is
#: served with a warning (``negotiation.VersionInfo.of``), since its handlers lack it.
RUNTIME_METHODS: Mapping[str, str] = {
    "initialize": "connection",
    "notifications/initialized": "connection",
    "ping": "connection",
    "logging/setLevel": "connection",
    "notifications/cancelled": "connection",
    "notifications/progress": "connection",
    "server/discover": "connection",
    "subscriptions/listen": "connection",
    "notifications/subscriptions/acknowledged": "connection",
}
