"""Handlers that cannot suspend, answered where their request was read.

A coroutine whose code has no yield point (no ``await``, ``async with`` or ``async for``)
runs to its end in its first step, whatever it calls. A session runs such a handler in
the task that read the request, in a copy of the context as a task of its own would have
(``Session._request``): no task, no turn of the event loop. :class:`Resumed` carries a
coroutine that did wait after all (the writing of an answer the transport holds back) on
to a task.
"""

from __future__ import annotations

from collections.abc import Awaitable, Coroutine, Generator
from opcode import opmap
from types import CodeType, CoroutineType
from typing import Any

#: The instructions a coroutine's frame suspends at (``YIELD_FROM``: Python 3.10's await).
_YIELDS = frozenset(opmap[name] for name in ("YIELD_VALUE", "YIELD_FROM") if name in opmap)
#: Code object → whether its coroutine can suspend (see :func:`never_waits`).
_waits: dict[CodeType, bool] = {}


def never_waits(handler: Awaitable[Any]) -> bool:
    """Whether ``handler`` is a coroutine that cannot suspend: its code has no yield
    point (no ``await``, ``async with``, ``async for``), so its first step runs it to the
    end whatever it calls. Such a handler is run where the request was read."""
    if type(handler) is not CoroutineType:
        return False
    code = handler.cr_code
    waits = _waits.get(code)
    if waits is None:
        raw = code.co_code
        waits = _waits[code] = any(raw[i] in _YIELDS for i in range(0, len(raw), 2))
    return not waits


async def failed(exc: BaseException) -> Any:
    """What a dispatch that raised ``exc`` at once answers (awaited like a handler)."""
    raise exc


#: What a request answered at once answers when it was cancelled: nothing.
NOTHING: tuple[bytes, int | None] = (b"", None)


class Resumed:
    """A coroutine whose first step was taken (and gave ``first``), to await to its end
    elsewhere: what it waits for, and what it is sent or thrown, pass through."""

    __slots__ = ("coro", "first")

    def __init__(self, coro: Coroutine[Any, Any, Any], first: Any) -> None:
        self.coro = coro
        self.first = first

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, waiting = self.coro, self.first
        while True:
            try:
                sent = yield waiting
            except BaseException as exc:  # cancellation included: the coroutine decides
                try:
                    waiting = coro.throw(exc)
                except StopIteration as done:
                    return done.value
            else:
                try:
                    waiting = coro.send(sent)
                except StopIteration as done:
                    return done.value
