"""When a shared store (tasks, the announcement bus) cannot serve: one log line as the outage begins, one as it
ends, however many requests, watchers and heartbeats meet it meanwhile (each running
task's watcher re-reads its task every second: a line each would bury the log).

The store tells :class:`Outage` what each of its calls found (:meth:`~Outage.lost`,
:meth:`~Outage.reached`); requests in the outage are refused with
:class:`~runtime.tasks.store.TaskStoreUnavailable` by the store itself.
"""

from __future__ import annotations

import logging
import time

log = logging.getLogger("mcpgen.runtime.tasks.store")

#: Seconds without a refusal before an outage of refusals (out of memory, read-only) is
#: over: reads succeed meanwhile, and only a write would show the refusals ended.
REFUSALS_SETTLE = 10.0


class Outage:
    """Whether the store named ``name`` could serve its last calls, and since when not."""

    __slots__ = ("name", "meanwhile", "since", "calls", "settled_at")

    def __init__(
        self,
        name: str,
        meanwhile: str = "task requests are refused with -32000 until it is back",
    ) -> None:
        self.name = name
        #: What happens while it lasts, for the log line that says it began.
        self.meanwhile = meanwhile
        #: ``time.monotonic()`` of the first failed call of the outage (None: serving).
        self.since: float | None = None
        #: Calls that failed in the outage.
        self.calls = 0
        #: When a call that succeeds may end the outage: at once after an unreachable
        #: store's failure; ``REFUSALS_SETTLE`` after a refusal (its reads still succeed).
        self.settled_at = 0.0

    def lost(self, error: BaseException, refused: bool = False) -> None:
        """A call failed for the store's sake (``refused``: it answered that it cannot
        serve, rather than not at all): the outage begins (logged), or goes on."""
        self.calls += 1
        now = time.monotonic()
        self.settled_at = now + REFUSALS_SETTLE if refused else now
        if self.since is None:
            self.since = now
            log.error(
                "%s unreachable (%s: %s); %s",
                self.name,
                type(error).__name__,
                error,
                self.meanwhile,
            )

    def reached(self) -> None:
        """A call succeeded: an outage, if there was one and it has settled, ends (logged)."""
        if self.since is not None and time.monotonic() >= self.settled_at:
            log.warning(
                "%s reachable again after %.1f s (%d calls failed meanwhile)",
                self.name,
                time.monotonic() - self.since,
                self.calls,
            )
            self.since, self.calls = None, 0


__all__ = ["REFUSALS_SETTLE", "Outage"]
