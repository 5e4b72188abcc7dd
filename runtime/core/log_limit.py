"""Log lines nobody can multiply: a failure that every request may meet (the authorization
server down, a verifier's bug) is logged once per cause per ``interval`` seconds, with a
count of the repeats left out since; a flood of requests costs a dict lookup each, not a
line (nor a traceback) each.

Causes are strings the caller chooses (what failed, never what a client sent); at most
``MAX_CAUSES`` are remembered at once, and causes beyond them share one, so even a caller
whose causes vary without end writes a bounded number of lines per interval.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

#: Seconds between two lines about one cause, by default.
LOG_INTERVAL = 60.0
#: Causes remembered at once; more share the cause ``OTHER``.
MAX_CAUSES = 64
OTHER = "(other causes)"


class RateLimitedLog:
    """Writes to ``logger`` at most one line per cause per ``interval`` seconds."""

    __slots__ = ("logger", "interval", "clock", "seen")

    def __init__(
        self,
        logger: logging.Logger,
        interval: float = LOG_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if interval <= 0:
            raise ValueError("the log interval must be positive")
        self.logger = logger
        self.interval = interval
        self.clock = clock
        #: cause -> [when it was last logged, repeats left out since]
        self.seen: dict[str, list[float]] = {}

    def log(
        self,
        level: int,
        cause: str,
        message: str,
        *args: object,
        exc_info: bool = False,
        stacklevel: int = 1,
    ) -> bool:
        """Log ``message % args`` at ``level`` unless ``cause`` was logged less than the
        interval ago (then only counted); whether it was logged. The record names the
        caller ``stacklevel`` frames up as where it was logged from."""
        now = self.clock()
        seen = self.seen
        entry = seen.get(cause)
        if entry is None and len(seen) >= MAX_CAUSES:
            self._forget(now)
            if len(seen) >= MAX_CAUSES:
                cause = OTHER
                entry = seen.get(cause)
        if entry is not None and now - entry[0] < self.interval:
            entry[1] += 1
            return False
        repeats = int(entry[1]) if entry is not None else 0
        seen[cause] = [now, 0]
        if repeats:
            message += " (and %d times more since the last line about it)"
            args = (*args, repeats)
        self.logger.log(level, message, *args, exc_info=exc_info, stacklevel=stacklevel + 1)
        return True

    def warning(self, cause: str, message: str, *args: object) -> bool:
        return self.log(logging.WARNING, cause, message, *args, stacklevel=2)

    def _forget(self, now: float) -> None:
        """Drop the causes last logged an interval ago or more (their repeats untold:
        the next line about them starts a new count)."""
        stale = [cause for cause, (at, _) in self.seen.items() if now - at >= self.interval]
        for cause in stale:
            del self.seen[cause]


__all__ = ["LOG_INTERVAL", "MAX_CAUSES", "OTHER", "RateLimitedLog"]
