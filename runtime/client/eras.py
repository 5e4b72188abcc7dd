"""What a client learned about a server's era, kept for the next connection to it.

``mode="auto"`` finds a server's era by asking (``server/discover``, then ``initialize``).
What it found is kept under the server's identity (its URL or command line) for
``max_age`` seconds: a server known to speak only the handshake is not probed again, and
a 2026-07-28 server whose ``server/discover`` result is still fresh (its ``ttlMs``, when
``cacheScope`` is ``public``) is not asked again at all. A failed connection forgets what
was kept; so does a server that refuses the version a kept result named.

:class:`MemoryEras` keeps it in the process (the default, shared by the process's
clients); :class:`FileEras` in a JSON file, for a command-line tool whose every run is a
new process. Both are bounded (``limit`` servers, the least recently connected to
forgotten first); any other store fits :class:`EraStore`.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Protocol

import msgspec

log = logging.getLogger("mcpgen.runtime.client")

#: Servers a store keeps, and seconds an era stays known, unless told otherwise.
LIMIT = 256
MAX_AGE = 3600.0


class Known(msgspec.Struct, frozen=True, kw_only=True):
    """What was learned of one server: its era and version, until when (``time.time()``),
    and for a 2026-07-28 server its ``server/discover`` result while that is fresh."""

    era: str
    version: str
    until: float
    discovered: dict[str, Any] | None = None
    discovered_until: float = 0.0

    def fresh_discovery(self, now: float) -> dict[str, Any] | None:
        return (
            self.discovered if self.discovered is not None and now < self.discovered_until else None
        )


class EraStore(Protocol):
    """Where eras are kept, by server identity, each at most ``max_age`` seconds."""

    max_age: float

    def get(self, server: str) -> Known | None: ...
    def remember(self, server: str, known: Known) -> None: ...
    def forget(self, server: str) -> None: ...


class MemoryEras:
    """Eras kept in this process: at most ``limit`` servers, each ``max_age`` seconds."""

    def __init__(self, limit: int = LIMIT, max_age: float = MAX_AGE) -> None:
        if limit < 1 or max_age <= 0:
            raise ValueError(f"limit and max_age must be positive, got {limit}, {max_age}")
        self.limit = limit
        self.max_age = max_age
        self._known: OrderedDict[str, Known] = OrderedDict()

    def __len__(self) -> int:
        return len(self._known)

    def get(self, server: str) -> Known | None:
        known = self._known.get(server)
        if known is not None and known.until <= time.time():
            del self._known[server]
            return None
        return known

    def remember(self, server: str, known: Known) -> None:
        self._known[server] = known
        self._known.move_to_end(server)
        while len(self._known) > self.limit:
            self._known.popitem(last=False)

    def forget(self, server: str) -> None:
        self._known.pop(server, None)


_Table = msgspec.json.Decoder(dict[str, Known])


class FileEras:
    """Eras kept in the JSON file at ``path`` (made with its folder on first write; a
    file that does not parse is read as empty and replaced, never trusted in part).
    Each write replaces the file whole, so a reader never sees half of one."""

    def __init__(
        self, path: str | os.PathLike[str], limit: int = LIMIT, max_age: float = 86400.0
    ) -> None:
        if limit < 1 or max_age <= 0:
            raise ValueError(f"limit and max_age must be positive, got {limit}, {max_age}")
        self.path = Path(path).expanduser()
        self.limit = limit
        self.max_age = max_age

    def _read(self) -> dict[str, Known]:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as exc:
            log.warning("cannot read the eras kept in %s: %s", self.path, exc)
            return {}
        if len(data) > 16 * 1024 * 1024:
            log.warning("%s is too large to be the eras kept; ignored", self.path)
            return {}
        try:
            return _Table.decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            log.warning("%s holds no eras (%s); it will be replaced", self.path, exc)
            return {}

    def _write(self, table: dict[str, Known]) -> None:
        now = time.time()
        kept = [(server, known) for server, known in table.items() if known.until > now]
        data = msgspec.json.encode(dict(kept[-self.limit :]))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(prefix=".eras-", dir=self.path.parent)
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                os.replace(temporary, self.path)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError as exc:
            log.warning("cannot keep the eras in %s: %s", self.path, exc)

    def get(self, server: str) -> Known | None:
        known = self._read().get(server)
        return known if known is not None and known.until > time.time() else None

    def remember(self, server: str, known: Known) -> None:
        table = self._read()
        table.pop(server, None)
        table[server] = known  # last: the most recently connected to
        self._write(table)

    def forget(self, server: str) -> None:
        table = self._read()
        if table.pop(server, None) is not None:
            self._write(table)


def learned(era: str, version: str, discovered: dict[str, Any] | None, max_age: float) -> Known:
    """What to keep of a connection that settled on ``version``; a ``server/discover``
    result is kept while its ``ttlMs`` says it is fresh, if anyone may reuse it."""
    now = time.time()
    until = now + max_age
    if discovered is None or discovered.get("cacheScope") != "public":
        return Known(era=era, version=version, until=until)
    ttl = discovered.get("ttlMs")
    if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl <= 0:
        return Known(era=era, version=version, until=until)
    fresh = now + min(ttl / 1000, max_age)
    return Known(
        era=era, version=version, until=until, discovered=discovered, discovered_until=fresh
    )


#: What every ``ClientSession`` not given ``eras`` shares.
ERAS = MemoryEras()
