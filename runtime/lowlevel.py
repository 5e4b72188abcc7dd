"""For people writing transports or drivers: the sans-IO ``Connection`` (frames in,
events and frames out), the asyncio ``Session`` that drives one over any ``Transport``
(``receive() -> bytes | None``, ``send(bytes)``, ``close()``; ``WritesNow`` where a frame
can be written without a coroutine, as stdio's and the in-memory one's), the events, JSON-RPC
framing, version sets, and the stdio and in-memory transports as examples to follow."""

from .aio.memory import MemoryTransport, memory_pair
from .aio.session import RequestScope, Session
from .aio.transport import Transport, WritesNow
from .aio.stdio import StdioProcess, StdioServerTransport
from .core import events, jsonrpc
from .core.connection import Connection
from .core.lifecycle import State
from .core.limits import CLIENT, DEFAULT, Limits
from .core.negotiation import ERAS, Versions

__all__ = [
    "CLIENT",
    "Connection",
    "DEFAULT",
    "ERAS",
    "Limits",
    "MemoryTransport",
    "RequestScope",
    "Session",
    "State",
    "StdioProcess",
    "StdioServerTransport",
    "Transport",
    "Versions",
    "WritesNow",
    "events",
    "jsonrpc",
    "memory_pair",
]
