"""The gateway: an upstream MCP server served again, on any transport, to clients of any
protocol version (``proxy``), over one connection per upstream or one per client
(``link``), the upstream described by where it is (``upstream``).

Built only on the faces below it: a client of the upstream and a server of the
downstream, joined.

May import: ``core``, ``aio``, ``tasks``, ``server``, ``http``, ``client``, ``app``.
"""

from .proxy import Proxy, ProxyHttpApp
from .upstream import Upstream

__all__ = ["Proxy", "ProxyHttpApp", "Upstream"]
