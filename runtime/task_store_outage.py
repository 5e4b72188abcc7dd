"""When a shared task store cannot be reached: one log line as the outage begins, one as
it ends, however many requests, watchers and heartbeats meet it meanwhile (each running
task's watcher re-reads its task every second: a line each would bury the log).

The store tells :class:`Outage` what each of its calls found (:meth:`~Outage.lost`,
:meth:`~Outage.reached`); requests in the outage are refused with
:class:`~runtime.task_store.TaskStoreUnavailable` by the store itself.
"""

from __future__ import annotations

import logging
import time

log = logging.getLogger("mcpgen.runtime.task_store")


class Outage:
    """Whether the store named ``name`` was reachable at its last call, and since when not."""

    __slots__ = ("name", "since", "calls")

    def __init__(self, name: str) -> None:
        self.name = name
        #: ``time.monotonic()`` of the first failed call of the outage (None: reachable).
        self.since: float | None = None
        #: Calls that failed in the outage.
        self.calls = 0

    def lost(self, error: BaseException) -> None:
        """A call could not reach the store: the outage begins (logged), or goes on."""
        self.calls += 1
        if self.since is None:
            self.since = time.monotonic()
            log.error(
                "%s unreachable (%s: %s); task requests are refused with -32000 until it is back",
                self.name,
                type(error).__name__,
                error,
            )

    def reached(self) -> None:
        """A call reached the store: an outage, if there was one, ends (logged)."""
        if self.since is not None:
            log.warning(
                "%s reachable again after %.1f s (%d calls failed meanwhile)",
                self.name,
                time.monotonic() - self.since,
                self.calls,
            )
            self.since, self.calls = None, 0


__all__ = ["Outage"]
