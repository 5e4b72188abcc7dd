"""What the processes of one server share, to serve the same clients from any of them:
the announcement bus over Redis pub/sub (``bus``). ``pip install 'mcpgen[redis]'``; the
layers below never import this package.

May import: ``core``, ``aio``, ``tasks``, ``server``, ``http``.
"""

from .bus import RedisBus

__all__ = ["RedisBus"]
