"""Stopping on the ASGI server's stop signal: a server (uvicorn) that catches
``SIGTERM``/``SIGINT`` stops accepting, then waits for every response to end before the
app hears of it (lifespan shutdown comes last), so a long-lived stream (a legacy GET, a
listen, HTTP+SSE) would hold its shutdown until the client left. Chained in front of the
server's own handler, the app's ``drain`` runs first: those streams end at once with a
``retry`` hint and their clients reconnect elsewhere, while requests in flight finish.

Behind a balancer, ``SIGTERM`` can first be given ``delay`` seconds: the app says at once
that it is stopping (its readiness check fails, so the balancer sends it nothing new) and
serves on meanwhile; only then does it drain and the server stop accepting. Without it, a
request the balancer sent as the worker closed is lost unanswered. ``SIGINT`` (Ctrl-C)
never waits.

Only a handler the server set in Python with ``signal.signal`` is chained (signals are the
main thread's): with Python's default, or a server that handles signals on its loop
(``add_signal_handler``), nothing changes."""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import Awaitable, Callable
from types import FrameType
from typing import Any

log = logging.getLogger("mcpgen.runtime.http.signals")

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def drain_on_stop(
    drain: Callable[[], Awaitable[None]],
    stopping: Callable[[], None] = lambda: None,
    delay: float = 0.0,
) -> Callable[[], None]:
    """Have a stop signal call ``stopping`` at once, then (``SIGTERM``: after ``delay``
    seconds) run ``drain`` on this loop and hand the signal to the handler the server
    set; returns what puts the server's handlers back."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    loop = asyncio.get_running_loop()
    draining: list[asyncio.Future[None]] = []

    def begin(sig: int, previous: Any) -> None:
        if not draining:
            draining.append(asyncio.ensure_future(drain()))
        previous(sig, None)

    def arrived(sig: int, previous: Any) -> None:
        stopping()
        wait = delay if sig == signal.SIGTERM and not draining else 0.0
        if wait > 0:
            log.warning("stopping: serving %.1f s more while the balancer looks elsewhere", wait)
        loop.call_later(wait, begin, sig, previous)

    chained: dict[int, Any] = {}
    for number in STOP_SIGNALS:
        previous = signal.getsignal(number)
        if not callable(previous) or not _servers(previous):
            continue  # no server's Python handler: nothing to put the draining in front of

        def handler(sig: int, frame: FrameType | None, previous: Any = previous) -> None:
            loop.call_soon_threadsafe(arrived, sig, previous)

        signal.signal(number, handler)
        chained[number] = (handler, previous)

    def restore() -> None:
        for number, (handler, previous) in chained.items():
            if signal.getsignal(number) is handler:
                signal.signal(number, previous)

    return restore


def _servers(handler: Any) -> bool:
    """Whether ``handler`` is a server's own: not Python's default (KeyboardInterrupt),
    nor asyncio's stand-in for a handler it runs from the loop (``add_signal_handler``,
    which would stop the server before the draining, whatever is chained here)."""
    if handler is signal.default_int_handler:
        return False
    return getattr(handler, "__name__", "") != "_sighandler_noop"


__all__ = ["STOP_SIGNALS", "drain_on_stop"]
