"""A legacy upstream's questions put to a 2026-07-28 client, across its input rounds.

A legacy server asks its client for input (sampling, elicitation, roots) with a request
of its own and waits for the answer in the middle of a call. A 2026-07-28 client answers
no such request: the server ends its request with ``input_required`` and the client sends
it again with the answers. So a proxy between them runs the upstream call in the
background (a :class:`ParkedCall`), and each downstream round waits for whichever comes
first: the call's answer, or a question from the upstream, which ends the round with
``input_required`` under a key that names the parked call. The client's retry carries
the answer under that key; the round that brings it hands it to the upstream's waiting
request and waits again.

Parked calls are bounded by the proxy's ``Limits``: each question waits at most
``request_timeout`` for its answer (as any server's request to its client; the upstream
then gets an error for it), a finished call's answer is kept as long for a client to come
back for, and at most ``max_in_flight`` calls are parked at once.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

from ..aio.session import RequestScope
from ..core.errors import INTERNAL_ERROR, McpError
from ..core.modern import InputRequired

#: How long a round waits for more questions sent with the first (each time one comes).
SETTLE_SECONDS = 0.01
SETTLE_ROUNDS = 10
#: Keys of the parked call's questions: ``<prefix><call id>/<n>``.
PREFIX = "mcpgen-proxy/"


@dataclass
class Question:
    method: str
    params: Any
    answer: asyncio.Future[Any] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class ParkedCall:
    """An upstream call that outlives the downstream round that started it."""

    def __init__(self, call: Awaitable[Any], owner: Any) -> None:
        self.id = secrets.token_urlsafe(12)
        self.owner = owner
        self.questions: dict[str, Question] = {}
        self.asked = asyncio.Event()
        self.finished_at: float | None = None
        #: The downstream request of the round under way (first and only item).
        self.rounds: list[RequestScope] = []
        self.task: asyncio.Task[Any] = asyncio.ensure_future(call)
        self.task.add_done_callback(self._finished)
        self.task.add_done_callback(_retrieved)
        self._count = 0

    def _finished(self, _: object) -> None:
        self.finished_at = time.monotonic()
        self.asked.set()

    async def ask(self, method: str, params: Any, timeout: float) -> Any:
        """The upstream's question, answered by the client's next round (or an error
        after ``timeout`` seconds)."""
        self._count += 1
        key = f"{PREFIX}{self.id}/{self._count}"
        question = self.questions[key] = Question(method, params)
        self.asked.set()
        try:
            return await asyncio.wait_for(asyncio.shield(question.answer), timeout)
        except asyncio.TimeoutError:
            raise McpError(
                INTERNAL_ERROR,
                f"the client did not answer {method} within {timeout:g} s"
                " (the proxy's Limits.request_timeout)",
            ) from None
        finally:
            self.questions.pop(key, None)

    async def round(self, scope: RequestScope) -> Any:
        """One downstream round: hand over the answers it brings, then the call's result,
        or ``InputRequired`` for the questions still open."""
        while True:
            open_questions = [(k, q) for k, q in self.questions.items() if not q.answer.done()]
            if open_questions:  # asked together (a round's, or a task's while it runs)
                answers = await asyncio.gather(
                    *(scope.request(q.method, q.params, None, k) for k, q in open_questions),
                    return_exceptions=True,
                )
                missing: InputRequired | None = None
                for (_, question), answer in zip(open_questions, answers):
                    if isinstance(answer, InputRequired):
                        missing = answer
                    elif isinstance(answer, McpError):  # e.g. the client lacks the
                        question.answer.set_exception(answer)  # capability: it fails upstream
                    elif isinstance(answer, BaseException):
                        raise answer
                    elif not question.answer.done():
                        question.answer.set_result(answer)
                if missing is not None:
                    raise missing
            if self.task.done():
                return self.task.result()
            self.asked.clear()
            await self.asked.wait()
            await self._settled()

    async def _settled(self) -> None:
        """Let the questions an upstream sends together (a handler asking several at
        once) all arrive, so that one round carries them all: wait while more come, a
        few milliseconds at a time, at most :data:`SETTLE_ROUNDS` times."""
        for _ in range(SETTLE_ROUNDS):
            count = len(self.questions)
            await asyncio.sleep(SETTLE_SECONDS)
            if len(self.questions) == count or self.task.done():
                return


def _retrieved(task: asyncio.Task[Any]) -> None:
    """A parked call's failure is its client's to hear, if it comes back: not logged."""
    if not task.cancelled():
        task.exception()


class Parking:
    """The parked calls of one proxy, by id."""

    def __init__(self, limit: int, keep_for: float) -> None:
        self.limit = limit
        self.keep_for = keep_for
        self.calls: dict[str, ParkedCall] = {}

    def park(self, call: Awaitable[Any], owner: Any) -> ParkedCall:
        self._sweep()
        if len(self.calls) >= self.limit:
            if asyncio.iscoroutine(call):
                call.close()
            raise McpError(
                INTERNAL_ERROR,
                f"the proxy holds {len(self.calls)} calls waiting for their clients'"
                " input (Limits.max_in_flight); try again later",
            )
        parked = ParkedCall(call, owner)
        self.calls[parked.id] = parked
        return parked

    def returning(self, scope: RequestScope, owner: Any) -> ParkedCall | None:
        """The parked call a retried request comes back for (its answers' keys name it)."""
        inputs = scope.event.inputs
        if inputs is None:
            return None
        for key in inputs.answers:
            if key.startswith(PREFIX):
                parked = self.calls.get(key[len(PREFIX) :].split("/", 1)[0])
                if parked is not None and parked.owner == owner:
                    return parked
        return None

    def done_with(self, parked: ParkedCall) -> None:
        self.calls.pop(parked.id, None)

    def abandon(self, parked: ParkedCall) -> None:
        """The client cancelled: the upstream call is cancelled too."""
        self.calls.pop(parked.id, None)
        parked.task.cancel()

    def _sweep(self) -> None:
        """Forget calls that finished longer than ``keep_for`` ago with nobody back."""
        now = time.monotonic()
        for key, parked in list(self.calls.items()):
            if parked.finished_at is not None and now - parked.finished_at > self.keep_for:
                del self.calls[key]

    async def close(self) -> None:
        for parked in self.calls.values():
            parked.task.cancel()
        self.calls.clear()


__all__ = ["PREFIX", "ParkedCall", "Parking"]
