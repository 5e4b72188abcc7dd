"""What the processes of one server share, to serve the same clients from any of them:
the announcement bus over Redis pub/sub (``bus``), legacy sessions any process serves
(``sessions``), and one setting that turns every shared
store on (``config``: ``MCPGEN_STORE``). The Redis parts need ``pip install
'mcpgen[redis]'`` and are imported only when asked for; the layers below never import
this package.

May import: ``core``, ``aio``, ``tasks``, ``server``, ``http``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .config import STORE_ENV, Shared

if TYPE_CHECKING:
    from .bus import RedisBus
    from .sessions import RedisSessions


def __getattr__(name: str) -> Any:
    if name == "RedisBus":  # needs mcpgen[redis]: loaded when asked for
        from .bus import RedisBus

        return RedisBus
    if name == "RedisSessions":
        from .sessions import RedisSessions

        return RedisSessions
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["RedisBus", "RedisSessions", "STORE_ENV", "Shared"]
