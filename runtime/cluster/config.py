"""One setting for every store a server's processes share: ``MCPGEN_STORE``, the URL of
the Redis they share (``redis://``, ``rediss://`` or ``unix://``), and
``MCPGEN_STORE_PREFIX``, what the keys and channels of one server begin with (default
``mcpgen:``; servers sharing one Redis each take their own). Set, an ``App`` keeps its
tasks and legacy sessions there and announces its changes through it (``Shared``); unset, everything stays in
the process, as before."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..tasks.engine import Tasks
    from .bus import RedisBus
    from .sessions import RedisSessions

STORE_ENV, PREFIX_ENV = "MCPGEN_STORE", "MCPGEN_STORE_PREFIX"
SCHEMES = ("redis://", "rediss://", "unix://")


@dataclass(frozen=True)
class Shared:
    """The Redis at ``url`` as every shared store of one server (keys and channels under
    ``prefix``)."""

    url: str
    prefix: str = "mcpgen:"

    def __post_init__(self) -> None:
        if not self.url.startswith(SCHEMES):
            raise ValueError(
                f"{STORE_ENV} must be a Redis URL ({', '.join(SCHEMES)}), not {self.url!r}"
            )
        if not self.prefix:
            raise ValueError(f"{PREFIX_ENV} must not be empty")

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Shared | None:
        """What ``MCPGEN_STORE`` and ``MCPGEN_STORE_PREFIX`` say (None: unset)."""
        env = os.environ if environ is None else environ
        url = env.get(STORE_ENV, "").strip()
        if not url:
            return None
        return cls(url, env.get(PREFIX_ENV, "").strip() or "mcpgen:")

    def bus(self) -> RedisBus:
        """The announcement bus of the server's processes."""
        from .bus import RedisBus

        return RedisBus(self.url, prefix=self.prefix)

    def sessions(self) -> RedisSessions:
        """The legacy sessions every process of the server serves."""
        from .sessions import RedisSessions

        return RedisSessions(self.url, prefix=self.prefix)

    def tasks(self) -> Tasks:
        """Tasks kept in the shared store."""
        from ..tasks.engine import Tasks
        from ..tasks.redis_store import RedisTaskStore

        return Tasks(RedisTaskStore(self.url, prefix=f"{self.prefix}tasks:"))


__all__ = ["PREFIX_ENV", "STORE_ENV", "Shared"]
