"""Handlers that cannot suspend, answered where their request was read.

A coroutine whose code has no yield point (no ``await``, ``async with`` or ``async for``)
runs to its end in its first step, whatever it calls. A session runs such a handler in
the task that read the request, in a copy of the context as a task of its own would have
(``Session._request``): no task, no turn of the event loop. :class:`Resumed` carries a
coroutine that did wait after all (the writing of an answer the transport holds back) on
to a task; :func:`start` makes the task a handler that may suspend runs in, starting it at
once where the interpreter can.
"""

from __future__ import annotations

import asyncio
import contextvars
import enum
import sys
from collections.abc import Awaitable, Coroutine, Generator
from opcode import opmap
from types import CodeType, CoroutineType
from typing import Any, Generic, TypeGuard, TypeVar

T = TypeVar("T")
#: The instructions a coroutine's frame suspends at (``YIELD_FROM``: Python 3.10's await).
_YIELDS = frozenset(opmap[name] for name in ("YIELD_VALUE", "YIELD_FROM") if name in opmap)
#: ``id`` of a code object → it, and whether its coroutine can suspend (see
#: :func:`never_waits`; by ``id``: hashing a code object hashes all its constants).
_waits: dict[int, tuple[CodeType, bool]] = {}


class Waits(enum.Enum):
    """What :func:`at_once` gives for an awaitable it cannot run to its end."""

    WAITS = "waits"


#: What :func:`at_once` gives for an awaitable that may suspend (to be awaited instead).
WAITS = Waits.WAITS


def never_waits(handler: Awaitable[Any]) -> TypeGuard[Coroutine[Any, Any, Any]]:
    """Whether ``handler`` is a coroutine that cannot suspend: its code has no yield
    point (no ``await``, ``async with``, ``async for``), so its first step runs it to the
    end whatever it calls. Such a handler is run where the request was read."""
    if type(handler) is not CoroutineType:
        return False
    code = handler.cr_code
    known = _waits.get(id(code))
    return not (_learn(code) if known is None or known[0] is not code else known)[1]


def _learn(code: CodeType) -> tuple[CodeType, bool]:
    """Whether coroutines of ``code`` can suspend, remembered (with the code object itself,
    so that its ``id`` is not reused while it is a key)."""
    raw = code.co_code
    known = _waits[id(code)] = (code, any(raw[i] in _YIELDS for i in range(0, len(raw), 2)))
    return known


def at_once(handler: Awaitable[T]) -> T | Waits:
    """What ``handler`` returns (or raises), run to its end here when it is a coroutine
    that cannot suspend (:func:`never_waits`); else :data:`WAITS`, nothing of it run."""
    if type(handler) is not CoroutineType:
        return WAITS
    code = handler.cr_code
    known = _waits.get(id(code))  # never_waits, inline: every request's path
    if (_learn(code) if known is None or known[0] is not code else known)[1]:
        return WAITS
    try:
        handler.send(None)  # pyright: ignore[reportUnknownMemberType]: any coroutine
    except StopIteration as done:
        return done.value  # (Any: no call to typing.cast on every request's path)
    raise RuntimeError("a coroutine that cannot suspend did")  # pragma: no cover


async def failed(exc: BaseException) -> Any:
    """What a dispatch that raised ``exc`` at once answers (awaited like a handler)."""
    raise exc


#: What a request answered at once answers when it was cancelled: nothing.
NOTHING: tuple[bytes, int | None] = (b"", None)


def carry_on(
    waiting: Generator[Any, Any, T] | Coroutine[Any, Any, T], step: Any
) -> Generator[Any, Any, T]:
    """What ``yield from`` does with an awaitable's iterator that has already yielded
    ``step``: hand each step to the task, and what the task sends or throws back in."""
    while True:
        try:
            sent = yield step
        except GeneratorExit:
            waiting.close()
            raise
        except BaseException as exc:  # a cancellation (or any error) thrown at the task
            try:
                step = waiting.throw(exc)
            except StopIteration as done:
                return done.value
        else:
            try:
                step = waiting.send(sent)
            except StopIteration as done:
                return done.value


class Resumed(Generic[T]):
    """An awaitable whose iterator was started by hand and suspended at ``step``: awaiting
    it goes on from there."""

    __slots__ = ("waiting", "step")

    def __init__(self, waiting: Generator[Any, Any, T] | Coroutine[Any, Any, T], step: Any) -> None:
        self.waiting = waiting
        self.step = step

    def __await__(self) -> Generator[Any, Any, T]:
        return carry_on(self.waiting, self.step)


if sys.version_info >= (3, 12):

    def start(
        coro: Coroutine[Any, Any, None], context: contextvars.Context | None = None
    ) -> asyncio.Task[None]:
        """Run a handler as a task that starts at once: one that needs not wait for
        anything answers before this returns, with no extra turn of the event loop."""
        loop = asyncio.get_running_loop()
        return asyncio.Task(coro, loop=loop, eager_start=True, context=context)

elif sys.version_info >= (3, 11):

    def start(
        coro: Coroutine[Any, Any, None], context: contextvars.Context | None = None
    ) -> asyncio.Task[None]:
        return asyncio.create_task(coro, context=context)

else:

    def start(
        coro: Coroutine[Any, Any, None], context: contextvars.Context | None = None
    ) -> asyncio.Task[None]:
        """Python 3.10's tasks copy the context they are made in: made in ``context``."""
        if context is None:
            return asyncio.create_task(coro)
        return context.run(asyncio.create_task, coro)
