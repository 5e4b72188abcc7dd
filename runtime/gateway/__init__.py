"""The gateway: an upstream MCP server served again, on any transport, to clients of any
protocol version (``proxy``): several mounted under prefixes (``mount``), over one
connection per upstream or one per client (``pool``, ``link``), a legacy upstream's
questions carried across a 2026-07-28 client's input rounds (``parking``), each upstream
described by where it is (``upstream``), each client's requests bounded (``quota``).

Built only on the faces below it: a client of the upstream and a server of the
downstream, joined.

May import: ``core``, ``aio``, ``tasks``, ``server``, ``http``, ``client``, ``app``.
"""

from .mount import Access, Mount
from .proxy import Proxy, ProxyHttpApp
from .quota import ClientQuota
from .upstream import Upstream

__all__ = ["Access", "ClientQuota", "Mount", "Proxy", "ProxyHttpApp", "Upstream"]
